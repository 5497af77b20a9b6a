"""The cutoff measures: nDCG, recall, precision, reciprocal rank and AP, each written once.

:func:`values_at` is their one implementation: from the 0-based ranks where a query's relevant
documents landed (``positions``, ascending) it gives all five at every ascending cutoff of
``ks`` in one walk, the DCG sum written once. Everything else reads its values off it: ef's
per-k primitives (``ndcg_at_k`` …), the all-cutoffs forms of ef's built-in metrics, the fused
step that scores them together, trec_eval's families built on the same measures
(``ndcg_cut``, ``ndcg``, ``ndcg_rel``, ``Rndcg``, ``P``, ``recall``, ``map_cut``, ``map``,
``recip_rank``, ``Rprec``, ``Rprec_mult``), ranx's f1 and exponential-gain nDCG. A measure of
the whole ranking is its value at the cutoff :data:`WHOLE`; a DCG without normalisation is
:func:`ndcg_at` over unit ideal DCGs (:func:`dcg_at`), and the ideal DCG is the DCG of the ideal
ranking (:func:`ideal_dcg_at`).

Sums run in rank order (trec_eval's order), each term ``grade / scale / log2(rank + 2)`` with
``scale`` the query's largest grade: the same ratio, but no finite grade can overflow it.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

__all__ = [
    "AP",
    "NDCG",
    "PRECISION",
    "RECALL",
    "RECIPROCAL_RANK",
    "WHOLE",
    "Values",
    "dcg_at",
    "hits_at",
    "ideal_dcg_at",
    "kept_for",
    "kept_ideal_dcgs",
    "log2_table",
    "ndcg_at",
    "ranking_values",
    "values_at",
]

NDCG, RECALL, PRECISION, RECIPROCAL_RANK, AP = range(5)
"""Where each measure's values are in what :func:`values_at` returns."""

WHOLE = sys.maxsize
"""A cutoff past any ranking: a measure of the whole ranking is its value at this cutoff."""

Values = tuple[list[float], list[float], list[float], list[float], list[float]]
IdealDcgs = dict[tuple[float, ...], list[float]]

_LOG2: list[float] = []


def log2_table(n: int) -> list[float]:
    """``[log2(2), log2(3), …]`` with at least ``n`` entries: the DCG discount of rank ``i``."""
    if len(_LOG2) < n:
        _LOG2.extend(math.log2(i + 2) for i in range(len(_LOG2), max(n, 2 * len(_LOG2))))
    return _LOG2


def values_at(
    positions: Sequence[int],
    gains: Sequence[float],
    scale: float,
    n_relevant: int,
    ideal_dcgs: Sequence[float] | None,
    ks: Sequence[int],
) -> Values:
    """nDCG, recall, precision, reciprocal rank and AP at every cutoff of ``ks``, in one walk.

    :param positions: the 0-based ranks of the retrieved relevant documents, ascending.
    :param gains: their grades, aligned with ``positions``.
    :param scale: what every grade is divided by (the query's largest grade, for nDCG).
    :param n_relevant: R, the number of relevant documents, retrieved or not (``>= 1`` when
        ``positions`` is not empty).
    :param ideal_dcgs: what each cutoff's DCG is divided by (:func:`ideal_dcg_at`); ``None``
        when nDCG is not wanted (its list comes back empty).
    :param ks: the cutoffs, ascending.
    :returns: one list per measure, indexed by :data:`NDCG`, :data:`RECALL`, :data:`PRECISION`,
        :data:`RECIPROCAL_RANK` and :data:`AP`, each with one value per cutoff. With nothing
        relevant retrieved every value is 0.0.

    - nDCG: the DCG of the top k over the ideal DCG at k (trec_eval ``ndcg_cut``);
    - recall: relevant in the top k over R (``recall``);
    - precision: relevant in the top k over k, always k (``P``);
    - reciprocal rank: 1 / rank of the first relevant document if within k (``recip_rank``);
    - AP: the sum of (relevant so far) / rank at each relevant rank within k, over R, never
      min(R, k) (``map_cut``).
    """
    if not positions:
        zeros = [0.0] * len(ks)
        ndcg_zeros = [] if ideal_dcgs is None else zeros.copy()
        return ndcg_zeros, zeros, zeros.copy(), zeros.copy(), zeros.copy()
    wants_ndcg = ideal_dcgs is not None
    if ideal_dcgs is None:
        ideal_dcgs = [1.0] * len(ks)
    n_found = len(positions)
    first = positions[0]
    reciprocal = 1.0 / (first + 1)
    # Discounts only as far as this query reaches: memory follows the rankings, never k.
    log2 = log2_table(positions[-1] + 1)
    ndcg: list[float] = []
    recall: list[float] = []
    precision: list[float] = []
    reciprocal_rank: list[float] = []
    average: list[float] = []
    dcg = total = 0.0
    j = 0
    for k, idcg in zip(ks, ideal_dcgs, strict=True):
        while j < n_found and positions[j] < k:
            position = positions[j]
            dcg += gains[j] / scale / log2[position]
            j += 1
            total += j / (position + 1)
        ndcg.append(dcg / idcg)
        recall.append(j / n_relevant)
        precision.append(j / k)
        reciprocal_rank.append(reciprocal if first < k else 0.0)
        average.append(total / n_relevant)
    return ndcg if wants_ndcg else [], recall, precision, reciprocal_rank, average


