"""What an MLflow run holds of a report — parameters, metrics, tags, tables — computed without
MLflow, so every value can be checked against the report it came from.

MLflow names may hold letters, digits and ``_ - . / :`` and spaces only, so a metric key
becomes an MLflow name by :func:`mlflow_name` (``ndcg@10`` → ``ndcg_at_10``); the report's
own keys stay in its JSON, logged beside. Two keys that would share a name are refused rather
than one number hiding the other.

A suite is one parent run (its parameters, each system's macro and micro means, its table) and
one child run per (system, dataset) cell, each holding what that cell's retrieval report would
hold logged on its own (:func:`suite_cells`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ef.evaluation import (
    ComparisonReport,
    RagEvalReport,
    RetrievalEvalReport,
    SuiteReport,
    __version__,
)

__all__ = [
    "Report",
    "RunContent",
    "cell_run_name",
    "comparison_systems",
    "mlflow_name",
    "report_kind",
    "run_content",
    "suite_cells",
]

Report = RetrievalEvalReport | RagEvalReport | ComparisonReport | SuiteReport
"""What can be logged: a report of any kind :func:`ef.evaluation.read_report` reads."""

_NOT_IN_A_NAME = re.compile(r"[^\w.\- /]")


@attrs.frozen
class RunContent:
    """What one MLflow run receives: parameters, metrics and tags, and JSON tables (file name
    → JSON value, each ``{"columns": [...], "data": [[...], ...]}``)."""

    params: dict[str, str]
    metrics: dict[str, float]
    tags: dict[str, str]
    tables: dict[str, Any] = attrs.field(factory=dict)


def report_kind(report: object) -> str:
    """``"retrieval"``, ``"rag"``, ``"comparison"`` or ``"suite"``, as
    :func:`~ef.evaluation.read_report` tells them apart.

    :raises TypeError: for anything but one of ef's reports.
    """
    for kind, cls in (
        ("retrieval", RetrievalEvalReport),
        ("rag", RagEvalReport),
        ("comparison", ComparisonReport),
        ("suite", SuiteReport),
    ):
        if isinstance(report, cls):
            return kind
    raise TypeError(
        f"expected a RetrievalEvalReport, RagEvalReport, ComparisonReport or SuiteReport, got "
        f"{type(report).__name__}"
    )


def mlflow_name(key: str) -> str:
    """The MLflow name of a report key: ``@`` is ``_at_``, any other character MLflow refuses
    is ``_``.

    >>> mlflow_name("ndcg@10"), mlflow_name("P(rel=2)@5"), mlflow_name("bpref")
    ('ndcg_at_10', 'P_rel_2__at_5', 'bpref')
    """
    return _NOT_IN_A_NAME.sub("_", key.replace("@", "_at_")).strip("/") or "_"


def _named(values: Iterable[tuple[str, float]], prefix: str = "") -> dict[str, float]:
    """Each value under its MLflow name (after ``prefix``).

    :raises ValueError: when two keys share an MLflow name.
    """
    named: dict[str, float] = {}
    keys: dict[str, str] = {}
    for key, value in values:
        name = prefix + mlflow_name(key)
        if name in keys and keys[name] != key:
            raise ValueError(
                f"metrics {keys[name]!r} and {key!r} would both be logged to MLflow as "
                f"{name!r}; log one of them only"
            )
        keys[name], named[name] = key, value
    return named


def _check_tree(metrics: Mapping[str, float]) -> None:
    """Refuse a name that is also another name's folder (``a`` beside ``a/b``): MLflow may keep
    metrics as files, where one cannot be both.

    :raises ValueError: naming both.
    """
    for name in metrics:
        inside = next((other for other in metrics if other.startswith(name + "/")), None)
        if inside is not None:
            raise ValueError(
                f"the metric names {name!r} and {inside!r} cannot both be logged to MLflow "
                f"(a name cannot be another's folder); log one of them only"
            )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _table(columns: Iterable[tuple[str, Any, Iterable[Any]]]) -> dict[str, Any]:
    """``{"columns": [...], "data": [[...], ...]}`` from a report's ``frame_columns``."""
    names, values = [], []
    for name, _, column in columns:
        names.append(name)
        values.append(list(column))
    return {"columns": names, "data": [list(row) for row in zip(*values, strict=True)]}


