"""The one check of a run's entries and scores, wherever the run comes from.

Every run passes :func:`check_run` where it enters (a mapping handed to
:func:`~ef.evaluation._io.frames.as_run`); the readers and the DataFrame path apply the same
rule (:func:`score_problem`) value by value and add the file and line, or the row and column.
The rule:

- a query's entry is a ``{doc_id: score}`` mapping or an ordered iterable of doc ids (a list,
  a tuple): a string, bytes, a set or a number is refused, judged query or not;
- a score is a finite real number: an ``int`` or a ``float`` (numpy numbers too), never a
  ``bool``; NaN, an infinity and an integer beyond the range of a float are refused, since none
  has a place in an order that trec_eval, a writer or a fusion method can reproduce. Integers
  are compared exactly, as Python compares them: two scores above ``2**53`` that a float could
  not tell apart stay apart.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from ef.evaluation._scoring.grades import finite_numbers

__all__ = ["ENTRY_EXPECTED", "SCORE_EXPECTED", "check_run", "score_problem"]

SCORE_EXPECTED = "a finite number (an int or a float, not a bool)"
ENTRY_EXPECTED = "a list of doc ids, best first, or a {doc_id: score} mapping"


def score_problem(score: object) -> str | None:
    """What ``score`` is, said to refuse it as a run's score, or ``None`` when it is one.

    >>> score_problem(0.5), score_problem(3), score_problem(2**60 + 1)
    (None, None, None)
    >>> score_problem(float("nan")), score_problem(-math.inf), score_problem(True)
    ('nan', '-inf', 'True, a bool')
    >>> score_problem(10**400), score_problem("0.5")
    ('an integer of 401 digits, beyond the range of a float', "'0.5', a str")
    """
    if type(score) is float:  # the usual case, in one test
        return None if score - score == 0.0 else repr(score)
    if isinstance(score, bool) or not isinstance(score, numbers.Real):
        return f"{score!r:.40}, a {type(score).__qualname__}"
    if isinstance(score, int):
        try:
            float(score)
        except OverflowError:
            return f"an integer of {len(str(abs(score)))} digits, beyond the range of a float"
        return None
    try:
        finite = math.isfinite(score)
    except (OverflowError, ValueError):  # a numbers.Real that no float can hold
        finite = False
    return None if finite else f"{score!r:.40}"


def check_run(run: Mapping[str, Any], what: str = "run") -> None:
    """Refuse a run with an entry that is no ranking or a score that is no finite number.

    Every query is checked, judged or not: a wrong entry is a mistake wherever it is.

    :param run: ``{query_id: entry}``.
    :param what: how errors name the run (``run``, ``run 2``).
    :raises TypeError: for an entry that is neither a mapping nor an ordered iterable, or a
        score that is not a real number, naming the query (and the doc).
    :raises ValueError: for a score that is NaN, infinite or an integer beyond the range of a
        float, naming the query and the doc.

    >>> check_run({"q1": {"d1": 1.0}, "q2": ["d1"]})
    >>> check_run({"q1": 5})
    Traceback (most recent call last):
    ...
    TypeError: run, query 'q1': the entry is a int; expected a list of doc ids, best first, \
or a {doc_id: score} mapping
    >>> check_run({"q1": {"d1": float("inf")}}, "run 2")
    Traceback (most recent call last):
    ...
    ValueError: run 2, query 'q1': doc 'd1' has score inf; expected a finite number (an int \
or a float, not a bool)
    """
    for query_id, entry in run.items():
        kind = type(entry)
        if kind is list:
            continue
        if kind is dict:
            if not finite_numbers(entry.values()):
                _check_scores(entry, query_id, what)
        elif isinstance(entry, Mapping):
            _check_scores(entry, query_id, what)
        elif isinstance(entry, str | bytes | AbstractSet) or not isinstance(entry, Iterable):
            # A string would score its characters; a set would rank in hash order.
            raise TypeError(
                f"{what}, query {query_id!r}: the entry is a {kind.__qualname__}; "
                f"expected {ENTRY_EXPECTED}"
            )


def _check_scores(scores: Mapping[Any, Any], query_id: str, what: str) -> None:
    for doc_id, score in scores.items():
        problem = score_problem(score)
        if problem is None:
            continue
        if isinstance(score, bool) or not isinstance(score, numbers.Real):
            raise TypeError(
                f"{what}, query {query_id!r}: score {score!r:.40} is a "
                f"{type(score).__qualname__} (doc {doc_id!r}); expected {SCORE_EXPECTED}"
            )
        raise ValueError(
            f"{what}, query {query_id!r}: doc {doc_id!r} has score {problem}; "
            f"expected {SCORE_EXPECTED}"
        )
