"""The data of an evaluation page: a :class:`RetrievalEvalReport`, and its run when given.

Pure functions from a report (and optionally its run, qrels, corpus and queries) to the
JSON-ready dict the template and the page's script read. Numbers are rounded for display only
where the page shows them; the data keeps them as the report has them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ef.evaluation._html import charts
from ef.evaluation._html.groups import group_facet
from ef.evaluation._html.order import query_order
from ef.evaluation._html.rankings import (
    curve_from_metrics,
    drilldowns,
    precision_recall,
    query_texts,
    snippets,
)
from ef.evaluation._report.reports import RetrievalEvalReport

__all__ = [
    "default_title",
    "evaluation_page",
    "flatten",
    "headline",
    "k_points",
    "metric_table",
    "primary_metric",
]

_AT_K = re.compile(r"^(?P<metric>.+)@(?P<k>[0-9]+)$")
_DISTRIBUTION_BINS = 10
_LATENCY_BINS = 20


def flatten(value: Any, prefix: str = "") -> list[list[str]]:
    """A nested manifest as ``[path, value]`` rows, for a two-column table.

    What holds nothing (``None``, an empty text, list or mapping: an option left at "none")
    gives no row, rather than a row with a blank value.

    >>> flatten({'version': '0.2', 'parameters': {'k_values': [1, 10], 'timeout': None}})
    [['version', '0.2'], ['parameters.k_values', '1, 10']]
    """
    if value is None or value == "" or value == [] or value == ():
        return []
    if isinstance(value, Mapping):
        rows: list[list[str]] = []
        for key, item in value.items():
            rows.extend(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return rows
    if isinstance(value, list | tuple):
        if all(not isinstance(item, Mapping | list | tuple) for item in value):
            return [[prefix, ", ".join(str(item) for item in value)]]
        return [row for i, item in enumerate(value) for row in flatten(item, f"{prefix}[{i}]")]
    return [[prefix, "" if value is None else str(value)]]


def k_points(metrics: Mapping[str, float]) -> list[dict[str, Any]]:
    """``{"metric", "k", "value"}`` of each ``name@k`` mean whose family has two cutoffs or more.

    >>> k_points({'ndcg@1': 0.5, 'ndcg@10': 0.7, 'map@10': 0.3})
    [{'metric': 'ndcg', 'k': 1, 'value': 0.5}, {'metric': 'ndcg', 'k': 10, 'value': 0.7}]
    """
    families: dict[str, list[dict[str, Any]]] = {}
    for key, value in metrics.items():
        match = _AT_K.match(key)
        if match:
            families.setdefault(match["metric"], []).append(
                {"metric": match["metric"], "k": int(match["k"]), "value": value}
            )
    return [
        point
        for points in families.values()
        if len(points) > 1
        for point in sorted(points, key=lambda point: point["k"])
    ]


def metric_table(metrics: Mapping[str, float]) -> dict[str, Any]:
    """The means as a grid: one row per ``name@k`` family, one column per cutoff; every other
    key (trec_eval's ``map``, ``iprec_at_recall_0.10`` …) as its own row.

    >>> table = metric_table({'ndcg@1': 0.5, 'ndcg@10': 0.7, 'recall@10': 0.9, 'map': 0.3})
    >>> table['cutoffs'], table['rows'], table['other']
    ([1, 10], [['ndcg', [0.5, 0.7]], ['recall', [None, 0.9]]], [['map', 0.3]])
    """
    families: dict[str, dict[int, float]] = {}
    other: list[list[Any]] = []
    for key, value in metrics.items():
        match = _AT_K.match(key)
        if match:
            families.setdefault(match["metric"], {})[int(match["k"])] = value
        else:
            other.append([key, value])
    cutoffs = sorted({k for values in families.values() for k in values})
    rows = [[name, [values.get(k) for k in cutoffs]] for name, values in families.items()]
    return {"cutoffs": cutoffs, "rows": rows, "other": other}


def headline(keys: Sequence[str]) -> str | None:
    """The metric a page leads with: the first one asked for (the first key), at cutoff 10
    when it was asked at several cutoffs (``ndcg`` at each of ``k_values``) that include 10.

    >>> headline(['ndcg@1', 'ndcg@10', 'recall@1']), headline(['R@100', 'nDCG@10'])
    ('ndcg@10', 'R@100')
    """
    if not keys:
        return None
    first = keys[0]
    name, at, _ = first.partition("@")
    same = [key for key in keys if key.partition("@")[0] == name] if at else []
    return f"{name}@10" if len(same) > 1 and f"{name}@10" in same else first


def primary_metric(report: RetrievalEvalReport) -> str | None:
    """The metric the evaluation page leads with (:func:`headline`)."""
    keys = list(report.metrics) or [key for row in report.per_query.values() for key in row]
    return headline(list(dict.fromkeys(keys)))


def default_title(report: RetrievalEvalReport) -> str:
    """The page's title when none is given: the system the manifest names (``retriever``) and
    how many queries were scored; a caller that knows the system and the dataset gives a
    ``title`` naming both (``ef-eval retrieval`` does: "bm25 on scifact").

    >>> default_title(RetrievalEvalReport({}, {}, 300, (10,), manifest={"retriever": "bm25"}))
    'bm25: retrieval evaluation over 300 queries'
    >>> default_title(RetrievalEvalReport({}, {}, 1, (10,)))
    'Retrieval evaluation over 1 query'
    """
    queries = f"{report.n_queries:,} {'query' if report.n_queries == 1 else 'queries'}"
    system = report.manifest.get("retriever")
    if isinstance(system, str) and system:
        return f"{system}: retrieval evaluation over {queries}"
    return f"Retrieval evaluation over {queries}"


def _columns(report: RetrievalEvalReport) -> list[str]:
    seen: dict[str, None] = dict.fromkeys(report.metrics)
    for row in report.per_query.values():
        seen.update(dict.fromkeys(row))
    return list(seen)


def _latency(report: RetrievalEvalReport) -> dict[str, Any] | None:
    summary = report.latency_summary
    if summary is None:
        return None
    values = list(report.latency.values())
    binned = charts.bins(values, _LATENCY_BINS, min(values), max(values))
    rules = [{"label": "p50", "value": summary["p50"]}, {"label": "p95", "value": summary["p95"]}]
    return {
        "summary": summary,
        "chart": charts.histogram("Latency per query", binned, "seconds", rules),
    }


def evaluation_page(
    report: RetrievalEvalReport,
    *,
    run: Mapping[str, Sequence[str] | Mapping[str, float]] | None = None,
    qrels: Mapping[str, Mapping[str, float]] | None = None,
    corpus: Mapping[str, str] | None = None,
    queries: Mapping[str, str] | None = None,
    title: str | None = None,
) -> dict[str, Any]:
    """Everything an evaluation page shows, as JSON-ready data.

    The drill-down and the precision-recall curve need both ``run`` and ``qrels`` (the curve
    is taken from the report itself when it holds trec_eval's ``iprec_at_recall`` means).

    :raises ValueError: if only one of ``run`` and ``qrels`` is given.
    """
    if (run is None) != (qrels is None):
        raise ValueError("the drill-down needs both run and qrels: give both or neither")
    columns = _columns(report)
    primary = primary_metric(report)
    query_ids = query_order(report.per_query)
    texts = query_texts(query_ids, queries)
    rows = [
        [query, texts.get(query), *(report.per_query[query].get(c) for c in columns)]
        for query in query_ids
    ]
    latency = _latency(report)
    chart_specs: dict[str, Any] = {}
    points = k_points(report.metrics)
    if points:
        chart_specs["k_curves"] = charts.k_curves("Mean by cutoff", points)
    if primary is not None and query_ids:
        values = [row[primary] for row in report.per_query.values() if primary in row]
        low, high = min([0.0, *values]), max([1.0, *values])
        binned = charts.bins(values, _DISTRIBUTION_BINS, low, high)
        chart_specs["distribution"] = charts.histogram(f"{primary} over queries", binned, primary)
    drill: dict[str, Any] = {}
    curve = curve_from_metrics(report.metrics)
    if run is not None and qrels is not None:
        drill = drilldowns(query_ids, run, qrels)
        curve = curve or precision_recall(query_ids, run, qrels)
    if curve:
        chart_specs["pr_curve"] = charts.pr_curve("Interpolated precision-recall", curve)
    if latency is not None:
        chart_specs["latency"] = latency["chart"]
    groups = group_facet(report, primary)
    if groups is not None and groups["chart"] is not None:
        chart_specs["groups"] = groups["chart"]  # drawn in the group facet, not with the others
    return {
        "kind": "evaluation",
        "title": title or default_title(report),
        "manifest": flatten(dict(report.manifest)),
        "n_queries": report.n_queries,
        "metrics": metric_table(report.metrics),
        "primary": primary,
        "primary_value": None if primary is None else report.metrics.get(primary),
        "columns": ["query", "text", *columns],
        "text_columns": 2,
        "rows": rows,
        "latency": None if latency is None else latency["summary"],
        "failures": [[f.query_id, f.error_type, f.message, f.attempts] for f in report.failures],
        "skipped": [[query, reason] for query, reason in report.skipped.items()],
        "charts": chart_specs,
        "drilldowns": drill,
        "snippets": snippets(drill.values(), corpus),
        "groups": groups,
    }
