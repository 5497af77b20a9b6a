"""Judgements as scoring reads them: checked, the relevant ones picked, their ideal order.

A judgement is relevant when its grade is ``> 0`` (:func:`relevant_grades`); the ideal ranking
is every positive grade, descending (:func:`ideal_grades`). Grades are checked once, where they
enter: :func:`positive_grades` checks one query's and names what is wrong. Plain judgements — a
``dict`` of ``dict`` with ``str`` ids and finite ``float`` or ``int`` grades — need no check query
by query: :func:`plain_ideals` checks a whole qrels and sorts each query's positive grades (what
planning and the ideal DCG need) in one walk over the queries, reading each query's judgements
while they are in the processor's cache rather than in one pass over all of them per check.
"""

from __future__ import annotations

import math
import numbers
import sys
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from itertools import chain
from operator import neg
from typing import Any

__all__ = [
    "finite_numbers",
    "ideal_grades",
    "plain_ideals",
    "plain_judgements",
    "positive_grades",
    "relevant_grades",
]

LARGEST_FLOAT = int(sys.float_info.max)
NUMBERS = frozenset({float, int})
STR = frozenset({str})
DICT = frozenset({dict})


def ideal_grades(grades: Iterable[float]) -> list[float]:
    """The positive ``grades``, descending: the ideal ranking's gains.

    A stable sort: equal grades (``1`` and ``1.0``) keep their judgement order, as when sorted
    from the positive ``(doc_id, grade)`` pairs. Grades must be numbers.

    >>> ideal_grades([0, 2, -1, 1.0, 2.0])
    [2, 2.0, 1.0]
    """
    ideal = sorted(grades, reverse=True)
    if ideal and not ideal[-1] > 0:
        del ideal[bisect_left(ideal, 0.0, key=neg) :]
    return ideal


def plain_ideals(qrels: Mapping[str, Mapping[str, float]]) -> dict[str, list[float]] | None:
    """Each query's :func:`ideal_grades`, in qrels order, if ``qrels`` is plain; else ``None``.

    Plain: a ``dict`` of ``dict`` judgements with ``str`` ids and finite ``float`` or ``int``
    grades only. ``None`` sends the caller to the careful check, which says what is wrong, if
    anything (a sum that merely overflows the range of a float is sent there too, and accepted).
    """
    if type(qrels) is not dict or not set(map(type, qrels)) <= STR:
        return None
    if not set(map(type, qrels.values())) <= DICT:
        return None
    plain: dict[str, dict[str, float]] = qrels  # narrowed by the type checks above
    id_kinds: set[type] = set()
    grade_kinds: set[type] = set()
    add_ids, add_grades = id_kinds.update, grade_kinds.update
    sums: list[Any] = []
    add_sum = sums.append
    ideals: dict[str, list[float]] = {}
    try:
        for query_id, judged in plain.items():
            grades = judged.values()
            add_ids(map(type, judged))
            add_grades(map(type, grades))
            # A NaN or an infinity makes its query's sum, and the sum of the sums, NaN or
            # infinite: the finiteness check.
            add_sum(sum(grades))
            ideals[query_id] = ideal_grades(grades)
        if not (id_kinds <= STR and grade_kinds <= NUMBERS):
            return None
        if int in grade_kinds and not _ints_convert(plain):
            return None
        total = sum(sums)
    except (TypeError, OverflowError):  # grades that are no numbers; ints beyond a float
        return None
    return ideals if total - total == 0.0 else None


def _ints_convert(qrels: dict[str, dict[str, float]]) -> bool:
    """Whether every grade is within the range of a float (ints are finite as long as each
    converts to one)."""
    grades: list[Any] = list(chain.from_iterable(map(dict.values, qrels.values())))
    return bool(-LARGEST_FLOAT <= min(grades) and max(grades) <= LARGEST_FLOAT)


def plain_judgements(qrels: Mapping[str, Mapping[str, float]]) -> bool:
    """Whether ``qrels`` is a ``dict`` of ``dict`` judgements with ``str`` ids and finite
    ``float`` or ``int`` grades only (:func:`plain_ideals`).

    >>> plain_judgements({'q1': {'d1': 1, 'd2': 0.5}}), plain_judgements({'q1': {'d1': True}})
    (True, False)
    """
    return plain_ideals(qrels) is not None


