"""The columns of a comparison report's DataFrames (``to_pandas``, ``to_arrow``, ``to_polars``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ef.evaluation._report.frames import Column

if TYPE_CHECKING:
    from ef.evaluation._compare.report import ComparisonReport

__all__ = ["comparison_columns"]


def _means_columns(report: ComparisonReport) -> list[Column]:
    rows: list[tuple[str, str, float, str | None]] = [
        (system, metric, report.means[system][metric], None)
        for system in report.systems
        for metric in report.metrics
        if metric in report.means[system]
    ]
    for group, means in report.group_means.items():
        rows += [
            (system, metric, value, group)
            for system, values in means.items()
            for metric, value in values.items()
        ]
    columns: list[Column] = [
        ("system", "string", [row[0] for row in rows]),
        ("metric", "string", [row[1] for row in rows]),
        ("value", "float", [row[2] for row in rows]),
    ]
    if report.group_means:
        columns.append(("group", "string", [row[3] for row in rows]))
    return columns


def comparison_columns(report: ComparisonReport, means: bool) -> list[Column]:
    """The columns :meth:`ComparisonReport.frame_columns` documents."""
    if means:
        return _means_columns(report)
    rows = report.comparisons + report.group_comparisons
    intervals = [row.confidence_interval for row in rows]
    columns: list[Column] = [("system", "string", [row.system for row in rows])]
    if report.baseline is None:
        columns.append(("baseline", "string", [row.baseline for row in rows]))
    if report.group_comparisons:
        columns.append(("group", "string", [row.group for row in rows]))
    columns += [
        ("metric", "string", [row.metric for row in rows]),
        ("mean", "float", [row.mean for row in rows]),
        ("baseline_mean", "float", [row.baseline_mean for row in rows]),
        ("difference", "float", [row.difference for row in rows]),
        ("wins", "int", [row.wins for row in rows]),
        ("ties", "int", [row.ties for row in rows]),
        ("losses", "int", [row.losses for row in rows]),
        ("effect_size", "float", [row.effect_size for row in rows]),
    ]
    for test in report.tests:
        columns.append((f"p_{test}", "float", [row.p_values.get(test) for row in rows]))
        columns.append(
            (f"adjusted_p_{test}", "float", [row.adjusted_p_values.get(test) for row in rows])
        )
    columns.append(("ci_low", "float", [None if i is None else i[0] for i in intervals]))
    columns.append(("ci_high", "float", [None if i is None else i[1] for i in intervals]))
    if report.risk_alpha is not None:
        columns.append(("urisk", "float", [row.urisk for row in rows]))
        columns.append(("trisk", "float", [row.trisk for row in rows]))
        columns.append(("risk", "string", [row.risk_reading for row in rows]))
        none: dict[str, float] = {}
        georisk = [
            None if row.group is not None else report.georisk.get(row.system, none).get(row.metric)
            for row in rows
        ]
        columns.append(("georisk", "float", georisk))
    return columns
