"""Scoring a run file query by query: memory bounded by one query, the qrels and the values.

The queries of a grouped TREC run file come from :mod:`ef.evaluation._io.stream` (a plugin's
streaming parser first, when it offers one) and go straight into the same
:class:`~ef.evaluation._scoring.aggregate.ScoreSheet` that scores an in-memory run, so the
values and means are the in-memory path's, bit for bit: each query is scored from the same dict,
and the means are summed in qrels order whatever the order of the file.
"""

from __future__ import annotations

from collections.abc import Iterable

from ef.evaluation._io import stream
from ef.evaluation._io.files import PathArg, rereadable
from ef.evaluation._plugins import HOST
from ef.evaluation._report.reports import RetrievalEvalReport
from ef.evaluation._running.driver import plan_queries
from ef.evaluation._running.options import ScoringOptions
from ef.evaluation._scoring.aggregate import ScoreSheet
from ef.evaluation._scoring.plan import QueryPlan
from ef.evaluation._types import Qrels

__all__ = ["evaluate_run_file"]


def evaluate_run_file(path: PathArg, qrels: Qrels, options: ScoringOptions) -> RetrievalEvalReport:
    """Score the grouped TREC run file ``path`` against ``qrels``, one query at a time.

    A pipe or FIFO is copied once to a temporary file first (error messages read the file
    again); a regular file is read in place.

    :raises DatasetFormatError: for a bad line, a doc listed twice for a query, or a query
        seen again after another one (each naming the file and both lines).
    """
    plan = plan_queries(qrels, None, options)
    with rereadable(path) as source:
        by_query = stream.streaming_form(HOST.trec_run_parser())
        if by_query is not None:
            try:
                return _score(plan, options, stream.plugin_queries(source, by_query))
            except stream.StreamDeclined:
                pass  # the built-in reader reads the file again and names the bad line
        return _score(plan, options, stream.trec_queries(source))


def _score(
    plan: QueryPlan, options: ScoringOptions, queries: Iterable[stream.QueryScores]
) -> RetrievalEvalReport:
    sheet = ScoreSheet(plan, parameters=options.recorded())
    planned = set(plan.planned)
    add_scores = sheet.add_scores
    count = 0
    for query_id, scores in queries:
        count += 1
        if query_id in planned:
            add_scores(query_id, scores)
    empty: list[str] = []
    for query_id in plan.planned:
        if query_id not in sheet.per_query:
            sheet.add_ranking(query_id, empty, unique=True)
    return sheet.report({"run": {"queries": count}})
