"""Driving one evaluation of a retriever: inputs planned, retriever adapted, outcomes scored
and journaled.

The entry points (:mod:`ef.evaluation._running.evaluate`) build a :class:`RetrieverRun` and
drive it inline, on a fresh event loop, or in the caller's loop; this module holds what they
share. The entry points hand it the plugin host; the plugins' answers (metrics, adapters, doc id
getters, a compiled first pass over qrels) are asked of it here and handed to the pure layers
below.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from ef._progress import shown
from ef.evaluation._exceptions import QueryError, UnusableResults
from ef.evaluation._metric_names.resolve import resolve_names
from ef.evaluation._report.reports import RetrievalEvalReport
from ef.evaluation._running.adapters import (
    DocIds,
    PreparedRetriever,
    prepare_retriever,
    qualified_name,
    to_doc_ids,
)
from ef.evaluation._running.journal import Journal, JournalEntry
from ef.evaluation._running.options import (
    EvaluationOptions,
    QueryOutcome,
    ScoringOptions,
    query_failure,
)
from ef.evaluation._scoring.query_plan import QueryPlan, fingerprint
from ef.evaluation._scoring.score_sheet import Progress, ScoreSheet
from ef.evaluation._types import Qrels, Queries

if TYPE_CHECKING:
    from rich.console import Console

    from ef.evaluation._plugins.host import PluginHost

__all__ = [
    "RetrieverRun",
    "describe_retriever",
    "plan_queries",
    "progress_shown",
    "queries_shown",
    "retriever_identity",
]


@contextlib.contextmanager
def progress_shown(options: EvaluationOptions) -> Iterator[EvaluationOptions]:
    """``options`` with ``progress=True`` made a display of the queries done, while it runs.

    A callback or ``None`` is kept as it is; the display is closed when the block ends.
    """
    with queries_shown(options.progress) as callback:
        yield options if callback is options.progress else attrs.evolve(options, progress=callback)


def queries_shown(
    show: bool | Callable[[Progress], None] | None, *, console: Console | None = None
) -> contextlib.AbstractContextManager[Callable[[Progress], None] | None]:
    """The callback ``progress=show`` stands for: ``True`` shows the queries done out of the
    total, queries per second, the failures and the running primary metric (``ndcg@10``)."""
    return shown(
        show, label="queries", unit="queries", counts=_counts, bar_unit="q", console=console
    )


def _counts(progress: Progress) -> tuple[int, int, str, float]:
    notes = [f"{progress.failed} failed"] if progress.failed else []
    if progress.primary is not None and progress.primary_name:
        notes.append(f"{progress.primary_name} {progress.primary:.4f}")
    return progress.done, progress.total, ", ".join(notes), progress.elapsed


def plan_queries(
    qrels: Qrels, queries: Queries | None, options: ScoringOptions, plugins: PluginHost
) -> QueryPlan:
    """The :class:`QueryPlan` of ``options``, their metrics looked up in the registry of
    ``plugins``, with a plugin's compiled first pass over plain qrels when one is installed.

    :raises ValueError: for an unknown metric name (before anything else is checked).
    """
    return QueryPlan(
        qrels,
        queries,
        metrics=resolve_names(options.metrics, plugins.registry.metrics),
        k_values=options.k_values,
        ignore_identical_ids=options.ignore_identical_ids,
        judging=options.judging,
        qrels_pass=plugins.qrels_pass(),
    )


class RetrieverRun:
    """One evaluation of a retriever: its plan and score sheet, the prepared retriever, options.

    :param plugins: the plugin host whose metrics, adapters and doc id getters it uses.
    """

    def __init__(
        self,
        retriever: Any,
        qrels: Qrels,
        queries: Queries,
        options: EvaluationOptions,
        plugins: PluginHost,
    ) -> None:
        self.plugins = plugins
        plan = plan_queries(qrels, queries, options, plugins)
        # ``progress=True`` is made a display by the entry points (``progress_shown``).
        progress = options.progress if callable(options.progress) else None
        self.sheet = ScoreSheet(plan, parameters={}, progress=progress)
        max_k = plan.max_k
        journal, limit = options.journal, options.limit
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
            limit = max_k + (1 if options.ignore_identical_ids else 0)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be an int >= 1 or None, got {limit!r}")
        self.limit = limit
        self.queries = queries
        self.prepared: PreparedRetriever = prepare_retriever(
            retriever, limit, plugins.adapt_retriever
        )
        self.retriever_id = retriever_identity(retriever, options.retriever_id)
        self._describe = _describer(retriever, self.prepared)
        if self._describe is not None:
            describe_retriever(self._describe, self.retriever_id)  # a broken describe() fails now
        # What was given, resolved: what the manifest and the journal's fingerprint record.
        self.options = attrs.evolve(options, limit=limit, retriever_id=self.retriever_id)
        self.sheet.parameters.update(self.options.recorded())
        self.journal: Journal | None = None
        self.resumed = 0
        if journal is not None:
            self._open_journal(journal)

    def _open_journal(self, path: str | os.PathLike[str]) -> None:
        key = fingerprint({**self.sheet.plan.fingerprints(), **self.options.journal_keys()})
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
                mapped = to_doc_ids(outcome.results, self.limit, self.plugins)
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
            run_queries_inline(
                self.prepared.call,
                self.planned(),
                self.options,
                self.accept,
                batch=self.prepared.batch,
            )
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
                batch=self.prepared.batch,
            )
        finally:
            self.close()

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()

    def report(self) -> RetrievalEvalReport:
        extra: dict[str, Any] = {"retriever": self.retriever_id}
        if self._describe is not None:
            # Asked again at the end: a cluster's replicas may have moved or restarted meanwhile.
            extra["retriever_info"] = describe_retriever(self._describe, self.retriever_id)
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


def _describer(retriever: object, prepared: PreparedRetriever) -> Callable[[], Any] | None:
    """The retriever's ``describe`` method, else its adapter's (a plugin's adapter may describe
    what it wraps), or ``None``."""
    for owner in (retriever, prepared.adapter):
        describe = getattr(owner, "describe", None)
        if callable(describe):
            return describe  # type: ignore[no-any-return]
    return None


def _key_not_a_string(value: Any) -> object | None:
    """A mapping key in ``value`` that is not a string (``json`` would turn it into one)."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return key  # type: ignore[no-any-return]
            found = _key_not_a_string(item)
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for item in value:
            found = _key_not_a_string(item)
            if found is not None:
                return found
    return None


