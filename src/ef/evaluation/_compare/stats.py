"""Paired significance tests, a bootstrap interval, an effect size and p-value corrections.

Each function takes the per-query values of a system and of the baseline, in the same query
order, and answers one question about their differences. The distributions come from
``scipy.stats`` (the optional ``stats`` extra), imported on first use so that the core stays
scipy-free; the degenerate inputs scipy leaves undefined (every difference zero, a single
query) are decided here, explicitly, so no NaN ever reaches a report.

Differences count as *constant* when they are equal within ``1e-12 × max(1, max |value|)``,
``value`` ranging over both systems' per-query values, and as *all zero* when that common value
is within the same distance of 0. This departs from scipy on purpose: per-query values computed
in floating point carry rounding noise (``0.3 - 0.2`` is ``0.09999999999999998``, not
``0.1``), and scipy reads a spread of 1e-17 as real variance, giving a t-test p of ~1e-16 and a
Cohen's d of ~1e15 for a system that is better by exactly 0.1 on every query.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ef.evaluation._report.intervals import (
    check_interval_options,
    common_value,
    percentile_bootstrap,
    rng_option,
    scipy_modules,
)

__all__ = [
    "CORRECTIONS",
    "SIGNIFICANCE_TESTS",
    "adjust_p_values",
    "bootstrap_interval",
    "cohens_d",
    "paired_t_test",
    "randomization_test",
    "wilcoxon_test",
]

SIGNIFICANCE_TESTS = ("t-test", "randomization", "wilcoxon", "bootstrap", "tukey")
"""Every significance test :func:`compare` knows, by the name it is asked for (``tests=``)."""

CORRECTIONS = ("holm", "bonferroni", "bh")
"""The multiple-testing corrections :func:`compare` knows (``correction=``), besides ``None``."""

_scipy = scipy_modules


def _differences(system: Sequence[float], baseline: Sequence[float]) -> list[float]:
    if len(system) != len(baseline):
        raise ValueError(
            f"paired values must have the same length, got {len(system)} and {len(baseline)}"
        )
    if not system:
        raise ValueError("no paired values: at least one query is needed")
    return [float(s) - float(b) for s, b in zip(system, baseline, strict=True)]


def _constant_difference(
    system: Sequence[float], baseline: Sequence[float], differences: Sequence[float]
) -> float | None:
    """The common difference when every difference is the same up to rounding noise (``0.0``
    when that is zero), else ``None``; see the module's docstring for the tolerance."""
    scale = max(1.0, *(abs(float(v)) for v in system), *(abs(float(v)) for v in baseline))
    return common_value(differences, scale)


def paired_t_test(system: Sequence[float], baseline: Sequence[float]) -> float | None:
    """Two-sided p-value of the paired Student t-test (``scipy.stats.ttest_rel``).

    Where scipy has no answer, the limit of the test decides: every difference zero gives
    ``1.0`` (no evidence of a difference, where scipy returns NaN); every difference the same
    non-zero amount gives ``0.0`` (the t statistic is infinite); a single query with a non-zero
    difference gives ``None`` (no variance can be estimated from one pair). "The same" allows
    for rounding noise, unlike scipy (see the module's docstring): a system better by 0.1 on
    every query gives ``0.0`` even when some differences come out as ``0.09999999999999998``.

    :param system: the system's per-query values.
    :param baseline: the baseline's values for the same queries, in the same order.
    :returns: the p-value, or ``None`` when the test is undefined.
    :raises ValueError: if the sequences differ in length or are empty.

    >>> round(paired_t_test([0.5, 0.7, 0.9, 0.6], [0.4, 0.5, 0.6, 0.6]), 4)
    0.1027
    >>> paired_t_test([0.5, 0.5], [0.5, 0.5])
    1.0
    >>> paired_t_test([0.3, 0.2], [0.2, 0.1])  # differences 0.09999999999999998 and 0.1
    0.0
    """
    differences = _differences(system, baseline)
    common = _constant_difference(system, baseline, differences)
    if common == 0.0:
        return 1.0
    if len(differences) == 1:
        return None
    if common is not None:
        return 0.0
    _, stats = _scipy()
    return float(stats.ttest_rel(system, baseline).pvalue)


