"""Runs and qrels handed over as DataFrames: pandas, polars or a pyarrow Table, one code path.

A DataFrame library is never imported here unless the caller hands over one of its objects:
an object is recognised by the module its type comes from (``type(obj).__module__``), and only
then is :mod:`narwhals` (extra ``dataframes``) imported to read its columns, the same way for all
three libraries.

Columns are found by name. Each role has ef's own name and the aliases peers use, in tiers: the
first tier with any column present decides, and two columns of that tier are ambiguous. So a
PyTerrier frame (``qid``, ``docno``, ``docid``, ``query``, ``score``, ``rank``) reads ``qid`` as
the query id (``query``, its text, is a weaker alias) and ``docno`` as the doc id.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from itertools import groupby
from typing import Any

from ef.evaluation._io.qrels import read_qrels
from ef.evaluation._io.scores import SCORE_EXPECTED, check_run, score_problem
from ef.evaluation._scoring.grades import finite_numbers
from ef.evaluation._scoring.packed_qrels import PackedQrels

__all__ = [
    "ACCEPTED_QRELS",
    "ACCEPTED_RUN",
    "COLUMN_ALIASES",
    "as_qrels",
    "as_run",
    "describe_type",
    "frame_kind",
    "is_frame",
    "qrels_from_frame",
    "run_from_frame",
]

_LIBRARIES = ("pandas", "polars", "pyarrow")
_FRAME_TYPES = {"pandas": "DataFrame", "polars": "DataFrame", "pyarrow": "Table"}

COLUMN_ALIASES: Mapping[str, tuple[tuple[str, ...], ...]] = {
    "query_id": (("query_id",), ("qid", "q_id", "query-id", "topic_id", "topic"), ("query",)),
    "doc_id": (("doc_id",), ("docno", "doc-id", "corpus-id", "corpus_id"), ("docid", "doc")),
    "score": (("score",), ("sim", "similarity"), ()),
    "rank": (("rank",), (), ()),
    "relevance": (("relevance",), ("label", "rel", "grade", "judgement", "judgment"), ("score",)),
}
"""Per role: tiers of column names, ef's own first. The first tier with a column present wins."""

ACCEPTED_RUN = (
    "a {query_id: [doc ids]} or {query_id: {doc_id: score}} mapping, or a pandas or polars "
    "DataFrame or pyarrow Table with query_id, doc_id and score (or rank) columns"
)
ACCEPTED_QRELS = (
    "a {query_id: {doc_id: grade}} mapping, or a pandas or polars DataFrame or pyarrow Table "
    "with query_id, doc_id and relevance columns"
)


def frame_kind(obj: object) -> str | None:
    """``"pandas"``, ``"polars"`` or ``"pyarrow"`` for an object of one of those libraries.

    Nothing is imported: the answer comes from the name of the module of ``obj``'s type.

    >>> frame_kind({"q1": ["d1"]}) is None
    True
    """
    root = type(obj).__module__.partition(".")[0]
    return root if root in _LIBRARIES else None


def is_frame(obj: object) -> bool:
    """Whether ``obj`` is a pandas or polars DataFrame or a pyarrow Table.

    >>> is_frame([("q1", "d1", 1.0)])
    False
    """
    kind = frame_kind(obj)
    return kind is not None and type(obj).__name__ == _FRAME_TYPES[kind]


def describe_type(obj: object) -> str:
    """The type of ``obj`` as a user would name it: ``pandas.Series``, ``list``, ``set``."""
    kind = type(obj)
    root = kind.__module__.partition(".")[0]
    return kind.__qualname__ if root == "builtins" else f"{root}.{kind.__qualname__}"


def as_run(run: object, what: str = "run") -> Mapping[str, Any]:
    """``run`` as a mapping: itself if it is one, the rows of a DataFrame or Table otherwise.

    The one door of every run: a mapping is checked here
    (:func:`~ef.evaluation._io.scores.check_run`), a DataFrame row by row as it is read.

    :raises TypeError: for anything else (a Series, an array, a list of tuples, a set, a
        generator, a string), naming the accepted types; for an entry that is no ranking or a
        score that is no number, naming the query.
    :raises ValueError: for a score that is NaN, infinite or beyond the range of a float.

    >>> as_run({"q1": ["d1"]})
    {'q1': ['d1']}
    >>> as_run([("q1", "d1", 1.0)])
    Traceback (most recent call last):
    ...
    TypeError: run is a list; expected a {query_id: [doc ids]} or {query_id: {doc_id: score}} \
mapping, or a pandas or polars DataFrame or pyarrow Table with query_id, doc_id and score (or \
rank) columns
    """
    if isinstance(run, Mapping):
        check_run(run, what)
        return run
    if is_frame(run):
        return run_from_frame(run, what)
    raise TypeError(f"{what} is a {describe_type(run)}; expected {ACCEPTED_RUN}")


