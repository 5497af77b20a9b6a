"""The field names a RAG sample's metrics read, and the refusal of names no metric reads.

A metric finds a field by its name only, so a sample that names it otherwise (Ragas 0.1's
``question`` / ``contexts`` / ``answer`` / ``ground_truth``) would score as if the field were
absent: a silent 0 or a silent skip. Both are refused where a sample enters
:func:`~ef.evaluation.evaluate_rag`; every other key passes through unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ef.evaluation._rag import contexts, overlap, sample_metrics, strings

__all__ = ["OLD_NAMES", "READS", "FieldsSeen", "check_field_names", "check_scored"]

OLD_NAMES: Mapping[str, str] = {
    "question": "user_input",
    "contexts": "retrieved_contexts",
    "answer": "response",
    "ground_truth": "reference",
    "ground_truths": "reference",
}
"""Ragas 0.1's sample fields → the name a :class:`~ef.evaluation.RagSample` gives each: Ragas'
own ``REQUIRED_COLS_v1`` (``ragas.utils``), and ``ground_truths``, its list of references
before ``ground_truth`` (a list in ``reference`` is accepted)."""

_ANSWER = ("response", "reference")
_REFERENCE_CONTEXTS = ("retrieved_contexts", "reference_contexts")

READS: Mapping[Callable[..., Any], tuple[str, ...]] = {
    sample_metrics.sample_exact_match: _ANSWER,
    sample_metrics.sample_token_f1: _ANSWER,
    sample_metrics.sample_context_recall: ("reference", "retrieved_contexts"),
    sample_metrics.sample_context_precision: ("reference", "retrieved_contexts"),
    sample_metrics.sample_non_empty_rate: ("retrieved_contexts",),
    overlap.rouge_score: _ANSWER,
    overlap.rouge1_score: _ANSWER,
    overlap.rouge2_score: _ANSWER,
    overlap.bleu_score: _ANSWER,
    overlap.chrf_score: _ANSWER,
    strings.non_llm_string_similarity: _ANSWER,
    strings.non_llm_string_similarity_jaro_winkler: _ANSWER,
    strings.non_llm_string_similarity_jaro: _ANSWER,
    strings.non_llm_string_similarity_hamming: _ANSWER,
    strings.string_present: _ANSWER,
    strings.raw_exact_match: _ANSWER,
    contexts.non_llm_context_recall: _REFERENCE_CONTEXTS,
    contexts.non_llm_context_precision_with_reference: _REFERENCE_CONTEXTS,
    contexts.id_based_context_recall: ("retrieved_context_ids", "reference_context_ids"),
    contexts.id_based_context_precision: ("retrieved_context_ids", "reference_context_ids"),
}
"""The fields each built-in RAG metric reads, by its function (a plugin registering another
function under a built-in's name is not held to the built-in's fields)."""


def check_field_names(where: str, sample: Mapping[str, Any]) -> None:
    """Refuse a Ragas 0.1 field name standing where its :class:`RagSample` name is missing.

    A sample holding both names (a row kept readable by either version) reads the new one, and
    the old one passes through as any other key does.

    :param where: the sample, for the message (``"sample 3"``).
    :raises ValueError: naming the sample, the old field and the one to use.

    >>> check_field_names("sample 0", {"question": "capital of France?"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: sample 0: field 'question' is Ragas 0.1's name for 'user_input'; rename it ...
    """
    for old, new in OLD_NAMES.items():
        if old in sample and new not in sample:
            also = " (a list of answers is accepted there)" if old == "ground_truths" else ""
            raise ValueError(
                f"{where}: field {old!r} is Ragas 0.1's name for {new!r}; rename it {new!r}{also}"
            )


def _fields(fields: tuple[str, ...]) -> str:
    if len(fields) == 1:
        return f"field {fields[0]!r}"
    return f"fields {' and '.join(map(repr, fields))}"


def _remedy(name: str, missing: tuple[str, ...]) -> str:
    if missing == ("retrieved_contexts",):
        given = "give it ([] when nothing was retrieved)"
    else:
        given = f"give {'it' if len(missing) == 1 else 'them'} (None where there is no value)"
    return f"{given} or leave {name!r} out of the metrics"


def check_scored(
    where: str, sample: Mapping[str, Any], name: str, fn: Callable[..., Any], value: float
) -> None:
    """Refuse a metric's value for a sample holding none of the fields the metric reads.

    A metric that counts a missing field as empty (``non_empty_rate`` without
    ``retrieved_contexts``) would score such a sample from nothing: a misnamed field would
    read as a real 0. A field held as ``None`` says the sample has no such value.

    :raises ValueError: naming the sample, the metric and the fields it reads.

    >>> check_scored("sample 0", {"contexts": ["Paris"]}, "non_empty_rate",
    ...     sample_metrics.sample_non_empty_rate, 0.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: sample 0: metric 'non_empty_rate' reads field 'retrieved_contexts', which ...
    """
    fields = READS.get(fn)
    if fields is None or any(field in sample for field in fields):
        return
    raise ValueError(
        f"{where}: metric {name!r} reads {_fields(fields)}, which the sample lacks, so it would "
        f"score {value!r} from nothing; {_remedy(name, fields)}"
    )


class FieldsSeen:
    """The fields the samples hold, to refuse a metric that applied to none for lack of one.

    A sample lacking a metric's field is one the metric does not apply to (an answer-only
    sample beside retrieval-only ones), but a metric applying to no sample because no sample
    holds a field it reads says the field is misnamed: its mean would be missing without a word.
    """

    def __init__(self, functions: Mapping[str, Callable[..., Any]]) -> None:
        self._reads = {name: READS[fn] for name, fn in functions.items() if fn in READS}
        self._unheld = {field for fields in self._reads.values() for field in fields}
        self._first: tuple[str, Mapping[str, Any]] | None = None

    def see(self, where: str, sample: Mapping[str, Any]) -> None:
        """Note the fields ``sample`` holds."""
        if self._first is None:
            self._first = (where, sample)
        if self._unheld:
            self._unheld.difference_update([field for field in self._unheld if field in sample])

    def unfed(self) -> dict[str, tuple[str, ...]]:
        """Each metric reading a field no sample holds, with those fields.

        >>> seen = FieldsSeen({"non_empty_rate": sample_metrics.sample_non_empty_rate})
        >>> seen.see("sample 0", {"response": "Paris"})
        >>> seen.unfed()
        {'non_empty_rate': ('retrieved_contexts',)}
        """
        found = {}
        for name, fields in self._reads.items():
            if self._first is not None and (
                missing := tuple(f for f in fields if f in self._unheld)
            ):
                found[name] = missing
        return found

    def first(self) -> str:
        """The first sample, with the keys it holds, for a message about them all."""
        where, keys = self._first_keys()
        return f"{where} holds {keys}"

    def _first_keys(self) -> tuple[str, str]:
        if self._first is None:
            return "no sample", "no field"
        where, sample = self._first
        keys = ", ".join(repr(str(key)) for key in list(sample)[:8]) or "no field"
        return where, f"{keys}{', ...' if len(sample) > 8 else ''}"

    def check(self, coverage: Mapping[str, int]) -> None:
        """Refuse the first metric that applied to no sample while no sample holds its field.

        :param coverage: how many samples each metric applied to.
        :raises ValueError: naming the metric, the fields no sample holds and the first
            sample, with its keys.

        >>> seen = FieldsSeen({"exact_match": sample_metrics.sample_exact_match})
        >>> seen.see("sample 0", {"response": "Paris", "gold": "Paris"})
        >>> seen.check({"exact_match": 0})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: sample 0: metric 'exact_match' applies to no sample: it reads field ...
        """
        for name, missing in self.unfed().items():
            if coverage.get(name):
                continue
            where, keys = self._first_keys()
            raise ValueError(
                f"{where}: metric {name!r} applies to no sample: it reads {_fields(missing)}, "
                f"which no sample holds (this one holds {keys}); {_remedy(name, missing)}"
            )