def _common_tags(report: Report, kind: str, dataset: str | None) -> dict[str, str]:
    manifest: Mapping[str, Any] = getattr(report, "manifest", None) or {}
    tags = {"ef.kind": kind, "ef.library_version": str(__version__)}
    if isinstance(manifest.get("version"), str):
        tags["ef.report_version"] = manifest["version"]
    fingerprints = manifest.get("fingerprints") or {}
    for name in ("qrels", "queries"):
        if isinstance(fingerprints.get(name), str):
            tags[f"ef.{name}_fingerprint"] = fingerprints[name]
    if dataset:
        tags["ef.dataset"] = dataset
    return tags


def _retrieval(report: RetrievalEvalReport) -> RunContent:
    manifest = report.manifest
    params = {"k_values": _text(list(report.k_values)), "metrics": _text(list(report.metrics))}
    for key, value in (manifest.get("parameters") or {}).items():
        params.setdefault(mlflow_name(key), _text(value))  # the options, as recorded
    for key in ("retriever", "retriever_info"):
        if key in manifest:
            params[key] = _text(manifest[key])
    metrics = _named(report.metrics.items())
    metrics.update({"n_queries": report.n_queries, "n_failures": len(report.failures)})
    metrics["n_skipped"] = len(report.skipped)
    for key, value in (report.latency_summary or {}).items():
        metrics[f"latency_{key}_seconds"] = value
    tables = {"per_query.json": _table(report.frame_columns(means=False))}
    return RunContent(params, metrics, {}, tables)


def _rag(report: RagEvalReport) -> RunContent:
    params = {"metrics": _text(list(report.coverage))}
    metrics = _named(report.metrics.items())
    metrics.update(_named(report.coverage.items(), prefix="coverage/"))
    metrics["n_samples"] = report.n_samples
    tables = {"per_sample.json": _table(report.frame_columns(means=False))}
    return RunContent(params, metrics, {}, tables)


def _comparison(report: ComparisonReport) -> RunContent:
    params = {
        name: _text(getattr(report, name))
        for name in ("baseline", "tests", "correction", "alpha", "confidence_level", "seed")
    }
    params.update(
        systems=_text(list(report.systems)),
        metrics=_text(list(report.metrics)),
        n_permutations=_text(report.n_permutations),
        n_resamples=_text(report.n_resamples),
    )
    if report.risk_alpha is not None:
        params["risk_alpha"] = _text(report.risk_alpha)
    per_query = [
        (system, query_id, metric, value)
        for system, queries in report.per_query.items()
        for query_id, values in queries.items()
        for metric, value in values.items()
    ]
    columns = ("system", "query_id", "metric", "value")
    tables = {
        "comparisons.json": _table(report.frame_columns(means=False)),
        "per_query.json": {"columns": list(columns), "data": [list(row) for row in per_query]},
    }
    return RunContent(params, {"n_queries": report.n_queries}, {}, tables)


def _suite(report: SuiteReport) -> RunContent:
    params = {
        "datasets": _text(list(report.datasets)),
        "systems": _text(list(report.systems)),
        "metric": report.metric,
        "baseline": _text(report.baseline),
    }
    for key, value in (report.manifest.get("parameters") or {}).items():
        params.setdefault(mlflow_name(key), _text(value))  # the options, as recorded
    values: list[tuple[str, float]] = []
    for system in report.systems:
        for average, means in (("macro", report.macro), ("micro", report.micro)):
            values += [(f"{system}/{average}/{m}", v) for m, v in means.get(system, {}).items()]
        for name in ("wins", "losses"):
            counts: Mapping[str, int] = getattr(report, f"significant_{name}")
            if system in counts:
                values.append((f"{system}/significant_{name}", counts[system]))
    metrics = _named(values)
    metrics["n_datasets"] = len(report.datasets)
    metrics["n_cells"] = sum(len(row) for row in report.cells.values())
    tables = {
        "cells.json": _table(report.frame_columns(means=False)),
        "means.json": _table(report.frame_columns(means=True)),
    }
    return RunContent(params, metrics, {}, tables)


