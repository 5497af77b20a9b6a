"""ranx's default search grids for :func:`~ef.evaluation.optimize_fusion`, exactly as ranx
iterates them (and without the weight combinations ranx's float sums drop)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product
from typing import Any

__all__ = ["hundredths", "weight_grid", "weights_only"]


def hundredths() -> list[float]:
    """0.01, 0.02, …, 1.0: ranx's grid for ``phi``, ``gamma`` and ``sigma``."""
    return [i / 100 for i in range(1, 101)]


def weight_grid(n_runs: int, step: float = 0.1) -> list[tuple[float, ...]]:
    """Every combination of ``n_runs`` weights in ``0, step, …, 1`` that sums to 1, in ranx's
    order (``itertools.product``, the last run's weight varying fastest).

    ranx keeps a combination when its float sum ``== 1.0``, which drops some that sum to 1 in
    decimal (for three runs ``(0.2, 0.7, 0.1)`` sums to ``0.9999999999999999``); this grid is
    built on integers and keeps them all.

    >>> weight_grid(2)[:3]
    [(0.0, 1.0), (0.1, 0.9), (0.2, 0.8)]
    >>> len(weight_grid(3))
    66
    """
    steps = round(1 / step)
    if steps < 1 or abs(steps * step - 1) > 1e-9:
        raise ValueError(f"the weight step must divide 1, got {step!r}")
    return [
        tuple(i / steps for i in combination)
        for combination in product(range(steps + 1), repeat=n_runs)
        if sum(combination) == steps
    ]


def weights_only(n_runs: int) -> dict[str, Sequence[Any]]:
    return {"weights": weight_grid(n_runs)}