def ndcg_at(
    positions: Sequence[int],
    gains: Sequence[float],
    scale: float,
    ideal_dcgs: Sequence[float],
    ks: Sequence[int],
) -> list[float]:
    """The DCG of the top k over ``ideal_dcgs`` at every ascending cutoff of ``ks``, each grade
    divided by ``scale``: :func:`values_at`'s nDCG.

    Over unit ideal DCGs it is the bare DCG (:func:`dcg_at`), and over the ideal ranking the
    ideal DCG (:func:`ideal_dcg_at`).
    """
    return values_at(positions, gains, scale, 1, ideal_dcgs, ks)[NDCG]


def ranking_values(
    positions: Sequence[int],
    gains: Sequence[float],
    ideal: Sequence[float],
    ks: Sequence[int],
    kept: IdealDcgs | None = None,
    *,
    ndcg: bool = True,
) -> Values:
    """:func:`values_at` for a query whose positive grades, descending, are ``ideal``: divided
    by the largest grade, over R = ``len(ideal)`` and the ideal DCG of ``ideal``.

    :param kept: the ideal DCGs kept for ``ks`` (:func:`kept_for`), for cutoffs that recur
        from query to query; else the ideal DCG is summed for this call.
    :param ndcg: ``False`` when nDCG is not wanted: no ideal DCG, and nDCG's list is empty.
    """
    if not positions:  # nothing relevant retrieved (or nothing relevant at all)
        return values_at(positions, gains, 1.0, 1, () if ndcg else None, ks)
    idcgs: Sequence[float] | None = None
    if ndcg:
        idcgs = ideal_dcg_at(ideal, ks) if kept is None else kept_ideal_dcgs(kept, ideal, ks)
    return values_at(positions, gains, ideal[0], len(ideal), idcgs, ks)


_IDEAL_DCGS: dict[tuple[int, ...], dict[tuple[float, ...], list[float]]] = {}
"""cutoffs → sorted grades → the ideal DCG at each cutoff: a pure function's values, kept for
the queries and evaluations that follow (another run against the same qrels) up to a bound."""
_IDEAL_DCGS_KEPT = 100_000
_IDEAL_DCGS_CUTOFFS = 16


def kept_for(ks: tuple[int, ...]) -> IdealDcgs:
    """The ideal DCGs kept for the cutoffs ``ks``: what :func:`kept_ideal_dcgs` reads."""
    if ks not in _IDEAL_DCGS and len(_IDEAL_DCGS) >= _IDEAL_DCGS_CUTOFFS:
        _IDEAL_DCGS.clear()
    return _IDEAL_DCGS.setdefault(ks, {})


def kept_ideal_dcgs(kept: IdealDcgs, ideal: Sequence[float], ks: Sequence[int]) -> list[float]:
    """:func:`ideal_dcg_at`, summed once per distinct grades: they repeat across queries
    (binary judgements: only R) and across evaluations with the same qrels.

    :param kept: :func:`kept_for` the same ``ks``.
    """
    key = tuple(ideal)
    idcgs = kept.get(key)
    if idcgs is None:
        if len(kept) >= _IDEAL_DCGS_KEPT:
            kept.clear()
        idcgs = kept[key] = ideal_dcg_at(ideal, ks)
    return idcgs


def dcg_at(
    positions: Sequence[int], gains: Sequence[float], scale: float, ks: Sequence[int]
) -> list[float]:
    """The DCG of the top k at every ascending cutoff of ``ks``, each grade divided by
    ``scale``: :func:`ndcg_at` over unit ideal DCGs (``x / 1.0`` is ``x``, to the last bit)."""
    return ndcg_at(positions, gains, scale, [1.0] * len(ks), ks)


def ideal_dcg_at(ideal: Sequence[float], ks: Sequence[int]) -> list[float]:
    """The ideal DCG at every ascending cutoff of ``ks``: the DCG of the ``ideal`` grades
    (every positive grade, descending) ranked in that order, each divided by the largest.

    :param ideal: the query's positive grades, descending; not empty.
    """
    ranks = range(min(len(ideal), ks[-1]))
    return values_at(ranks, ideal, ideal[0], 1, [1.0] * len(ks), ks)[NDCG]  # its dcg_at


def hits_at(positions: Sequence[int], ks: Sequence[int]) -> list[int]:
    """How many of the ascending ``positions`` fall within each ascending cutoff of ``ks``."""
    out: list[int] = []
    j, n = 0, len(positions)
    for k in ks:
        while j < n and positions[j] < k:
            j += 1
        out.append(j)
    return out