def run_content(report: Report, *, dataset: str | None = None) -> RunContent:
    """What the run a report is logged to receives (for a comparison or a suite: its parent
    run).

    :param dataset: what the report was evaluated on, for the ``ef.dataset`` tag.
    :raises TypeError: for anything but one of ef's reports.
    :raises ValueError: when two metric keys share an MLflow name.
    """
    kind = report_kind(report)
    if isinstance(report, RetrievalEvalReport):
        content = _retrieval(report)
    elif isinstance(report, RagEvalReport):
        content = _rag(report)
    elif isinstance(report, SuiteReport):
        content = _suite(report)
    else:
        assert isinstance(report, ComparisonReport)
        content = _comparison(report)
    _check_tree(content.metrics)
    return attrs.evolve(content, tags=_common_tags(report, kind, dataset))


def _row_metrics(report: ComparisonReport, system: str) -> dict[str, float]:
    """A system's comparisons as metrics: ``METRIC/NAME``, or ``METRIC/vs OTHER/NAME`` when
    every pair was compared (no value where a test or interval does not apply)."""
    values: list[tuple[str, float]] = []
    for row in report.comparisons:
        if row.system != system:
            continue
        other = row.baseline if row.baseline is not None else report.baseline
        prefix = row.metric if report.baseline is not None else f"{row.metric}/vs {other}"
        significant = report.significant(row.system, row.metric, against=row.baseline)
        named: dict[str, float | None] = {
            # With a baseline, METRIC/mean is the system's mean (from the means).
            "mean": row.mean if report.baseline is None else None,
            "baseline_mean": row.baseline_mean,
            "difference": row.difference,
            "effect_size": row.effect_size,
            "wins": row.wins,
            "ties": row.ties,
            "losses": row.losses,
            "significant": 1.0 if significant else 0.0,
            "urisk": row.urisk,
            "trisk": row.trisk,
        }
        for test in report.tests:
            named[f"p_{test}"] = row.p_values.get(test)
            named[f"adjusted_p_{test}"] = row.adjusted_p_values.get(test)
        if row.confidence_interval is not None:
            named["ci_low"], named["ci_high"] = row.confidence_interval
        values += [(f"{prefix}/{n}", v) for n, v in named.items() if v is not None]
    return _named(values)


def comparison_systems(report: ComparisonReport) -> dict[str, RunContent]:
    """One child run per system of a comparison: its means (``METRIC/mean``), and its
    comparisons' p-values, adjusted p-values, intervals, effect sizes and wins/ties/losses.

    :raises ValueError: when two metric keys share an MLflow name.
    """
    children = {}
    for system in report.systems:
        means: Mapping[str, float] = report.means.get(system, {})
        metrics = _named((f"{metric}/mean", value) for metric, value in means.items())
        metrics.update(_row_metrics(report, system))
        _check_tree(metrics)
        params = {"system": system, "baseline": _text(report.baseline)}
        tags = {"ef.kind": "comparison-system", "ef.system": system}
        children[system] = RunContent(params, metrics, tags)
    return children


def cell_run_name(system: str, dataset: str) -> str:
    """The name of a suite cell's child run: ``"SYSTEM on DATASET"``."""
    return f"{system} on {dataset}"


def suite_cells(report: SuiteReport) -> dict[str, tuple[RetrievalEvalReport, RunContent]]:
    """One child run per cell of a suite, by :func:`cell_run_name` (systems, then datasets,
    in the report's order): the cell's report and what a run it is logged to on its own
    receives, the dataset as ``ef.dataset``, tagged ``ef.system`` and ``ef.suite_cell``.

    :raises ValueError: when two metric keys share an MLflow name.
    """
    children = {}
    for system in report.systems:
        for dataset in report.datasets:
            cell = report.cells[dataset].get(system) if dataset in report.cells else None
            if cell is None:  # missing from a merge of partial suites
                continue
            content = run_content(cell, dataset=dataset)
            tags = {**content.tags, "ef.system": system, "ef.suite_cell": "true"}
            children[cell_run_name(system, dataset)] = (cell, attrs.evolve(content, tags=tags))
    return children
