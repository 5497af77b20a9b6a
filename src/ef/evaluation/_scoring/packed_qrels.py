"""Judgements held in arrays: :class:`PackedQrels`, the qrels of a large TREC file as scoring
reads them without a ``dict`` per query.

A ``{query_id: {doc_id: grade}}`` dict of a million queries judged once each holds a million
small dicts (~184 bytes each, whatever they hold) and a million hash-table entries; held here,
a query costs its id, its doc ids, one float per judgement and a few bytes of offsets — about
half. Each query's judgements are made as a ``dict`` when asked for (``qrels[query_id]``) and
never kept, so everything that reads judgements reads them as it reads any plain qrels, and the
means, fingerprints and values are those of the equal dict, bit for bit.
"""

from __future__ import annotations

import marshal
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from itertools import chain
from math import isfinite
from operator import ge

from ef.evaluation._scoring.grades import ideal_grades

__all__ = ["PackedQrels"]

_SHARED_IDEALS = 4096  # distinct short ideal lists shared between queries, at most
_SHORT = 8
_MARSHALLED = 4096  # queries marshalled at a time


class PackedQrels(Mapping[str, Mapping[str, float]]):
    """Plain judgements — ``str`` ids, finite ``float`` grades — in arrays, in qrels order.

    :param ids: the query ids, each once, in qrels order.
    :param ends: where each query's judgements end in ``docs`` and ``grades`` (the first starts
        at 0; each query has one at least).
    :param docs: every query's doc ids, in order, each once per query.
    :param grades: their grades.
    :raises ValueError: for a query id given twice, a grade that is not finite, or arrays that
        do not fit together (a query without a judgement among them).
    :raises TypeError: for an id that is not a ``str``.

    >>> qrels = PackedQrels(["q2", "q1"], [2, 3], ["d1", "d2", "d1"], [1.0, 0.0, 2.0])
    >>> qrels["q2"], list(qrels), "q1" in qrels, "q3" in qrels
    ({'d1': 1.0, 'd2': 0.0}, ['q2', 'q1'], True, False)
    """

    __slots__ = ("_docs", "_ends", "_grades", "_ids", "_places", "_sorted")

    def __init__(
        self, ids: list[str], ends: list[int] | array[int], docs: list[str], grades: array[float]
    ) -> None:
        ends = array("Q", ends)
        grades = array("d", grades)
        if (
            len(ends) != len(ids)
            or (ends and ends[-1] != len(docs))
            or len(docs) != len(grades)
            or any(map(ge, chain((0,), ends), ends))
        ):
            raise ValueError("the ids, ends, doc ids and grades of packed qrels do not fit")
        if not {*map(type, ids), *map(type, docs)} <= {str}:
            raise TypeError("the query and doc ids of packed qrels must be str")
        if not all(map(isfinite, grades)):  # each grade: finite ones may add up to infinity
            raise ValueError("the grades of packed qrels must be finite numbers")
        order = sorted(range(len(ids)), key=ids.__getitem__)
        ordered = [ids[at] for at in order]
        for at in range(1, len(ordered)):
            if ordered[at - 1] == ordered[at]:
                raise ValueError(f"query {ordered[at]!r} is given twice")
        self._ids = ids
        self._ends = ends
        self._docs = docs
        self._grades = grades
        self._sorted = ordered
        self._places = array("Q", order)

    def _place(self, query_id: object) -> int:
        """Where ``query_id`` is in qrels order; :class:`KeyError` when it is not judged."""
        if type(query_id) is str:
            ordered = self._sorted
            found = bisect_left(ordered, query_id)
            if found < len(ordered) and ordered[found] == query_id:
                return self._places[found]
        raise KeyError(query_id)

    def _judgements(self, at: int) -> dict[str, float]:
        ends = self._ends
        start, end = (ends[at - 1] if at else 0), ends[at]
        if end - start == 1:  # most large qrels judge few docs a query
            return {self._docs[start]: self._grades[start]}
        return dict(zip(self._docs[start:end], self._grades[start:end], strict=True))

    def __getitem__(self, query_id: str) -> dict[str, float]:
        return self._judgements(self._place(query_id))

    def __contains__(self, query_id: object) -> bool:
        try:
            self._place(query_id)
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def pairs(self) -> Iterator[tuple[str, dict[str, float]]]:
        """Each query id and its judgements, in qrels order (without looking ids up)."""
        for at, query_id in enumerate(self._ids):
            yield query_id, self._judgements(at)

    def batch(self, query_ids: list[str]) -> dict[str, dict[str, float]]:
        """The judgements of ``query_ids`` as a plain dict (those judged)."""
        found: dict[str, dict[str, float]] = {}
        for query_id in query_ids:
            try:
                found[query_id] = self._judgements(self._place(query_id))
            except KeyError:
                continue
        return found

    def marshalled(self, version: int) -> Iterator[bytes]:
        """``marshal.dumps(qrels, version)`` of the equal dict, piece by piece (the bytes the
        manifest's digest is of, without the dict): a dict's bytes are ``{``, each key's and
        value's, then ``0``, so those of a few thousand queries at a time are joined."""
        ids, judgements, dumps = self._ids, self._judgements, marshal.dumps
        yield b"{"
        for first in range(0, len(ids), _MARSHALLED):
            part = {
                ids[at]: judgements(at) for at in range(first, min(first + _MARSHALLED, len(ids)))
            }
            yield dumps(part, version)[1:-1]
        yield b"0"

    def ideals(self) -> dict[str, list[float]]:
        """Each query's positive grades, descending (:func:`ideal_grades`), in qrels order;
        equal short lists are one list (they are never changed)."""
        grades, shared = self._grades, dict[tuple[float, ...], list[float]]()
        ideals: dict[str, list[float]] = {}
        start = 0
        for query_id, end in zip(self._ids, self._ends, strict=True):
            if end - start == 1:
                grade = grades[start]
                key: tuple[float, ...] = (grade,) if grade > 0.0 else ()
                ideal = list(key)
            else:
                ideal = ideal_grades(grades[start:end])
                key = tuple(ideal) if len(ideal) <= _SHORT else ()
            start = end
            if key or not ideal:
                kept = shared.get(key)
                if kept is not None:
                    ideal = kept
                elif len(shared) < _SHARED_IDEALS:
                    shared[key] = ideal
            ideals[query_id] = ideal
        return ideals
