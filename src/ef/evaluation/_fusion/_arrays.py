"""The additive fusion methods with numpy, when it is installed: the same floats, faster.

``sum`` and ``wsum`` (under no normalisation, ``min-max``, ``max`` or ``sum``) and ``rrf`` and
``rbc`` (under none or one that keeps each run's order) add one value per run and doc. Here a
query's doc ids are numbered once, each run's values are normalised as one array and added
into one array of totals, and the fused query is put in trec_eval's order by one sort of the
totals (ties by doc id descending, as :func:`~ef.evaluation._fusion._order.in_trec_order`).

Every float is the one the pure-Python path computes: the same IEEE operations on the same
operands, in the same order — each normalised value ``(score - shift) / denominator``, its
shift and denominator computed by the very functions of the pure-Python path
(:data:`~ef.evaluation._fusion.norms.SHIFT_SCALE`), the runs added one after the other from the
first, and a doc missing from the first runs starting from ``0.0``.
Without numpy, or for any other method or normalisation (plugins included), fusion takes the
pure-Python path. ``tests/test_fusion_numpy.py`` runs both on generated runs and compares every
score bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

from ef.evaluation._fusion import methods, norms
from ef.evaluation._fusion._entries import MethodEntry, NormEntry
from ef.evaluation._fusion._inputs import Ranking

__all__ = ["ArrayKernel", "all_finite", "array_kernel", "numpy_or_none", "trec_ordered"]

ArrayKernel = Callable[[Sequence[Ranking]], tuple[list[str], Any] | None]
"""One query's rankings → its doc ids and their fused scores (a float64 array, aligned), or
``None`` for a query the pure-Python path must fuse (int scores added as they are)."""


def numpy_or_none() -> ModuleType | None:
    """numpy, imported on first use, or ``None`` when it is not installed."""
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def array_kernel(
    entry: MethodEntry, norm: NormEntry | None, options: Mapping[str, Any]
) -> ArrayKernel | None:
    """The numpy kernel for ``entry`` under ``norm`` with ``options``, or ``None`` (no numpy,
    or a method or normalisation this module does not cover)."""
    norm_name = norms.builtin_name(norm)
    fn = entry.fn
    if fn is methods.rrf or fn is methods.rbc:
        if norm_name not in (None, "none", *norms.SHIFT_SCALE):  # these keep each run's order
            return None
        np = numpy_or_none()
        if np is None:
            return None
        kind, parameter = ("rrf", options["k"]) if fn is methods.rrf else ("rbc", options["phi"])
        return _ranked_kernel(np, kind, parameter)
    if fn is methods.sum_ or fn is methods.wsum:
        if norm_name not in (None, "none", *norms.SHIFT_SCALE):
            return None
        np = numpy_or_none()
        if np is None:
            return None
        weights = options.get("weights") if fn is methods.wsum else None
        shift_scale = norms.SHIFT_SCALE.get(norm_name or "")
        return _scored_kernel(np, shift_scale, weights)
    return None


def _ranked_kernel(np: Any, kind: str, parameter: float) -> ArrayKernel:
    tables: dict[int, Any] = {}

    def values(rankings: Sequence[Ranking]) -> list[Any]:
        depth = max(map(len, rankings), default=0)
        size = 1 << max(depth - 1, 0).bit_length()
        table = tables.get(size)
        if table is None:
            # The very floats of methods._rank_table, as an array.
            table = tables[size] = np.array(methods._rank_table(kind, parameter, size))
        return [table[: len(ranking)] for ranking in rankings]

    return lambda rankings: _add_up(np, rankings, values(rankings))


def _scored_kernel(
    np: Any,
    shift_scale: Callable[[Ranking], tuple[float, float]] | None,
    weights: Sequence[float] | None,
) -> ArrayKernel:
    raw = shift_scale is None and weights is None

    def values(rankings: Sequence[Ranking]) -> list[Any] | None:
        out = []
        for index, ranking in enumerate(rankings):
            if raw and not all(type(score) is float for score in ranking.values()):
                return None  # an unnormalised, unweighted sum of ints stays an int in Python
            scores = np.fromiter(ranking.values(), np.float64, len(ranking))
            if shift_scale is not None and ranking:
                shift, denominator = shift_scale(ranking)
                if shift:  # as norms._shift_scale: no shift keeps a -0.0 a -0.0
                    scores = scores - shift
                scores = scores / denominator
            if weights is not None:
                scores = scores * weights[index]
            out.append(scores)
        return out

    def kernel(rankings: Sequence[Ranking]) -> tuple[list[str], Any] | None:
        run_values = values(rankings)
        return None if run_values is None else _add_up(np, rankings, run_values)

    return kernel


_NUMBERS: list[int] = []


def _numbers(n: int) -> list[int]:
    """``[0, 1, …]`` with at least ``n`` entries, the same int objects every time."""
    if len(_NUMBERS) < n:
        _NUMBERS.extend(range(len(_NUMBERS), max(n, 2 * len(_NUMBERS))))
    return _NUMBERS


def _add_up(np: Any, rankings: Sequence[Ranking], values: list[Any]) -> tuple[list[str], Any]:
    """Each doc's values added up run after run, as methods.combine_sum adds them."""
    slots: dict[str, int] | None = None
    placed: list[tuple[Any, Any]] = []
    size = 0
    for ranking, run_values in zip(rankings, values, strict=True):
        n = len(ranking)
        if not n:
            continue
        numbers = _numbers(size + n)[size : size + n]  # shared ints: none made per doc
        if slots is None:
            slots = dict(zip(ranking, numbers, strict=False))
            placed.append((None, run_values))
        else:
            # A doc seen before keeps its slot; a new one takes the next free number.
            where = np.fromiter(map(slots.setdefault, ranking, numbers), np.intp, n)
            placed.append((where, run_values))
        size += n
    if slots is None:
        return [], np.zeros(0)
    totals = np.zeros(size)
    for where, run_values in placed:
        if where is None:
            totals[: len(run_values)] = run_values  # the first run's values, as they are
        else:
            totals[where] += run_values  # ids are unique within a run: one add per slot
    docs = list(slots)
    return docs, totals[np.fromiter(slots.values(), np.intp, len(docs))]


def trec_ordered(np: Any, docs: list[str], scores: Any) -> dict[str, float]:
    """``docs`` with their ``scores`` (finite) as a dict in trec_eval's order: score descending,
    ties by doc id descending, as :func:`~ef.evaluation._fusion._order.in_trec_order`."""
    order = np.argsort(-scores, kind="stable")
    ordered = scores[order]
    # Taken through an object array: no int object made per doc.
    ranked = np.array(docs, dtype=object)[order].tolist()
    values = ordered.tolist()
    tied = np.flatnonzero(ordered[1:] == ordered[:-1]).tolist()
    own: dict[str, float] | None = None
    start = None
    for position, following in zip(tied, [*tied[1:], None], strict=False):
        if start is None:
            start = position
        if following != position + 1:  # the tie group ends at position + 1
            end = position + 2
            group = ranked[start:end] = sorted(ranked[start:end], reverse=True)
            if values[start] == 0.0:
                # Equal values are the same floats, but for 0.0 and -0.0: each doc keeps its own.
                if own is None:
                    own = dict(zip(docs, scores.tolist(), strict=True))
                values[start:end] = map(own.__getitem__, group)
            start = None
    return dict(zip(ranked, values, strict=True))


def all_finite(np: Any, scores: Any) -> bool:
    """Whether every fused score is finite (one C-level pass)."""
    return bool(math.isfinite(float(np.sum(scores)))) or bool(np.isfinite(scores).all())
