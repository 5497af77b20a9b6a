"""Compatibility (Clarke, Vtyurina and Smucker, TOIS 2021), as ir_measures' compat provider
computes it.

Compat is the rank-biased overlap (RBO) of the ranking with an ideal ranking: every document of
positive grade, grade descending, and among equal grades the retrieved ones first, in the
ranking's order (the ideal ranking closest to the ranking). At depth ``d`` (1-based) the overlap
is the number of documents in the top ``d`` of both, over ``d``; RBO weighs depth ``d`` by
``p**(d - 1)`` and sums over depths up to the longer of the two rankings, divided by the sum of
the weights. Normalised (the default), it is divided by the ideal ranking's RBO with itself, so
the ideal ranking scores 1.

ir_measures orders equally graded documents by their run score, an unretrieved one counting as
0.0: with negative run scores it puts unretrieved documents above retrieved ones, where ef keeps
the retrieved ones first (the definition above). Ties in run scores follow ef's order of a scored
run (trec_eval's), as for every measure; ir_measures breaks them by doc id ascending.
"""

from __future__ import annotations

from ef.evaluation._scoring.measures.summary import QueryFacts

__all__ = ["compatibility"]


def _ideal_positions(facts: QueryFacts) -> list[int]:
    """Where each retrieved document of positive grade stands in the ideal ranking, in the
    order of :attr:`QueryFacts.graded`."""
    above: dict[float, int] = {}  # grade → documents of a higher grade, retrieved or not
    for i, grade in enumerate(facts.all_gains):
        above.setdefault(grade, i)
    placed: dict[float, int] = {}  # grade → retrieved documents of that grade placed so far
    out: list[int] = []
    for _, grade in facts.graded:
        nth = placed.get(grade, 0)
        placed[grade] = nth + 1
        out.append(above[grade] + nth)
    return out


def _rbo(arrivals: list[int], p: float, depth: int) -> float:
    """RBO of two rankings over ``depth`` ranks, ``arrivals[i]`` the documents that are in both
    tops from depth ``i + 1`` on (ir_measures' sums, term by term)."""
    score = normalizer = 0.0
    weight = 1.0
    common = 0
    for i in range(depth):
        common += arrivals[i]
        score += weight * common / (i + 1)
        normalizer += weight
        weight *= p
    return score / normalizer


def compatibility(facts: QueryFacts, p: float, normalize: bool) -> float:
    """Compat: the ranking's RBO with its ideal ranking, at persistence ``p``.

    0 when nothing of positive grade is retrieved.

    >>> from ef.evaluation._scoring.measures.summary import facts_from_ranking
    >>> compatibility(facts_from_ranking(['d1', 'd2'], {'d1': 2, 'd2': 1}), 0.8, True)
    1.0
    >>> round(compatibility(facts_from_ranking(['d2', 'd1'], {'d1': 2, 'd2': 1}), 0.8, True), 6)
    0.444444
    """
    n_ideal = len(facts.all_gains)
    depth = max(facts.num_ret, n_ideal)
    if not facts.graded or not depth:
        return 0.0
    arrivals = [0] * depth
    for (position, _), ideal in zip(facts.graded, _ideal_positions(facts), strict=True):
        arrivals[max(position, ideal)] += 1
    score = _rbo(arrivals, p, depth)
    if normalize:
        own = [1 if i < n_ideal else 0 for i in range(depth)]  # the ideal ranking with itself
        best = _rbo(own, p, depth)
        if best > 0.0:
            score /= best
    return score