def as_qrels(qrels: object, what: str = "qrels") -> Mapping[str, Mapping[str, float]]:
    """``qrels`` as a mapping of mappings: itself, the rows of a DataFrame or Table, or the
    judgements of a qrels file given by path (TREC or BEIR form, :func:`read_qrels`).

    :raises TypeError: for anything else, or a query whose judgements are no mapping (a set
        of doc ids, a list), naming the accepted types.
    :raises FileNotFoundError: for a path that does not exist.
    :raises DatasetFormatError: for a bad line of a qrels file, naming the file and line.

    >>> as_qrels({"q1": {"d1"}})
    Traceback (most recent call last):
    ...
    TypeError: qrels: the judgements of query 'q1' are a set; expected a {query_id: {doc_id: \
grade}} mapping, or a pandas or polars DataFrame or pyarrow Table with query_id, doc_id and \
relevance columns
    """
    if is_frame(qrels):
        return qrels_from_frame(qrels, what)
    if isinstance(qrels, str | os.PathLike):
        return read_qrels(qrels)
    if isinstance(qrels, PackedQrels):  # every query's judgements a dict, by construction
        return qrels
    if not isinstance(qrels, Mapping):
        raise TypeError(f"{what} is a {describe_type(qrels)}; expected {ACCEPTED_QRELS}")
    for query_id, judgements in qrels.items():
        if not isinstance(judgements, Mapping):
            raise TypeError(
                f"{what}: the judgements of query {query_id!r} are a "
                f"{describe_type(judgements)}; expected {ACCEPTED_QRELS}"
            )
    return qrels


def run_from_frame(frame: Any, what: str = "run") -> dict[str, Any]:
    """The run in ``frame``: ``{query_id: {doc_id: score}}``, or ranked lists from a rank column.

    Rows keep their order; a query's docs are ordered later by score as for any run. A frame
    with a rank column and no score column gives each query its doc ids in rank order. Scores
    of an integer column stay Python ``int`` s, exact as in a dict: int64 scores above ``2**53``
    are not rounded to floats (two of them could tie), so a frame scores as its dict does.

    :raises TypeError: if ``frame`` is no DataFrame or Table, a column is missing, ambiguous or
        named twice, or a column holds the wrong type.
    :raises ValueError: for a missing value, a value that is not finite (naming the row and the
        column), or a doc listed twice for a query (naming both rows).
    """
    table = _columns(frame, what, ACCEPTED_RUN)
    query_ids = _ids(table, "query_id", what)
    doc_ids = _ids(table, "doc_id", what)
    score_name = _find(table, "score", what, required=False)
    if score_name is None:
        if _find(table, "rank", what, required=False) is None:
            raise TypeError(
                f"{what}: no score column (score, sim, similarity) and no rank column among "
                f"{_listed(table)}; expected a score or a rank per row"
            )
        return _ranked(query_ids, doc_ids, _numbers(table, "rank", what), what)
    scores = _numbers(table, "score", what, exact_integers=True)
    return _table(query_ids, doc_ids, scores, what)


def qrels_from_frame(frame: Any, what: str = "qrels") -> dict[str, dict[str, float]]:
    """The judgements in ``frame``: ``{query_id: {doc_id: grade}}``, rows in order.

    :raises TypeError: if ``frame`` is no DataFrame or Table, a column is missing or ambiguous,
        or a column holds the wrong type.
    :raises ValueError: for a missing value, or a pair judged
        twice (naming both rows).
    """
    table = _columns(frame, what, ACCEPTED_QRELS)
    query_ids = _ids(table, "query_id", what)
    doc_ids = _ids(table, "doc_id", what)
    return _table(query_ids, doc_ids, _numbers(table, "relevance", what), what)


class _Columns:
    """A frame's columns by name, read through narwhals when first asked for."""

    def __init__(self, native: Any, names: Sequence[str]) -> None:
        self.native = native
        self.names = list(names)

    def values(self, name: str) -> list[Any]:
        column = self.native.get_column(name)
        values: list[Any] = column.to_list()
        return values

    def is_numeric(self, name: str) -> bool:
        return bool(self.native.schema[name].is_numeric())

    def is_integer(self, name: str) -> bool:
        return bool(self.native.schema[name].is_integer())

    def first_null(self, name: str) -> int | None:
        """The first row whose value is missing (None, pandas' NA, NaN in pandas), if any."""
        nulls = self.native.get_column(name).is_null()
        if not nulls.any():
            return None
        return int(nulls.to_list().index(True))


def _columns(frame: Any, what: str, accepted: str) -> _Columns:
    if not is_frame(frame):
        raise TypeError(f"{what} is a {describe_type(frame)}; expected {accepted}")
    try:
        import narwhals.stable.v2 as nw
    except ImportError as error:  # pragma: no cover - the extra is part of the test set-up
        raise ImportError(
            "reading a DataFrame needs narwhals: pip install 'ef-evaluation[dataframes]'"
        ) from error
    # Before narwhals, which refuses a name given twice with its own multi-line error.
    given = frame.column_names if frame_kind(frame) == "pyarrow" else frame.columns
    names = [str(name) for name in given]
    if len(set(names)) != len(names):
        repeated = sorted({name for name in names if names.count(name) > 1})
        raise TypeError(
            f"{what}: column {repeated[0]!r} appears more than once; expected each column name once"
        )
    return _Columns(nw.from_native(frame, eager_only=True), names)


