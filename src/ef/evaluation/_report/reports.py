"""Evaluation reports: frozen attrs value classes that round-trip through JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ef.evaluation._json import loads_strict
from ef.evaluation._report.fields import (
    check_fields,
    count,
    finite,
    list_of,
    mapping_of,
    object_,
    optional,
    string,
)

__all__ = ["QueryFailure", "RagEvalReport", "RetrievalEvalReport"]


def _percentile(sorted_values: list[float], fraction: float) -> float:
    """Linear-interpolation percentile of already sorted values (numpy's default method)."""
    position = (len(sorted_values) - 1) * fraction
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    weight = position - low
    return sorted_values[low] * (1.0 - weight) + sorted_values[high] * weight


def _int_tuple(values: Iterable[int]) -> tuple[int, ...]:
    return tuple(values)


def _str_tuple(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


def _failure_tuple(values: Iterable[QueryFailure]) -> tuple[QueryFailure, ...]:
    return tuple(values)


def _sample_tuple(
    values: Iterable[dict[str, float | None]],
) -> tuple[dict[str, float | None], ...]:
    return tuple(values)


@attrs.frozen
class QueryFailure:
    """A query whose retrieval failed after every attempt.

    :param query_id: the query that failed.
    :param error_type: the last exception's type: its bare name for a built-in (``TimeoutError``),
        else ``module.QualName``.
    :param message: the last exception's message.
    :param attempts: how many times the retriever was called for this query.
    """

    query_id: str
    error_type: str
    message: str
    attempts: int


@attrs.frozen
class RetrievalEvalReport:
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
    library version, the parameters and fingerprints of the inputs.

    >>> report = RetrievalEvalReport(
    ...     metrics={'ndcg@10': 0.83}, per_query={}, n_queries=12, k_values=(10,))
    >>> report.primary
    0.83
    """

    metrics: dict[str, float]
    per_query: dict[str, dict[str, float]]
    n_queries: int
    k_values: tuple[int, ...] = attrs.field(converter=_int_tuple)
    skipped: dict[str, str] = attrs.field(factory=dict, kw_only=True)
    short_rankings: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple, kw_only=True)
    failures: tuple[QueryFailure, ...] = attrs.field(
        default=(), converter=_failure_tuple, kw_only=True
    )
    latency: dict[str, float] = attrs.field(factory=dict, kw_only=True)
    manifest: dict[str, Any] = attrs.field(factory=dict, kw_only=True)

    @property
    def primary(self) -> float | None:
        """The headline number — mean ``ndcg@10``, or ``None`` if it was not computed."""
        return self.primary_at(10)

    def primary_at(self, k: int) -> float | None:
        """Mean NDCG at cutoff ``k`` — ``None`` if NDCG@``k`` was not computed."""
        return self.metrics.get(f"ndcg@{k}")

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

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (the inverse of :meth:`from_dict`)."""
        data = attrs.asdict(self)
        data["k_values"] = list(self.k_values)
        data["short_rankings"] = list(self.short_rankings)
        data["failures"] = [attrs.asdict(failure) for failure in self.failures]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RetrievalEvalReport:
        """Rebuild a report from :meth:`to_dict` output, checking every field first.

        :raises TypeError: for a missing or unknown field, or a value of the wrong type (a
            string or ``null`` where a number belongs).
        :raises ValueError: for a number that is not finite, or a negative count.
        """
        fields = check_fields(cls, data, _RETRIEVAL_FIELDS)
        fields["failures"] = [QueryFailure(**failure) for failure in fields.get("failures", ())]
        return cls(**fields)

    def to_json(self, **dumps_options: Any) -> str:
        """The report as a JSON string; strict JSON, so a value that is not finite is refused.

        :raises ValueError: if a value is NaN or infinite.
        """
        return json.dumps(self.to_dict(), **{**dumps_options, "allow_nan": False})

    @classmethod
    def from_json(cls, text: str | bytes) -> RetrievalEvalReport:
        """Rebuild a report from :meth:`to_json` output, which must be strict JSON.

        :raises ValueError: for text that is not strict JSON, or a field of the wrong value.
        :raises TypeError: for a field of the wrong type.
        """
        return cls.from_dict(loads_strict(text))


@attrs.frozen
class RagEvalReport:
    """The outcome of :func:`evaluate_rag` — lexical RAG metrics over a sample set.

    ``metrics`` maps each metric to its mean over the samples it applied to; ``coverage``
    records how many samples that was (a metric needing a ``reference`` skips samples without
    one). ``n_samples`` is the total scored.

    ``per_sample`` (keyword-only) keeps each sample's values, ``None`` where a metric did not
    apply; ``sample_ids`` (keyword-only) names the samples in the same order, so
    :func:`compare` can pair two pipelines' reports (empty when the samples have no ids).

    >>> report = RagEvalReport(
    ...     metrics={'exact_match': 0.5}, coverage={'exact_match': 4}, n_samples=4)
    >>> report.metrics['exact_match']
    0.5
    """

    metrics: dict[str, float]
    coverage: dict[str, int]
    n_samples: int
    per_sample: tuple[dict[str, float | None], ...] = attrs.field(
        default=(), converter=_sample_tuple, kw_only=True
    )
    sample_ids: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple, kw_only=True)

    def __attrs_post_init__(self) -> None:
        if self.sample_ids and len(self.sample_ids) != len(self.per_sample):
            raise ValueError(
                f"sample_ids names {len(self.sample_ids)} samples, per_sample has "
                f"{len(self.per_sample)}; give one id per sample"
            )
        if len(set(self.sample_ids)) != len(self.sample_ids):
            raise ValueError("sample_ids must be unique: an id names one sample")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (the inverse of :meth:`from_dict`)."""
        data = attrs.asdict(self)
        data["per_sample"] = list(self.per_sample)
        data["sample_ids"] = list(self.sample_ids)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RagEvalReport:
        """Rebuild a report from :meth:`to_dict` output, checking every field first.

        :raises TypeError: for a missing or unknown field, or a value of the wrong type.
        :raises ValueError: for a number that is not finite, or a negative count.
        """
        return cls(**check_fields(cls, data, _RAG_FIELDS))

    def to_json(self, **dumps_options: Any) -> str:
        """The report as a JSON string; strict JSON, so a value that is not finite is refused.

        :raises ValueError: if a value is NaN or infinite.
        """
        return json.dumps(self.to_dict(), **{**dumps_options, "allow_nan": False})

    @classmethod
    def from_json(cls, text: str | bytes) -> RagEvalReport:
        """Rebuild a report from :meth:`to_json` output, which must be strict JSON.

        :raises ValueError: for text that is not strict JSON, or a field of the wrong value.
        :raises TypeError: for a field of the wrong type.
        """
        return cls.from_dict(loads_strict(text))


def _failure(value: Any, where: str) -> Any:
    return check_fields(QueryFailure, value, _FAILURE_FIELDS, where)


_FAILURE_FIELDS = {
    "query_id": string,
    "error_type": string,
    "message": string,
    "attempts": count,
}
_RETRIEVAL_FIELDS = {
    "metrics": mapping_of(finite),
    "per_query": mapping_of(mapping_of(finite)),
    "n_queries": count,
    "k_values": list_of(count),
    "skipped": mapping_of(string),
    "short_rankings": list_of(string),
    "failures": list_of(_failure),
    "latency": mapping_of(finite),
    "manifest": object_,
}
_RAG_FIELDS = {
    "metrics": mapping_of(finite),
    "coverage": mapping_of(count),
    "n_samples": count,
    "per_sample": list_of(mapping_of(optional(finite))),
    "sample_ids": list_of(string),
}
