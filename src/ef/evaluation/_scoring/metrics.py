"""Retrieval metric primitives: pure functions of one ranking and one query's judgements.

Every primitive follows trec_eval (``m_ndcg_cut.c``, ``m_recall.c``, ``m_P.c``,
``m_recip_rank.c``, ``m_map.c``):

- ``ranked`` is used as given, never re-sorted; a repeated id keeps its first position and later
  copies are dropped (trec_eval refuses duplicates; counting one twice would push metrics above 1).
- A judgement is relevant when its grade is ``> 0``; ``R`` is the number of such ids in
  ``relevant``, retrieved or not. Grades ``<= 0`` are judged non-relevant: no gain, not part of
  the ideal ranking. Fractional grades in ``(0, 1)`` are relevant here; trec_eval truncates them
  to ``0`` and pytrec_eval rejects them.
- Grades are finite real numbers: NaN, infinities and non-numbers raise :class:`ValueError` or
  :class:`TypeError` naming the doc id (and the query, when checking a whole qrels), never a
  silent zero.
- ``k`` is an ``int >= 1``; anything else raises :class:`ValueError`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence

from ef.evaluation._scoring.cutoffs import (
    AP,
    NDCG,
    PRECISION,
    RECALL,
    RECIPROCAL_RANK,
    WHOLE,
    Values,
    dcg_at,
    ranking_values,
)
from ef.evaluation._scoring.grades import plain_judgements, positive_grades
from ef.evaluation._scoring.ranked import summarize

__all__ = [
    "average_precision",
    "check_cutoff",
    "checked_value",
    "dcg_at_k",
    "ndcg_at_k",
    "plain_judgements",
    "positive_grades",
    "precision_at_k",
    "recall_at_k",
    "reciprocal_rank",
]


def check_cutoff(k: object) -> int:
    """Return ``k`` if it is a valid cutoff (an ``int >= 1``), else raise :class:`ValueError`."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"a cutoff k must be an int >= 1, got {k!r}")
    return k


def checked_value(value: object, returned: Callable[[str], str]) -> float:
    """A metric's value as a float, if it is a finite real number; otherwise an error.

    Plugin metrics are code we do not control: a string, ``None``, ``True`` (a comparison where a
    number was meant), NaN or an infinity would otherwise be averaged or coerced into a report.
    Values are not limited to ``[0, 1]``: counts and logarithms are metrics too.

    :param value: what the metric returned.
    :param returned: called only to word an error: given the value's repr, says which metric
        returned it and where (the metric, its plugin, the query or sample, the cutoff).
    :raises TypeError: for anything but an int or float (numpy scalars included), or a bool.
    :raises ValueError: for NaN and infinities.

    >>> checked_value(3, lambda shown: f"metric 'n' returned {shown}")
    3.0
    >>> checked_value(True, lambda shown: f"metric 'hit' returned {shown}")
    Traceback (most recent call last):
        ...
    TypeError: metric 'hit' returned True; expected a finite number (int or float, not bool)
    """
    if type(value) is float and value - value == 0.0:  # the usual case, in one test
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an int beyond the range of a float
            number = math.inf
        if number - number == 0.0:
            return number
        raise ValueError(f"{returned(f'{value!r:.80}')}; a metric value must be finite")
    raise TypeError(
        f"{returned(f'{value!r:.80}')}; expected a finite number (int or float, not bool)"
    )


def _cutoff_or_whole(k: int | None) -> int:
    """A checked cutoff, or :data:`~ef.evaluation._scoring.cutoffs.WHOLE` for ``None``."""
    return WHOLE if k is None else check_cutoff(k)


def _values(
    ranked: Sequence[str], relevant: Mapping[str, float], cutoff: int, scale: float | None = None
) -> Values:
    """The cutoff measures of one ranking at one checked cutoff, each a list of one value; with
    ``scale``, the grades are divided by it and nDCG's list holds the bare DCG."""
    summary = summarize(ranked, relevant, positives=positive_grades(relevant))
    if scale is not None:
        return (dcg_at(summary.positions, summary.gains, scale, [cutoff]), [], [], [], [])
    return ranking_values(summary.positions, summary.gains, summary.ideal_gains, [cutoff])


