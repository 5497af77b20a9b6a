"""Comparing every pair of systems: Tukey's HSD and the groups of systems that do not differ.

Tukey's honestly significant difference test compares the means of every pair of systems at
once, its p-values adjusted for all the pairs of one metric by the studentized range
distribution. It treats the systems' per-query values as independent samples, as ranx
(``stat_test="tukey"``) and statsmodels' ``pairwise_tukeyhsd`` do, so it equals both; scipy's
``tukey_hsd`` computes it (the ``stats`` extra, imported on first use).

The groups are the letters papers print beside means: systems that share a letter do not differ
significantly. Each letter is one largest set of systems no two of which differ (a maximal
clique of the "does not differ" graph), so two systems share a letter exactly when they do not
differ; letters go to the groups in the order of their best mean.
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable, Mapping, Sequence

from ef.evaluation._compare.stats import _scipy

__all__ = ["letter_groups", "tukey_hsd"]


def tukey_hsd(values: Mapping[str, Sequence[float]]) -> dict[tuple[str, str], float | None]:
    """The p-value of Tukey's HSD for each pair of systems, both orders.

    :param values: each system's per-query values (at least two systems).
    :returns: ``{(a, b): p}``; ``None`` where the test is undefined (no variance within any
        system and different means).
    :raises ValueError: for fewer than two systems or a system without values.

    >>> p = tukey_hsd({'a': [0.1, 0.2, 0.3], 'b': [0.1, 0.2, 0.3], 'c': [0.7, 0.8, 0.9]})
    >>> p['a', 'b'], round(p['a', 'c'], 5), p['a', 'c'] == p['c', 'a']
    (1.0, 0.00079, True)
    """
    names = list(values)
    if len(names) < 2:
        raise ValueError("Tukey's HSD needs at least two systems")
    for name in names:
        if not values[name]:
            raise ValueError(f"system {name!r} has no value for Tukey's HSD")
    means = {name: math.fsum(values[name]) / len(values[name]) for name in names}
    spread = any(len(set(map(float, values[name]))) > 1 for name in names)
    if not spread:
        # No variance at all: scipy divides by zero. Equal means do not differ; unequal ones
        # differ by an amount the test cannot weigh.
        return {
            (a, b): (1.0 if means[a] == means[b] else None) for a in names for b in names if a != b
        }
    _, stats = _scipy()
    result = stats.tukey_hsd(*([float(v) for v in values[name]] for name in names))
    p_values: dict[tuple[str, str], float | None] = {}
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i != j:
                p = float(result.pvalue[i][j])
                p_values[a, b] = min(1.0, max(0.0, p)) if math.isfinite(p) else None
    return p_values


def letter_groups(
    systems: Sequence[str], means: Mapping[str, float], differ: Callable[[str, str], bool]
) -> dict[str, str]:
    """Each system's group letters: systems that share a letter do not differ.

    :param systems: the systems.
    :param means: each system's mean; the group holding the best one gets ``a``.
    :param differ: whether two systems differ significantly (symmetric).
    :returns: ``{system: letters}``, letters in alphabetical order (``"ab"``); after ``z``,
        groups are numbered (``"g27"``).

    >>> letter_groups(['x', 'y', 'z'], {'x': 0.9, 'y': 0.5, 'z': 0.1},
    ...               lambda a, b: {a, b} == {'x', 'z'})
    {'x': 'a', 'y': 'ab', 'z': 'b'}
    """
    order = sorted(systems, key=lambda name: (-means[name], list(systems).index(name)))
    neighbours = {a: {b for b in order if b != a and not differ(a, b)} for a in order}
    cliques: list[set[str]] = []

    def extend(chosen: set[str], candidates: set[str], excluded: set[str]) -> None:
        # Bron–Kerbosch: every maximal set of systems no two of which differ.
        if not candidates and not excluded:
            cliques.append(chosen)
            return
        for name in [n for n in order if n in candidates]:
            extend(chosen | {name}, candidates & neighbours[name], excluded & neighbours[name])
            candidates = candidates - {name}
            excluded = excluded | {name}

    extend(set(), set(order), set())
    rank = {name: index for index, name in enumerate(order)}
    cliques.sort(key=lambda clique: sorted(rank[name] for name in clique))
    labels = [string.ascii_lowercase[i] if i < 26 else f"g{i + 1}" for i in range(len(cliques))]
    return {
        name: "".join(
            label for label, clique in zip(labels, cliques, strict=True) if name in clique
        )
        for name in systems
    }
