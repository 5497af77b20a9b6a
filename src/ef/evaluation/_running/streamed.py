"""Scoring a run file query by query: memory bounded by one query, the qrels and the values.

The queries of a grouped TREC run file come from :mod:`ef.evaluation._io.stream` (a plugin's
streaming parser first, when it offers one) and go straight into the same
:class:`~ef.evaluation._scoring.score_sheet.ScoreSheet` that scores an in-memory run, so the
values and means are the in-memory path's, bit for bit: each query is scored from the same dict,
and the means are summed in qrels order whatever the order of the file.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Collection, Iterable, Iterator, Mapping
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
                sheet, planned, seen = _score(plan, options, queries, kernel)
            except stream.StreamDeclined:
                by_query = None  # the built-in reader reads the file again and names the bad line
        if by_query is None:
            sheet, planned, seen = _score(plan, options, stream.trec_queries(source), kernel)
    coverage = check_run_queries(
        plan.planned,
        seen,
        missing_queries=options.missing_queries,
        run=name,
        stacklevel=stacklevel + 1,
    )
    manifest = {"run": {"queries": len(seen), **coverage.as_manifest()}}
    report = sheet.report(manifest, rows=planned.rows)
    if groups is None:
        return report
    return retrieval_with_groups(report, groups, plan.aggregate, stacklevel=stacklevel + 1)


def _score(
    plan: QueryPlan,
    options: RunOptions,
    queries: Iterable[stream.QueryScores],
    kernel: RankingKernel | None,
) -> tuple[ScoreSheet, _Planned, _Held]:
    """The score sheet, each planned query's values (:class:`_Planned`) and the run's query
    ids (:class:`_Held`).

    Each planned query's values are kept at its place in the planned order, so neither the
    file's copy of its id nor a dict entry per query is kept, and queries whose values are the
    same share one read-only dict of them (:class:`_Rows`). Planned queries are scored a batch at
    a time (up to :data:`_BATCH_QUERIES` queries or :data:`_BATCH_DOCS` scored docs), by
    ``kernel`` where it takes them, through the sheet (which holds no more than a batch).
    """
    sheet = ScoreSheet(plan, parameters=options.recorded())
    planned = _Planned(plan.planned)
    ids, kept, place = plan.planned, planned.rows, planned.place
    add_scores, per_query, rows = sheet.add_scores, sheet.per_query, _Rows()
    others: dict[str, None] = {}  # the run's queries that are not planned, in file order
    batch: dict[str, Any] = {}
    places: list[int] = []  # where each query of the batch is planned
    docs = 0

    def flush() -> None:
        for query_id in score_compiled(sheet, batch, kernel, list(batch)):
            add_scores(query_id, batch[query_id])
        for at, query_id in zip(places, batch, strict=True):
            kept[at] = rows.shared(per_query.pop(query_id))
        batch.clear()
        places.clear()

    for query_id, scores in queries:
        at = place(query_id)
        if at is None:
            others[query_id] = None
        else:
            batch[ids[at]] = cut_scores(scores, options.depth)
            places.append(at)
            docs += len(scores)
            if len(batch) >= _BATCH_QUERIES or docs >= _BATCH_DOCS:
                flush()
                docs = 0
    flush()
    missing: dict[str, None] = {}
    if None in kept:
        empty: list[str] = []
        for at in [at for at, row in enumerate(kept) if row is None]:
            query_id = ids[at]
            missing[query_id] = None
            sheet.add_ranking(query_id, empty, unique=True)
            kept[at] = rows.shared(per_query.pop(query_id))
    return sheet, planned, _Held(plan, missing, others)


class _Planned:
    """Each planned query's values, at its place in the planned order (``None`` until it is
    scored): a list of one reference per query, where a dict keyed by query id costs five
    times that and keeps a second id string per query.

    A query's place is found by :meth:`place`: the next place when the file follows the planned
    order (most do), else by bisection in the planned ids sorted (made the first time it is
    needed, a list of them and an array of their places).
    """

    __slots__ = ("_ids", "_next", "_places", "_sorted", "rows")

    def __init__(self, ids: list[str]) -> None:
        self._ids = ids
        self.rows: list[Mapping[str, float] | None] = [None] * len(ids)
        self._next = 0
        self._sorted: list[str] | None = None
        self._places = array("Q")

    def place(self, query_id: str) -> int | None:
        """Where ``query_id`` (a ``str``) is planned, or ``None`` when it is not planned."""
        ids, at = self._ids, self._next
        if at < len(ids) and ids[at] == query_id:
            self._next = at + 1
            return at
        ordered = self._sorted if self._sorted is not None else self._index()
        found = bisect_left(ordered, query_id)
        if found == len(ordered) or ordered[found] != query_id:
            return None
        at = self._places[found]
        self._next = at + 1
        return at

    def _index(self) -> list[str]:
        """The planned ids sorted (kept, with their places)."""
        ids = self._ids
        # A planned id that is not a str is never a run file's query id.
        order = sorted(
            (at for at, query_id in enumerate(ids) if isinstance(query_id, str)),
            key=lambda at: str.__str__(ids[at]),
        )
        self._places = array("I" if len(ids) <= 0xFFFFFFFF else "Q", order)
        self._sorted = [str.__str__(ids[at]) for at in order]
        return self._sorted


class _Held(Collection[str]):
    """The query ids a run file holds, without a copy of them: the planned ones but the
    ``missing`` (the planned queries are the judged ones the plan did not skip), and the
    ``others``. Iterated, the planned ones come first, in the planned order, then the others
    in file order."""

    __slots__ = ("_missing", "_others", "_plan")

    def __init__(self, plan: QueryPlan, missing: dict[str, None], others: dict[str, None]) -> None:
        self._plan = plan
        self._missing = missing
        self._others = others

    def __contains__(self, query_id: object) -> bool:
        if query_id in self._others:
            return True
        plan = self._plan
        return (
            query_id in plan.qrels
            and query_id not in plan.skipped
            and query_id not in self._missing
        )

    def __iter__(self) -> Iterator[str]:
        missing = self._missing
        yield from (query_id for query_id in self._plan.planned if query_id not in missing)
        yield from self._others

    def __len__(self) -> int:
        return len(self._plan.planned) - len(self._missing) + len(self._others)


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
