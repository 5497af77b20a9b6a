"""Per-group aggregation: a report's per-query values, aggregated over each group's queries.

One implementation per computation: a group's mean of a key is the report's own aggregation
(:func:`~ef.evaluation._scoring.aggregation.aggregate` through the plan's rule, or
:func:`~ef.evaluation._scoring.aggregation.applicable_means` for RAG samples) applied to the
group's values in the report's order, so it equals, bit for bit, the mean of an evaluation of
the group's queries alone.

A scored query in no group counts in the report's own means and in no group's. A group member
the report did not score (not judged, skipped, failed, or not a query at all) is left out of
the group's means, listed in its ``unscored`` and named in one :class:`QueryGroupsWarning`; if
the groups name none of the scored queries, the ids cannot be the report's (a prefix, padding
or letter case apart), and that is an error rather than a report of empty groups (a report
that scored nothing, every query failed, keeps its empty groups with the warning).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence

import attrs

from ef.evaluation._exceptions import QueryGroupsWarning
from ef.evaluation._groups.inputs import as_query_groups
from ef.evaluation._groups.query_groups import GroupsInput, QueryGroups
from ef.evaluation._report.groups import GroupResult
from ef.evaluation._report.reports import RagEvalReport, RetrievalEvalReport
from ef.evaluation._scoring.aggregation import applicable_means
from ef.evaluation._scoring.run_queries import likely_cause

__all__ = ["check_scored", "memberships_of", "rag_groups", "retrieval_with_groups"]

Aggregate = Callable[[str, Sequence[float]], float]
_SHOWN = 5


def _shown(ids: Sequence[str]) -> str:
    listed = ", ".join(map(repr, ids[:_SHOWN]))
    return listed + (f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else "")


def memberships_of(ids: Sequence[str], groups: QueryGroups) -> dict[str, list[int]]:
    """Group name → the positions in ``ids`` of its members, groups in their order."""
    positions: dict[str, list[int]] = {name: [] for name in groups.names}
    of = groups.memberships.get
    for index, item in enumerate(ids):
        for name in of(item, ()):
            positions[name].append(index)
    return positions


def check_scored(
    groups: QueryGroups,
    scored: Sequence[str],
    unscored: Mapping[str, Sequence[str]],
    what: str,
    stacklevel: int,
) -> None:
    """Refuse groups that name none of ``scored``; warn about members not scored."""
    if not any(len(members) for members in unscored.values()):
        return
    if scored and not set(groups.memberships).intersection(scored):
        named = list(groups.memberships)
        cause = likely_cause(named[:2000], list(scored[:2000]))
        hint = f" (likely cause: {cause[0]}, {cause[1][0]!r} is {cause[1][1]!r})" if cause else ""
        raise ValueError(
            f"the query groups name none of the {len(scored)} {what} scored: they name "
            f"{_shown(named)}; the report has {_shown(list(scored))}{hint}"
        )
    parts = [
        f"group {name!r}: {len(members)} ({_shown(list(members))})"
        for name, members in unscored.items()
        if members
    ]
    warnings.warn(
        f"query groups name {what} the report did not score (not judged, skipped, failed or "
        f"unknown); each group's means are over its scored {what} only: " + "; ".join(parts),
        QueryGroupsWarning,
        stacklevel=stacklevel + 1,
    )


def retrieval_with_groups(
    report: RetrievalEvalReport,
    groups: QueryGroups,
    aggregate: Aggregate,
    *,
    stacklevel: int = 2,
) -> RetrievalEvalReport:
    """``report`` with its ``groups`` and ``query_groups``.

    :param aggregate: the evaluation's own rule, key and per-query values → the aggregate.
    :param stacklevel: the warning's, counted from the caller of this function.
    """
    per_query = report.per_query
    scored = list(per_query)
    keys = list(report.metrics)
    results: dict[str, GroupResult] = {}
    unscored: dict[str, list[str]] = {}
    for name, positions in memberships_of(scored, groups).items():
        rows = [per_query[scored[index]] for index in positions]
        metrics = {key: aggregate(key, [row[key] for row in rows]) for key in keys} if rows else {}
        unscored[name] = [q for q in groups.members(name) if q not in per_query]
        results[name] = GroupResult(metrics, len(rows), unscored=unscored[name])
    check_scored(groups, scored, unscored, "queries", stacklevel + 1)
    query_groups = {q: names for q in scored if (names := groups.of(q))}
    return attrs.evolve(report, groups=results, query_groups=query_groups)


def rag_groups(
    report: RagEvalReport,
    groups: GroupsInput | None,
    user_inputs: Sequence[str | None],
    *,
    stacklevel: int = 3,
) -> RagEvalReport:
    """``report`` with its ``groups`` and ``sample_groups``: ``groups`` names samples by the
    report's sample ids, or is a function of each sample's ``user_input``.

    :raises ValueError: for groups by id when the samples have no ids.
    """
    if groups is None:
        return report
    if callable(groups) and not isinstance(groups, QueryGroups | Mapping):
        # By position: the samples may have no ids, and a function needs none.
        texts = {str(i): text for i, text in enumerate(user_inputs) if text is not None}
        ids = [str(index) for index in range(len(user_inputs))]
        by_text = QueryGroups.from_texts(texts, groups)
        return _rag_grouped(report, by_text, ids, stacklevel + 1)
    checked = as_query_groups(groups, entry_point="evaluate_rag")
    if checked is None:
        return report
    if not report.sample_ids:
        raise ValueError(
            "the query groups name samples by id, and these samples have no ids (their "
            "user_input values are missing or repeat): pass ids= to evaluate_rag, or a "
            "function of the question as groups="
        )
    return _rag_grouped(report, checked, list(report.sample_ids), stacklevel + 1)


def _rag_grouped(
    report: RagEvalReport, groups: QueryGroups, ids: Sequence[str], stacklevel: int
) -> RagEvalReport:
    names = list(report.coverage)
    results: dict[str, GroupResult] = {}
    unscored: dict[str, list[str]] = {}
    held = set(ids)
    for name, positions in memberships_of(ids, groups).items():
        rows = [report.per_sample[index] for index in positions]
        metrics, coverage = applicable_means(rows, names)
        unscored[name] = [q for q in groups.members(name) if q not in held]
        results[name] = GroupResult(metrics, len(rows), coverage=coverage, unscored=unscored[name])
    check_scored(groups, ids, unscored, "samples", stacklevel + 1)
    sample_groups = [groups.of(item) for item in ids]
    return attrs.evolve(report, groups=results, sample_groups=sample_groups)