def finite_numbers(grades: Iterable[object]) -> bool:
    """Whether every grade is a finite ``float`` or ``int`` (C-level passes over ``grades``,
    which must be readable more than once)."""
    kinds = set(map(type, grades))
    if not kinds <= NUMBERS:
        return False
    numbers_only: Iterable[Any] = grades
    if int in kinds and not (
        -LARGEST_FLOAT <= min(numbers_only) and max(numbers_only) <= LARGEST_FLOAT
    ):
        return False
    if float not in kinds:
        return True
    try:
        total = sum(numbers_only)
    except OverflowError:  # ints whose sum leaves the range of a float
        return False
    # A NaN or an infinity makes the sum NaN or infinite; a sum that merely overflows sends
    # the caller to the loop, which accepts it.
    return bool(total - total == 0.0)


def relevant_grades(relevant: Mapping[str, float]) -> list[tuple[str, float]]:
    """The ``(doc_id, grade)`` pairs with a positive grade, in judgement order (grades checked
    already: :func:`positive_grades` checks them)."""
    return [(doc_id, grade) for doc_id, grade in relevant.items() if grade > 0]


def _bad_judgement(doc_id: object, grade: object, query_id: str | None) -> Exception:
    of_query = "" if query_id is None else f" for query {query_id!r}"
    if not isinstance(doc_id, str):
        return TypeError(f"doc id {doc_id!r:.40}{of_query} is not a string")
    shown = f"grade of doc {doc_id!r}{of_query} is {grade!r:.40}"
    if isinstance(grade, numbers.Real):
        return ValueError(f"{shown}; grades must be finite numbers")
    return TypeError(f"{shown} (a {type(grade).__name__}); grades must be finite numbers")


def _is_finite_real(value: object) -> bool:
    if not isinstance(value, numbers.Real):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _plain_and_finite(relevant: dict[str, float]) -> bool:
    """Whether every id is a ``str`` and every grade a finite ``float`` or ``int``, checked in
    C-level passes; ``False`` sends the caller to the careful loop, which says what is wrong."""
    return set(map(type, relevant)) <= STR and finite_numbers(relevant.values())


def positive_grades(
    relevant: Mapping[str, float], query_id: str | None = None
) -> list[tuple[str, float]]:
    """The ``(doc_id, grade)`` pairs with a positive grade, in judgement order, checked.

    Every doc id must be a string and every grade a finite real number: a NaN grade would
    otherwise be silently non-relevant, and an infinite one would turn nDCG into NaN.

    :param relevant: one query's judgements, ``{doc_id: grade}``.
    :param query_id: the query, named in errors when given.
    :raises ValueError: for a NaN or infinite grade, naming the doc (and the query).
    :raises TypeError: for a grade that is not a number, or a doc id that is not a string.

    >>> positive_grades({'d1': 2, 'd2': 0, 'd3': 0.5})
    [('d1', 2), ('d3', 0.5)]
    >>> positive_grades({'d1': float('nan')}, 'q1')
    Traceback (most recent call last):
        ...
    ValueError: grade of doc 'd1' for query 'q1' is nan; grades must be finite numbers
    """
    if type(relevant) is dict and _plain_and_finite(relevant):
        return relevant_grades(relevant)
    positives: list[tuple[str, float]] = []
    for doc_id, grade in relevant.items():
        # Floats and ints in one cheap test each (inf - inf and nan - nan are nan; an int is
        # finite as long as it converts to a float); the rest (numpy scalars, non-numbers)
        # the careful way.
        kind = type(grade)
        if kind is float:
            finite = grade - grade == 0.0
        elif kind is int:
            finite = -LARGEST_FLOAT <= grade <= LARGEST_FLOAT
        else:
            finite = _is_finite_real(grade)
        if not (finite and isinstance(doc_id, str)):
            raise _bad_judgement(doc_id, grade, query_id)
        if grade > 0:
            positives.append((doc_id, grade))
    return positives
