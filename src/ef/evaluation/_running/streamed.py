"""Scoring a run file query by query: memory bounded by one query, the qrels and the values.

The queries of a grouped TREC run file come from :mod:`ef.evaluation._io.stream` (a plugin's
streaming parser first, when it offers one) and go straight into the same
:class:`~ef.evaluation._scoring.aggregate.ScoreSheet` that scores an in-memory run, so the
values and means are the in-memory path's, bit for bit: each query is scored from the same dict,
and the means are summed in qrels order whatever the order of the file.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ef.evaluation._io import stream
from ef.evaluation._io.files import PathArg, rereadable
from ef.evaluation._report.reports import RetrievalEvalReport
from ef.evaluation._running.depth import cut_scores
from ef.evaluation._running.driver import plan_queries
from ef.evaluation._running.options import RunOptions
from ef.evaluation._scoring.aggregate import ScoreSheet
from ef.evaluation._scoring.plan import QueryPlan
from ef.evaluation._scoring.run_queries import check_run_queries
from ef.evaluation._types import Qrels

if TYPE_CHECKING:
    from ef.evaluation._plugins.host import PluginHost

__all__ = ["evaluate_run_file"]


def evaluate_run_file(
    path: PathArg,
    qrels: Qrels,
    options: RunOptions,
    plugins: PluginHost,
    *,
    name: str,
    stacklevel: int = 2,
) -> RetrievalEvalReport:
    """Score the grouped TREC run file ``path`` against ``qrels``, one query at a time.

    A pipe or FIFO is copied once to a temporary file first (error messages read the file
    again); a regular file is read in place. The run's query ids are checked against the
    judged queries once the file is read (only the ids are kept for that).

    :param plugins: the plugin host: its metrics, and its streaming run parser if any.
    :param name: the run as messages name it.
    :param stacklevel: a warning's, counted from the caller of this function.
    :raises DatasetFormatError: for a bad line, a doc listed twice for a query, or a query
        seen again after another one (each naming the file and both lines).
    :raises MissingQueriesError: as
        :func:`~ef.evaluation._scoring.run_queries.check_run_queries` does.
    """
    plan = plan_queries(qrels, None, options, plugins)
    with rereadable(path) as source:
        by_query = stream.streaming_form(plugins.trec_run_parser())
        if by_query is not None:
            try:
                sheet, seen = _score(plan, options, stream.plugin_queries(source, by_query))
            except stream.StreamDeclined:
                by_query = None  # the built-in reader reads the file again and names the bad line
        if by_query is None:
            sheet, seen = _score(plan, options, stream.trec_queries(source))
    coverage = check_run_queries(
        plan.planned,
        seen,
        missing_queries=options.missing_queries,
        run=name,
        stacklevel=stacklevel + 1,
    )
    return sheet.report({"run": {"queries": len(seen), **coverage.as_manifest()}})


def _score(
    plan: QueryPlan, options: RunOptions, queries: Iterable[stream.QueryScores]
) -> tuple[ScoreSheet, dict[str, None]]:
    """The score sheet of every planned query, and the run's query ids in file order."""
    sheet = ScoreSheet(plan, parameters=options.recorded())
    planned = set(plan.planned)
    add_scores = sheet.add_scores
    seen: dict[str, None] = {}
    for query_id, scores in queries:
        seen[query_id] = None
        if query_id in planned:
            add_scores(query_id, cut_scores(scores, options.depth))
    empty: list[str] = []
    for query_id in plan.planned:
        if query_id not in sheet.per_query:
            sheet.add_ranking(query_id, empty, unique=True)
    return sheet, seen
