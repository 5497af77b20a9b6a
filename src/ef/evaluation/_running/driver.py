"""Driving one evaluation of a retriever: inputs planned, retriever adapted, outcomes scored
and journaled.

The entry points (:mod:`ef.evaluation._running.evaluate`) build a :class:`RetrieverRun` and
drive it inline, on a fresh event loop, or in the caller's loop; this module holds what they
share. The plugins' answers (metrics, adapters, doc id getters) are asked for here, through the
public functions of :mod:`ef.evaluation._plugins`, and handed to the pure layers below.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from ef.evaluation._exceptions import QueryError, UnusableResults
from ef.evaluation._plugins import HOST, adapt_retriever, lookup_metrics
from ef.evaluation._report.reports import RetrievalEvalReport
from ef.evaluation._running.adapters import (
    DocIds,
    PreparedRetriever,
    prepare_retriever,
    qualified_name,
    to_doc_ids,
)
from ef.evaluation._running.journal import Journal, JournalEntry
from ef.evaluation._running.options import QueryOutcome, RunnerOptions, query_failure
from ef.evaluation._scoring.aggregate import Progress, ScoreSheet
from ef.evaluation._scoring.measures.summary import DEFAULT_JUDGING, Judging
from ef.evaluation._scoring.plan import QueryPlan, fingerprint
from ef.evaluation._types import Qrels, Queries

__all__ = ["RetrieverRun", "plan_queries", "retriever_identity", "runner_options"]


def plan_queries(
    qrels: Qrels,
    queries: Queries | None,
    *,
    k_values: Iterable[int],
    metrics: Sequence[str],
    ignore_identical_ids: bool,
    judging: Judging = DEFAULT_JUDGING,
) -> QueryPlan:
    """The :class:`QueryPlan` for ``metrics`` looked up in the plugin registry.

    :raises ValueError: for an unknown metric name (before anything else is checked).
    """
    return QueryPlan(
        qrels,
        queries,
        metrics=lookup_metrics(metrics),
        k_values=k_values,
        ignore_identical_ids=ignore_identical_ids,
        judging=judging,
    )


class RetrieverRun:
    """One evaluation of a retriever: its plan and score sheet, the prepared retriever, options."""

    def __init__(
        self,
        retriever: Any,
        qrels: Qrels,
        queries: Queries,
        *,
        k_values: Sequence[int],
        metrics: Sequence[str],
        limit: int | None,
        options: RunnerOptions,
        progress: Callable[[Progress], None] | None,
        ignore_identical_ids: bool,
        journal: str | os.PathLike[str] | None,
        retriever_id: str | None,
        judging: Judging = DEFAULT_JUDGING,
    ) -> None:
        plan = plan_queries(
            qrels,
            queries,
            k_values=k_values,
            metrics=metrics,
            ignore_identical_ids=ignore_identical_ids,
            judging=judging,
        )
        self.sheet = ScoreSheet(plan, parameters={}, progress=progress)
        max_k = plan.max_k
        if limit is None and journal is not None and os.path.exists(journal):
            # Re-scoring a journal: keep the limit it was retrieved with.
            limit = Journal.read_header(journal).get("limit")
            if isinstance(limit, int) and limit < max_k:
                raise ValueError(
                    f"{os.fspath(journal)}: the journal's rankings were retrieved with "
                    f"limit={limit}, too short to score cutoff {max_k}; use a new journal"
                )
        if limit is None:
            # One more than needed when the query itself may come back (as BEIR does).
            limit = max_k + (1 if ignore_identical_ids else 0)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be an int >= 1 or None, got {limit!r}")
        self.limit = limit
        self.queries = queries
        self.options = options
        self.prepared: PreparedRetriever = prepare_retriever(retriever, limit, adapt_retriever)
        self.retriever_id = retriever_identity(retriever, retriever_id)
        self.sheet.parameters.update(
            limit=limit,
            max_concurrency=options.max_concurrency,
            timeout=options.timeout,
            retries=options.retries,
            retry_on=[f"{e.__module__}.{e.__qualname__}" for e in options.retry_on],
            on_error=options.on_error,
            rate_limit=options.rate_limit,
        )
        self.journal: Journal | None = None
        self.resumed = 0
        if journal is not None:
            self._open_journal(journal)

    def _open_journal(self, path: str | os.PathLike[str]) -> None:
        key = fingerprint(
            {**self.sheet.plan.fingerprints(), "retriever": self.retriever_id, "limit": self.limit}
        )
        self.journal = Journal(path, fingerprint=key, limit=self.limit, retriever=self.retriever_id)
        planned = set(self.sheet.plan.planned)
        for query_id, entry in self.journal.finished().items():
            if query_id in planned:
                self.sheet.add_ranking(
                    query_id,
                    entry.ranked,
                    unique=True,
                    retrieved=entry.retrieved,
                    limit=self.limit,
                    latency=entry.latency,
                )
                self.resumed += 1

    def planned(self) -> Iterable[tuple[str, str]]:
        queries, done = self.queries, self.sheet.per_query
        return ((q, queries[q]) for q in self.sheet.plan.planned if q not in done)

    def accept(self, outcome: QueryOutcome) -> None:
        """Score one finished query, or record its failure, and journal it.

        Results that are no ranking (``None``, a string, a set, an awaitable, a result type
        no plugin maps, a doc id that is not a string, a bad score) fail the query like an
        error in the retriever would: :class:`QueryError` in ``on_error="raise"`` mode,
        a recorded failure in ``"record"`` mode. They are not retried: the same call would
        return the same kind of thing. An exception from a plugin's doc id getter is the
        plugin's: it stops the evaluation in both modes, with a note naming the query.

        :raises QueryError: for such results in ``on_error="raise"`` mode.
        """
        failure = outcome.failure
        mapped: DocIds | None = None
        if failure is None:
            try:
                mapped = to_doc_ids(outcome.results, self.limit, HOST)
            except UnusableResults as unusable:
                error = unusable.error
                failure = query_failure(outcome.query_id, error, outcome.attempts)
                if self.options.on_error == "raise":
                    raise QueryError(failure) from error
            except Exception as error:  # a plugin's doc id getter: its bug, not the query's
                error.add_note(f"while mapping the results of query {outcome.query_id!r}")
                raise
        journal = self.journal
        if mapped is None:
            assert failure is not None  # one or the other, by construction
            self.sheet.add_failure(failure, outcome.latency)
            if journal is not None:
                journal.append(
                    JournalEntry(
                        outcome.query_id,
                        latency=outcome.latency,
                        attempts=outcome.attempts,
                        failure=failure,
                    )
                )
            return
        ranked, scores, retrieved = mapped
        if journal is not None:
            journal.append(
                JournalEntry(
                    outcome.query_id,
                    tuple(ranked),
                    None if scores is None else tuple(scores),
                    retrieved=retrieved,
                    latency=outcome.latency,
                    attempts=outcome.attempts,
                )
            )
        self.sheet.add_ranking(
            outcome.query_id,
            ranked,
            unique=True,
            retrieved=retrieved,
            limit=self.limit,
            latency=outcome.latency,
        )

    def run_inline(self) -> None:
        from ef.evaluation._running.runner import run_queries_inline

        try:
            run_queries_inline(self.prepared.call, self.planned(), self.options, self.accept)
        finally:
            self.close()

    async def run_async(self) -> None:
        from ef.evaluation._running.runner import run_queries_async

        try:
            await run_queries_async(
                self.prepared.call,
                self.planned(),
                self.options,
                self.accept,
                is_async=self.prepared.is_async,
            )
        finally:
            self.close()

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()

    def report(self) -> RetrievalEvalReport:
        extra: dict[str, Any] = {"retriever": self.retriever_id}
        if self.journal is not None:
            extra["journal"] = {"path": os.fspath(self.journal.path), "resumed": self.resumed}
        return self.sheet.report(extra)


def retriever_identity(retriever: object, retriever_id: str | None = None) -> str:
    """What identifies a retriever in fingerprints: ``retriever_id=``, the retriever's own
    ``retriever_id`` attribute (``HttpRetriever`` has one), or its qualified name."""
    if retriever_id is not None:
        return retriever_id
    own = getattr(retriever, "retriever_id", None)
    if isinstance(own, str):
        return own
    return qualified_name(retriever)


def runner_options(
    max_concurrency: int | None,
    timeout: float | None,
    retries: int,
    retry_on: tuple[type[BaseException], ...],
    on_error: Literal["raise", "record"],
    rate_limit: float | None,
) -> RunnerOptions:
    return RunnerOptions(
        max_concurrency=max_concurrency,
        timeout=timeout,
        retries=retries,
        retry_on=tuple(retry_on),
        on_error=on_error,
        rate_limit=rate_limit,
    )
