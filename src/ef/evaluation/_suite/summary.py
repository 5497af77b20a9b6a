"""From cells to a suite report: the averages over datasets and over queries, the comparisons
with the baseline per dataset, and the datasets each system wins with significance.

Sums run left to right from 0.0, in the suite's order (datasets, then each dataset's queries
in its report's order), as every mean of a report does
(:mod:`ef.evaluation._scoring.aggregation`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from functools import reduce
from operator import add
from typing import Any

import attrs

from ef.evaluation._compare.compare import compare
from ef.evaluation._compare.report import ComparisonReport
from ef.evaluation._exceptions import IncompleteEvaluationWarning
from ef.evaluation._report.reports import RetrievalEvalReport
from ef.evaluation._suite.report import SuiteReport
from ef.evaluation._version import library_version

__all__ = ["macro_means", "micro_means", "suite_report"]


def _mean(values: Sequence[float]) -> float:
    return reduce(add, values, 0.0) / len(values)


def _complete(
    cells: Mapping[str, Mapping[str, RetrievalEvalReport]], datasets: Sequence[str], system: str
) -> list[RetrievalEvalReport] | None:
    found = [cells.get(dataset, {}).get(system) for dataset in datasets]
    return None if any(cell is None for cell in found) else found  # type: ignore[return-value]


def _shared_keys(reports: Sequence[RetrievalEvalReport]) -> list[str]:
    return [key for key in reports[0].metrics if all(key in r.metrics for r in reports[1:])]


def macro_means(reports: Sequence[RetrievalEvalReport]) -> dict[str, float]:
    """The mean over datasets of each metric every report has (one report per dataset)."""
    return {key: _mean([r.metrics[key] for r in reports]) for key in _shared_keys(reports)}


def _plain_mean(report: RetrievalEvalReport, key: str) -> bool:
    values = [values[key] for values in report.per_query.values() if key in values]
    return len(values) == report.n_queries > 0 and _mean(values) == report.metrics[key]


def micro_means(reports: Sequence[RetrievalEvalReport]) -> dict[str, float]:
    """The mean over every query of every report, pooled, of each metric that each report
    averages plainly over its queries (its mean is exactly the mean of its per-query values:
    not ``gm_map``, not a ``num_*`` count)."""
    means: dict[str, float] = {}
    for key in _shared_keys(reports):
        if all(_plain_mean(report, key) for report in reports):
            pooled = [v[key] for report in reports for v in report.per_query.values()]
            means[key] = _mean(pooled)
    return means


def _comparisons(
    cells: Mapping[str, Mapping[str, RetrievalEvalReport]],
    datasets: Sequence[str],
    systems: Sequence[str],
    baseline: str,
    metric: str,
    options: Mapping[str, Any],
) -> dict[str, ComparisonReport]:
    found: dict[str, ComparisonReport] = {}
    for dataset in datasets:
        row = {s: cells[dataset][s] for s in systems if s in cells.get(dataset, {})}
        if baseline not in row or len(row) < 2:
            continue
        failed = [system for system, report in row.items() if report.failures]
        if failed:
            # Systems are compared on every query or not at all (compare refuses the rest).
            warnings.warn(
                f"no comparison on the suite's dataset {dataset!r}: queries of "
                f"{', '.join(map(repr, failed))} failed (see each cell's failures)",
                IncompleteEvaluationWarning,
                stacklevel=4,
            )
            continue
        try:
            found[dataset] = compare(row, baseline=baseline, metrics=(metric,), **options)
        except Exception as error:
            error.add_note(f"while comparing the systems on the suite's dataset {dataset!r}")
            raise
    return found


def suite_report(
    cells: Mapping[str, Mapping[str, RetrievalEvalReport]],
    *,
    systems: Sequence[str] | None = None,
    datasets: Sequence[str] | None = None,
    metric: str = "ndcg@10",
    baseline: str | None = None,
    compare_options: Mapping[str, Any] | None = None,
    datasets_info: Mapping[str, Any] | None = None,
    manifest: Mapping[str, Any] | None = None,
) -> SuiteReport:
    """A :class:`SuiteReport` from its cells, ``{dataset: {system: report}}``: the averages,
    the comparisons with ``baseline`` and the counts of significant wins computed here.

    :func:`evaluate_suite` and :func:`merge_suite_results` build their reports so; call it on
    cells evaluated some other way (your own loop, a cluster).

    :param systems: the systems' order (default: as they first appear in ``cells``).
    :param datasets: the datasets' order (default: ``cells``' order).
    :param metric: the table's metric key; every cell must have it, unless its queries failed
        (the table then shows no value there, and no average for that system).
    :param baseline: the system the others are compared with on each dataset, or ``None``. A
        dataset where a system's queries failed (``on_error="record"``) gets no comparison, and
        an :class:`IncompleteEvaluationWarning` says so.
    :param compare_options: keyword arguments for :func:`compare` (``tests``, ``correction``,
        ``alpha``, ``seed`` …).
    :raises ValueError: for a baseline that is not a system, a cell without ``metric``, or a
        cell of an unknown dataset or system.
    """
    datasets = tuple(cells) if datasets is None else tuple(datasets)
    if systems is None:
        systems = tuple(dict.fromkeys(s for row in cells.values() for s in row))
    systems = tuple(systems)
    for dataset, row in cells.items():
        if dataset not in datasets:
            raise ValueError(f"a cell of the dataset {dataset!r}, which is not in the suite")
        for system, report in row.items():
            if system not in systems:
                raise ValueError(f"a cell of the system {system!r}, which is not in the suite")
            if metric not in report.metrics and not report.failures:
                raise ValueError(
                    f"the cell ({dataset!r}, {system!r}) has no {metric!r}; it has: "
                    f"{', '.join(report.metrics) or 'no metric'}"
                )
    if baseline is not None and baseline not in systems:
        raise ValueError(f"baseline {baseline!r} is not one of the systems: {', '.join(systems)}")
    macro: dict[str, dict[str, float]] = {}
    micro: dict[str, dict[str, float]] = {}
    for system in systems:
        complete = _complete(cells, datasets, system)
        if complete:
            macro[system] = macro_means(complete)
            micro[system] = micro_means(complete)
    options = dict(compare_options or {})
    comparisons = (
        {}
        if baseline is None
        else _comparisons(cells, datasets, systems, baseline, metric, options)
    )
    suite = SuiteReport(
        datasets,
        systems,
        metric,
        cells,
        macro,
        micro,
        baseline=baseline,
        comparisons=comparisons,
        datasets_info=dict(datasets_info or {}),
        manifest={
            "library_version": library_version() or "unknown",
            **dict(manifest or {}),
            "compare_options": options,
        },
    )
    others = [s for s in systems if s != baseline] if baseline is not None else []
    wins = {s: sum(suite.significance(d, s) > 0 for d in datasets) for s in others}
    losses = {s: sum(suite.significance(d, s) < 0 for d in datasets) for s in others}
    return attrs.evolve(suite, significant_wins=wins, significant_losses=losses)
