"""Aggregating an evaluation: each query's values kept as they arrive, then averaged.

Pure code: it knows nothing of concurrency. The runner hands it one outcome at a time (in
completion order); it scores each at once and averages in the planned (qrels) order, so means
never depend on completion order.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from itertools import compress, repeat
from operator import is_not, itemgetter
from typing import Any, cast

import attrs

from ef.evaluation._report.frozen import FrozenDict, frozen_dict
from ef.evaluation._report.reports import QueryFailure, RetrievalEvalReport, ndcg_keys
from ef.evaluation._scoring.found import found
from ef.evaluation._scoring.order import rank_by_score
from ef.evaluation._scoring.query_plan import QueryPlan
from ef.evaluation._scoring.ranked import RankingSummary, summarize
from ef.evaluation._scoring.scored import summarize_scores
from ef.evaluation._version import library_version as _version

__all__ = ["Progress", "ScoreSheet"]

_SHARED_FLOATS = 1 << 16  # the most distinct values kept for sharing at once


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


class ScoreSheet:
    """Scores each planned query's ranking as it arrives, keeps its values, and builds the report.

    :param plan: the evaluation's :class:`~ef.evaluation._scoring.query_plan.QueryPlan`.
    :param parameters: what else determines the run, recorded in the manifest.
    :param progress: called after each query.
    """

    def __init__(
        self,
        plan: QueryPlan,
        *,
        parameters: Mapping[str, Any],
        progress: Callable[[Progress], None] | None = None,
    ) -> None:
        self.plan = plan
        self.per_query: dict[str, dict[str, float]] = {}
        self.failures: dict[str, QueryFailure] = {}
        self.latency: dict[str, float] = {}
        self.short_rankings: list[str] = []
        # The shallowest and deepest ranking scored (all the manifest keeps of them).
        self._shallowest: int | None = None
        self._deepest: int | None = None
        self.parameters = dict(parameters)
        self._progress = progress
        self._floats: dict[float, float] = {}
        self._lean = (
            plan.plain
            and plan.measures is None
            and plan.scoring.builtin_only
            and not plan.ignore_identical_ids
            and progress is None
        )
        keys = plan.keys
        primary = next((key for key in ndcg_keys(10) if key in keys), None)
        self.primary_name = primary or (keys[0] if keys else None)
        self._primary_sum = 0.0
        self._started = time.perf_counter()

    @property
    def reports_progress(self) -> bool:
        """Whether a callback is told of each query scored."""
        return self._progress is not None

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
        plan = self.plan
        if self._lean and limit is None:
            # Plain judgements and built-in metrics only: the values straight from where the
            # relevant ids landed, with no summary made.
            ideal = plan.ideals[query_id]
            _, _, positions, gains = found(ranked, plan.qrels[query_id], len(ideal), unique)
            values = plan.scoring.score_found(positions, gains, ideal)
            values = self.per_query[query_id] = self._shared(values)
            self.note_depth(len(ranked))
            if latency is not None:
                self.latency[query_id] = latency
            return values
        if plan.ignore_identical_ids:
            ranked = [doc_id for doc_id in ranked if doc_id != query_id]
        measures = plan.measures
        summary: RankingSummary
        if measures is not None:
            facts = measures.facts_of_ranking(
                ranked, plan.qrels[query_id], unique=unique, positives=plan.positives[query_id]
            )
            self.note_depth(facts.num_ret)
            summary = facts
        else:
            relevant = plan.qrels[query_id]
            if plan.plain:  # read as they are, with their grades sorted when planned
                ideal = plan.ideals[query_id]
                if not plan.scoring.builtin_only:  # a plugin's metric may change what it reads
                    ideal = ideal.copy()
                summary = summarize(ranked, relevant, unique=unique, ideal=ideal)
            else:
                positives = plan.positives[query_id]
                summary = summarize(ranked, relevant, unique=unique, positives=positives)
            self.note_depth(len(ranked))
        return self._keep(query_id, summary, retrieved, limit, latency)

    def add_scores(self, query_id: str, scores: Mapping[str, float]) -> dict[str, float]:
        """Score one query's ``{doc_id: score}``, in trec_eval's order, and keep its values."""
        drop_query_id = self.plan.ignore_identical_ids and query_id in scores
        summary: RankingSummary
        try:
            if drop_query_id:
                ranked = rank_by_score(scores)
            elif self.plan.measures is not None:
                facts = self.plan.measures.facts_of_scores(
                    scores, self.plan.qrels[query_id], positives=self.plan.positives[query_id]
                )
                self.note_depth(facts.num_ret)
                summary = facts
            else:
                summary = summarize_scores(
                    scores, self.plan.qrels[query_id], positives=self.plan.positives[query_id]
                )
                self.note_depth(len(scores))
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
        values = self.plan.scoring.score(summary, query_id)
        if self.plan.measures is not None:
            measured = self.plan.measures.score(summary, query_id)  # type: ignore[arg-type]
            values = {**values, **measured}
        values = self.per_query[query_id] = self._shared(values)
        if latency is not None:
            self.latency[query_id] = latency
        if (
            limit is not None
            and retrieved is not None
            and retrieved >= limit
            and len(summary.ranked) < self.plan.max_k
        ):
            self.short_rankings.append(query_id)
        if self._progress is not None:
            if self.primary_name is not None:
                self._primary_sum += values.get(self.primary_name, 0.0)
            self._report_progress()
        return values

    def _shared(self, values: Mapping[str, float]) -> FrozenDict[str, float]:
        """``values`` as the report keeps them, each value the one float object kept for all
        queries that have it: most values recur (0.0, 1.0, 1/k, …), and a float object takes
        24 bytes, a third of what a query's values take."""
        share = self._floats.setdefault
        shared = [
            value if value == 0.0 and math.copysign(1.0, value) < 0.0 else share(value, value)
            for value in values.values()
        ]  # -0.0 equals 0.0 as a key: kept as it is
        if len(self._floats) > _SHARED_FLOATS:
            self._floats.clear()
        return FrozenDict(zip(values, shared, strict=True))

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
                total=len(self.plan.planned),
                failed=len(self.failures),
                primary=self._primary_sum / scored if scored and self.primary_name else None,
                primary_name=self.primary_name,
                elapsed=time.perf_counter() - self._started,
            )
        )

    def report(
        self,
        manifest: Mapping[str, Any] | None = None,
        *,
        rows: list[Mapping[str, float] | None] | None = None,
    ) -> RetrievalEvalReport:
        """The report: means over the scored queries, summed in the planned order.

        :param rows: each planned query's values in the planned order (``None`` for a query
            not scored), when they are kept outside the sheet; by default the sheet's own.
        """
        planned = self.plan.planned
        scored: list[str]
        values: list[Mapping[str, float]]
        if rows is None:
            per_query = self.per_query
            scored = [query_id for query_id in planned if query_id in per_query]
            values = list(map(per_query.__getitem__, scored))
        elif None in rows:
            scored = list(compress(planned, map(is_not, rows, repeat(None))))
            values = [row for row in rows if row is not None]
        else:  # every planned query scored: the lists as they are, not copies
            scored, values = planned, cast("list[Mapping[str, float]]", rows)
        metrics: dict[str, float] = {}
        if scored:
            aggregate = self.plan.aggregate
            for key in self.plan.keys:
                # Left to right from 0.0, as a plain loop adds (builtin sum compensates on 3.12+,
                # which would change the last digits between Python versions).
                metrics[key] = aggregate(key, list(map(itemgetter(key), values)))
        short, failures, latency = set(self.short_rankings), self.failures, self.latency
        # What nothing was recorded in is not looked up query by query.
        return RetrievalEvalReport(
            metrics=metrics,
            per_query=FrozenDict(zip(scored, map(frozen_dict, values), strict=True)),
            n_queries=len(scored),
            k_values=self.plan.scoring.k_values,
            skipped=dict(self.plan.skipped),
            short_rankings=tuple(q for q in planned if q in short) if short else (),
            failures=tuple(failures[q] for q in planned if q in failures) if failures else (),
            latency={q: latency[q] for q in planned if q in latency} if latency else {},
            manifest=self.manifest(manifest or {}),
        )

    def note_depth(self, depth: int) -> None:
        """Count a scored ranking of ``depth`` documents in :meth:`ranking_depth`."""
        if self._shallowest is None or depth < self._shallowest:
            self._shallowest = depth
        if self._deepest is None or depth > self._deepest:
            self._deepest = depth

    def note_depths(self, depths: list[int]) -> None:
        """:meth:`note_depth` for each of ``depths`` (C-level passes)."""
        if depths:
            self.note_depth(min(depths))
            self.note_depth(max(depths))

    def ranking_depth(self) -> dict[str, int] | None:
        """The shallowest and deepest ranking scored: what measures without a cutoff saw."""
        if self._shallowest is None or self._deepest is None:
            return None
        return {"shallowest": self._shallowest, "deepest": self._deepest}

    def manifest(self, extra: Mapping[str, Any]) -> dict[str, Any]:
        """What produced the report: library version, parameters, input fingerprints."""
        return {
            "library": "ef-evaluation",
            "version": _version(),
            "parameters": {
                "k_values": list(self.plan.scoring.k_values),
                "metrics": [metric.name for metric in self.plan.scoring.metrics],
                "ignore_identical_ids": self.plan.ignore_identical_ids,
                **self.plan.parameters(),
                **self.parameters,
            },
            "ranking_depth": self.ranking_depth(),
            "fingerprints": self.plan.digests(),
            **extra,
        }
