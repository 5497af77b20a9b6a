"""Retrieval metric primitives: pure functions of one ranking and one query's judgements.

Every primitive follows trec_eval (``m_ndcg_cut.c``, ``m_recall.c``, ``m_P.c``,
``m_recip_rank.c``, ``m_map.c``):

- ``ranked`` is used as given, never re-sorted; a repeated id keeps its first position and later
  copies are dropped (trec_eval refuses duplicates; counting one twice would push metrics above 1).
- A judgement is relevant when its grade is ``> 0``; ``R`` is the number of such ids in
  ``relevant``, retrieved or not. Grades ``<= 0`` are judged non-relevant: no gain, not part of
  the ideal ranking. Fractional grades in ``(0, 1)`` are relevant here; trec_eval truncates them
  to ``0`` and pytrec_eval rejects them.
- ``k`` is an ``int >= 1``; anything else raises :class:`ValueError`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

__all__ = [
    "average_precision",
    "dcg_at_k",
    "ndcg_at_k",
    "precision_at_k",
    "recall_at_k",
    "reciprocal_rank",
]


def check_cutoff(k: object) -> int:
    """Return ``k`` if it is a valid cutoff (an ``int >= 1``), else raise :class:`ValueError`."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"a cutoff k must be an int >= 1, got {k!r}")
    return k


def _top(ranked: Sequence[str], k: int | None) -> list[str]:
    """The de-duplicated ranking (first occurrence wins), cut at ``k``."""
    unique = list(dict.fromkeys(ranked))
    return unique if k is None else unique[:k]


def _n_relevant(relevant: Mapping[str, float]) -> int:
    return sum(1 for grade in relevant.values() if grade > 0)


def dcg_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Discounted cumulative gain of ``ranked`` at cutoff ``k``.

    ``sum(grade_i / log2(i + 2))`` over the top ``k`` results (``i`` 0-indexed), with
    ``grade_i`` the relevance of the ``i``-th doc (``0`` if unjudged) — the linear-gain DCG that
    BEIR / ``pytrec_eval`` use.

    Precisely (trec_eval ``m_ndcg_cut.c``): only positive grades contribute, summed in rank
    order; grades are used as they are (floats included).

    >>> round(dcg_at_k(['d1', 'x', 'd2'], {'d1': 1.0, 'd2': 1.0}, 3), 4)
    1.5
    """
    check_cutoff(k)
    total = 0.0
    for i, doc_id in enumerate(_top(ranked, k)):
        grade = relevant.get(doc_id, 0.0)
        if grade > 0:
            total += grade / math.log2(i + 2)
    return total


def _ideal_dcg(relevant: Mapping[str, float], k: int) -> float:
    grades = sorted((grade for grade in relevant.values() if grade > 0), reverse=True)
    total = 0.0
    for i, grade in enumerate(grades[:k]):
        total += grade / math.log2(i + 2)
    return total


def ndcg_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Normalized DCG at cutoff ``k`` — ``ef``'s **primary** retrieval metric.

    :func:`dcg_at_k` divided by the ideal DCG (the DCG of the best possible ranking of the
    judged docs). ``1.0`` is a perfect ranking; ``0.0`` when no relevant doc was judged.

    Precisely: the ideal DCG is the same sum over every positive grade in ``relevant``, sorted
    descending, cut at ``k``; linear gain, float grades used as they are (trec_eval
    ``ndcg_cut``).

    >>> ndcg_at_k(['d1', 'd2'], {'d1': 1.0, 'd2': 1.0}, 2)  # perfect order
    1.0
    >>> round(ndcg_at_k(['x', 'd1'], {'d1': 1.0}, 2), 4)  # relevant doc at rank 2
    0.6309
    """
    ideal = _ideal_dcg(relevant, check_cutoff(k))
    if ideal == 0.0:
        return 0.0
    return dcg_at_k(ranked, relevant, k) / ideal


def recall_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Fraction of the relevant docs that appear in the top ``k`` results.

    Precisely: relevant ids in the top ``k`` divided by ``R``, the number of relevant ids in
    ``relevant``; ``0.0`` when ``R`` is 0 (trec_eval ``recall``).

    >>> recall_at_k(['d1', 'x', 'd2'], {'d1': 1.0, 'd2': 1.0}, 2)
    0.5
    >>> recall_at_k(['d1', 'x', 'd2'], {'d1': 1.0, 'd2': 1.0}, 3)
    1.0
    """
    check_cutoff(k)
    n_relevant = _n_relevant(relevant)
    if n_relevant == 0:
        return 0.0
    hits = sum(1 for doc_id in _top(ranked, k) if relevant.get(doc_id, 0.0) > 0)
    return hits / n_relevant


def precision_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Fraction of the top ``k`` results that are relevant.

    Precisely: relevant ids in the top ``k`` divided by ``k`` — always ``k``, even when fewer
    than ``k`` results were returned (trec_eval ``P``).

    >>> precision_at_k(['d1', 'x', 'd2'], {'d1': 1.0, 'd2': 1.0}, 2)
    0.5
    """
    check_cutoff(k)
    hits = sum(1 for doc_id in _top(ranked, k) if relevant.get(doc_id, 0.0) > 0)
    return hits / k


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
    if k is not None:
        check_cutoff(k)
    for i, doc_id in enumerate(_top(ranked, k)):
        if relevant.get(doc_id, 0.0) > 0:
            return 1.0 / (i + 1)
    return 0.0


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
    if k is not None:
        check_cutoff(k)
    n_relevant = _n_relevant(relevant)
    if n_relevant == 0:
        return 0.0
    hits = 0
    total = 0.0
    for i, doc_id in enumerate(_top(ranked, k)):
        if relevant.get(doc_id, 0.0) > 0:
            hits += 1
            total += hits / (i + 1)
    return total / n_relevant
