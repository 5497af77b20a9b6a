"""The per-group part of a report: :class:`GroupResult`, and the group column of its frames."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from ef.evaluation._report.fields import (
    JsonReport,
    checked,
    count,
    finite,
    list_of,
    mapping_of,
    nested,
    string,
)
from ef.evaluation._report.frames import Column
from ef.evaluation._report.frozen import FrozenDict, as_tuple, frozen_dict

__all__ = [
    "GROUPS_CHECK",
    "GroupResult",
    "group_lists",
    "group_means_columns",
    "group_results",
    "group_tuples",
    "grouped_rows",
]


@attrs.frozen
class GroupResult(JsonReport):
    """One query group's part of a report: its means over its scored queries.

    :param metrics: each metric aggregated over the group's scored queries exactly as the
        report's own ``metrics`` are over all of them (a plain mean, summed in the same order;
        trec_eval's own aggregates as trec_eval forms them), so a group's mean equals, bit for
        bit, the mean of an evaluation of its queries alone. Empty when no query of the group
        was scored.
    :param n_queries: the group's queries that were scored (samples, for a RAG report).
    :param coverage: for a RAG report, how many of the group's samples each metric applied to.
    :param unscored: the queries the group names that the report did not score (not judged,
        skipped or failed, or unknown), in the order the groups gave them.
    """

    metrics: FrozenDict[str, float] = attrs.field(
        converter=frozen_dict, metadata=checked(mapping_of(finite))
    )
    n_queries: int = attrs.field(metadata=checked(count))
    coverage: FrozenDict[str, int] = attrs.field(
        factory=FrozenDict, converter=frozen_dict, kw_only=True, metadata=checked(mapping_of(count))
    )
    unscored: tuple[str, ...] = attrs.field(
        default=(), converter=as_tuple, kw_only=True, metadata=checked(list_of(string))
    )


def group_results(value: Mapping[str, GroupResult | Mapping[str, Any]]) -> FrozenDict[str, Any]:
    """Group name → :class:`GroupResult` (a mapping of its fields is built into one): a
    converter for attrs."""
    return FrozenDict(
        {
            name: item if isinstance(item, GroupResult) else GroupResult(**item)
            for name, item in value.items()
        }
    )


def group_tuples(value: Mapping[str, Iterable[str]]) -> FrozenDict[str, tuple[str, ...]]:
    """Query id → group names, frozen (a converter for attrs)."""
    if type(value) is FrozenDict and all(type(v) is tuple for v in value.values()):
        return value
    return FrozenDict({key: tuple(names) for key, names in value.items()})


def group_lists(value: Iterable[Iterable[str]]) -> tuple[tuple[str, ...], ...]:
    """The group names of each sample, in order, frozen (a converter for attrs)."""
    return tuple(tuple(names) for names in value)


GROUPS_CHECK = checked(mapping_of(nested(GroupResult)))
"""The JSON check of a report's ``groups`` field: group name → :class:`GroupResult`."""


def grouped_rows(
    rows: Iterable[tuple[str, str, Any]], groups_of: Mapping[str, Sequence[str]]
) -> list[tuple[str, str, Any, str | None]]:
    """``(id, metric, value)`` rows with the group added: one row per group of the id, and one
    with group ``None`` for an id in no group."""
    none: tuple[None] = (None,)
    return [
        (item, key, value, group)
        for item, key, value in rows
        for group in (groups_of.get(item) or none)
    ]


def group_means_columns(
    metrics: Mapping[str, float], groups: Mapping[str, GroupResult]
) -> list[Column]:
    """``metric, value, group, n_queries``: the report's means (``group`` missing), then each
    group's."""
    rows: list[tuple[str, float, str | None]] = [
        (key, value, None) for key, value in metrics.items()
    ]
    counts: list[int | None] = [None] * len(rows)
    for name, result in groups.items():
        rows += [(key, value, name) for key, value in result.metrics.items()]
        counts += [result.n_queries] * len(result.metrics)
    return [
        ("metric", "string", [row[0] for row in rows]),
        ("value", "float", [row[1] for row in rows]),
        ("group", "string", [row[2] for row in rows]),
        ("n_queries", "int", counts),
    ]
