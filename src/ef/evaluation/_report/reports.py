"""Evaluation reports: frozen attrs value classes that round-trip through JSON."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ef.evaluation._report.fields import (
    JsonReport,
    checked,
    count,
    finite,
    list_of,
    mapping_of,
    nested,
    object_,
    optional,
    string,
)
from ef.evaluation._report.frames import Column, FrameOutputs
from ef.evaluation._report.frozen import (
    FrozenDict,
    as_tuple,
    freeze,
    frozen_dict,
    frozen_dict_of_dicts,
)
from ef.evaluation._report.groups import (
    GROUPS_CHECK,
    GroupResult,
    group_lists,
    group_results,
    group_tuples,
)
from ef.evaluation._report.html_hook import write_html
from ef.evaluation._report.intervals import (
    DEFAULT_N_RESAMPLES,
    DEFAULT_SEED,
    IntervalMethod,
    MeanIntervals,
    mean_intervals,
)
from ef.evaluation._report.report_frames import rag_columns, retrieval_columns
from ef.evaluation._types import Corpus, Qrels, Queries, Run

__all__ = ["QueryFailure", "RagEvalReport", "RetrievalEvalReport"]


def _percentile(sorted_values: list[float], fraction: float) -> float:
    """Linear-interpolation percentile of already sorted values (numpy's default method)."""
    position = (len(sorted_values) - 1) * fraction
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    weight = position - low
    return sorted_values[low] * (1.0 - weight) + sorted_values[high] * weight


def _frozen_samples(
    samples: Iterable[Mapping[str, float | None]],
) -> tuple[FrozenDict[str, float | None], ...]:
    return tuple(frozen_dict(sample) for sample in samples)


@attrs.frozen
class QueryFailure(JsonReport):
    """A query whose retrieval failed after every attempt.

    :param query_id: the query that failed.
    :param error_type: the last exception's type: its bare name for a built-in (``TimeoutError``),
        else ``module.QualName``.
    :param message: the last exception's message.
    :param attempts: how many times the retriever was called for this query.
    """

    query_id: str = attrs.field(metadata=checked(string))
    error_type: str = attrs.field(metadata=checked(string))
    message: str = attrs.field(metadata=checked(string))
    attempts: int = attrs.field(metadata=checked(count))


def ndcg_keys(k: int) -> tuple[str, ...]:
    """Every spelling of (linear-gain) nDCG at cutoff ``k``, ef's own first.

    >>> ndcg_keys(10)[:3]
    ('ndcg@10', 'nDCG@10', 'NDCG@10')
    """
    return (
        f"ndcg@{k}",
        f"nDCG@{k}",
        f"NDCG@{k}",
        f"ndcg_cut.{k}",
        f"ndcg_cut_{k}",
        f"nDCG(dcg='log2')@{k}",
        f'nDCG(dcg="log2")@{k}',
    )


@attrs.frozen
class RetrievalEvalReport(FrameOutputs, JsonReport):
    """The outcome of :func:`evaluate_retrieval` — metrics over a query set.

    ``metrics`` maps a ``"<metric>@<k>"`` key (e.g. ``"ndcg@10"``) to the mean of that metric
    over every scored query; ``per_query`` keeps the same keys per query for drill-down.
    ``n_queries`` is how many queries were actually scored (a query with no positive judgement
    is skipped).

    Beyond the spec's four positional fields, a report says what it did (all keyword-only):
    ``skipped`` maps each query left out before retrieval to the reason; ``short_rankings``
    lists the queries whose de-duplicated ranking came out shorter than the largest cutoff
    although the retriever returned ``limit`` results (raise ``limit``); ``failures`` holds the
    :class:`QueryFailure` of each query whose retrieval failed (left out of the means);
    ``latency`` maps each retrieved query to its wall time in seconds; ``manifest`` records the
    library version, the parameters and fingerprints of the inputs; ``intervals`` holds the
    confidence interval of each mean when one was asked for (``interval=``, or
    :meth:`with_intervals`), else ``None``. Evaluated with ``groups=``, ``groups`` maps each
    query group to its :class:`GroupResult` (its means and counts) and ``query_groups`` each
    scored query to its groups; a scored query in no group (:attr:`ungrouped`) counts in
    ``metrics`` and in no group (see :doc:`/groups`).

    A report is a value: its mappings are read-only ``dict``\\ s (assigning into
    ``report.metrics`` raises :class:`TypeError`; ``dict(report.metrics)`` is a copy to
    change), its sequences tuples, and equal reports hash equal. Every field is checked where
    the report is made: a mean that is NaN or infinite, a negative count or a string for a
    number raises :class:`ValueError` or :class:`TypeError` naming the class, the field, the
    query and metric key and the value. ``to_dict`` is :func:`attrs.asdict` (JSON-ready),
    ``from_dict`` checks every field of the JSON before building (once: not again when made).

    >>> report = RetrievalEvalReport(
    ...     metrics={'ndcg@10': 0.83}, per_query={}, n_queries=12, k_values=(10,))
    >>> report.primary
    0.83
    """

    metrics: FrozenDict[str, float] = attrs.field(
        converter=frozen_dict, metadata=checked(mapping_of(finite))
    )
    per_query: FrozenDict[str, FrozenDict[str, float]] = attrs.field(
        converter=frozen_dict_of_dicts, metadata=checked(mapping_of(mapping_of(finite)))
    )
    n_queries: int = attrs.field(metadata=checked(count))
    k_values: tuple[int, ...] = attrs.field(converter=as_tuple, metadata=checked(list_of(count)))
    skipped: FrozenDict[str, str] = attrs.field(
        factory=FrozenDict,
        converter=frozen_dict,
        kw_only=True,
        metadata=checked(mapping_of(string)),
    )
    short_rankings: tuple[str, ...] = attrs.field(
        default=(), converter=as_tuple, kw_only=True, metadata=checked(list_of(string))
    )
    failures: tuple[QueryFailure, ...] = attrs.field(
        default=(),
        converter=as_tuple,
        kw_only=True,
        metadata=checked(list_of(nested(QueryFailure))),
    )
    latency: FrozenDict[str, float] = attrs.field(
        factory=FrozenDict,
        converter=frozen_dict,
        kw_only=True,
        metadata=checked(mapping_of(finite)),
    )
    manifest: FrozenDict[str, Any] = attrs.field(
        factory=FrozenDict, converter=freeze, kw_only=True, metadata=checked(object_)
    )
    intervals: MeanIntervals | None = attrs.field(
        default=None, kw_only=True, metadata=checked(optional(nested(MeanIntervals)))
    )
    groups: FrozenDict[str, GroupResult] = attrs.field(
        factory=FrozenDict, converter=group_results, kw_only=True, metadata=GROUPS_CHECK
    )
    query_groups: FrozenDict[str, tuple[str, ...]] = attrs.field(
        factory=FrozenDict,
        converter=group_tuples,
        kw_only=True,
        metadata=checked(mapping_of(list_of(string))),
    )

    @property
    def ungrouped(self) -> tuple[str, ...]:
        """The scored queries in no group (empty when the report has no groups)."""
        if not self.groups:
            return ()
        return tuple(q for q in self.per_query if q not in self.query_groups)

    @property
    def primary(self) -> float | None:
        """The headline number — mean ``ndcg@10``, or ``None`` if it was not computed."""
        return self.primary_at(10)

    def primary_at(self, k: int) -> float | None:
        """Mean NDCG at cutoff ``k`` — ``None`` if NDCG@``k`` was not computed.

        Any spelling of it counts: ``ndcg@k``, ``nDCG@k``, ``ndcg_cut.k``, ``ndcg_cut_k`` …
        """
        metrics = self.metrics
        return next((metrics[key] for key in ndcg_keys(k) if key in metrics), None)

    def frame_columns(self, means: bool) -> list[Column]:
        """Columns ``query_id, metric, value``, one row per query and metric (queries in
        ``per_query`` order, metrics in their report order); with ``means``, ``metric, value``.

        A report with :attr:`groups` adds a ``group`` column: one row per query, metric and
        group of the query (a query in two groups has two rows per metric; ``group`` is missing
        for a query in no group); with ``means``, the report's means (``group`` missing) then
        each group's, with an ``n_queries`` column.
        """
        return retrieval_columns(self, means)

    def with_intervals(
        self,
        method: IntervalMethod = "t",
        *,
        confidence_level: float = 0.95,
        n_resamples: int = DEFAULT_N_RESAMPLES,
        seed: int = DEFAULT_SEED,
    ) -> RetrievalEvalReport:
        """This report with a confidence interval for each mean, from its per-query values.

        ``"t"`` is Student's t interval; ``"bootstrap"`` the percentile bootstrap interval of
        ``n_resamples`` resamples of the queries drawn from ``numpy.random.default_rng(seed)``
        (the same seed gives the same interval). Needs scipy (the ``stats`` extra). See
        :doc:`/intervals`.

        :raises ValueError: for an unknown method, a level outside (0, 1) or ``n_resamples < 1``.
        :raises ImportError: without scipy.
        """
        values = {
            key: [row[key] for row in self.per_query.values() if key in row] for key in self.metrics
        }
        intervals = mean_intervals(
            self.metrics,
            values,
            method,
            confidence_level=confidence_level,
            n_resamples=n_resamples,
            seed=seed,
        )
        return attrs.evolve(self, intervals=intervals)

    @property
    def latency_summary(self) -> dict[str, float] | None:
        """``{"p50", "p95", "max", "mean"}`` of the per-query latency in seconds, or ``None``."""
        if not self.latency:
            return None
        values = sorted(self.latency.values())
        return {
            "p50": _percentile(values, 0.50),
            "p95": _percentile(values, 0.95),
            "max": values[-1],
            "mean": math.fsum(values) / len(values),
        }

    def to_html(
        self,
        path: str | os.PathLike[str],
        *,
        run: Run | None = None,
        qrels: Qrels | None = None,
        corpus: Corpus | None = None,
        queries: Queries | None = None,
        title: str | None = None,
    ) -> Path:
        """Write this report as one self-contained HTML page (see ``docs/report.md``).

        The page shows the manifest, the metrics, their curves over the cutoffs, the spread of
        the primary metric over the queries, the latency, the failures and a sortable table of
        the queries. With ``run`` and ``qrels`` it adds the interpolated precision-recall curve
        and a drill-down per query (its top 20 with their grades, the relevant documents it
        missed); ``corpus`` adds snippets of the documents shown, ``queries`` the query texts.

        :returns: ``path``.
        :raises ImportError: without the ``html`` extra (Jinja2, vl-convert-python).
        :raises ValueError: if only one of ``run`` and ``qrels`` is given.
        """
        inputs = {"run": run, "qrels": qrels, "corpus": corpus, "queries": queries}
        return write_html(self, path, **inputs, title=title)


@attrs.frozen
class RagEvalReport(FrameOutputs, JsonReport):
    """The outcome of :func:`evaluate_rag` — lexical RAG metrics over a sample set.

    ``metrics`` maps each metric to its mean over the samples it applied to; ``coverage``
    records how many samples that was (a metric needing a ``reference`` skips samples without
    one). ``n_samples`` is the total scored.

    ``per_sample`` (keyword-only) keeps each sample's values, ``None`` where a metric did not
    apply; ``sample_ids`` (keyword-only) names the samples in the same order, so
    :func:`compare` can pair two pipelines' reports (empty when the samples have no ids);
    ``intervals`` (keyword-only) the confidence interval of each mean when asked for.
    Evaluated with ``groups=``, ``groups`` maps each group to its :class:`GroupResult` and
    ``sample_groups`` gives each sample's groups, in order.

    >>> report = RagEvalReport(
    ...     metrics={'exact_match': 0.5}, coverage={'exact_match': 4}, n_samples=4)
    >>> report.metrics['exact_match']
    0.5
    """

    metrics: FrozenDict[str, float] = attrs.field(
        converter=frozen_dict, metadata=checked(mapping_of(finite))
    )
    coverage: FrozenDict[str, int] = attrs.field(
        converter=frozen_dict, metadata=checked(mapping_of(count))
    )
    n_samples: int = attrs.field(metadata=checked(count))
    per_sample: tuple[FrozenDict[str, float | None], ...] = attrs.field(
        default=(),
        converter=_frozen_samples,
        kw_only=True,
        metadata=checked(list_of(mapping_of(optional(finite)))),
    )
    sample_ids: tuple[str, ...] = attrs.field(
        default=(), converter=as_tuple, kw_only=True, metadata=checked(list_of(string))
    )
    intervals: MeanIntervals | None = attrs.field(
        default=None, kw_only=True, metadata=checked(optional(nested(MeanIntervals)))
    )

    def with_intervals(
        self,
        method: IntervalMethod = "t",
        *,
        confidence_level: float = 0.95,
        n_resamples: int = DEFAULT_N_RESAMPLES,
        seed: int = DEFAULT_SEED,
    ) -> RagEvalReport:
        """This report with a confidence interval for each mean, from the values of the
        samples the metric applied to; as :meth:`RetrievalEvalReport.with_intervals`.
        """
        values = {
            key: [v for sample in self.per_sample if (v := sample.get(key)) is not None]
            for key in self.metrics
        }
        intervals = mean_intervals(
            self.metrics,
            values,
            method,
            confidence_level=confidence_level,
            n_resamples=n_resamples,
            seed=seed,
        )
        return attrs.evolve(self, intervals=intervals)

    groups: FrozenDict[str, GroupResult] = attrs.field(
        factory=FrozenDict, converter=group_results, kw_only=True, metadata=GROUPS_CHECK
    )
    sample_groups: tuple[tuple[str, ...], ...] = attrs.field(
        default=(),
        converter=group_lists,
        kw_only=True,
        metadata=checked(list_of(list_of(string))),
    )

    def frame_columns(self, means: bool) -> list[Column]:
        """Columns ``sample_id, metric, value``, one row per sample and metric (``value``
        missing where the metric did not apply; ``sample_id`` is the sample's position when the
        samples have no ids); with ``means``, ``metric, value, coverage``.
        """
        return rag_columns(self, means)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        if self.sample_ids and len(self.sample_ids) != len(self.per_sample):
            raise ValueError(
                f"sample_ids names {len(self.sample_ids)} samples, per_sample has "
                f"{len(self.per_sample)}; give one id per sample"
            )
        if len(set(self.sample_ids)) != len(self.sample_ids):
            raise ValueError("sample_ids must be unique: an id names one sample")
        if self.sample_groups and len(self.sample_groups) != len(self.per_sample):
            raise ValueError(
                f"sample_groups names the groups of {len(self.sample_groups)} samples, "
                f"per_sample has {len(self.per_sample)}; give them for every sample"
            )

    def to_html(
        self,
        path: str | os.PathLike[str],
        *,
        samples: Sequence[Mapping[str, Any]] | None = None,
        title: str | None = None,
    ) -> Path:
        """Write this report as one self-contained HTML page: the metrics with their coverage
        and a per-sample table (question, response, reference and contexts when ``samples``,
        the samples the report scored in its order, are given).

        :returns: ``path``.
        :raises ImportError: without the ``html`` extra (Jinja2, vl-convert-python).
        :raises ValueError: if ``samples`` does not match the report's samples.
        """
        return write_html(self, path, samples=samples, title=title)
