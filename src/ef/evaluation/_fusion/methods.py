"""The unsupervised fusion methods, one query at a time: ranx's formulas, the same numbers.

Each method takes one query's rankings (one ``{doc_id: score}`` dict per run, best first; a run
that retrieved nothing for the query is an empty dict) and returns ``{doc_id: fused score}``
for every doc any run retrieved. *Rank-based* methods read only each doc's rank (0-based
position ``i``); *score-based* ones combine the (normalised) scores. A doc a run did not
retrieve adds nothing to a sum; ``min``, ``max``, ``med``, ``anz`` and the ``mnz`` family look
only at the runs that retrieved it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from functools import cmp_to_key, lru_cache
from itertools import repeat
from operator import add, mul

from ef.evaluation._fusion._inputs import Ranking
from ef.evaluation._fusion.norms import candidates

__all__ = [
    "CONDORCET_MISSING",
    "anz",
    "bordafuse",
    "combine_sum",
    "condorcet",
    "condorcet_order",
    "gmnz",
    "isr",
    "log_isr",
    "logn_isr",
    "max_",
    "med",
    "min_",
    "mixed",
    "mnz",
    "rbc",
    "rrf",
    "sum_",
    "w_bordafuse",
    "w_condorcet",
    "wmnz",
    "wsum",
]

Weights = Sequence[float]


# Score-based ------------------------------------------------------------------------------


def combine_sum(rankings: Sequence[Ranking], weights: Weights | None = None) -> dict[str, float]:
    """Σ (weight ×) scores over the runs, a missing doc adding nothing (CombSUM).

    The runs are added one after the other, as ranx's ``sum([...])`` adds them, each at C speed:
    a doc's running total plus its score in the next run.
    """
    total: dict[str, float] = {}
    for index, ranking in enumerate(rankings):
        scores: Iterable[float] = ranking.values()
        if weights is not None:
            scores = map(mul, scores, repeat(weights[index]))
        if not total:
            total = dict(ranking)  # a copy: sized from the start
            if weights is not None:
                total.update(zip(ranking, scores, strict=True))
        else:
            totals = map(total.get, ranking, repeat(0.0))
            total.update(zip(ranking, map(add, totals, scores), strict=True))
    return total


def _present(rankings: Sequence[Ranking]) -> dict[str, list[float]]:
    """doc → the scores of the runs that retrieved it, in run order."""
    seen: dict[str, list[float]] = {}
    for ranking in rankings:
        for doc, score in ranking.items():
            scores = seen.get(doc)
            if scores is None:
                seen[doc] = [score]
            else:
                scores.append(score)
    return seen


def _present_weighted(
    rankings: Sequence[Ranking], weights: Weights
) -> dict[str, tuple[list[float], list[float]]]:
    """doc → (scores, weights) of the runs that retrieved it, in run order."""
    seen: dict[str, tuple[list[float], list[float]]] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for doc, score in ranking.items():
            entry = seen.get(doc)
            if entry is None:
                seen[doc] = ([score], [weight])
            else:
                entry[0].append(score)
                entry[1].append(weight)
    return seen


def sum_(rankings: Sequence[Ranking]) -> dict[str, float]:
    """CombSUM: Σ scores (Fox and Shaw, 1993)."""
    return combine_sum(rankings)


def mnz(rankings: Sequence[Ranking]) -> dict[str, float]:
    """CombMNZ: Σ scores × the number of runs that retrieved the doc."""
    return {doc: sum(scores) * len(scores) for doc, scores in _present(rankings).items()}


def anz(rankings: Sequence[Ranking]) -> dict[str, float]:
    """CombANZ: Σ scores / the number of runs that retrieved the doc."""
    return {doc: sum(scores) / len(scores) for doc, scores in _present(rankings).items()}


def gmnz(rankings: Sequence[Ranking], *, gamma: float) -> dict[str, float]:
    """CombGMNZ: Σ scores × (runs that retrieved the doc) ** gamma (Lee, 1997)."""
    return {doc: sum(scores) * len(scores) ** gamma for doc, scores in _present(rankings).items()}


def max_(rankings: Sequence[Ranking]) -> dict[str, float]:
    """CombMAX: the highest score among the runs that retrieved the doc."""
    return {doc: max(scores) for doc, scores in _present(rankings).items()}


def min_(rankings: Sequence[Ranking]) -> dict[str, float]:
    """CombMIN: the lowest score among the runs that retrieved the doc."""
    return {doc: min(scores) for doc, scores in _present(rankings).items()}


def med(rankings: Sequence[Ranking]) -> dict[str, float]:
    """CombMED: the median score among the runs that retrieved the doc."""
    return {doc: statistics.median(scores) for doc, scores in _present(rankings).items()}


def wsum(rankings: Sequence[Ranking], *, weights: Weights) -> dict[str, float]:
    """Weighted sum: Σ weight × score, a missing doc adding nothing."""
    if len(weights) != len(rankings):
        raise ValueError(f"{len(weights)} weights for {len(rankings)} runs")
    return combine_sum(rankings, weights)


def wmnz(rankings: Sequence[Ranking], *, weights: Weights) -> dict[str, float]:
    """Weighted MNZ: Σ scores × Σ weights of the runs that retrieved the doc (Wu and Crestani)."""
    return {
        doc: sum(scores) * sum(run_weights)
        for doc, (scores, run_weights) in _present_weighted(rankings, weights).items()
    }


def mixed(rankings: Sequence[Ranking], *, weights: Weights) -> dict[str, float]:
    """Mixed: Σ weight × score × √(runs that retrieved the doc) (Wu and Crestani)."""
    fused: dict[str, float] = {}
    for doc, (scores, run_weights) in _present_weighted(rankings, weights).items():
        weighted = [score * weight for score, weight in zip(scores, run_weights, strict=True)]
        fused[doc] = sum(weighted) * math.sqrt(len(weighted))
    return fused


# Rank-based -------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _rank_table(kind: str, parameter: float, depth: int) -> tuple[float, ...]:
    """The score of each 0-based rank ``i`` below ``depth``: one table for every query."""
    if kind == "rrf":
        return tuple(1 / (parameter + i + 1) for i in range(depth))
    if kind == "isr":
        return tuple(1 / ((i + 1) ** 2) for i in range(depth))
    return tuple((1 - parameter) * parameter**i for i in range(depth))  # rbc


def _table(rankings: Sequence[Ranking], kind: str, parameter: float) -> tuple[float, ...]:
    depth = max(map(len, rankings), default=0)
    # Tables grow in steps, so queries of many depths share a few of them.
    return _rank_table(kind, parameter, 1 << max(depth - 1, 0).bit_length())


def _by_rank(rankings: Sequence[Ranking], kind: str, parameter: float = 0.0) -> list[Ranking]:
    """Each run's docs scored by their rank, from :func:`_rank_table`."""
    table = _table(rankings, kind, parameter)
    return [dict(zip(ranking, table, strict=False)) for ranking in rankings]


