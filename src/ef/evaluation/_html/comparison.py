"""The data of a comparison page: a :class:`ComparisonReport`, with the systems' runs when given.

The per-topic difference chart comes from the per-query values the report keeps; the
side-by-side drill-down needs the systems' runs and the qrels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ef.evaluation._compare.render_pairs import format_p_value
from ef.evaluation._compare.report import ComparisonReport
from ef.evaluation._html import charts
from ef.evaluation._html.evaluation import headline
from ef.evaluation._html.order import query_order
from ef.evaluation._html.rankings import drilldowns, query_texts, snippets

__all__ = ["comparison_page", "differences", "metric_values"]

Run = Mapping[str, Sequence[str] | Mapping[str, float]]


def metric_values(per_query: Mapping[str, Mapping[str, float]], metric: str) -> dict[str, float]:
    """Each query's value of ``metric``, where it has one.

    >>> metric_values({'q1': {'ndcg@10': 0.5}, 'q2': {}}, 'ndcg@10')
    {'q1': 0.5}
    """
    return {query: row[metric] for query, row in per_query.items() if metric in row}


def differences(system: Mapping[str, float], baseline: Mapping[str, float]) -> list[dict[str, Any]]:
    """``{"query", "difference"}`` for every query both have, largest gain first (ties by id).

    >>> rows = differences({'q1': 0.25, 'q2': 0.75, 'q3': 0.5}, {'q1': 0.5, 'q2': 0.25, 'q3': 0.5})
    >>> [(row['query'], row['difference']) for row in rows]
    [('q2', 0.5), ('q3', 0.0), ('q1', -0.25)]
    """
    pairs = sorted(
        ((value - baseline[query], query) for query, value in system.items() if query in baseline),
        key=lambda pair: (-pair[0], pair[1]),
    )
    return [{"query": query, "difference": difference} for difference, query in pairs]


def _means(report: ComparisonReport) -> list[dict[str, Any]]:
    """Per system, per metric: the mean, whether it is the best, and its marks (a dagger and
    the p-value against the baseline, or the group letters when every pair was compared)."""
    best = {metric: set(report.best(metric)) for metric in report.metrics}
    letters = {}
    if report.baseline is None:
        letters = {metric: report.groups(metric) for metric in report.metrics}
    rows = []
    for system in report.systems:
        cells = []
        for metric in report.metrics:
            cell: dict[str, Any] = {
                "mean": report.means[system][metric],
                "best": system in best[metric],
                "significant": False,
                "interval": None,
                "p": None,
                "p_text": None,
                "letters": letters[metric][system] if letters else None,
            }
            if report.baseline is not None and system != report.baseline:
                row = report.comparison(system, metric)
                cell["significant"] = report.significant(system, metric)
                cell["interval"] = row.confidence_interval
                cell["p"] = row.adjusted_p_values.get(report.tests[0]) if report.tests else None
                if cell["p"] is not None:
                    cell["p_text"] = format_p_value(cell["p"], prefix=True)
            cells.append(cell)
        rows.append({"system": system, "baseline": system == report.baseline, "cells": cells})
    return rows


def _topic_charts(
    report: ComparisonReport, metric: str
) -> tuple[dict[str, Any], dict[str, dict[str, float]]]:
    """Each system's per-topic difference chart against the baseline on ``metric`` (named
    ``difference:SYSTEM``), and its differences by query."""
    specs: dict[str, Any] = {}
    by_query: dict[str, dict[str, float]] = {}
    if report.baseline is None or report.baseline not in report.per_query:
        return specs, by_query
    baseline = metric_values(report.per_query[report.baseline], metric)
    for system in report.systems:
        if system == report.baseline or system not in report.per_query:
            continue
        rows = differences(metric_values(report.per_query[system], metric), baseline)
        by_query[system] = {row["query"]: row["difference"] for row in rows}
        specs[f"difference:{system}"] = charts.difference_bars(
            f"{system} − {report.baseline}: {metric} per query", rows
        )
    return specs, by_query


def comparison_page(
    report: ComparisonReport,
    *,
    runs: Mapping[str, Run] | None = None,
    qrels: Mapping[str, Mapping[str, float]] | None = None,
    corpus: Mapping[str, str] | None = None,
    queries: Mapping[str, str] | None = None,
    title: str | None = None,
) -> dict[str, Any]:
    """Everything a comparison page shows, as JSON-ready data.

    :param runs: each system's run; with ``qrels``, the side-by-side drill-down.
    :raises ValueError: for runs without qrels (or the reverse), or a run of a system the
        comparison does not hold.
    """
    if (runs is None) != (qrels is None):
        raise ValueError("the drill-down needs both runs and qrels: give both or neither")
    unknown = sorted(set(runs or {}) - set(report.systems))
    if unknown:
        raise ValueError(
            f"runs names {unknown[0]!r}, which the comparison does not hold "
            f"(systems: {', '.join(report.systems)})"
        )
    metric = headline(report.metrics) or report.metrics[0]
    chart_specs, by_query = _topic_charts(report, metric)
    # The other metrics' per-topic charts, drawn when the page's selector picks one.
    topic_charts = {
        other: _topic_charts(report, other)[0] for other in report.metrics if other != metric
    }
    query_ids: list[str] = []
    if report.baseline is not None and report.baseline in report.per_query:
        query_ids = query_order(metric_values(report.per_query[report.baseline], metric))
    columns = [f"{name} − {report.baseline}" for name in by_query]
    if report.baseline is None:
        chart_specs, columns, query_ids, by_query = _all_pairs(report, metric)
        topic_charts = {}
    drill: dict[str, dict[str, Any]] = {}
    if runs is not None and qrels is not None:
        query_ids = query_ids or query_order({q for run in runs.values() for q in run} & set(qrels))
        by_system = {name: drilldowns(query_ids, run, qrels) for name, run in runs.items()}
        drill = {q: {name: pages[q] for name, pages in by_system.items()} for q in query_ids}
    texts = query_texts(query_ids, queries)
    return {
        "kind": "comparison",
        "title": title
        or (
            "Comparison of every pair of systems"
            if report.baseline is None
            else f"Comparison against {report.baseline}"
        ),
        "baseline": report.baseline,
        "systems": list(report.systems),
        "metrics": list(report.metrics),
        "chart_metric": metric,
        "n_queries": report.n_queries,
        "tests": list(report.tests),
        "correction": report.correction,
        "alpha": report.alpha,
        "confidence_level": report.confidence_level,
        "means": _means(report),
        "outcomes": [
            [row.system, row.baseline, row.metric, row.wins, row.ties, row.losses, row.difference]
            for row in report.comparisons
        ],
        "charts": chart_specs,
        "topic_charts": {name: specs for name, specs in topic_charts.items() if specs},
        "columns": ["query", "text", *columns],
        "text_columns": 2,
        "rows": [
            [q, texts.get(q), *(values.get(q) for values in by_query.values())] for q in query_ids
        ],
        "drilldowns": drill,
        "snippets": snippets((page for pages in drill.values() for page in pages.values()), corpus),
    }


def _all_pairs(
    report: ComparisonReport, metric: str
) -> tuple[dict[str, Any], list[str], list[str], dict[str, dict[str, float]]]:
    """Every pair compared: a p-value heat map per metric, and each system's value per query."""
    test = next((t for t in report.tests if t != "bootstrap"), None)
    specs: dict[str, Any] = {}
    if test is not None:
        for name in report.metrics:
            table = report.p_value_table(name, test)
            cells = [
                {"system": a, "other": b, "p": table[a][b]}
                for a in report.systems
                for b in report.systems
                if a != b
            ]
            specs[f"pvalues:{name}"] = charts.p_value_heatmap(
                f"{name}: adjusted p-values ({test})", cells, report.alpha
            )
    by_query = {
        system: metric_values(report.per_query[system], metric)
        for system in report.systems
        if system in report.per_query
    }
    query_ids = query_order({q for values in by_query.values() for q in values})
    return specs, [f"{system}: {metric}" for system in by_query], query_ids, by_query
