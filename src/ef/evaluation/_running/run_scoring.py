"""Scoring a saved run, whatever its form: :func:`score_run`, behind
:func:`~ef.evaluation.evaluate_run` and each run :func:`~ef.evaluation.compare` scores.

A mapping or DataFrame is scored query by query in qrels order; a TREC run file given by path
streams (:mod:`ef.evaluation._running.streamed`); other run files are read whole first. Every
form passes the one check of its query ids against the judged queries
(:func:`~ef.evaluation._scoring.run_queries.check_run_queries`) once its entries are scored
(a bad entry is named first) and before its report is made, and
the report's manifest records the counts under ``run``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ef.evaluation._groups.aggregate import retrieval_with_groups
from ef.evaluation._groups.query_groups import QueryGroups
from ef.evaluation._io.frames import as_qrels, as_run
from ef.evaluation._io.runs import read_run_with
from ef.evaluation._io.runs import run_format as format_of
from ef.evaluation._report.reports import RetrievalEvalReport
from ef.evaluation._running.depth import cut_entry
from ef.evaluation._running.driver import plan_queries
from ef.evaluation._running.options import RunOptions
from ef.evaluation._running.streamed import evaluate_run_file
from ef.evaluation._scoring.compiled import score_compiled
from ef.evaluation._scoring.run_queries import check_run_queries
from ef.evaluation._scoring.score_sheet import ScoreSheet
from ef.evaluation._types import Qrels

if TYPE_CHECKING:
    from ef.evaluation._plugins.host import PluginHost

__all__ = ["score_run"]


def score_run(
    run: Any,
    qrels: Qrels | Any,
    options: RunOptions,
    plugins: PluginHost,
    *,
    run_format: str | None = None,
    name: str | None = None,
    stacklevel: int = 2,
    groups: QueryGroups | None = None,
) -> RetrievalEvalReport:
    """The report of ``run`` (a mapping, a DataFrame or a run file's path) against ``qrels``.

    :param plugins: the plugin host: its metrics, and its TREC run parser if any.
    :param name: the run as messages name it; ``None`` is ``"the run"``, or the file's path.
    :param stacklevel: a warning's, counted from the caller of this function.
    :param groups: query groups: the report then keeps each group's means.
    """
    qrels = as_qrels(qrels)
    if isinstance(run, str | os.PathLike):
        path = os.fspath(run)
        name = name or path
        if format_of(run, run_format) == "trec":
            return evaluate_run_file(
                run, qrels, options, plugins, name=name, stacklevel=stacklevel + 1, groups=groups
            )
        run = read_run_with(run, run_format, plugins.trec_run_parser())
    run = as_run(run)
    plan = plan_queries(qrels, None, options, plugins)
    sheet = ScoreSheet(plan, parameters=options.recorded())
    add, add_scores = sheet.add_ranking, sheet.add_scores
    empty: list[str] = []
    depth = options.depth
    # A compiled kernel scores what it takes; the pure path the rest (all, without one).
    kernel = plugins.ranking_kernel() if depth is None else None
    left = score_compiled(sheet, run, kernel)
    for query_id in left:
        entry = run.get(query_id) if depth is None else cut_entry(run.get(query_id), depth)
        if entry is None:
            add(query_id, empty, unique=True)
        elif isinstance(entry, list):  # before the slower abstract Mapping check
            add(query_id, entry)
        elif isinstance(entry, Mapping):
            add_scores(query_id, entry)
        else:  # an ordered iterable: as_run refused every other entry
            add(query_id, entry if isinstance(entry, Sequence) else list(entry))
    # After the entries, so that a bad one is named before the run's queries are judged.
    coverage = check_run_queries(
        plan.planned,
        run,
        missing_queries=options.missing_queries,
        run=name or "the run",
        stacklevel=stacklevel + 1,
    )
    report = sheet.report({"run": {"queries": len(run), **coverage.as_manifest()}})
    if groups is None:
        return report
    return retrieval_with_groups(report, groups, plan.aggregate, stacklevel=stacklevel + 1)
