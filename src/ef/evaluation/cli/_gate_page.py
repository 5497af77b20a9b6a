"""``ef-eval check --html PATH``: the comparison page of the checked run against its baseline.

The page is the one ``ef-eval compare --html`` writes (:func:`comparison_html`), of two
systems, ``baseline`` and ``current``, over the queries the gate compared, with the gate's
paired test, correction and significance level.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ef.evaluation import GateConfig, RetrievalEvalReport, compare
from ef.evaluation.cli._common import CliError
from ef.evaluation.cli._html import comparison_html

if TYPE_CHECKING:
    from ef.evaluation import Queries

__all__ = ["write_gate_page"]


def _on(report: RetrievalEvalReport, query_ids: Sequence[str]) -> RetrievalEvalReport:
    """The per-query values of ``query_ids`` alone, as compare() pairs them."""
    per_query = report.per_query
    return RetrievalEvalReport({}, {q: per_query[q] for q in query_ids}, len(query_ids), (1,))


def write_gate_page(
    path: str,
    current: RetrievalEvalReport,
    baseline: RetrievalEvalReport,
    config: GateConfig,
    *,
    title: str,
    queries: Queries | None = None,
) -> None:
    """Write the comparison page (atomically, as every page is written).

    :param config: the gate's rules (their metrics are the page's) and options.
    :param queries: the query texts, shown beside the ids, when known.
    :raises CliError: without the ``html`` extra.
    """
    metrics = list(dict.fromkeys(rule.metric for rule in config.rules))
    query_ids = [q for q in baseline.per_query if q in current.per_query]
    systems = {"baseline": _on(baseline, query_ids), "current": _on(current, query_ids)}
    comparison = compare(
        systems,
        baseline="baseline",
        metrics=metrics,
        tests=(config.test or "t-test", "bootstrap"),
        correction=config.correction if config.has_correction else "holm",
        alpha=0.05 if config.alpha is None else config.alpha,
    )
    try:
        comparison_html(path, comparison, systems, title=title, queries=queries)
    except ImportError as error:
        raise CliError(f"--html: {error}") from error
