"""Scoring a run file query by query: memory bounded by one query, the qrels and the values.

The queries of a grouped TREC run file come from :mod:`ef.evaluation._io.stream` (a plugin's
streaming parser first, when it offers one) and go straight into the same
:class:`~ef.evaluation._scoring.score_sheet.ScoreSheet` that scores an in-memory run, so the
values and means are the in-memory path's, bit for bit: each query is scored from the same dict,
and the means are summed in qrels order whatever the order of the file.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from math import copysign
from typing import TYPE_CHECKING, Any

from ef.evaluation._groups.aggregate import retrieval_with_groups
from ef.evaluation._groups.query_groups import QueryGroups
from ef.evaluation._io import stream
from ef.evaluation._io.files import PathArg, rereadable
from ef.evaluation._report.reports import RetrievalEvalReport
from ef.evaluation._running.depth import cut_scores
from ef.evaluation._running.driver import plan_queries
from ef.evaluation._running.options import RunOptions
from ef.evaluation._scoring.compiled import RankingKernel, score_compiled
from ef.evaluation._scoring.query_plan import QueryPlan
from ef.evaluation._scoring.run_queries import check_run_queries
from ef.evaluation._scoring.score_sheet import ScoreSheet
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
    groups: QueryGroups | None = None,
) -> RetrievalEvalReport:
    """Score the grouped TREC run file ``path`` against ``qrels``, one query at a time.

    A pipe or FIFO is copied once to a temporary file first (error messages read the file
    again); a regular file is read in place. The run's query ids are checked against the
    judged queries once the file is read (only the ids are kept for that).

    :param plugins: the plugin host: its metrics, and its streaming run parser if any.
    :param name: the run as messages name it.
    :param stacklevel: a warning's, counted from the caller of this function.
    :param groups: query groups: the report then keeps each group's means.
    :raises DatasetFormatError: for a bad line, a doc listed twice for a query, or a query
        seen again after another one (each naming the file and both lines).
    :raises MissingQueriesError: as
        :func:`~ef.evaluation._scoring.run_queries.check_run_queries` does.
    """
    plan = plan_queries(qrels, None, options, plugins)
    kernel = plugins.ranking_kernel() if options.depth is None else None
    with rereadable(path) as source:
        by_query = stream.streaming_form(plugins.trec_run_parser())
        if by_query is not None:
            try:
                queries = stream.plugin_queries(source, by_query)
                sheet, seen = _score(plan, options, queries, kernel)
            except stream.StreamDeclined:
                by_query = None  # the built-in reader reads the file again and names the bad line
        if by_query is None:
            sheet, seen = _score(plan, options, stream.trec_queries(source), kernel)
    coverage = check_run_queries(
        plan.planned,
        seen,
        missing_queries=options.missing_queries,
        run=name,
        stacklevel=stacklevel + 1,
    )
    report = sheet.report({"run": {"queries": len(seen), **coverage.as_manifest()}})
    if groups is None:
        return report
    return retrieval_with_groups(report, groups, plan.aggregate, stacklevel=stacklevel + 1)


def _score(
    plan: QueryPlan,
    options: RunOptions,
    queries: Iterable[stream.QueryScores],
    kernel: RankingKernel | None,
) -> tuple[ScoreSheet, _Held]:
    """The score sheet of every planned query, and the run's query ids (:class:`_Held`).

    A planned query is kept under the qrels' own id string (the file's copy is dropped), and
    queries whose values are the same share one read-only dict of them (:class:`_Rows`).
    Planned queries are scored a batch at a time (up to :data:`_BATCH_QUERIES` queries or
    :data:`_BATCH_DOCS` scored docs), by ``kernel`` where it takes them.
    """
    sheet = ScoreSheet(plan, parameters=options.recorded())
    planned = {query_id: query_id for query_id in plan.planned}
    add_scores, per_query, rows = sheet.add_scores, sheet.per_query, _Rows()
    others: dict[str, None] = {}  # the run's queries that are not planned, in file order
    batch: dict[str, Any] = {}
    docs = 0

    def flush() -> None:
        for query_id in score_compiled(sheet, batch, kernel, list(batch)):
            add_scores(query_id, batch[query_id])
        for query_id in batch:
            per_query[query_id] = rows.shared(per_query[query_id])
        batch.clear()

    for query_id, scores in queries:
        judged = planned.get(query_id)
        if judged is None:
            others[query_id] = None
        else:
            batch[judged] = cut_scores(scores, options.depth)
            docs += len(scores)
            if len(batch) >= _BATCH_QUERIES or docs >= _BATCH_DOCS:
                flush()
                docs = 0
    flush()
    missing = frozenset(query_id for query_id in plan.planned if query_id not in per_query)
    empty: list[str] = []
    for query_id in missing:
        per_query[query_id] = rows.shared(sheet.add_ranking(query_id, empty, unique=True))
    return sheet, _Held(per_query, missing, others)


class _Held(Collection[str]):
    """The query ids a run file holds, without a copy of the planned ones among them: those
    scored from it (``scored`` but not ``missing``) and the ``others``. Iterated, the planned
    ones come first (in the order they were scored), then the others in file order."""

    __slots__ = ("_missing", "_others", "_scored")

    def __init__(
        self, scored: Collection[str], missing: frozenset[str], others: dict[str, None]
    ) -> None:
        self._scored = scored
        self._missing = missing
        self._others = others

    def __contains__(self, query_id: object) -> bool:
        if query_id in self._others:
            return True
        return query_id in self._scored and query_id not in self._missing

    def __iter__(self) -> Iterator[str]:
        missing = self._missing
        yield from (query_id for query_id in self._scored if query_id not in missing)
        yield from self._others

    def __len__(self) -> int:
        return len(self._scored) - len(self._missing) + len(self._others)


_BATCH_QUERIES = 1024
_BATCH_DOCS = 1 << 16  # a batch's scores held at once: a few MB


class _Rows:
    """One read-only dict per distinct row of values: most queries of a large run share theirs
    with others (each relevant doc's rank decides them), and a query's own dict of 20 values
    takes ~460 bytes. Rows are told apart by their keys, and their values by type and sign
    (``0.0`` and ``-0.0`` are equal, but not written alike), so a row is never replaced by one
    written differently."""

    __slots__ = ("_rows",)

    def __init__(self) -> None:
        self._rows: dict[tuple[Any, ...], dict[str, float]] = {}

    def shared(self, values: dict[str, float]) -> dict[str, float]:
        """``values``, or the first dict kept that is the same row."""
        numbers = tuple(values.values())
        for number in numbers:
            if type(number) is not float or (number == 0.0 and copysign(1.0, number) < 0.0):
                return values
        key = (tuple(values), numbers)
        kept = self._rows.setdefault(key, values)
        if len(self._rows) > _SHARED_ROWS:
            self._rows.clear()
        return kept


_SHARED_ROWS = 1 << 12  # the most distinct rows kept for sharing at once
