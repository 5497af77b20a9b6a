"""A whole qrels checked at once: plain judgements, and each query's grades sorted for scoring.

Plain judgements — a ``dict`` of ``dict`` with ``str`` ids and finite ``float`` or ``int``
grades — need no check query by query: :func:`plain_ideals` checks them and sorts each query's
positive grades (what planning and the ideal DCG need) in one walk over the queries, reading each
query's judgements while they are in the processor's cache rather than in one pass over all of
them per check. Anything else goes to :func:`~ef.evaluation._scoring.metrics.positive_grades`,
which names what is wrong.
"""

from __future__ import annotations

import sys
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from itertools import chain
from operator import neg
from typing import Any

__all__ = ["finite_numbers", "ideal_grades", "plain_ideals", "plain_judgements"]

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
            ideal = ideals[query_id] = sorted(grades, reverse=True)
            if ideal and not ideal[-1] > 0:
                del ideal[bisect_left(ideal, 0.0, key=neg) :]
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
