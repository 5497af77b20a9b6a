"""Score normalisations, one query at a time: ranx's formulas, the same numbers.

Each takes one query's rankings (one ``{doc_id: score}`` dict per run, best first, so a run's
highest and lowest scores are its first and last) and returns
the normalised scores, one dict per run. Every normalisation but ``borda`` treats each run on its
own; ``borda`` needs every run's doc ids (the query's candidates). A run with nothing retrieved
for the query stays empty. Denominators below ``1e-9`` are raised to ``1e-9``, as ranx does, so
a query whose scores are all equal normalises to zeros (``min-max``) instead of dividing by zero.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import repeat
from operator import mul, sub, truediv

from ef.evaluation._fusion._entries import NormEntry
from ef.evaluation._fusion._inputs import Ranking
from ef.evaluation._scoring.aggregation import exact_unit_scale

__all__ = [
    "BUILTIN_NORMALIZATIONS",
    "KEEPS_ORDER",
    "ORDER_BASED",
    "SHIFT_SCALE",
    "builtin_name",
    "candidates",
]

_FLOOR = 1e-9

NormFn = Callable[[Sequence[Ranking]], list[Ranking]]


KEEPS_ORDER = "keeps_order"
"""Set on a normalisation function that keeps each run's order (an increasing map of the
scores): its output is not put in rank order again, so a tie it creates by rounding keeps the
run's order, as in ranx."""


def _per_run(norm: Callable[[Ranking], Ranking], *, keeps_order: bool = True) -> NormFn:
    def apply(rankings: Sequence[Ranking]) -> list[Ranking]:
        return [norm(ranking) if ranking else {} for ranking in rankings]

    apply.__doc__ = norm.__doc__
    apply.__name__ = norm.__name__
    setattr(apply, KEEPS_ORDER, keeps_order)
    return apply


def _shift_scale(ranking: Ranking, shift: float, denominator: float) -> Ranking:
    """(score - shift) / denominator for every doc, at C speed."""
    shifted = map(sub, ranking.values(), repeat(shift)) if shift else ranking.values()
    # A copy has the right size from the start; replacing its values never resizes it.
    scaled = ranking.copy()
    scaled.update(zip(ranking, map(truediv, shifted, repeat(denominator)), strict=True))
    return scaled


def _bounds(ranking: Ranking) -> tuple[float, float]:
    """The lowest and the highest score: the last and the first, the ranking being in order."""
    return next(reversed(ranking.values())), next(iter(ranking.values()))


SHIFT_SCALE = frozenset({"min-max", "max", "sum"})
"""The normalisations that are ``(score - shift) / denominator`` of each run's scores, with a
positive denominator: increasing maps, which keep each run's order."""


def _min_max(ranking: Ranking) -> Ranking:
    """(score - min) / (max - min)."""
    low, high = _bounds(ranking)
    return _shift_scale(ranking, low, max(high - low, _FLOOR))


def _min_max_inverted(ranking: Ranking) -> Ranking:
    """(max - score) / (max - min): for distances, where lower is better."""
    low, high = _bounds(ranking)
    denominator = max(high - low, _FLOOR)
    return {doc: (high - score) / denominator for doc, score in ranking.items()}


def _max(ranking: Ranking) -> Ranking:
    """score / max (meant for non-negative scores: a negative max divides by 1e-9)."""
    return _shift_scale(ranking, 0.0, max(_bounds(ranking)[1], _FLOOR))


def _sum(ranking: Ranking) -> Ranking:
    """(score - min) / (sum - min · n): the shifted scores sum to 1."""
    low = _bounds(ranking)[0]
    return _shift_scale(ranking, low, max(sum(ranking.values()) - low * len(ranking), _FLOOR))


def _zmuv(ranking: Ranking) -> Ranking:
    """(score - mean) / standard deviation (population): zero mean, unit variance."""
    # Scores larger than 1 in magnitude are first scaled down below 1 by a power of two, which
    # is exact: the numbers stay ranx's, and scores near the float limit (±1.7e308) overflow
    # neither their differences from the mean nor their squares.
    scale = exact_unit_scale(ranking.values())
    scaled = ranking.copy()
    scaled.update(zip(ranking, map(mul, ranking.values(), repeat(scale)), strict=True))
    values = list(scaled.values())
    mean = math.fsum(values) / len(values)
    deviation = math.sqrt(math.fsum((value - mean) ** 2 for value in values) / len(values))
    return _shift_scale(scaled, mean, max(deviation, _FLOOR * scale))


def _rank(ranking: Ranking) -> Ranking:
    """1 - rank / n, rank 0-based: the best doc gets 1."""
    n = len(ranking)
    return {doc: 1 - i / n for i, doc in enumerate(ranking)}


def candidates(rankings: Sequence[Ranking]) -> dict[str, None]:
    """Every doc id any run retrieved for the query, in order of first appearance."""
    seen: dict[str, None] = {}
    for ranking in rankings:
        seen.update(dict.fromkeys(ranking))
    return seen


def _borda(rankings: Sequence[Ranking]) -> list[Ranking]:
    """1 - rank / c over the query's c candidates; a candidate a run missed gets the mean of
    the places that run left, 0.5 - (n - 1) / 2c."""
    pool = candidates(rankings)
    n_candidates = len(pool)
    normalized: list[Ranking] = []
    for ranking in rankings:
        n = len(ranking)
        scores = {doc: 1 - i / n_candidates for i, doc in enumerate(ranking)}
        unranked = 0.5 - (n - 1) / (2 * n_candidates)
        for doc in pool:
            if doc not in scores:
                scores[doc] = unranked
        normalized.append(scores)
    return normalized


def _none(rankings: Sequence[Ranking]) -> list[Ranking]:
    """The scores as they are."""
    return list(rankings)


setattr(_none, KEEPS_ORDER, True)


BUILTIN_NORMALIZATIONS: dict[str, tuple[NormFn, str]] = {
    "min-max": (_per_run(_min_max), _min_max.__doc__ or ""),
    "min-max-inverted": (
        _per_run(_min_max_inverted, keeps_order=False),
        _min_max_inverted.__doc__ or "",
    ),
    "max": (_per_run(_max), _max.__doc__ or ""),
    "sum": (_per_run(_sum), _sum.__doc__ or ""),
    "zmuv": (_per_run(_zmuv), _zmuv.__doc__ or ""),
    "rank": (_per_run(_rank), _rank.__doc__ or ""),
    "borda": (_borda, (_borda.__doc__ or "").replace("\n   ", "")),
    "none": (_none, _none.__doc__ or ""),
}
"""name → (function, one-line description)."""

ORDER_BASED = frozenset({"rank", "borda"})
"""The normalisations that read only each run's order, never its scores."""


def builtin_name(norm: NormEntry | None) -> str | None:
    """Which built-in normalisation ``norm`` is (by its function, so a plugin's of the same
    name is not one): its name, ``None`` for no normalisation, ``"?"`` for any other."""
    if norm is None:
        return None
    for name, (fn, _) in BUILTIN_NORMALIZATIONS.items():
        if norm.fn is fn:
            return name
    return "?"