def _listed(table: _Columns) -> str:
    return "columns " + ", ".join(repr(name) for name in table.names) if table.names else "none"


def _find(table: _Columns, role: str, what: str, *, required: bool = True) -> str | None:
    present = set(table.names)
    for tier in COLUMN_ALIASES[role]:
        found = [name for name in tier if name in present]
        if len(found) > 1:
            raise TypeError(
                f"{what}: columns {found[0]!r} and {found[1]!r} both could be the {role} "
                "column; rename or drop one"
            )
        if found:
            return found[0]
    if required:
        names = ", ".join(name for tier in COLUMN_ALIASES[role] for name in tier)
        raise TypeError(f"{what}: no {role} column ({names}) among {_listed(table)}")
    return None


def _ids(table: _Columns, role: str, what: str) -> list[str]:
    name = _find(table, role, what)
    assert name is not None  # required
    values = table.values(name)
    if set(map(type, values)) <= _STR:  # C-level passes: the usual case
        return values
    for row, value in enumerate(values):
        if type(value) is str:
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            continue  # integer ids (as read from CSV) are the same ids written as text
        problem = "is missing" if _missing(value) else f"is a {describe_type(value)}"
        raise TypeError(
            f"{what}: row {row}: {role} column {name!r} {problem} ({value!r}); expected a "
            "string or an integer id"
        )
    return [value if type(value) is str else str(value) for value in values]


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


_STR = frozenset({str})
_FLOAT = frozenset({float})


def _numbers(table: _Columns, role: str, what: str, *, exact_integers: bool = False) -> list[float]:
    """The values of the ``role`` column, each a finite number (:func:`score_problem`).

    :param exact_integers: keep an integer column's values as ``int`` (scores), rather than
        rounding those above ``2**53`` to floats.
    """
    name = _find(table, role, what)
    assert name is not None  # required
    if not table.is_numeric(name):
        raise TypeError(f"{what}: {role} column {name!r} is not numeric; expected numbers")
    row = table.first_null(name)
    values = table.values(name)
    finite = finite_numbers(values)  # C-level passes: no None, NaN or infinity, the usual case
    if row is None and not finite:
        # A NaN a library does not count as missing: found row by row.
        row = next((row for row, value in enumerate(values) if _missing(value)), None)
    if row is not None:
        raise ValueError(f"{what}: row {row}: {role} column {name!r} has no value")
    numbers: list[Any] = values
    if not (exact_integers and table.is_integer(name)) and not set(map(type, values)) <= _FLOAT:
        numbers = [float(value) for value in values]
        finite = finite_numbers(numbers)
    if not finite:
        for row, value in enumerate(numbers):
            problem = score_problem(value)
            if problem is not None:
                raise ValueError(
                    f"{what}: row {row}: {role} column {name!r} is {problem}; "
                    f"expected {SCORE_EXPECTED}"
                )
    return numbers


def _table(
    query_ids: Sequence[str], doc_ids: Sequence[str], values: Sequence[float], what: str
) -> dict[str, dict[str, float]]:
    """``{query_id: {doc_id: value}}``, rows in order: each run of rows of one query (the usual
    layout: grouped by query) becomes its dict in one C-level step."""
    table: dict[str, dict[str, float]] = {}
    start = 0
    for query_id, rows in groupby(query_ids):
        end = start + len(list(rows))
        chunk = zip(doc_ids[start:end], values[start:end], strict=True)
        inner = table.get(query_id)
        if inner is None:
            table[query_id] = dict(chunk)
        else:  # the query's rows resume after another query's
            inner.update(chunk)
        start = end
    if len(query_ids) != sum(map(len, table.values())):
        _raise_repeat(list(zip(query_ids, doc_ids, strict=True)), what)
    return table


def _ranked(
    query_ids: list[str], doc_ids: list[str], ranks: list[float], what: str
) -> dict[str, list[str]]:
    grouped: dict[str, list[tuple[float, int, str]]] = {}
    for row, (query_id, doc_id, rank) in enumerate(zip(query_ids, doc_ids, ranks, strict=True)):
        grouped.setdefault(query_id, []).append((rank, row, doc_id))
    run = {query_id: [doc for _, _, doc in sorted(rows)] for query_id, rows in grouped.items()}
    if len(query_ids) != sum(len(set(docs)) for docs in run.values()):
        _raise_repeat(list(zip(query_ids, doc_ids, strict=True)), what)
    return run


def _raise_repeat(pairs: list[tuple[str, str]], what: str) -> None:
    seen: dict[tuple[str, str], int] = {}
    for row, pair in enumerate(pairs):
        first = seen.setdefault(pair, row)
        if first != row:
            raise ValueError(
                f"{what}: row {row}: doc {pair[1]!r} listed again for query {pair[0]!r} "
                f"(first in row {first}); expected each (query, doc) pair once"
            )
