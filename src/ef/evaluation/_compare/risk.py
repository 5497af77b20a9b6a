"""Risk-sensitive evaluation: URisk and TRisk against a baseline, GeoRisk over all systems.

URisk and TRisk are those of Dinçer, Macdonald and Ounis, "Hypothesis testing for the
risk-sensitive evaluation of retrieval systems" (SIGIR 2014). With ``δ_j`` the difference on
query ``j`` (system minus baseline) over ``c`` queries, a loss weighs ``1 + α`` times::

    z_j = δ_j if δ_j >= 0 else (1 + α) δ_j
    URisk_α = mean(z)                     (α = 0: the mean difference)
    TRisk_α = URisk_α / (s_z / sqrt(c))   (s_z: the sample standard deviation of z)

TRisk is a t-statistic: below −2 the system is significantly riskier than the baseline, above
+2 significantly safer (the paper's reading); undefined (``None``) when every ``z_j`` is equal.

GeoRisk is that of Dinçer, Macdonald and Ounis, "Risk-sensitive evaluation and learning to rank
using multiple baselines" (SIGIR 2016), over the matrix of every system's score ``x_ij`` on
every query: ``S_i`` the sum of system ``i``, ``T_j`` of query ``j``, ``N`` of all, ``e_ij =
S_i T_j / N`` the expected score and ``z_ij = (x_ij − e_ij) / sqrt(e_ij)`` (0 where
``e_ij = 0``)::

    ZRisk_α(i) = Σ_{z_ij > 0} z_ij + (1 + α) Σ_{z_ij < 0} z_ij
    GeoRisk_α(i) = sqrt(S_i / c · Φ(ZRisk_α(i) / c))

with ``Φ`` the standard normal distribution function (``math.erf``; no scipy needed).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

__all__ = ["RISK_READINGS", "georisk", "trisk", "trisk_reading", "urisk"]

RISK_READINGS = ("riskier", "safer", "not significant")
"""What a TRisk says: significantly riskier than the baseline, safer, or neither."""


def _weighted(system: Sequence[float], baseline: Sequence[float], alpha: float) -> list[float]:
    if alpha < 0:
        raise ValueError(f"the risk weight alpha must be >= 0, got {alpha}")
    if len(system) != len(baseline) or not system:
        raise ValueError("risk needs the same, non-zero number of values on both sides")
    deltas = [float(s) - float(b) for s, b in zip(system, baseline, strict=True)]
    return [d if d >= 0 else (1.0 + alpha) * d for d in deltas]


def urisk(system: Sequence[float], baseline: Sequence[float], alpha: float) -> float:
    """URisk_α of ``system`` against ``baseline``: the mean difference, losses weighed 1 + α.

    >>> urisk([0.5, 0.2], [0.3, 0.4], alpha=1.0)  # (0.2 - 2 × 0.2) / 2
    -0.1
    """
    z = _weighted(system, baseline, alpha)
    return math.fsum(z) / len(z)


def trisk(system: Sequence[float], baseline: Sequence[float], alpha: float) -> float | None:
    """TRisk_α: URisk_α over its standard error; ``None`` when the weighted differences are
    all equal (no spread), or for a single query.

    >>> round(trisk([0.5, 0.2, 0.9], [0.3, 0.4, 0.1], alpha=1.0), 4)
    0.5774
    """
    z = _weighted(system, baseline, alpha)
    n = len(z)
    if n < 2:
        return None
    mean = math.fsum(z) / n
    variance = math.fsum((v - mean) ** 2 for v in z) / (n - 1)
    scale = max(1.0, *(abs(v) for v in z))
    if variance <= (1e-12 * scale) ** 2:
        return None
    return mean / math.sqrt(variance / n)


def trisk_reading(t: float | None) -> str:
    """``"riskier"`` for a TRisk at most −2, ``"safer"`` at least +2, else ``"not significant"``."""
    if t is None or -2.0 < t < 2.0:
        return "not significant"
    return "riskier" if t <= -2.0 else "safer"


def georisk(scores: Mapping[str, Sequence[float]], alpha: float) -> dict[str, float]:
    """GeoRisk_α of each system over the matrix of all systems' per-query scores.

    :param scores: each system's values over the same queries, in the same order.
    :raises ValueError: for a negative value (GeoRisk is defined for scores >= 0) or alpha.
    """
    if alpha < 0:
        raise ValueError(f"the risk weight alpha must be >= 0, got {alpha}")
    names = list(scores)
    matrix = [[float(v) for v in scores[name]] for name in names]
    if any(v < 0 for row in matrix for v in row):
        raise ValueError("GeoRisk needs scores >= 0")
    c = len(matrix[0])
    system_sums = [math.fsum(row) for row in matrix]
    query_sums = [math.fsum(row[j] for row in matrix) for j in range(c)]
    total = math.fsum(system_sums)
    result = {}
    for name, row, s_i in zip(names, matrix, system_sums, strict=True):
        zrisk = 0.0
        for j, x in enumerate(row):
            expected = s_i * query_sums[j] / total if total > 0 else 0.0
            if expected <= 0:
                continue
            z = (x - expected) / math.sqrt(expected)
            zrisk += z if z > 0 else (1.0 + alpha) * z
        phi = 0.5 * (1.0 + math.erf(zrisk / c / math.sqrt(2.0)))
        result[name] = math.sqrt(s_i / c * phi)
    return result
