"""The DataFrame columns of the retrieval and RAG reports (their ``frame_columns``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ef.evaluation._report.frames import Column
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
    if report.groups:
        grouped = grouped_rows(rows, report.query_groups)
        return [
            ("query_id", "string", [row[0] for row in grouped]),
            ("metric", "string", [row[1] for row in grouped]),
            ("value", "float", [row[2] for row in grouped]),
            ("group", "string", [row[3] for row in grouped]),
        ]
    return [
        ("query_id", "string", [row[0] for row in rows]),
        ("metric", "string", [row[1] for row in rows]),
        ("value", "float", [row[2] for row in rows]),
    ]


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
    if report.groups:
        grouped = grouped_rows(rows, dict(zip(ids, report.sample_groups, strict=True)))
        return [
            ("sample_id", "string", [row[0] for row in grouped]),
            ("metric", "string", [row[1] for row in grouped]),
            ("value", "float", [row[2] for row in grouped]),
            ("group", "string", [row[3] for row in grouped]),
        ]
    return [
        ("sample_id", "string", [row[0] for row in rows]),
        ("metric", "string", [row[1] for row in rows]),
        ("value", "float", [row[2] for row in rows]),
    ]
