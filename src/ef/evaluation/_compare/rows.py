"""The rows of a comparison: one :class:`PairedComparison` per pair of systems and metric.

A pair is a system and the system it is compared with (the baseline, or, when every pair is
compared, the system listed before it). The p-values of one test form one family adjusted by the
correction: over the systems compared with the baseline on one metric, or over every pair and
every metric when all pairs are compared. Tukey's HSD is adjusted by its own construction (over
the pairs of one metric) and is not corrected again.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

from ef.evaluation._compare import rag as _rag_pairs
from ef.evaluation._compare import stats as _stats
from ef.evaluation._compare.pairwise import tukey_hsd
from ef.evaluation._compare.report import PairedComparison
from ef.evaluation._compare.risk import trisk, urisk

__all__ = ["adjust_families", "comparison_rows"]

K = TypeVar("K", bound=Hashable)
Pair = tuple[str, str]
Kept = tuple[list[float], list[float], int]


def comparison_rows(
    paired: Mapping[str, Mapping[str, Sequence[float | None]]],
    pairs: Sequence[Pair],
    metrics: Sequence[str],
    tests: Sequence[str],
    *,
    correction: str | None,
    all_pairs: bool,
    n_permutations: int,
    n_resamples: int,
    seed: int,
    confidence_level: float,
    risk_alpha: float | None = None,
) -> list[PairedComparison]:
    """Every row, metric by metric and pair by pair, p-values adjusted.

    :param paired: each system's values of each metric, over the same queries.
    :param pairs: ``(system, other)``: ``system`` is compared with ``other``.
    :raises ValueError: where a metric applies to no query of both systems of a pair.
    """
    kept: dict[tuple[str, str, str], Kept] = {}
    raw: dict[tuple[str, str, str], dict[str, float | None]] = {}
    for metric in metrics:
        tukey = None
        if "tukey" in tests:
            applicable = {
                name: [v for v in paired[name][metric] if v is not None] for name in paired
            }
            tukey = tukey_hsd(applicable)
        for system, other in pairs:
            values, base, left_out = _rag_pairs.applicable_pairs(
                paired[system][metric], paired[other][metric]
            )
            if not values:
                raise ValueError(
                    f"metric {metric!r} applies to no sample of both {system!r} and "
                    f"{other!r}: nothing to compare"
                )
            kept[metric, system, other] = (values, base, left_out)
            raw[metric, system, other] = _p_values(values, base, tests, n_permutations, seed)
            if tukey is not None:
                raw[metric, system, other]["tukey"] = tukey[system, other]
    families = [list(kept)] if all_pairs else [[k for k in kept if k[0] == m] for m in metrics]
    adjusted = adjust_families(raw, families, tests, correction)
    rows = []
    for (metric, system, other), (values, base, left_out) in kept.items():
        n_pairs = len(values)
        both = list(zip(values, base, strict=True))
        interval = None
        if "bootstrap" in tests:
            interval = _stats.bootstrap_interval(
                values, base, confidence_level=confidence_level, n_resamples=n_resamples, seed=seed
            )
        rows.append(
            PairedComparison(
                system=system,
                metric=metric,
                mean=math.fsum(values) / n_pairs,
                baseline_mean=math.fsum(base) / n_pairs,
                difference=math.fsum(v - b for v, b in both) / n_pairs,
                wins=sum(v > b for v, b in both),
                ties=sum(v == b for v, b in both),
                losses=sum(v < b for v, b in both),
                effect_size=_stats.cohens_d(values, base),
                p_values=raw[metric, system, other],
                adjusted_p_values=adjusted[metric, system, other],
                confidence_interval=interval,
                not_applicable=left_out,
                baseline=other,
                urisk=None if risk_alpha is None else urisk(values, base, risk_alpha),
                trisk=None if risk_alpha is None else trisk(values, base, risk_alpha),
            )
        )
    return rows


def adjust_families(
    raw: Mapping[K, Mapping[str, float | None]],
    families: Sequence[Sequence[K]],
    tests: Sequence[str],
    correction: str | None,
) -> dict[K, dict[str, float | None]]:
    """Each key's p-values adjusted by ``correction`` within its family, test by test (the
    bootstrap gives no p-value and Tukey's HSD is adjusted by its own construction: both kept
    as they are; an undefined p-value stays undefined and is not counted in the family)."""
    adjusted = {key: dict(p_values) for key, p_values in raw.items()}
    for family in families:
        for test in tests:
            if test in ("bootstrap", "tukey"):
                continue
            defined = [(key, p) for key in family if (p := raw[key].get(test)) is not None]
            family_p = [p for _, p in defined]
            for (key, _), value in zip(
                defined, _stats.adjust_p_values(family_p, correction), strict=True
            ):
                adjusted[key][test] = value
    return adjusted


def _p_values(
    values: Sequence[float],
    base: Sequence[float],
    tests: Sequence[str],
    n_permutations: int,
    seed: int,
) -> dict[str, float | None]:
    p_values: dict[str, float | None] = {}
    for test in tests:
        if test == "t-test":
            p_values[test] = _stats.paired_t_test(values, base)
        elif test == "randomization":
            p_values[test] = _stats.randomization_test(
                values, base, n_permutations=n_permutations, seed=seed
            )
        elif test == "wilcoxon":
            p_values[test] = _stats.wilcoxon_test(values, base)
        elif test == "tukey":
            p_values[test] = None  # over all systems at once, filled in by the caller
    return p_values
