"""Counting over cutoffs: the loops that read a query's relevant ranks at every cutoff at once.

``positions`` are the 0-based ranks of the retrieved relevant documents, ascending; ``ks`` the
cutoffs, ascending. ef's built-in metrics and trec_eval's cutoff measures share them.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["average_precision_at", "hits_at"]


def hits_at(positions: Sequence[int], ks: Sequence[int]) -> list[int]:
    """How many of the ascending ``positions`` fall within each ascending cutoff of ``ks``."""
    out: list[int] = []
    j, n = 0, len(positions)
    for k in ks:
        while j < n and positions[j] < k:
            j += 1
        out.append(j)
    return out


def average_precision_at(
    positions: Sequence[int], n_relevant: int, ks: Sequence[int]
) -> list[float]:
    """Average precision over the top k for each ascending cutoff of ``ks``, divided by R
    (``n_relevant``); 0 when R is 0 (trec_eval ``map_cut``)."""
    if n_relevant == 0:
        return [0.0] * len(ks)
    out: list[float] = []
    total = 0.0
    j, n = 0, len(positions)
    for k in ks:
        while j < n and positions[j] < k:
            j += 1
            total += j / (positions[j - 1] + 1)
        out.append(total / n_relevant)
    return out
