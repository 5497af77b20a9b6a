"""Turning retrieval outcomes into a report: planning, per-query scoring, aggregation.

Pure code: it knows nothing of concurrency. The runner hands it one outcome at a time (in
completion order); it scores each at once and aggregates in the planned (qrels) order, so means
never depend on completion order.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import reduce
from operator import add, itemgetter
from typing import Any

import attrs

from ef.evaluation._metrics import positive_grades
from ef.evaluation._plugins import lookup_metrics
from ef.evaluation._reports import QueryFailure, RetrievalEvalReport
from ef.evaluation._scored import summarize_scores
from ef.evaluation._scoring import RankingSummary, ScoringPlan, summarize
from ef.evaluation._trec import rank_by_score
from ef.evaluation._types import Qrels, Queries

__all__ = ["Collector", "Progress", "fingerprint"]

SKIP_NO_POSITIVE = "no positive judgement"
SKIP_NO_TEXT = "no query text"


@attrs.frozen
class Progress:
    """Where an evaluation stands, handed to a ``progress`` callback after each query.

    :ivar done: queries finished (scored or failed).
    :ivar total: queries planned.
    :ivar failed: queries whose retrieval failed (recorded failures).
    :ivar primary: the running mean of the primary metric over the scored queries, or None.
    :ivar primary_name: the key of the primary metric (``ndcg@10`` when computed).
    :ivar elapsed: seconds since the evaluation started.
    """

    done: int
    total: int
    failed: int
    primary: float | None
    primary_name: str | None
    elapsed: float


def fingerprint(value: object) -> str:
    """A stable SHA-256 of a JSON-able value (mappings hashed with sorted keys)."""
    encoded = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def _as_dict(judged: Mapping[str, float]) -> dict[str, float]:
    """``judged`` as the ``dict`` that :mod:`json` needs; a dict already is not copied."""
    return judged if isinstance(judged, dict) else dict(judged)


@functools.cache  # the installed version does not change under a running process
def _version() -> str | None:
    import importlib.metadata  # ~20 ms: read when a report is made, not with the package

    try:
        return importlib.metadata.version("ef-evaluation")
    except importlib.metadata.PackageNotFoundError:
        return None


class Collector:
    """Plans an evaluation, scores each query's ranking as it arrives, and builds the report.

    :param qrels: the judgements; their order is the planned order.
    :param queries: query texts; ``None`` when rankings come from a run (no texts needed).
    :param k_values: cutoffs.
    :param metrics: metric names (built-in or plugin).
    :param parameters: what else determines the run, recorded in the manifest.
    :raises ValueError: for an unknown metric, a bad cutoff, a NaN or infinite grade (naming the
        query and the doc), or when no query can be scored.
    :raises TypeError: for judgements that are not a mapping, a grade that is not a number, or
        a doc id that is not a string.
    """

    def __init__(
        self,
        qrels: Qrels,
        queries: Queries | None,
        *,
        k_values: Iterable[int],
        metrics: Sequence[str],
        parameters: Mapping[str, Any],
        progress: Callable[[Progress], None] | None = None,
        ignore_identical_ids: bool = False,
    ) -> None:
        self.plan = ScoringPlan(lookup_metrics(metrics), k_values)
        self.qrels = qrels
        self.queries = queries
        self.ignore_identical_ids = ignore_identical_ids
        self.skipped: dict[str, str] = {}
        self.planned: list[str] = []
        self._positives: dict[str, list[tuple[str, float]]] = {}
        for query_id, relevant in qrels.items():
            if not isinstance(relevant, Mapping):
                raise TypeError(
                    f"the judgements of query {query_id!r} must be a mapping "
                    f"{{doc_id: grade}}, got {type(relevant).__name__}"
                )
            positives = positive_grades(relevant, query_id)
            if not positives:
                self.skipped[query_id] = SKIP_NO_POSITIVE
            elif queries is not None and query_id not in queries:
                self.skipped[query_id] = SKIP_NO_TEXT
            else:
                self.planned.append(query_id)
                self._positives[query_id] = positives
        if not self.planned:
            reasons = sorted(set(self.skipped.values())) or ["qrels is empty"]
            raise ValueError(f"no query can be scored ({'; '.join(reasons)})")
        self.per_query: dict[str, dict[str, float]] = {}
        self.failures: dict[str, QueryFailure] = {}
        self.latency: dict[str, float] = {}
        self.short_rankings: list[str] = []
        self.parameters = dict(parameters)
        self._progress = progress
        keys = self.plan.keys
        self.primary_name = "ndcg@10" if "ndcg@10" in keys else (keys[0] if keys else None)
        self._primary_sum = 0.0
        self._fingerprints: dict[str, str] | None = None
        self._started = time.perf_counter()

    @property
    def max_k(self) -> int:
        """The largest cutoff."""
        return self.plan.k_values[-1]

    def add_ranking(
        self,
        query_id: str,
        ranked: Sequence[str],
        *,
        unique: bool = False,
        retrieved: int | None = None,
        limit: int | None = None,
        latency: float | None = None,
    ) -> dict[str, float]:
        """Score one query's ranking of source doc ids and keep its values.

        :param retrieved: how many results the retriever returned before de-duplication; with
            ``limit``, flags rankings that came out shorter than the largest cutoff.
        """
        if self.ignore_identical_ids:
            ranked = [doc_id for doc_id in ranked if doc_id != query_id]
        summary: RankingSummary = summarize(
            ranked, self.qrels[query_id], unique=unique, positives=self._positives[query_id]
        )
        return self._keep(query_id, summary, retrieved, limit, latency)

    def add_scores(self, query_id: str, scores: Mapping[str, float]) -> dict[str, float]:
        """Score one query's ``{doc_id: score}``, in trec_eval's order, and keep its values."""
        drop_query_id = self.ignore_identical_ids and query_id in scores
        try:
            if drop_query_id:
                ranked = rank_by_score(scores)
            else:
                summary = summarize_scores(
                    scores, self.qrels[query_id], positives=self._positives[query_id]
                )
        except ValueError as error:  # a NaN score has no place in an order
            error.add_note(f"in the scores of query {query_id!r}")
            raise
        if drop_query_id:
            return self.add_ranking(query_id, ranked, unique=True)
        return self._keep(query_id, summary, None, None, None)

    def _keep(
        self,
        query_id: str,
        summary: RankingSummary,
        retrieved: int | None,
        limit: int | None,
        latency: float | None,
    ) -> dict[str, float]:
        values = self.plan.score(summary, query_id)
        self.per_query[query_id] = values
        if latency is not None:
            self.latency[query_id] = latency
        if (
            limit is not None
            and retrieved is not None
            and retrieved >= limit
            and len(summary.ranked) < self.max_k
        ):
            self.short_rankings.append(query_id)
        if self.primary_name is not None:
            self._primary_sum += values.get(self.primary_name, 0.0)
        self._report_progress()
        return values

    def add_failure(self, failure: QueryFailure, latency: float | None = None) -> None:
        """Record a query whose retrieval failed; it is left out of the means."""
        self.failures[failure.query_id] = failure
        if latency is not None:
            self.latency[failure.query_id] = latency
        self._report_progress()

    def _report_progress(self) -> None:
        if self._progress is None:
            return
        scored = len(self.per_query)
        self._progress(
            Progress(
                done=scored + len(self.failures),
                total=len(self.planned),
                failed=len(self.failures),
                primary=self._primary_sum / scored if scored and self.primary_name else None,
                primary_name=self.primary_name,
                elapsed=time.perf_counter() - self._started,
            )
        )

    def report(self, manifest: Mapping[str, Any] | None = None) -> RetrievalEvalReport:
        """The report: means over the scored queries, summed in the planned order."""
        scored = [query_id for query_id in self.planned if query_id in self.per_query]
        short = set(self.short_rankings)
        metrics: dict[str, float] = {}
        if scored:
            rows = [self.per_query[query_id] for query_id in scored]
            for key in self.plan.keys:
                # Left to right from 0.0, as a plain loop adds (builtin sum compensates on 3.12+,
                # which would change the last digits between Python versions).
                metrics[key] = reduce(add, map(itemgetter(key), rows), 0.0) / len(rows)
        return RetrievalEvalReport(
            metrics=metrics,
            per_query={query_id: self.per_query[query_id] for query_id in scored},
            n_queries=len(scored),
            k_values=self.plan.k_values,
            skipped=dict(self.skipped),
            short_rankings=tuple(q for q in self.planned if q in short),
            failures=tuple(self.failures[q] for q in self.planned if q in self.failures),
            latency={q: self.latency[q] for q in self.planned if q in self.latency},
            manifest=self.manifest(manifest or {}),
        )

    def manifest(self, extra: Mapping[str, Any]) -> dict[str, Any]:
        """What produced the report: library version, parameters, input fingerprints."""
        return {
            "library": "ef-evaluation",
            "version": _version(),
            "parameters": {
                "k_values": list(self.plan.k_values),
                "metrics": [metric.name for metric in self.plan.metrics],
                "ignore_identical_ids": self.ignore_identical_ids,
                **self.parameters,
            },
            "fingerprints": self.fingerprints(),
            **extra,
        }

    def fingerprints(self) -> dict[str, str]:
        """Fingerprints of the qrels and, when given, of the planned queries' texts."""
        if self._fingerprints is None:
            self._fingerprints = {
                "qrels": fingerprint({q: _as_dict(judged) for q, judged in self.qrels.items()})
            }
            if self.queries is not None:
                queries = self.queries
                self._fingerprints["queries"] = fingerprint({q: queries[q] for q in self.planned})
        return self._fingerprints
