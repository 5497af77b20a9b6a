""":func:`evaluate_rag`: every requested RAG metric over every sample, averaged.

A RAG metric scores one sample: ``fn(sample) -> float | None``, ``None`` meaning *not
applicable*, so the sample is left out of that metric's mean and coverage. The built-ins
(:mod:`ef.evaluation._rag.sample_metrics`) are registered like any plugin metric;
:func:`evaluate_rag` looks every name up in the plugin registry.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ef.evaluation._exceptions import EvaluationWarning
from ef.evaluation._groups.aggregate import rag_groups
from ef.evaluation._groups.query_groups import GroupsInput
from ef.evaluation._io.frames import is_frame
from ef.evaluation._io.rag_frames import samples_from_frame
from ef.evaluation._plugins import rag_metric_functions, registry
from ef.evaluation._rag.encodable import check_encodable
from ef.evaluation._rag.fields import FieldsSeen, check_field_names, check_scored
from ef.evaluation._rag.sample_ids import check_ids, sample_ids
from ef.evaluation._report.intervals import IntervalMethod, check_interval_options
from ef.evaluation._report.reports import RagEvalReport
from ef.evaluation._scoring.aggregation import applicable_means
from ef.evaluation._scoring.metrics import checked_value
from ef.evaluation._types import RagMetricFn, RagSample

__all__ = ["evaluate_rag"]

_DEFAULT_METRICS = (
    "exact_match",
    "token_f1",
    "context_recall",
    "context_precision",
    "non_empty_rate",
)


def _is_str_list(value: object) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(item, str) for item in value)


def _is_id_list(value: object) -> bool:
    # bool is an int, but True would be compared as "True": refused rather than guessed.
    return isinstance(value, list | tuple) and all(
        isinstance(item, str) or (isinstance(item, int) and not isinstance(item, bool))
        for item in value
    )


def _check_sample(where: str, sample: object) -> Mapping[str, Any]:
    """Return ``sample`` if it has the :class:`RagSample` shape, else say what is wrong."""
    if not isinstance(sample, Mapping):
        raise TypeError(f"{where}: expected a mapping (a RagSample), got {type(sample).__name__}")
    check_field_names(where, sample)
    for field in ("user_input", "response"):
        value = sample.get(field)
        if value is not None and not isinstance(value, str):
            raise TypeError(
                f"{where}: field {field!r} must be a string, got {type(value).__name__}"
            )
    for field in ("retrieved_contexts", "reference_contexts"):
        value = sample.get(field)
        if value is not None and not _is_str_list(value):
            raise TypeError(
                f"{where}: field {field!r} must be a list of strings, got {value!r:.80}"
            )
    for field in ("retrieved_context_ids", "reference_context_ids"):
        value = sample.get(field)
        if value is not None and not _is_id_list(value):
            raise TypeError(
                f"{where}: field {field!r} must be a list of ids (strings or integers), "
                f"got {value!r:.80}"
            )
    check_encodable(where, sample)
    reference = sample.get("reference")
    if reference is not None and not isinstance(reference, str):
        if not _is_str_list(reference):
            raise TypeError(
                f"{where}: field 'reference' must be a string or a list of strings, "
                f"got {reference!r:.80}"
            )
        if not reference:
            raise ValueError(
                f"{where}: field 'reference' is an empty list; give at least one answer "
                "or leave the field out"
            )
    return sample


def _resolve(metrics: Sequence[str]) -> dict[str, RagMetricFn]:
    """Map each requested name (de-duplicated, in order) to its function."""
    if isinstance(metrics, str):
        raise TypeError(f"metrics must be a sequence of names, got the string {metrics!r}")
    names = list(dict.fromkeys(metrics))
    if not names:
        raise ValueError("metrics is empty: name at least one metric to compute")
    available = rag_metric_functions()
    unknown = [name for name in names if name not in available]
    if unknown:
        raise ValueError(
            f"unknown RAG metric(s) {', '.join(map(repr, unknown))}; "
            f"available: {', '.join(sorted(available))}"
        )
    return {name: available[name] for name in names}


def _plugin_of(name: str, fn: object) -> str:
    """`` (plugin 'x')`` for a registered RAG metric, for messages; empty if unregistered."""
    metric = registry().rag_metrics.get(name)
    return f" (plugin {metric.plugin!r})" if metric is not None and metric.fn is fn else ""


def _score(
    where: str, name: str, fn: Callable[[Mapping[str, Any]], object], sample: Any
) -> float | None:
    try:
        value = fn(sample)
    except Exception as error:
        error.add_note(f"while computing RAG metric {name!r} on {where}{_plugin_of(name, fn)}")
        raise
    if value is None:
        return None
    if type(value) is float and value - value == 0.0:  # the usual case, in one test
        return value
    return checked_value(
        value,
        lambda shown: f"RAG metric {name!r} returned {shown} for {where}{_plugin_of(name, fn)}",
    )


def _leave_out_unfed(
    seen: FieldsSeen,
    per_sample: list[dict[str, float | None]],
    from_nothing: dict[str, ValueError],
) -> None:
    """Leave out, with one warning, the default metrics reading a field no sample holds
    (answers scored without retrieval, say); refuse as a chosen metric would be refused when
    that leaves none, or when one would score some sample from nothing while others hold its
    field."""
    unfed = seen.unfed()
    if len(unfed) == len(per_sample[0]):
        seen.check({})
    for name in unfed:
        for row in per_sample:
            row[name] = None
        from_nothing.pop(name, None)
    for error in from_nothing.values():
        raise error
    if unfed:
        fields = sorted({field for missing in unfed.values() for field in missing})
        warnings.warn(
            f"no sample holds {' or '.join(map(repr, fields))} ({seen.first()}): "
            f"{', '.join(unfed)} left out; name the metrics to compute to make this an error",
            EvaluationWarning,
            stacklevel=3,
        )


def evaluate_rag(
    samples: Iterable[RagSample | Mapping[str, Any]],
    *,
    metrics: Sequence[str] = _DEFAULT_METRICS,
    ids: Sequence[str] | None = None,
    interval: IntervalMethod | None = None,
    confidence_level: float = 0.95,
    groups: GroupsInput | None = None,
) -> RagEvalReport:
    """Score RAG samples with deterministic, reference-based lexical metrics.

    Each sample is a :class:`RagSample` — ``(user_input, response, retrieved_contexts,
    reference)``. ``evaluate_rag`` computes only metrics that need **no LLM**:
    :func:`exact_match`, :func:`token_f1`, :func:`context_recall`, :func:`context_precision` and
    ``non_empty_rate`` (the share of samples that retrieved any context). This keeps ``ef`` a
    facade — it never synthesizes an answer and never calls a model (§6). For the LLM-judged
    metrics — faithfulness, answer relevancy, … — pass the same samples to
    :func:`as_ragas_dataset` and run Ragas with your own LLM.

    A metric whose inputs a sample lacks does not apply to it (a ``response`` for the answer
    metrics, a ``reference`` for the reference-based ones, ``reference_contexts`` or context
    ids for the metrics that read them): it is ``None`` there, never 0. A misnamed field would
    then score 0 or be skipped without a word, so these are refused, naming the sample, the
    field and the metric: a Ragas 0.1 name (``question``, ``contexts``, ``answer``,
    ``ground_truth``, ``ground_truths``) where its new name is missing; a sample a metric would
    score while it holds none of the fields the metric reads (``non_empty_rate`` without
    ``retrieved_contexts``; ``None`` as a value is held); a requested metric that applies to
    no sample because no sample holds a field it reads. Other keys pass through unchanged.
    Besides the lexical metrics above, the registered ones include Ragas' deterministic metrics
    (ROUGE, BLEU, chrF, string similarity, context matching; see the RAG guide).

    ``reference`` may also be a list of acceptable answers (the best score over them counts;
    :func:`as_ragas_dataset` refuses such a sample, since Ragas' ``SingleTurnSample`` holds one
    reference string: pick one answer per sample for Ragas); a ``None``
    ``retrieved_contexts`` counts as no context retrieved. Each metric's
    mean (summed with :func:`math.fsum`) is over the samples it applied to, which ``coverage``
    counts; a metric that applied to no sample has coverage ``0`` and no entry in ``metrics``.
    ``per_sample`` keeps every sample's values, with ``None`` where a metric did not apply.
    Metric names are looked up among the built-ins and the installed plugins' RAG metrics.

    :param samples: an iterable of :class:`RagSample`\\ s (or plain mappings of the same shape),
        or a pandas or polars DataFrame or pyarrow Table with a row per sample and a column
        per field, as Ragas' ``EvaluationDataset.from_pandas`` takes (a missing value is a
        field the sample lacks).
    :param metrics: which metrics to compute — any of ``exact_match`` / ``token_f1`` /
        ``context_recall`` / ``context_precision`` / ``non_empty_rate``. The reference-based
        ones skip samples that carry no ``reference``.
    :param ids: one unique id per sample, in order, recorded as the report's ``sample_ids`` so
        :func:`compare` can pair two pipelines' reports; ``None`` uses each ``user_input`` when
        every sample has one and none repeats (else the report has no sample ids).
    :param interval: also state each mean's uncertainty, over the samples the metric applied
        to: ``"t"`` or ``"bootstrap"`` (percentile, 10,000 resamples, seed 0), in
        ``report.intervals``, as :func:`evaluate_retrieval` does; ``None`` computes none.
    :param confidence_level: the coverage of ``interval``, in (0, 1).
    :param groups: query groups: :class:`QueryGroups`, a mapping or a groups file naming the
        samples by id (``ids``, or the ``user_input`` values), or a function of the
        ``user_input`` text (a sample without one is in no group); the report then keeps each
        group's means and coverage in ``groups`` (see :doc:`/groups`).
    :returns: a :class:`RagEvalReport`.
    :raises ValueError: for an unknown metric name, or if ``samples`` is empty (also for a
        sample with an empty ``reference`` list, a Ragas 0.1 field name or a requested
        metric's fields missing as above, naming the sample, the field and the metric, and for
        ``ids`` that repeat or do not name every sample).
    :raises TypeError: for a sample field of the wrong type, naming the sample and the field.

    >>> samples = [
    ...     {'user_input': 'capital of France?', 'response': 'Paris',
    ...      'reference': 'Paris',
    ...      'retrieved_contexts': ['Paris is the capital of France.']},
    ...     {'user_input': '2 + 2?', 'response': 'five', 'reference': 'four',
    ...      'retrieved_contexts': []},
    ... ]
    >>> report = evaluate_rag(samples)
    >>> report.metrics['exact_match']
    0.5
    >>> report.metrics['non_empty_rate']
    0.5
    """
    functions = _resolve(metrics)
    check_interval_options(interval, confidence_level)
    if is_frame(samples):  # Ragas' from_pandas shape: a row per sample, a column per field
        samples = samples_from_frame(samples)
    checked_ids = None if ids is None else check_ids(ids)
    user_inputs: list[str | None] = []
    per_sample: list[dict[str, float | None]] = []
    seen = FieldsSeen(functions)
    chosen = metrics is not _DEFAULT_METRICS
    from_nothing: dict[str, ValueError] = {}  # the default metrics' first, until all are seen
    for index, raw in enumerate(samples):
        where = f"sample {index}"
        if checked_ids is not None and index < len(checked_ids):
            where += f" (id {checked_ids[index]!r})"
        sample = _check_sample(where, raw)
        seen.see(where, sample)
        user_inputs.append(sample.get("user_input"))
        row: dict[str, float | None] = {}
        for name, fn in functions.items():
            value = _score(where, name, fn, sample)
            if value is not None:
                try:
                    check_scored(where, sample, name, fn, value)
                except ValueError as error:
                    if chosen:
                        raise
                    from_nothing.setdefault(name, error)
            row[name] = value
        per_sample.append(row)
    if not per_sample:
        raise ValueError("samples is empty: evaluate_rag needs at least one sample")
    if not chosen:
        _leave_out_unfed(seen, per_sample, from_nothing)
    means, coverage = applicable_means(per_sample, list(functions))
    if chosen:
        seen.check(coverage)
    report = RagEvalReport(
        metrics=means,
        coverage=coverage,
        n_samples=len(per_sample),
        per_sample=per_sample,
        sample_ids=sample_ids(checked_ids, user_inputs),
    )
    report = rag_groups(report, groups, user_inputs)
    if interval is None:
        return report
    return report.with_intervals(interval, confidence_level=confidence_level)
