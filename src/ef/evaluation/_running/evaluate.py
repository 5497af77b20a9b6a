"""The retrieval entry points: evaluate_retrieval, evaluate_retrieval_async, evaluate_run.

Each takes the process's plugin host once and hands it to what it drives
(:class:`~ef.evaluation._running.driver.RetrieverRun`,
:func:`~ef.evaluation._running.run_scoring.score_run`); nothing below asks for it.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Literal

from ef.evaluation._exceptions import IncompleteEvaluationWarning
from ef.evaluation._groups.aggregate import retrieval_with_groups
from ef.evaluation._groups.inputs import as_query_groups
from ef.evaluation._groups.query_groups import GroupsInput, QueryGroups
from ef.evaluation._plugins import HOST
from ef.evaluation._report.intervals import IntervalMethod, check_interval_options
from ef.evaluation._report.reports import RetrievalEvalReport
from ef.evaluation._running.driver import RetrieverRun, progress_shown
from ef.evaluation._running.loop import in_event_loop
from ef.evaluation._running.options import (
    DEFAULT_K_VALUES,
    DEFAULT_METRICS,
    EvaluationOptions,
    RunOptions,
)
from ef.evaluation._running.resumed import say_resumed
from ef.evaluation._running.run_scoring import score_run
from ef.evaluation._running.saved_run import saved, saving_run
from ef.evaluation._scoring.run_queries import MissingQueries
from ef.evaluation._scoring.score_sheet import Progress
from ef.evaluation._types import Qrels, Queries, Run

# The runner itself brings anyio and asyncio: it is imported when a retriever runs, not with
# the package.

__all__ = [
    "DEFAULT_K_VALUES",
    "DEFAULT_METRICS",
    "evaluate_retrieval",
    "evaluate_retrieval_async",
    "evaluate_run",
]


def evaluate_retrieval(
    retriever: Any,
    qrels: Qrels,
    queries: Queries,
    *,
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    metrics: Sequence[str] = DEFAULT_METRICS,
    limit: int | None = None,
    max_concurrency: int | None = None,
    timeout: float | None = None,
    retries: int = 0,
    retry_on: tuple[type[BaseException], ...] = (TimeoutError, OSError),
    on_error: Literal["raise", "record"] = "raise",
    rate_limit: float | None = None,
    progress: bool | Callable[[Progress], None] | None = None,
    ignore_identical_ids: bool = False,
    journal: str | os.PathLike[str] | None = None,
    retriever_id: str | None = None,
    relevance_level: int | None = None,
    judged_only: bool = False,
    save_run: str | os.PathLike[str] | None = None,
    batch_size: int | None = None,
    interval: IntervalMethod | None = None,
    confidence_level: float = 0.95,
    groups: GroupsInput | None = None,
) -> RetrievalEvalReport:
    """Score a retriever against a BEIR-shaped evaluation set.

    For every query judged in ``qrels``, the ``retriever`` is run, its results are mapped back
    to *source document ids* (``_result_doc_id()``, de-duplicated to the best rank per source),
    and each requested metric is computed at each cutoff in ``k_values``. The report holds the
    mean of each ``"<metric>@<k>"`` over all scored queries — primary metric **NDCG@10**.

    The natural pairing with ``ingest()``::

        corpus, queries, qrels = read_beir("path/to/beir/dataset")
        index = ingest(corpus, embedder="st:all-MiniLM-L6-v2")
        report = evaluate_retrieval(index, qrels, queries)
        report.primary  # mean NDCG@10

    Aggregation, precisely: a query is scored when it has at least one positive judgement and a
    text in ``queries``; the others are listed in ``report.skipped`` with the reason (trec_eval
    would count a query without positives as 0). A scored query whose retriever returns nothing
    scores 0 (trec_eval ``-c``). Means are plain averages over the scored queries, summed in the
    order of ``qrels``. ``report.short_rankings`` lists the queries whose de-duplicated ranking
    came out shorter than the largest cutoff although the retriever returned ``limit`` results.

    Concurrency: a sync retriever runs inline in the caller's thread, with no event loop, when
    ``max_concurrency`` is 1 (its default for a sync retriever) and there is no ``timeout``;
    otherwise in worker threads — a call that times out is abandoned, not killed (Python cannot
    kill a thread), and keeps its thread until it returns. An async retriever (default
    concurrency 16) runs under ``anyio.run``; called inside a running event loop (Jupyter, an
    app), the evaluation runs on a fresh loop in another thread, so a client bound to the
    caller's loop must use ``await evaluate_retrieval_async(...)`` instead.

    :param retriever: what answers a query — a ``SearchableCorpus``, a ``SourceManager``, or any
        callable ``query -> ranked results`` (sync or async; ``limit=`` is passed when it accepts
        it, otherwise its first ``limit`` results are kept). Results are a list (or any ordered
        iterable) of ``SearchHit``\\ s, ``Segment``\\ s or bare doc-id strings, best first
        (plugins add more types), or a ``{doc_id: score}`` mapping, ranked by score as
        trec_eval ranks a run (ties by doc id descending); its scores must be finite numbers.
        Anything else — ``None`` (a forgotten ``return``), a set, a string, a number, a
        coroutine nobody awaited, a doc id that is not a string — fails that query as an
        error of the retriever would (see ``on_error``); it is never scored 0. A retriever —
        or the callable a plugin adapted it to — with ``describe()`` returning a JSON object is
        recorded as ``report.manifest["retriever_info"]``, asked before the first query and
        when the report is made; a ``describe()`` returning anything else is a ``TypeError``.
    :param qrels: the relevance judgements — ``{query_id: {doc_id: relevance}}``. Queries with no
        positive judgement are skipped. Grades must be finite numbers: a NaN or infinite grade
        is refused before anything runs, naming the query and the doc.
    :param queries: the query texts — ``{query_id: query_text}``. A judged query absent here
        cannot be run and is skipped.
    :param k_values: the rank cutoffs to evaluate at.
    :param metrics: which metrics to compute — any of ``ndcg`` / ``recall`` / ``precision`` /
        ``mrr`` / ``map`` (each at every cutoff of ``k_values``), any trec_eval measure by its
        trec_eval name (``P``, ``ndcg_cut``, ``recip_rank``, ``set_F`` …, reported under
        pytrec_eval's keys at trec_eval's default parameters; ``trec_map``, ``trec_ndcg`` and
        ``trec_recall`` for trec_eval's ``map``, ``ndcg`` and ``recall``, keyed ``trec_map``,
        ``trec_ndcg``, ``trec_recall_5`` …: a key begins with the name asked for), any
        notation (``nDCG@10``, ``P(rel=2)@5``, reported under the name as written), or a
        plugin's. A
        measure without a cutoff sees the ranking as retrieved, ``limit`` deep:
        ``report.manifest["ranking_depth"]`` says how deep that was.
    :param limit: how many results to retrieve per query. ``None`` uses ``max(k_values)``; raise
        it when sources segment into many pieces (de-duplication to source level can otherwise
        shorten the ranking). The built-in index (``ingest``) is asked for documents, each at
        its best segment, so there ``limit`` counts documents.
    :param max_concurrency: queries in flight at once; ``None`` is 1 for a sync retriever and 16
        for an async one.
    :param timeout: seconds allowed per attempt, or ``None``.
    :param retries: extra attempts after a failure of a ``retry_on`` type, with full-jitter
        exponential backoff.
    :param retry_on: the exception types worth retrying.
    :param on_error: ``"raise"`` stops at the first failed query (a :class:`QueryError` names
        it and chains the cause); ``"record"`` keeps a ``QueryFailure`` in ``report.failures``,
        leaves the query out of the means and warns that the evaluation is incomplete. A metric
        that fails (it raises, or returns something other than a finite number) is no failure of
        a query: it stops the evaluation in both modes, naming the metric, its plugin and the
        query.
    :param rate_limit: at most this many requests per second, over all workers.
    :param progress: called with a :class:`Progress` after each query; ``True`` shows the
        queries done on standard error — a bar on a terminal, else a line every 10 s
        (``EF_PROGRESS_INTERVAL``) with the rate and the time left.
    :param ignore_identical_ids: drop results whose doc id equals the query id (BEIR's default;
        off here). With ``limit=None`` one extra result is then asked for, as BEIR does.
    :param journal: a JSONL file recording each finished query as it lands (flushed per
        record). Rerunning with the same journal skips the finished queries and retries the
        failed ones (with ``progress``, a line on standard error says how many it took from
        the journal, as ``report.manifest["journal"]["resumed"]`` records); the journal can be
        re-scored with other metrics or cutoffs up to the ``limit`` it was retrieved with
        (``limit=None`` then adopts it). A journal written for other qrels, queries, retriever
        or limit is refused.
    :param retriever_id: the retriever's identity in the journal's fingerprint and the manifest;
        by default its ``retriever_id`` attribute or its qualified name.
    :param relevance_level: the smallest grade that counts as relevant (trec_eval ``-l``);
        ``None`` counts every grade ``> 0``. nDCG and the other gain-based measures ignore it,
        as trec_eval does; a query with nothing relevant at the level is skipped.
    :param judged_only: rank only judged documents (trec_eval ``-J``): a retrieved document
        without a grade ``>= 0`` is dropped before ranks are counted.
    :param save_run: also write the rankings that were scored to this run file once the
        evaluation is done, as ``ef-eval retrieval --save-run`` does: TREC, or JSON, JSON Lines
        or Parquet by the file's name (``.json``, ``.jsonl``, ``.parquet``; ``.gz``
        compresses), written all at once, tagged with the retriever's identity. The rankings
        come from ``journal`` (a temporary one when not given, removed once the file is
        written); the scores are the retriever's wherever trec_eval's ordering of them gives
        the evaluated ranking back, else ``n - rank``. ``report.manifest["run_file"]`` names
        the file. Its folder must exist (checked before anything is retrieved); if the file
        cannot be written, the error says where the rankings are kept.
    :param batch_size: queries per call for a retriever with a batch form
        (``search_batch(queries, *, limit)``, as the built-in indexes have: see
        :doc:`/remote`); ``None`` takes the retriever's own ``batch_size`` attribute, else 32;
        ``1`` asks one query per call. Timeouts, retries, failures, the journal and progress
        stay per query: a batch that fails is split until a failing query fails alone.
    :param interval: also state each mean's uncertainty: ``"t"`` (Student's t interval) or
        ``"bootstrap"`` (percentile bootstrap, 10,000 resamples of the queries, seed 0), in
        ``report.intervals``; ``None`` (the default) computes none. Needs scipy (the ``stats``
        extra); :meth:`RetrievalEvalReport.with_intervals` takes other resamples and seeds.
    :param confidence_level: the coverage of ``interval``, in (0, 1).
    :param groups: query groups (:class:`QueryGroups`, a mapping of query id to group name or
        names, a groups file's path, or a function of the query text): the report then keeps
        each group's means and counts (``report.groups``), equal to an evaluation of the
        group's queries alone; a scored query in no group counts in no group, and a group
        member that is not scored is left out of its means with a :class:`QueryGroupsWarning`
        (see :doc:`/groups`).
    :returns: a :class:`RetrievalEvalReport`.
    :raises ValueError: for an unknown metric name, a NaN or infinite grade, or if no query can
        be scored.
    :raises FileNotFoundError: when the folder of ``save_run`` does not exist.
    :raises TypeError: for a grade that is not a number or a doc id in ``qrels`` that is not a
        string.
    :raises QueryError: for a failed query in ``on_error="raise"`` mode.

    >>> qrels = {'q1': {'d1': 1.0}, 'q2': {'d2': 1.0}}
    >>> queries = {'q1': 'alpha', 'q2': 'beta'}
    >>> def retriever(query, *, limit=10):
    ...     return {'alpha': ['d1', 'd2'], 'beta': ['d1', 'd2']}[query][:limit]
    >>> report = evaluate_retrieval(retriever, qrels, queries, k_values=(1, 2))
    >>> report.metrics['recall@2'], report.n_queries
    (1.0, 2)
    """
    check_interval_options(interval, confidence_level)
    grouped = as_query_groups(groups, queries, entry_point="evaluate_retrieval")
    with saving_run(save_run, journal) as saver:
        journal = journal if saver is None else saver.journal
        with progress_shown(EvaluationOptions.from_keywords(locals())) as options:
            evaluation = RetrieverRun(retriever, qrels, queries, options, HOST)
            say_resumed(evaluation, options)
            if options.runs_inline and not evaluation.prepared.is_async:
                evaluation.run_inline()
            else:
                import anyio
                import anyio.from_thread

                if in_event_loop():
                    with anyio.from_thread.start_blocking_portal() as portal:
                        portal.call(evaluation.run_async)
                else:
                    anyio.run(evaluation.run_async)
        return stated(saved(_finish(evaluation, grouped), saver), interval, confidence_level)


async def evaluate_retrieval_async(
    retriever: Any,
    qrels: Qrels,
    queries: Queries,
    *,
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    metrics: Sequence[str] = DEFAULT_METRICS,
    limit: int | None = None,
    max_concurrency: int | None = None,
    timeout: float | None = None,  # noqa: ASYNC109 - a per-attempt limit, applied inside
    retries: int = 0,
    retry_on: tuple[type[BaseException], ...] = (TimeoutError, OSError),
    on_error: Literal["raise", "record"] = "raise",
    rate_limit: float | None = None,
    progress: bool | Callable[[Progress], None] | None = None,
    ignore_identical_ids: bool = False,
    journal: str | os.PathLike[str] | None = None,
    retriever_id: str | None = None,
    relevance_level: int | None = None,
    judged_only: bool = False,
    save_run: str | os.PathLike[str] | None = None,
    batch_size: int | None = None,
    interval: IntervalMethod | None = None,
    confidence_level: float = 0.95,
    groups: GroupsInput | None = None,
) -> RetrievalEvalReport:
    """Score a retriever concurrently, in the caller's event loop (asyncio or trio).

    The same evaluation as :func:`evaluate_retrieval` — same parameters, same report, same
    numbers — awaited instead of blocking. A fixed pool of ``max_concurrency`` workers pulls
    queries from one plan; each query is scored as its result arrives. Sync retrievers run in
    worker threads; a call that times out is abandoned, not killed. Cancelling the caller (an
    outer ``move_on_after``, KeyboardInterrupt) stops the evaluation promptly.

    >>> import anyio
    >>> async def retriever(query, *, limit=10):
    ...     return {'alpha': ['d1', 'd2'], 'beta': ['d2']}[query][:limit]
    >>> report = anyio.run(lambda: evaluate_retrieval_async(
    ...     retriever, {'q1': {'d1': 1.0}, 'q2': {'d2': 1.0}}, {'q1': 'alpha', 'q2': 'beta'},
    ...     k_values=(1,), max_concurrency=2))
    >>> report.metrics['ndcg@1']
    1.0
    """
    check_interval_options(interval, confidence_level)
    grouped = as_query_groups(groups, queries, entry_point="evaluate_retrieval_async")
    with saving_run(save_run, journal) as saver:
        journal = journal if saver is None else saver.journal
        with progress_shown(EvaluationOptions.from_keywords(locals())) as options:
            evaluation = RetrieverRun(retriever, qrels, queries, options, HOST)
            say_resumed(evaluation, options)
            await evaluation.run_async()
        return stated(saved(_finish(evaluation, grouped), saver), interval, confidence_level)


def stated(
    report: RetrievalEvalReport, interval: IntervalMethod | None, confidence_level: float
) -> RetrievalEvalReport:
    """``report`` with the intervals of its means asked for (``interval``), if any."""
    if interval is None:
        return report
    return report.with_intervals(interval, confidence_level=confidence_level)


def _finish(evaluation: RetrieverRun, groups: QueryGroups | None) -> RetrievalEvalReport:
    report = evaluation.report()
    if groups is not None:
        report = retrieval_with_groups(
            report, groups, evaluation.sheet.plan.aggregate, stacklevel=3
        )
    if report.failures:
        warnings.warn(
            f"the evaluation is incomplete: {len(report.failures)} of "
            f"{len(evaluation.sheet.plan.planned)} queries failed and are left out of the means "
            "(see report.failures)",
            IncompleteEvaluationWarning,
            stacklevel=3,
        )
    return report


def evaluate_run(
    run: Run | str | os.PathLike[str] | Any,
    qrels: Qrels | Any,
    *,
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    metrics: Sequence[str] = DEFAULT_METRICS,
    ignore_identical_ids: bool = False,
    relevance_level: int | None = None,
    judged_only: bool = False,
    run_format: str | None = None,
    missing_queries: MissingQueries = "warn",
    depth: int | None = None,
    interval: IntervalMethod | None = None,
    confidence_level: float = 0.95,
    groups: GroupsInput | None = None,
) -> RetrievalEvalReport:
    """Score a system's saved output against ``qrels``, as :func:`evaluate_retrieval` does.

    ``run`` is ``{query_id: [ranked doc ids]}`` or ``{query_id: {doc_id: score}}``; scored runs
    are put in trec_eval's order (score descending, ties by doc id descending). The same scoring
    core and aggregation rule as :func:`evaluate_retrieval`: every query in ``qrels`` with a
    positive judgement is scored, and a judged query missing from the run scores 0; queries in
    the run but not in ``qrels`` are ignored, as trec_eval does.

    The run's query ids are checked against the judged queries first (``missing_queries``): a
    run that holds none of them is refused with a :class:`MissingQueriesError` naming both
    sides' ids and the likely cause (a prefix such as ``q1`` against ``1``, zero padding
    ``001`` against ``1``, letter case), since it would score 0.0 everywhere; a run that lacks
    some of them gets one :class:`MissingQueriesWarning` with the counts and the first ids
    ("120 of 300 judged queries are not in the run; they score 0: …"). The manifest records
    the counts under ``run`` (``judged_queries``, ``judged_queries_in_run``).

    ``run`` and ``qrels`` may also be pandas or polars DataFrames or pyarrow Tables, one row per
    (query, doc) with columns found by name (``query_id``, ``doc_id``, ``score`` or ``rank``,
    ``relevance``, or a peer's alias such as ``qid``, ``docno``, ``label``: see
    :doc:`/dataframes`). ``run`` may be a run file's path: a TREC run file (by name, or
    ``run_format="trec"``) is then scored one query at a time, so memory holds one query's
    ranking, never the file; it must be grouped by query, as trec_eval writes runs. Values and
    means are the same, bit for bit, as for the run read into memory. Other formats
    (:func:`read_run`) are read whole.

    :param run: the rankings or scores per query, a DataFrame, or a run file's path.
    :param qrels: the relevance judgements: a mapping, a DataFrame, or a qrels file's path
        (TREC or BEIR form).
    :param k_values: the rank cutoffs.
    :param metrics: metric names (built-in or plugin).
    :param ignore_identical_ids: drop doc ids equal to the query id.
    :param relevance_level: the smallest relevant grade (trec_eval ``-l``), as in
        :func:`evaluate_retrieval`.
    :param judged_only: rank only judged documents (trec_eval ``-J``).
    :param run_format: the format of a run file given by path (``trec``, ``json``, ``jsonl``,
        ``parquet``); ``None`` tells it from the file name.
    :param missing_queries: what a judged query the run lacks does: ``"warn"`` (the default)
        scores it 0 with one :class:`MissingQueriesWarning` for the run; ``"zero"`` scores it 0
        silently, even when the run holds no judged query at all (trec_eval's ``-c``);
        ``"error"`` refuses a run that lacks any.
    :param depth: score only each query's first ``depth`` results (trec_eval ``-M``), cut in
        trec_eval's order before any metric sees them; ``None`` scores every result.
    :param interval: confidence intervals of the means, as in :func:`evaluate_retrieval`.
    :param confidence_level: their coverage, in (0, 1).
    :param groups: query groups, as in :func:`evaluate_retrieval` (a function of the query
        text needs the texts: pass ``QueryGroups.from_texts(queries, function)``).
    :raises ValueError: for an unknown metric name, a NaN score or grade, an infinite grade, or
        if no query can be scored.
    :raises TypeError: for a run or qrels of another type (a Series, an array, a list of
        tuples, a set, a generator, a DataFrame without the columns), naming the accepted
        types; for a query whose entry is no ranking (a string, a set, a number), a grade that
        is not a number, or a doc id in ``qrels`` that is not a string.
    :raises DatasetFormatError: for a bad line of a run file, or a TREC run file given by path
        that is not grouped by query (naming both lines of the query seen again).
    :raises MissingQueriesError: if the run holds no judged query (unless
        ``missing_queries="zero"``), or lacks any under ``missing_queries="error"``.

    >>> report = evaluate_run(
    ...     {'q1': {'d1': 0.9, 'd2': 0.4}, 'q2': ['d9', 'd3']},
    ...     {'q1': {'d2': 1.0}, 'q2': {'d3': 1.0}}, k_values=(2,), metrics=('mrr',))
    >>> report.metrics['mrr@2']
    0.5
    """
    check_interval_options(interval, confidence_level)
    grouped = as_query_groups(groups, entry_point="evaluate_run")
    options = RunOptions.from_keywords(locals())
    report = score_run(run, qrels, options, HOST, run_format=run_format, groups=grouped)
    return stated(report, interval, confidence_level)