def _sum_by_rank(rankings: Sequence[Ranking], kind: str, parameter: float) -> dict[str, float]:
    """:func:`combine_sum` of :func:`_by_rank`, without the runs' intermediate dicts."""
    table = _table(rankings, kind, parameter)
    total: dict[str, float] = {}
    for ranking in rankings:
        if not total:
            total = dict(ranking)  # a copy: sized from the start
            total.update(zip(ranking, table, strict=False))
        else:
            totals = map(total.get, ranking, repeat(0.0))
            total.update(zip(ranking, map(add, totals, table), strict=False))
    return total


def rrf(rankings: Sequence[Ranking], *, k: float = 60) -> dict[str, float]:
    """Reciprocal rank fusion: Σ 1 / (k + i + 1), k > 0 (Cormack et al., 2009)."""
    return _sum_by_rank(rankings, "rrf", k)


def _isr_scores(rankings: Sequence[Ranking]) -> dict[str, list[float]]:
    return _present(_by_rank(rankings, "isr"))


def isr(rankings: Sequence[Ranking]) -> dict[str, float]:
    """ISR: Σ 1 / (i + 1)² × the number of runs that retrieved the doc (Mourão et al., 2015)."""
    return {doc: sum(scores) * len(scores) for doc, scores in _isr_scores(rankings).items()}


