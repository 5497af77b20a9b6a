"""The per-group table of a comparison: each group's means, marked by its corrected tests.

One row per group and system, one column per metric, and the number of the group's queries.
A mean is marked ``†`` when the system differs significantly from the one it is compared with
in that group (with a baseline), by the deciding test after the correction over groups; when
every pair was compared, the mark counts the systems it differs from in that group. The caption
says how the per-group p-values were corrected
(:func:`group_correction`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ef.evaluation._compare.render_pairs import CORRECTION_NAMES, TEST_NAMES
from ef.evaluation._compare.render_pairs import DAGGER as _DAGGER
from ef.evaluation._report.table import Cell, Figure
from ef.evaluation._report.table import Table as _Table

if TYPE_CHECKING:  # annotations only: the report's methods import this module
    from rich.table import Table

    from ef.evaluation._compare.report import ComparisonReport

__all__ = [
    "group_caption",
    "group_correction",
    "group_markdown",
    "group_rows",
    "group_table",
    "groups_table",
]


def group_rows(report: ComparisonReport, test: str, digits: int) -> list[list[str]]:
    """``[group, queries, system, mean or mark per metric…]`` for every group and system."""
    rows = []
    for group, count in report.group_counts.items():
        means: Mapping[str, Mapping[str, float]] = report.group_means.get(group, {})
        for system in report.systems:
            cells = [group, str(count), system]
            for metric in report.metrics:
                value = means.get(system, {}).get(metric)
                if value is None:
                    cells.append("-")
                    continue
                found = [
                    row
                    for row in report.group_comparisons
                    if row.group == group
                    and row.metric == metric
                    and system in (row.system, row.baseline)
                    and report.row_significant(row, test)
                ]
                mark = ""
                if report.baseline is not None and any(r.system == system for r in found):
                    mark = _DAGGER
                elif report.baseline is None and found:
                    mark = f" ({len(found)}{_DAGGER})"
                cells.append(f"{value:.{digits}f}{mark}")
            rows.append(cells)
    return rows


def group_caption(report: ComparisonReport, test: str) -> str:
    """What the per-group table shows and how its marks were decided."""
    target = "the baseline" if report.baseline is not None else "another system (counted)"
    return (
        f"Mean over each query group's paired queries. {_DAGGER}: significantly different "
        f"from {target} in that group at α = {report.alpha:g} (two-sided "
        f"{TEST_NAMES.get(test, test)}); "
        f"{group_correction(report)}. A query in no group counts only over all queries."
    )


def groups_table(report: ComparisonReport, test: str | None = None, digits: int = 4) -> _Table:
    """The per-group table: a row per group and system, with its caption."""
    test = report.tests[0] if test is None else test
    rows: list[list[Cell]] = [
        [group, int(count), system, *(None if cell == "-" else Figure(cell) for cell in cells)]
        for group, count, system, *cells in group_rows(report, test, digits)
    ]
    header = ["Group", "Queries", "System", *report.metrics]
    return _Table("Query groups", header, rows, caption=group_caption(report, test))


def group_markdown(report: ComparisonReport, test: str, digits: int = 4) -> str:
    """The per-group table in Markdown with its ``Table:`` caption (empty without groups)."""
    if not report.group_counts:
        return ""
    return groups_table(report, test, digits).to_markdown()


def group_table(report: ComparisonReport, test: str | None = None, digits: int = 4) -> Table:
    """The per-group table for the terminal (rich)."""
    return groups_table(report, test, digits).to_rich(framed=True)


def group_correction(report: ComparisonReport) -> str | None:
    """How the per-group p-values were corrected, in words (``None`` without groups).

    >>> from ef.evaluation import ComparisonReport
    >>> report = ComparisonReport(
    ...     'bm25', ('bm25', 'dense'), ('ndcg@10',), {}, (), 4, ('t-test',), 'holm',
    ...     group_counts={'short': 2, 'long': 2})
    >>> group_correction(report)
    'per-group p-values corrected with Holm over 1 system × 2 groups for each metric and test'
    """
    if not report.group_counts:
        return None

    def counted(n: int, what: str) -> str:
        return f"{n} {what}" + ("s" if n != 1 else "")

    groups = counted(len(report.group_counts), "group")
    if report.correction is None:
        how = "not corrected"
    else:
        how = f"corrected with {CORRECTION_NAMES[report.correction]}"
    if report.baseline is None:
        n_pairs = len(report.systems) * (len(report.systems) - 1) // 2
        metrics = counted(len(report.metrics), "metric")
        scope = f"{counted(n_pairs, 'pair')} × {metrics} × {groups} for each test"
    else:
        systems = counted(len(report.systems) - 1, "system")
        scope = f"{systems} × {groups} for each metric and test"
    tukey = "; Tukey's HSD adjusted within each group" if "tukey" in report.tests else ""
    if report.correction is None:
        return f"per-group p-values {how}{tukey}"
    return f"per-group p-values {how} over {scope}{tukey}"
