"""The HTML pages of ``--html`` and ``ef-eval report``: one report's evaluation page, or the
comparison page of several, with their runs and qrels when the command has them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ef.evaluation import ComparisonReport, RetrievalEvalReport, compare, read_dataset
from ef.evaluation.cli._common import EXIT_USAGE, CliError

if TYPE_CHECKING:
    from ef.evaluation import Qrels, Run

__all__ = ["comparison_html", "dataset_texts", "runs_html"]


def dataset_texts(dataset: str | None) -> tuple[dict[str, Any], Qrels | None]:
    """The ``corpus`` and ``queries`` of a page from ``--dataset`` (a BEIR folder), and its
    qrels; nothing without one."""
    if dataset is None:
        return {}, None
    corpus, queries, qrels = read_dataset(dataset)
    return {"corpus": corpus, "queries": queries}, qrels


def runs_html(
    path: str,
    reports: Mapping[str, RetrievalEvalReport],
    *,
    runs: Mapping[str, Run] | None,
    qrels: Qrels | None,
    baseline: str | None = None,
    title: str | None = None,
    **texts: Any,
) -> None:
    """One report: its evaluation page; several: compared, their comparison page.

    :param texts: ``corpus`` and ``queries``, when known.
    """
    if len(reports) == 1:
        ((name, report),) = reports.items()
        run = None if runs is None else runs[name]
        report.to_html(path, run=run, qrels=None if run is None else qrels, title=title, **texts)
        return
    baseline = baseline or next(iter(reports))
    if baseline not in reports:
        raise CliError(
            f"--baseline {baseline!r} is none of {', '.join(reports)}", exit_code=EXIT_USAGE
        )
    # Every key the reports share, in the order asked for: the first is the page's headline.
    first, *others = reports.values()
    keys = [key for key in first.metrics if all(key in other.metrics for other in others)]
    if not keys:
        raise CliError(f"the reports {', '.join(reports)} share no metric to compare")
    comparison = compare(reports, baseline=baseline, tests=("randomization",), metrics=keys)
    comparison_html(path, comparison, reports, runs=runs, qrels=qrels, title=title, **texts)


def comparison_html(
    path: str,
    comparison: ComparisonReport,
    systems: Mapping[str, Any],
    *,
    runs: Mapping[str, Run] | None = None,
    qrels: Qrels | None = None,
    **options: Any,
) -> None:
    """The comparison page of ``systems``: reports, or runs scored against ``qrels`` (then
    also the drill-down). The page is the one ``comparison.to_html`` writes from Python."""
    if qrels is not None and runs is None and all(isinstance(s, Mapping) for s in systems.values()):
        runs = systems
    comparison.to_html(path, runs=runs, qrels=None if runs is None else qrels, **options)