def log_isr(rankings: Sequence[Ranking]) -> dict[str, float]:
    """Log_ISR: Σ 1 / (i + 1)² × log(runs that retrieved the doc): 0 for a doc in one run."""
    return {
        doc: sum(scores) * math.log(len(scores)) for doc, scores in _isr_scores(rankings).items()
    }


def logn_isr(rankings: Sequence[Ranking], *, sigma: float = 0.01) -> dict[str, float]:
    """LogN_ISR: Σ 1 / (i + 1)² × log(runs that retrieved the doc + sigma), sigma in [0, 1]."""
    return {
        doc: sum(scores) * math.log(len(scores) + sigma)
        for doc, scores in _isr_scores(rankings).items()
    }


def rbc(rankings: Sequence[Ranking], *, phi: float) -> dict[str, float]:
    """Rank-biased centroid: Σ (1 - phi) × phi ** i, phi in (0, 1) (Bailey et al., 2017)."""
    return _sum_by_rank(rankings, "rbc", phi)


def _borda_points(rankings: Sequence[Ranking]) -> list[Ranking]:
    """Each run's Borda points over the query's c candidates: c - i for the doc at rank i, and
    the mean of the places left, (c - n + 1) / 2, for the candidates a run of n docs missed."""
    pool = candidates(rankings)
    n_candidates = len(pool)
    points: list[Ranking] = []
    for ranking in rankings:
        unranked = (n_candidates - len(ranking) + 1) / 2
        scores = dict.fromkeys(pool, unranked)
        scores.update(zip(ranking, range(n_candidates, 0, -1), strict=False))
        points.append(scores)
    return points


def bordafuse(rankings: Sequence[Ranking]) -> dict[str, float]:
    """BordaFuse: Σ Borda points (Aslam and Montague, 2001)."""
    return {doc: float(total) for doc, total in combine_sum(_borda_points(rankings)).items()}


def w_bordafuse(rankings: Sequence[Ranking], *, weights: Weights) -> dict[str, float]:
    """Weighted BordaFuse: Σ weight × Borda points."""
    return wsum(_borda_points(rankings), weights=weights)


CONDORCET_MISSING = 1_000_000
"""The rank ranx gives a doc a run did not retrieve, in Condorcet's pairwise votes."""


def condorcet_order(
    rankings: Sequence[Ranking], pool: Sequence[str], weights: Weights | None = None
) -> list[str]:
    """The candidates ``pool`` sorted by pairwise majority votes, exactly as ranx sorts them.

    ``x`` goes before ``y`` when the (weighted) runs ranking ``x`` above ``y`` are at least as
    many as the others; a run that retrieved neither counts for ``y``. That comparison is not a
    consistent order when votes tie or cycle, so the result then depends on the order of
    ``pool``: ranx takes it from a Python set (it changes with ``PYTHONHASHSEED``); ef passes the
    order of first appearance, so its result is the same in every process.
    """
    positions = [{doc: i for i, doc in enumerate(ranking)} for ranking in rankings]
    run_weights = [1.0] * len(rankings) if weights is None else list(weights)
    index = [[ranks.get(doc, CONDORCET_MISSING) for doc in pool] for ranks in positions]

    def compare(x: int, y: int) -> int:
        x_votes = y_votes = 0.0
        for ranks, weight in zip(index, run_weights, strict=True):
            if ranks[x] < ranks[y]:
                x_votes += weight
            else:
                y_votes += weight
        return -1 if x_votes >= y_votes else 1

    order = sorted(range(len(pool)), key=cmp_to_key(compare))
    return [pool[i] for i in order]


def _condorcet_scores(order: list[str]) -> dict[str, float]:
    n = len(order)
    return {doc: float(n - i) for i, doc in enumerate(order)}


def condorcet(rankings: Sequence[Ranking]) -> dict[str, float]:
    """CondorcetFuse: the candidates sorted by pairwise majority, scored c, c-1, …, 1."""
    return _condorcet_scores(condorcet_order(rankings, list(candidates(rankings))))


def w_condorcet(rankings: Sequence[Ranking], *, weights: Weights) -> dict[str, float]:
    """Weighted CondorcetFuse: pairwise votes weighted by the runs' weights."""
    return _condorcet_scores(condorcet_order(rankings, list(candidates(rankings)), weights))
