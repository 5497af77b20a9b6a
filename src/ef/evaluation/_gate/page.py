"""The gate's HTML page: the verdict and the rules first, then the queries that lost most.

The page is built on the comparison page's data (:func:`comparison_page`: the per-query
difference chart, wins, ties and losses) of the two reports over the queries the gate compared,
with the gate's test, correction and significance level; its own template leads with what a
reviewer looks for first.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ef.evaluation._compare.compare import compare
from ef.evaluation._gate.render import rule_table, summary
from ef.evaluation._html.comparison import comparison_page
from ef.evaluation._html.rankings import query_texts
from ef.evaluation._html.render import render_page
from ef.evaluation._io.atomic import write_text_atomically
from ef.evaluation._report.reports import RetrievalEvalReport

if TYPE_CHECKING:
    from ef.evaluation._compare.report import ComparisonReport
    from ef.evaluation._gate.report import CheckReport

__all__ = ["gate_page", "write_gate_page"]


def _on(report: RetrievalEvalReport, query_ids: list[str]) -> RetrievalEvalReport:
    """The per-query values of ``query_ids`` alone, as the gate paired them."""
    per_query = report.per_query
    return RetrievalEvalReport({}, {q: per_query[q] for q in query_ids}, len(query_ids), (1,))


def _query_rows(
    comparison: ComparisonReport, metrics: list[str], query_ids: list[str], texts: Mapping[str, str]
) -> list[list[Any]]:
    """One row per query (id, text, then per metric: baseline, now, difference) of the values
    the comparison paired, under the rule's name (a baseline's ``P_5`` for ``P@5``), the largest
    loss on the first rule's metric first (ties by id, in the compared order)."""
    baseline, current = comparison.per_query["baseline"], comparison.per_query["current"]
    rows = []
    for query in query_ids:
        row: list[Any] = [query, texts.get(query)]
        for metric in metrics:
            old, new = baseline[query][metric], current[query][metric]
            row.extend([old, new, new - old])
        rows.append(row)
    order = {query: index for index, query in enumerate(query_ids)}
    return sorted(rows, key=lambda row: (row[4], order[row[0]]))


def gate_page(
    report: CheckReport,
    current: RetrievalEvalReport,
    baseline: RetrievalEvalReport,
    *,
    queries: Mapping[str, str] | None = None,
    title: str | None = None,
) -> dict[str, Any]:
    """Everything the gate's page shows, as JSON-ready data."""
    metrics = list(dict.fromkeys(result.rule.metric for result in report.results))
    query_ids = [q for q in baseline.per_query if q in current.per_query]
    systems = {"baseline": _on(baseline, query_ids), "current": _on(current, query_ids)}
    comparison = compare(
        systems,
        baseline="baseline",
        metrics=metrics,
        tests=(report.test, "bootstrap"),
        correction=report.correction,
        alpha=report.alpha,
    )
    judged = report.judged or "the run against its baseline"
    data = comparison_page(comparison, title=title or f"quality gate: {judged}")
    texts = query_texts(query_ids, queries)
    columns = [f"{metric} {part}" for metric in metrics for part in ("baseline", "now", "Δ")]
    failed = len(report.failures)
    table = rule_table(report)
    data.update(
        kind="gate",
        verdict="PASSED" if report.passed else "FAILED",
        verdict_detail=(
            f"every rule holds ({len(report.results)})"
            if report.passed
            else f"{failed} of {len(report.results)} rules fail"
        ),
        judged=judged,
        summary=summary(report),
        rule_columns=list(table.columns),
        rules=[
            {"cells": cells, "passed": result.passed, "reason": result.reason}
            for result, cells in zip(report.results, table.texts(missing="-"), strict=True)
        ],
        notes=list(report.notes),
        columns=["query", "text", *columns],
        rows=_query_rows(comparison, metrics, query_ids, texts),
    )
    return data


def write_gate_page(
    report: CheckReport,
    path: str | os.PathLike[str],
    current: RetrievalEvalReport,
    baseline: RetrievalEvalReport,
    *,
    queries: Mapping[str, str] | None = None,
    title: str | None = None,
) -> Path:
    """Write the gate's page at ``path``, atomically.

    :raises ImportError: naming the ``html`` extra when Jinja2 or vl-convert is missing.
    """
    text = render_page(gate_page(report, current, baseline, queries=queries, title=title))
    with write_text_atomically(path, compress=False) as out:
        out.write(text)
    return Path(path)
