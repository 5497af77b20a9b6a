"""The DataFrame columns of the retrieval and RAG reports (their ``frame_columns``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ef.evaluation._report.frames import Column, ColumnType
from ef.evaluation._report.groups import group_means_columns, grouped_rows

if TYPE_CHECKING:
    from ef.evaluation._report.intervals import MeanIntervals
    from ef.evaluation._report.reports import RagEvalReport, RetrievalEvalReport

__all__ = ["rag_columns", "retrieval_columns"]


def _interval_columns(
    intervals: MeanIntervals | None, metrics: Mapping[str, float]
) -> list[Column]:
    """``ci_low, ci_high`` per metric when the report has intervals (missing where a metric has
    none), else no column."""
    if intervals is None:
        return []
    bounds = [intervals.bounds.get(key) for key in metrics]
    return [
        ("ci_low", "float", [None if pair is None else pair[0] for pair in bounds]),
        ("ci_high", "float", [None if pair is None else pair[1] for pair in bounds]),
    ]


def _value_columns(
    id_column: str,
    rows: Sequence[tuple[str, str, float | None]],
    groups: Mapping[str, Sequence[str]] | None,
) -> list[Column]:
    """``ID, metric, value`` columns of ``rows``; with ``groups``, one row per group of each
    id and a ``group`` column (missing for an id in no group)."""
    named: list[tuple[str, ColumnType]] = [
        (id_column, "string"),
        ("metric", "string"),
        ("value", "float"),
    ]
    if groups is None:
        return [(name, kind, [row[i] for row in rows]) for i, (name, kind) in enumerate(named)]
    grouped = grouped_rows(rows, groups)
    named.append(("group", "string"))
    return [(name, kind, [row[i] for row in grouped]) for i, (name, kind) in enumerate(named)]


def retrieval_columns(report: RetrievalEvalReport, means: bool) -> list[Column]:
    """:meth:`RetrievalEvalReport.frame_columns`."""
    if means:
        if report.groups:
            return group_means_columns(report.metrics, report.groups)
        return [
            ("metric", "string", list(report.metrics)),
            ("value", "float", list(report.metrics.values())),
            *_interval_columns(report.intervals, report.metrics),
        ]
    rows = [(q, key, v) for q, values in report.per_query.items() for key, v in values.items()]
    return _value_columns("query_id", rows, report.query_groups if report.groups else None)


def rag_columns(report: RagEvalReport, means: bool) -> list[Column]:
    """:meth:`RagEvalReport.frame_columns`."""
    if means:
        if report.groups:
            return group_means_columns(report.metrics, report.groups)
        return [
            ("metric", "string", list(report.metrics)),
            ("value", "float", list(report.metrics.values())),
            ("coverage", "int", [report.coverage.get(key, 0) for key in report.metrics]),
            *_interval_columns(report.intervals, report.metrics),
        ]
    ids = report.sample_ids or [str(index) for index in range(len(report.per_sample))]
    rows = [
        (sample_id, key, value)
        for sample_id, values in zip(ids, report.per_sample, strict=True)
        for key, value in values.items()
    ]
    groups = dict(zip(ids, report.sample_groups, strict=True)) if report.groups else None
    return _value_columns("sample_id", rows, groups)
