"""Runs made ready to fuse: each query of each run as its scores, in trec_eval's rank order.

A fusion method sees one query at a time: one ``{doc_id: score}`` dict per run, iterated best
first (score descending, ties by doc id descending, :func:`rank_by_score`), so a rank-based
method reads a doc's rank off its position. A query missing from a run is an empty ranking
there. A run given as ranked doc-id lists has no scores: its ranking gets the stand-in scores
``n, n-1, …, 1``, which only rank-based methods and the order-based normalisations may use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import islice
from operator import gt
from typing import Any

from ef.evaluation._fusion._order import rank_by_score
from ef.evaluation._io.frames import ACCEPTED_RUN, as_run, describe_type, is_frame
from ef.evaluation._scoring.run_queries import MissingQueries, check_run_queries
from ef.evaluation._types import Run

__all__ = [
    "EMPTY",
    "PreparedRuns",
    "Ranking",
    "check_queries",
    "prepare_runs",
    "rank_order",
]

Ranking = dict[str, float]
"""One query of one run: ``{doc_id: score}``, iterated best first."""

EMPTY: Ranking = {}
"""The ranking of a query a run does not have (shared: never mutated)."""


class PreparedRuns:
    """The runs to fuse, query by query.

    :ivar by_query: ``{query_id: [ranking of run 1, ranking of run 2, …]}``, queries in the order
        they first appear across the runs.
    :ivar scored: per run, whether it came with scores (``False`` for ranked doc-id lists).
    """

    __slots__ = ("by_query", "scored")

    def __init__(self, by_query: dict[str, list[Ranking]], scored: list[bool]) -> None:
        self.by_query = by_query
        self.scored = scored

    @property
    def n_runs(self) -> int:
        return len(self.scored)

    def held_by(self, index: int) -> list[str]:
        """The queries run ``index`` holds, as :func:`prepare_runs` found them (a query it
        lacks has the shared :data:`EMPTY` there, an empty ranking of its own does not)."""
        return [
            query_id for query_id, rankings in self.by_query.items() if rankings[index] is not EMPTY
        ]

    def subset(self, query_ids: Sequence[str]) -> PreparedRuns:
        """The same runs restricted to ``query_ids`` (a query none of them has is empty)."""
        empty = [EMPTY] * self.n_runs
        return PreparedRuns(
            {qid: self.by_query.get(qid, empty) for qid in query_ids}, list(self.scored)
        )


def rank_order(scores: Mapping[str, float]) -> Ranking:
    """``scores`` as a dict iterated in trec_eval's order (itself when it already is one)."""
    values = scores.values()
    if isinstance(scores, dict) and all(map(gt, values, islice(values, 1, None))):
        return scores
    return {doc: scores[doc] for doc in rank_by_score(scores)}


def _where(run_index: int, query_id: str) -> str:
    return f"run {run_index + 1}, query {query_id!r}"


def _listed_ranking(ranked: Sequence[Any], run_index: int, query_id: str) -> Ranking:
    n = len(ranked)
    ranking = {doc: float(n - i) for i, doc in enumerate(ranked)}
    if len(ranking) != n:
        # Which of its places would be the doc's rank is a guess: refuse it, as TREC runs do.
        seen: set[Any] = set()
        doc = next(d for d in ranked if d in seen or seen.add(d))  # type: ignore[func-returns-value]
        raise ValueError(
            f"{_where(run_index, query_id)}: doc {doc!r} is ranked twice; "
            "a ranking names each doc once"
        )
    return ranking


def prepare_runs(runs: Sequence[Run]) -> PreparedRuns:
    """Check ``runs`` and put every query of every run in rank order.

    :raises TypeError: if ``runs`` is not a sequence of runs, a run is neither a mapping nor a
        DataFrame (pandas, polars) or pyarrow Table, or a query's
        entry is neither a ``{doc_id: score}`` mapping nor a list of doc ids.
    :raises ValueError: for a score that is NaN or infinite, or a ranked list naming one doc
        twice (naming the run and the query).
    """
    if isinstance(runs, Mapping | str | bytes) or not isinstance(runs, Sequence):
        raise TypeError(
            f"runs must be a sequence of runs (a list of {{query_id: ...}} mappings), "
            f"got {type(runs).__name__}"
        )
    n_runs = len(runs)
    by_query: dict[str, list[Ranking]] = {}
    scored = [True] * n_runs
    for index, given in enumerate(runs):
        if not isinstance(given, Mapping) and not is_frame(given):
            raise TypeError(f"run {index + 1} is a {describe_type(given)}; expected {ACCEPTED_RUN}")
        run = as_run(given, f"run {index + 1}")
        for query_id, entry in run.items():
            if isinstance(entry, Mapping):
                ranking = rank_order(entry)  # its scores were checked by as_run
            elif isinstance(entry, list | tuple):
                ranking = _listed_ranking(entry, index, query_id)
                scored[index] = False
            else:
                raise TypeError(
                    f"{_where(index, query_id)}: the entry is a {type(entry).__name__}; expected "
                    "a {doc_id: score} mapping or a list of doc ids, best first"
                )
            rankings = by_query.get(query_id)
            if rankings is None:
                rankings = by_query[query_id] = [EMPTY] * n_runs
            rankings[index] = ranking
    return PreparedRuns(by_query, scored)


def check_queries(held: Sequence[Sequence[str]], missing_queries: MissingQueries) -> None:
    """Check each run's query ids against the other runs': one that shares none with them is
    refused, naming the likely cause (a prefix, zero padding, letter case); one that lacks some
    of theirs is warned about (``missing_queries``, as for :func:`~ef.evaluation.evaluate_run`).

    :param held: each run's query ids, in order.
    :raises MissingQueriesError: for a run that holds none of the other runs' queries (unless
        ``missing_queries="zero"``), or lacks any under ``"error"``.
    """
    if missing_queries == "zero" or len(held) < 2:
        return
    for index, own in enumerate(held):
        others = [i for i in range(len(held)) if i != index]
        theirs = list(dict.fromkeys(q for i in others for q in held[i]))
        where = f"run {others[0] + 1}" if len(others) == 1 else "the other runs"
        check_run_queries(
            theirs,
            dict.fromkeys(own),  # in order, for the ids a message shows
            missing_queries=missing_queries,
            run=f"run {index + 1}",
            qrels=where,
            noun=f"queries of {where}",
            consequence=f"they are fused from {where} alone",
            stacklevel=3,
        )