def dcg_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Discounted cumulative gain of ``ranked`` at cutoff ``k``.

    ``sum(grade_i / log2(i + 2))`` over the top ``k`` results (``i`` 0-indexed), with
    ``grade_i`` the relevance of the ``i``-th doc (``0`` if unjudged) — the linear-gain DCG that
    BEIR / ``pytrec_eval`` use.

    Precisely (trec_eval ``m_ndcg_cut.c``): only positive grades contribute, summed in rank
    order; grades are used as they are (floats included).

    :raises OverflowError: when the grades are so large that the DCG exceeds the range of a
        float (:func:`ndcg_at_k` is immune: it scales the grades first).

    >>> round(dcg_at_k(['d1', 'x', 'd2'], {'d1': 1.0, 'd2': 1.0}, 3), 4)
    1.5
    """
    total = _values(ranked, relevant, check_cutoff(k), scale=1.0)[NDCG][0]
    if total == math.inf:
        raise OverflowError("the DCG of these grades exceeds the range of a float")
    return total


def ndcg_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Normalized DCG at cutoff ``k`` — ``ef``'s **primary** retrieval metric.

    :func:`dcg_at_k` divided by the ideal DCG (the DCG of the best possible ranking of the
    judged docs). ``1.0`` is a perfect ranking; ``0.0`` when no relevant doc was judged.

    Precisely: the ideal DCG is the same sum over every positive grade in ``relevant``, sorted
    descending, cut at ``k``; linear gain, float grades used as they are (trec_eval
    ``ndcg_cut``). Both sums are taken over the grades divided by the query's largest grade —
    the same ratio, but no finite grade can overflow it.

    >>> ndcg_at_k(['d1', 'd2'], {'d1': 1.0, 'd2': 1.0}, 2)  # perfect order
    1.0
    >>> round(ndcg_at_k(['x', 'd1'], {'d1': 1.0}, 2), 4)  # relevant doc at rank 2
    0.6309
    """
    return _values(ranked, relevant, check_cutoff(k))[NDCG][0]


def recall_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Fraction of the relevant docs that appear in the top ``k`` results.

    Precisely: relevant ids in the top ``k`` divided by ``R``, the number of relevant ids in
    ``relevant``; ``0.0`` when ``R`` is 0 (trec_eval ``recall``).

    >>> recall_at_k(['d1', 'x', 'd2'], {'d1': 1.0, 'd2': 1.0}, 2)
    0.5
    >>> recall_at_k(['d1', 'x', 'd2'], {'d1': 1.0, 'd2': 1.0}, 3)
    1.0
    """
    return _values(ranked, relevant, check_cutoff(k))[RECALL][0]


def precision_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Fraction of the top ``k`` results that are relevant.

    Precisely: relevant ids in the top ``k`` divided by ``k`` — always ``k``, even when fewer
    than ``k`` results were returned (trec_eval ``P``).

    >>> precision_at_k(['d1', 'x', 'd2'], {'d1': 1.0, 'd2': 1.0}, 2)
    0.5
    """
    return _values(ranked, relevant, check_cutoff(k))[PRECISION][0]


def reciprocal_rank(
    ranked: Sequence[str], relevant: Mapping[str, float], k: int | None = None
) -> float:
    """Reciprocal of the rank of the first relevant result (``0`` if none).

    Averaged over queries this is MRR. ``k`` optionally caps how far down the ranking to look.

    Precisely: ``1 / rank`` (1-based) of the first id with a positive grade within the top
    ``k`` (the whole list when ``k`` is ``None``); ``0.0`` if there is none (trec_eval
    ``recip_rank`` on the ranking cut at ``k``; ranx ``mrr@k``).

    >>> reciprocal_rank(['x', 'd1', 'd2'], {'d1': 1.0})
    0.5
    >>> reciprocal_rank(['x', 'd1'], {'d1': 1.0}, k=1)  # relevant doc past the cutoff
    0.0
    """
    return _values(ranked, relevant, _cutoff_or_whole(k))[RECIPROCAL_RANK][0]


def average_precision(
    ranked: Sequence[str], relevant: Mapping[str, float], k: int | None = None
) -> float:
    """Average precision of ``ranked`` — the per-query term of MAP.

    The mean of the precision measured at each relevant result's rank. ``k`` optionally caps
    the ranking.

    Precisely: the sum, over the relevant ids at 0-based rank ``i`` within the top ``k``, of
    (relevant ids so far) / ``(i + 1)``, divided by ``R`` — all relevant ids, retrieved or not,
    never ``min(R, k)`` (trec_eval ``map`` and ``map_cut``); ``0.0`` when ``R`` is 0.

    >>> average_precision(['d1', 'x', 'd2'], {'d1': 1.0, 'd2': 1.0})
    0.8333333333333333
    """
    return _values(ranked, relevant, _cutoff_or_whole(k))[AP][0]
