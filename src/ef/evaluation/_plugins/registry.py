"""What plugins register: metrics, RAG metrics, dataset readers, and the snapshot of them all."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from ef.evaluation._scoring.measures.family import Family
from ef.evaluation._types import Corpus, Qrels, Queries, RagMetricFn

__all__ = [
    "DatasetReader",
    "PluginInfo",
    "RagMetric",
    "Registry",
    "RetrievalMetric",
    "make_metric",
    "make_rag_metric",
    "make_reader",
]


@attrs.frozen
class RetrievalMetric:
    """A registered retrieval metric.

    :param name: the short name used in ``metrics=`` and in report keys (``name@k``).
    :param fn: ``fn(ranked, relevant, k) -> float``; for a metric without a cutoff,
        ``fn(ranked, relevant) -> float`` over the whole retrieved list.
    :param all_cutoffs: optionally ``all_cutoffs(summary, ks) -> [float, ...]``, every cutoff at
        once from the scoring core's :class:`RankingSummary` (``ks`` ascending).
    :param cutoff: ``False`` for metrics reported without ``@k`` (R-precision, bpref).
    :param family: for a trec_eval measure family, its keys, parameters, aggregation and
        source; the scoring core then computes it from the query's facts and reports its own
        keys (``P_5``), not ``name@k``.
    """

    name: str
    fn: Callable[..., float]
    all_cutoffs: Callable[[Any, Sequence[int]], Sequence[float]] | None = None
    cutoff: bool = True
    description: str = ""
    plugin: str = ""
    family: Family | None = attrs.field(default=None, kw_only=True)


@attrs.frozen
class RagMetric:
    """A registered RAG metric: ``fn(sample) -> float``, or ``None`` when not applicable."""

    name: str
    fn: RagMetricFn
    description: str = ""
    plugin: str = ""


@attrs.frozen
class DatasetReader:
    """A registered dataset reader: ``reader(source, **options) -> (corpus, queries, qrels)``."""

    name: str
    reader: Callable[..., tuple[Corpus, Queries, Qrels]]
    description: str = ""
    plugin: str = ""


@attrs.frozen
class PluginInfo:
    """An installed plugin: its name, distribution, version and the hooks it implements."""

    name: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...]
    builtin: bool = False


@attrs.frozen
class Registry:
    """A read-only snapshot of what the loaded plugins provide, each with its plugin's name."""

    metrics: Mapping[str, RetrievalMetric]
    rag_metrics: Mapping[str, RagMetric]
    readers: Mapping[str, DatasetReader]


def _check_callable(name: str, value: object, what: str) -> None:
    if not callable(value):
        raise TypeError(f"{name!r}: {what} must be callable, got {type(value).__name__}")


def make_metric(
    name: str,
    fn: Callable[..., float],
    *,
    all_cutoffs: Callable[[Any, Sequence[int]], Sequence[float]] | None = None,
    cutoff: bool = True,
    description: str = "",
    plugin: str,
    family: Family | None = None,
) -> RetrievalMetric:
    _check_callable(name, fn, "the metric function")
    if all_cutoffs is not None:
        _check_callable(name, all_cutoffs, "all_cutoffs")
    if family is not None and not isinstance(family, Family):
        raise TypeError(f"{name!r}: family must be a measure Family, got {type(family).__name__}")
    return RetrievalMetric(name, fn, all_cutoffs, bool(cutoff), description, plugin, family=family)


def make_rag_metric(name: str, fn: RagMetricFn, *, description: str = "", plugin: str) -> RagMetric:
    _check_callable(name, fn, "the RAG metric function")
    return RagMetric(name, fn, description, plugin)


def make_reader(
    name: str,
    reader: Callable[..., tuple[Corpus, Queries, Qrels]],
    *,
    description: str = "",
    plugin: str,
) -> DatasetReader:
    _check_callable(name, reader, "the reader")
    return DatasetReader(name, reader, description, plugin)