def wilcoxon_test(system: Sequence[float], baseline: Sequence[float]) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test (``scipy.stats.wilcoxon``).

    Zero differences are dropped (Wilcoxon's own rule, scipy's default), and scipy picks the
    exact distribution or the normal approximation as it sees fit; every difference zero
    (up to rounding noise) gives ``1.0`` (where scipy divides by zero).

    :param system: the system's per-query values.
    :param baseline: the baseline's values for the same queries, in the same order.
    :returns: the p-value.
    :raises ValueError: if the sequences differ in length or are empty.

    >>> wilcoxon_test([0.5, 0.7, 0.9, 0.6, 0.8], [0.4, 0.5, 0.6, 0.3, 0.4])
    0.0625
    """
    differences = _differences(system, baseline)
    if _constant_difference(system, baseline, differences) == 0.0:
        return 1.0
    _, stats = _scipy()
    return float(stats.wilcoxon(differences).pvalue)


def _absolute_mean_difference(x: Any, y: Any, axis: int) -> Any:
    numpy, _ = _scipy()
    return numpy.abs(numpy.mean(x - y, axis=axis))


def randomization_test(
    system: Sequence[float],
    baseline: Sequence[float],
    *,
    n_permutations: int = 10_000,
    seed: int = 0,
) -> float:
    """Two-sided p-value of Fisher's paired randomisation test (``scipy.stats.permutation_test``).

    Under the null hypothesis the two systems are exchangeable on each query, so each pair is
    swapped at random and the absolute difference of the means is compared with the observed
    one (Smucker, Allan and Carterette, CIKM 2007). With ``2 ** n_queries <= n_permutations``
    every one of the swaps is enumerated and the p-value is exact; otherwise it is estimated
    from ``n_permutations`` random swaps drawn from ``numpy.random.default_rng(seed)``, as
    ``(hits + 1) / (n_permutations + 1)``, so it is never 0. Identical systems (up to rounding
    noise), and a single query, give ``1.0``.

    :param system: the system's per-query values.
    :param baseline: the baseline's values for the same queries, in the same order.
    :param n_permutations: how many random swaps to draw.
    :param seed: the seed of the generator; the same seed gives the same p-value.
    :returns: the p-value.
    :raises ValueError: if the sequences differ in length or are empty, or
        ``n_permutations < 1``.

    >>> randomization_test([0.5, 0.7, 0.9, 0.6], [0.4, 0.5, 0.6, 0.6])  # 16 swaps, exact
    0.25
    """
    differences = _differences(system, baseline)
    if n_permutations < 1:
        raise ValueError(f"n_permutations must be >= 1, got {n_permutations}")
    if len(differences) == 1 or _constant_difference(system, baseline, differences) == 0.0:
        return 1.0  # every swap reaches the observed |difference| (of one pair, or of none)
    numpy, stats = _scipy()
    result = stats.permutation_test(
        (numpy.asarray(system, dtype=float), numpy.asarray(baseline, dtype=float)),
        _absolute_mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_permutations,
        alternative="greater",
        **rng_option(stats.permutation_test, seed),
    )
    return min(1.0, float(result.pvalue))


def bootstrap_interval(
    system: Sequence[float],
    baseline: Sequence[float],
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Paired bootstrap confidence interval of the mean difference (``scipy.stats.bootstrap``).

    The queries are resampled with replacement, keeping each query's pair together, and the
    interval is the percentile interval of the resampled mean differences (Efron and
    Tibshirani, 1993, chapter 13), from ``numpy.random.default_rng(seed)``. When every
    difference is the same, up to rounding noise (identical systems give ``(0.0, 0.0)``), each
    resample has the same mean and the interval collapses to the mean difference. A single
    query with a non-zero difference gives ``None``: one pair says nothing about how the
    difference varies.

    :param system: the system's per-query values.
    :param baseline: the baseline's values for the same queries, in the same order.
    :param confidence_level: the coverage of the interval, in (0, 1).
    :param n_resamples: how many resamples to draw.
    :param seed: the seed of the generator; the same seed gives the same interval.
    :returns: ``(low, high)``, or ``None`` when the interval is undefined.
    :raises ValueError: if the sequences differ in length or are empty, ``n_resamples < 1``,
        or ``confidence_level`` is not in (0, 1).

    >>> low, high = bootstrap_interval([0.5, 0.7, 0.9, 0.6], [0.4, 0.5, 0.6, 0.6])
    >>> low < 0.15 < high
    True
    >>> bootstrap_interval([0.3, 0.3], [0.3, 0.3])
    (0.0, 0.0)
    """
    differences = _differences(system, baseline)
    check_interval_options(None, confidence_level, n_resamples)
    common = _constant_difference(system, baseline, differences)
    if common == 0.0:
        return (0.0, 0.0)
    if len(differences) == 1:
        return None
    if common is not None:
        return (common, common)
    return percentile_bootstrap(
        differences, confidence_level=confidence_level, n_resamples=n_resamples, seed=seed
    )


