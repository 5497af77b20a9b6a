"""The group facet of an evaluation page: each query group's means, a chart of them, and each
query's groups, which the page's table is filtered by."""

from __future__ import annotations

from typing import Any

from ef.evaluation._html import charts
from ef.evaluation._report.reports import RetrievalEvalReport

__all__ = ["group_facet"]


def group_facet(report: RetrievalEvalReport, primary: str | None) -> dict[str, Any] | None:
    """The facet's data, or ``None`` for a report without groups.

    :param primary: the metric the chart shows (the page's headline metric).

    >>> report = RetrievalEvalReport({'P@1': 0.5}, {'q1': {'P@1': 1.0}, 'q2': {'P@1': 0.0}},
    ...     2, (1,), groups={'a': {'metrics': {'P@1': 1.0}, 'n_queries': 1}},
    ...     query_groups={'q1': ['a']})
    >>> facet = group_facet(report, 'P@1')
    >>> facet['rows'], facet['ungrouped'], facet['query_groups']
    ([['a', 1, 1.0]], 1, {'q1': ['a']})
    """
    if not report.groups:
        return None
    keys = list(report.metrics)
    rows = [
        [name, result.n_queries, *(result.metrics.get(key) for key in keys)]
        for name, result in report.groups.items()
    ]
    bars = [
        {"group": name, "mean": result.metrics[primary], "queries": result.n_queries}
        for name, result in report.groups.items()
        if primary is not None and primary in result.metrics
    ]
    chart = None
    if bars and primary is not None:
        chart = charts.group_bars(f"{primary} per query group", bars, primary)
    return {
        "columns": ["group", "queries", *keys],
        "rows": rows,
        "names": list(report.groups),
        "ungrouped": len(report.ungrouped),
        "query_groups": {query: list(names) for query, names in report.query_groups.items()},
        "chart": chart,
    }
