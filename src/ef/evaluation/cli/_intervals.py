"""The table of a command's means, with the confidence interval of each when one was asked for.

A report with intervals (``--interval``) shows, after each metric's column, its ``low`` and
``high`` bounds, and the title says which intervals they are; a report without shows the means
alone, as it always has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ef.evaluation import RetrievalEvalReport
from ef.evaluation.extending import Cell, Table

__all__ = ["means_table"]


def means_table(
    title: str, reports: Mapping[str, RetrievalEvalReport], keys: Sequence[str], label: str
) -> Table:
    """One row per report: its mean of each of ``keys``, each followed by the bounds of its
    interval when a report has intervals (empty where it has none).

    >>> report = RetrievalEvalReport({'ndcg@1': 0.5}, {}, 2, (1,))
    >>> means_table("t", {"bm25": report}, ["ndcg@1"], "run").rows
    (('bm25', 0.5),)
    """
    described = {r.intervals.describe() for r in reports.values() if r.intervals is not None}
    columns: list[str] = [label]
    rows: list[list[Cell]] = [[name] for name in reports]
    for key in keys:
        columns.append(key)
        if described:
            columns += [f"{key} low", f"{key} high"]
        for row, report in zip(rows, reports.values(), strict=True):
            row.append(report.metrics.get(key))
            if described:
                bounds = None if report.intervals is None else report.intervals.bounds.get(key)
                row += [None, None] if bounds is None else list(bounds)
    if described:
        title = f"{title}; {', '.join(sorted(described))}"
    return Table(title, columns, rows)