def cohens_d(system: Sequence[float], baseline: Sequence[float]) -> float | None:
    """Cohen's d for paired data: the mean difference over the standard deviation of the
    differences (``d_z``, with the ``n - 1`` denominator).

    Every difference zero gives ``0.0``. The effect is undefined, and ``None`` is returned,
    for a single query with a non-zero difference, or when every query differs by the same
    non-zero amount (no spread to scale by) — the same up to rounding noise, so float noise
    in the differences is not taken for a spread (see the module's docstring).

    :param system: the system's per-query values.
    :param baseline: the baseline's values for the same queries, in the same order.
    :returns: the effect size, or ``None`` when it is undefined.
    :raises ValueError: if the sequences differ in length or are empty.

    >>> round(cohens_d([0.5, 0.7, 0.9, 0.6], [0.4, 0.5, 0.6, 0.6]), 4)
    1.1619
    >>> cohens_d([0.3, 0.2], [0.2, 0.1]) is None  # differences 0.09999999999999998 and 0.1
    True
    """
    differences = _differences(system, baseline)
    common = _constant_difference(system, baseline, differences)
    if common == 0.0:
        return 0.0
    n = len(differences)
    if n == 1 or common is not None:
        return None
    mean = math.fsum(differences) / n
    variance = math.fsum((d - mean) ** 2 for d in differences) / (n - 1)
    return mean / math.sqrt(variance)


def _holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: ``max_{j <= i} min(1, (m - j + 1) p_(j))`` in sorted order."""
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def adjust_p_values(p_values: Sequence[float], method: str | None) -> list[float]:
    """Adjust a family of p-values for multiple testing.

    ``"bonferroni"`` multiplies each by the family size; ``"holm"`` is Holm's step-down
    procedure (uniformly more powerful, same family-wise error guarantee); ``"bh"`` is the
    Benjamini–Hochberg false-discovery-rate adjustment (``scipy.stats.false_discovery_control``);
    ``None`` returns them unchanged. Adjusted values are capped at 1 and keep the order of the
    raw ones, so comparing each with ``alpha`` applies the procedure.

    :param p_values: the raw p-values of one family, in any order.
    :param method: ``"holm"``, ``"bonferroni"``, ``"bh"`` or ``None``.
    :returns: the adjusted p-values, in the order given.
    :raises ValueError: for an unknown method or a p-value outside [0, 1].

    >>> adjust_p_values([0.01, 0.04, 0.03, 0.005], "holm")
    [0.03, 0.06, 0.06, 0.02]
    >>> adjust_p_values([0.01, 0.04, 0.03, 0.005], "bonferroni")
    [0.04, 0.16, 0.12, 0.02]
    """
    if method is not None and method not in CORRECTIONS:
        raise ValueError(
            f"unknown correction {method!r}: expected one of {', '.join(CORRECTIONS)} or None"
        )
    values = [float(p) for p in p_values]
    for p in values:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"a p-value must be in [0, 1], got {p}")
    if method is None or not values:
        return values
    if method == "bonferroni":
        return [min(1.0, p * len(values)) for p in values]
    if method == "holm":
        return _holm(values)
    _, stats = _scipy()
    return [min(1.0, float(p)) for p in stats.false_discovery_control(values, method="bh")]
