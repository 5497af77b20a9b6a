"""Comparisons per query group: the same tests on each group's queries, corrected over groups.

Each group's rows are computed exactly as :func:`~ef.evaluation.compare` computes its rows over
all queries (:func:`~ef.evaluation._compare.rows.comparison_rows`), on the group's paired
values alone. Their p-values then form families that span the groups: with a baseline, one
test on one metric over every compared system in every group; when every pair is compared, one
test over every pair, metric and group. Tukey's HSD is adjusted over the pairs of one metric
within one group by its own construction and is not corrected again; a bootstrap interval is
no p-value. :func:`~ef.evaluation._compare.render_groups.group_correction` says this in
words, for the report's captions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ef.evaluation._compare.report import PairedComparison
from ef.evaluation._compare.rows import adjust_families, comparison_rows
from ef.evaluation._groups.aggregate import check_scored, memberships_of
from ef.evaluation._groups.query_groups import QueryGroups

__all__ = ["GroupedComparison", "group_comparisons"]

Paired = Mapping[str, Mapping[str, Sequence[float | None]]]


@attrs.frozen
class GroupedComparison:
    """What a comparison keeps per group: means, query counts and rows."""

    means: dict[str, dict[str, dict[str, float]]]
    counts: dict[str, int]
    rows: list[PairedComparison]


def _mean(values: Sequence[float | None]) -> float | None:
    applicable = [value for value in values if value is not None]
    return math.fsum(applicable) / len(applicable) if applicable else None


def group_comparisons(
    paired: Paired,
    query_ids: Sequence[str],
    groups: QueryGroups,
    pairs: Sequence[tuple[str, str]],
    metrics: Sequence[str],
    tests: Sequence[str],
    *,
    correction: str | None,
    all_pairs: bool,
    stacklevel: int = 2,
    **row_options: Any,
) -> GroupedComparison:
    """Every group's rows, p-values adjusted over the groups.

    :param paired: each system's values of each metric over ``query_ids``.
    :param row_options: the tests' options, as :func:`comparison_rows` takes them.
    :raises ValueError: if the groups name none of the compared queries.
    """
    members = memberships_of(query_ids, groups)
    held = set(query_ids)
    unscored = {name: [q for q in groups.members(name) if q not in held] for name in members}
    check_scored(groups, list(query_ids), unscored, "queries", stacklevel + 1)
    means: dict[str, dict[str, dict[str, float]]] = {}
    counts: dict[str, int] = {}
    rows: list[PairedComparison] = []
    for name, positions in members.items():
        counts[name] = len(positions)
        if not positions:
            continue
        subset = {
            system: {m: [values[m][i] for i in positions] for m in metrics}
            for system, values in paired.items()
        }
        means[name] = {
            system: {m: mean for m in metrics if (mean := _mean(values[m])) is not None}
            for system, values in subset.items()
        }
        try:
            found = comparison_rows(
                subset, pairs, metrics, tests, correction=None, all_pairs=all_pairs, **row_options
            )
        except ValueError as error:
            error.add_note(f"in query group {name!r}")
            raise
        rows += [attrs.evolve(row, group=name) for row in found]
    keys = list(range(len(rows)))
    if all_pairs:
        families = [keys]
    else:
        families = [[k for k in keys if rows[k].metric == metric] for metric in metrics]
    adjusted = adjust_families({k: rows[k].p_values for k in keys}, families, tests, correction)
    rows = [attrs.evolve(rows[k], adjusted_p_values=adjusted[k]) for k in keys]
    return GroupedComparison(means, counts, rows)