def describe_retriever(describe: Callable[[], Any], retriever_id: str) -> dict[str, Any]:
    """What ``describe()`` says about a retriever, as the plain JSON object the manifest records
    under ``retriever_info``.

    :raises TypeError: when ``describe()`` returns anything but a mapping with string keys of
        JSON values (finite numbers, strings, booleans, ``None``, lists and such mappings).
    """
    try:
        info = describe()
    except Exception as error:
        error.add_note(f"in describe() of retriever {retriever_id!r}")
        raise
    problem = None
    if not isinstance(info, Mapping):
        problem = f"returned {info!r:.60} ({type(info).__qualname__}), not a mapping"
    elif (key := _key_not_a_string(info)) is not None:
        problem = f"returned a mapping that is not plain JSON: the key {key!r:.60} is no string"
    else:
        try:
            # The manifest is written as strict JSON; a round trip also makes a private copy.
            text = json.dumps(info, allow_nan=False)
        except (TypeError, ValueError, RecursionError) as error:
            problem = f"returned a mapping that is not plain JSON: {error}"
        else:
            return dict(json.loads(text))
    raise TypeError(
        f"describe() of retriever {retriever_id!r} {problem}; it must return a JSON object "
        "(string keys; finite numbers, strings, booleans, None, lists and objects), which the "
        "report records as manifest['retriever_info']"
    )
