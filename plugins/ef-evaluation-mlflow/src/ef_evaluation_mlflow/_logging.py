"""Logging a report to an MLflow run, and reading it back.

Everything is written to a local folder first (the report's JSON, its HTML page, the tables),
then sent: if the tracking server cannot be reached, the error names the folder and nothing is
lost. A run is filled in a fixed order — parameters, metrics and tags in batches, then the
folder as the run's ``ef/`` artifacts — so a run that holds ``ef/report.json`` holds it whole.

The steps are kept apart so a run of several reports (a suite) can be one parent run with a
child run per report: :func:`fill_run` fills any run, :func:`start_run` opens one, under a
parent when given. A suite's cells are staged, each in a folder of its own, beside the suite's
folder before anything is sent; each child run receives its cell's files as a retrieval report
logged alone would.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from typing import Any

import attrs

from ef.evaluation import ComparisonReport, SuiteReport, write_text_atomically
from ef_evaluation_mlflow._content import (
    Report,
    RunContent,
    comparison_systems,
    report_kind,
    run_content,
    suite_cells,
)
from ef_evaluation_mlflow._tracker import (
    ReportNotFoundError,
    bounded_requests,
    mlflow_client,
    request_timeout,
    tracking_failure,
)

__all__ = ["ARTIFACTS", "REPORT_FILE", "LoggedRun", "fetch_report", "fill_run", "log_report"]

ARTIFACTS = "ef"
"""The folder of the run's artifacts the report's files go to."""
REPORT_FILE = "report.json"
"""The report's JSON in that folder: what :func:`fetch_report` reads back."""
_PARENT_TAG = "mlflow.parentRunId"


@attrs.frozen
class LoggedRun:
    """Where a report was logged: its run, the run's experiment, the tracking URI, and the child
    runs by name: for a comparison one per system (named by the system), for a suite one per
    cell (``"SYSTEM on DATASET"``)."""

    run_id: str
    experiment_id: str
    tracking_uri: str
    children: Mapping[str, str] = attrs.field(factory=dict)

    @property
    def url(self) -> str | None:
        """The run's page in the MLflow UI, for a tracking server reached over HTTP."""
        if not self.tracking_uri.startswith(("http://", "https://")):
            return None
        base = self.tracking_uri.rstrip("/")
        return f"{base}/#/experiments/{self.experiment_id}/runs/{self.run_id}"


def _stage(
    report: Report,
    content: RunContent,
    html: str | os.PathLike[str] | None,
    files: Mapping[str, str],
    folder: str | None = None,
) -> str:
    """Write the run's files to ``folder`` (default: a new local folder), and return it."""
    folder = folder or tempfile.mkdtemp(prefix="ef-mlflow-")
    texts = {REPORT_FILE: report.to_json()}
    texts.update(
        {name: json.dumps(table, allow_nan=False) for name, table in content.tables.items()}
    )
    texts.update(files)
    for name, text in texts.items():
        with write_text_atomically(os.path.join(folder, name)) as sink:
            sink.write(text)
    page = os.path.join(folder, "report.html")
    if html is not None:
        shutil.copyfile(html, page)
    elif isinstance(report, SuiteReport):
        report.to_html(page, cell_pages=False)  # each cell's page is on its child run
    else:
        report.to_html(page)
    return folder


def _stage_cells(
    report: SuiteReport, files: Mapping[str, str], tags: Mapping[str, str]
) -> tuple[dict[str, tuple[RunContent, str | None]], str]:
    """Each cell's child run (with the caller's ``tags``) and its files, staged in a folder
    per cell inside a new local folder (returned too)."""
    root = tempfile.mkdtemp(prefix="ef-mlflow-cells-")
    staged: dict[str, tuple[RunContent, str | None]] = {}
    try:
        for number, (name, (cell, content)) in enumerate(suite_cells(report).items()):
            content = attrs.evolve(content, tags={**content.tags, **tags})
            folder = os.path.join(root, str(number))
            os.mkdir(folder)
            staged[name] = (content, _stage(cell, content, None, files, folder))
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return staged, root


def _run_id(run: Any) -> str:
    """The id of ``run``: a run id, or an MLflow ``Run`` or ``ActiveRun``."""
    if isinstance(run, str):
        return run
    run_id = getattr(getattr(run, "info", None), "run_id", None)
    if not isinstance(run_id, str):
        raise TypeError(f"run must be a run id or an MLflow Run, got {type(run).__name__}")
    return run_id


def _experiment_id(client: Any, name: str | None) -> str:
    """The id of the experiment ``name`` (created when missing), or of MLflow's default one."""
    name = name or os.environ.get("MLFLOW_EXPERIMENT_NAME") or None
    if name is None:
        return "0"
    found = client.get_experiment_by_name(name)
    if found is not None:
        return str(found.experiment_id)
    try:
        return str(client.create_experiment(name))
    except Exception:  # created meanwhile by another process
        found = client.get_experiment_by_name(name)
        if found is None:
            raise
        return str(found.experiment_id)


def start_run(
    client: Any,
    experiment_id: str,
    name: str | None,
    *,
    parent: str | None = None,
    tags: Mapping[str, str] | None = None,
) -> str:
    """Open a run (under ``parent`` when given) and return its id."""
    all_tags = dict(tags or {})
    if parent is not None:
        all_tags[_PARENT_TAG] = parent
    run = client.create_run(experiment_id, run_name=name, tags=all_tags)
    return str(run.info.run_id)


def fill_run(client: Any, run_id: str, content: RunContent, folder: str | None = None) -> None:
    """Log ``content`` to the run, then the files of ``folder`` as its ``ef/`` artifacts."""
    from mlflow.entities import Metric, Param, RunTag

    now = int(time.time() * 1000)
    client.log_batch(
        run_id,
        metrics=[Metric(key, float(value), now, 0) for key, value in content.metrics.items()],
        params=[Param(key, value) for key, value in content.params.items()],
        tags=[RunTag(key, value) for key, value in content.tags.items()],
    )
    if folder is not None:
        client.log_artifacts(run_id, folder, ARTIFACTS)


def _default_name(report: Report) -> str:
    if isinstance(report, ComparisonReport):
        return f"comparison of {', '.join(report.systems)}"
    if isinstance(report, SuiteReport):
        return f"suite of {', '.join(report.systems)} on {', '.join(report.datasets)}"
    retriever = getattr(report, "manifest", {}).get("retriever")
    return retriever if isinstance(retriever, str) else f"ef {report_kind(report)} evaluation"


def log_report(
    report: Report,
    run: Any = None,
    experiment: str | None = None,
    *,
    tracking_uri: str | None = None,
    run_name: str | None = None,
    dataset: str | None = None,
    tags: Mapping[str, str] | None = None,
    html: str | os.PathLike[str] | None = None,
    files: Mapping[str, str] | None = None,
    timeout: int | None = None,
) -> LoggedRun:
    """Log a retrieval, RAG, comparison or suite report to an MLflow run.

    The run receives the report's parameters (cutoffs, metrics, options, the retriever's
    description), its means as metrics, tags (``ef.kind``, ``ef.library_version``, the qrels
    and queries fingerprints, ``ef.dataset``), and under ``ef/``: the report's JSON
    (``report.json``, read back by ``read_report("mlflow:RUN_ID")``), its HTML page
    (``report.html``) and its per-query values as a JSON table. A comparison gets one child
    run per system, with its means and its comparisons' p-values, intervals, effect sizes and
    wins/ties/losses. A suite gets its datasets, systems, metric and options as parameters,
    each system's macro and micro means as metrics (``SYSTEM/macro/METRIC``,
    ``SYSTEM/micro/METRIC``), its table as ``ef/suite.md``, and one child run per cell, named
    ``"SYSTEM on DATASET"``, holding what that cell's retrieval report logged alone holds (its
    ``ef/report.json`` too). See ``docs/tracking.md``.

    Every file is written to a local folder before anything is sent; when the server cannot
    be reached the error names the folder. Each request waits at most ``timeout`` seconds and
    is not retried.

    :param run: the run to log to — its id, or an MLflow ``Run``/``ActiveRun`` (left open) —
        or ``None`` for a new run, finished once everything is logged.
    :param experiment: a new run's experiment, by name (created when missing); default
        ``MLFLOW_EXPERIMENT_NAME``, else MLflow's default experiment.
    :param tracking_uri: default ``MLFLOW_TRACKING_URI``, else MLflow's own default.
    :param run_name: a new run's name (default: the retriever, or the systems compared).
        A suite's cells are always named ``"SYSTEM on DATASET"``.
    :param dataset: what the report was evaluated on, for the ``ef.dataset`` tag.
    :param tags: more tags for the run (and a suite's child runs).
    :param html: an HTML page of the report already written (with its drill-down), logged
        instead of one rendered from the report.
    :param files: more text files for ``ef/``, by name (a suite's child runs get them too).
    :param timeout: seconds per request (default ``EF_EVALUATION_MLFLOW_TIMEOUT``, else 30).
    :returns: where it was logged.
    :raises TrackingError: when the server cannot be reached or refuses a request, naming its
        URI and the folder the files are kept in.
    :raises ValueError: for two metric keys that share an MLflow name, or a bad ``timeout``.
    """
    seconds = request_timeout(timeout)
    content = run_content(report, dataset=dataset)
    content = attrs.evolve(content, tags={**content.tags, **(tags or {})})
    children: Mapping[str, tuple[RunContent, str | None]] = {}
    cells = None
    if isinstance(report, ComparisonReport):
        children = {name: (child, None) for name, child in comparison_systems(report).items()}
    extra = dict(files or {})
    if isinstance(report, SuiteReport):
        extra = {"suite.md": report.to_markdown(), **extra}
        children, cells = _stage_cells(report, files or {}, tags or {})
    try:
        folder = _stage(report, content, html, extra)
    except BaseException:
        if cells is not None:
            shutil.rmtree(cells, ignore_errors=True)
        raise
    uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or "MLflow's default tracking URI"
    try:
        with bounded_requests(seconds):
            client, uri = mlflow_client(tracking_uri)
            logged = _log(client, uri, report, content, children, folder, run, experiment, run_name)
    except Exception as error:
        raise tracking_failure(uri, seconds, "log the report", error, kept=folder) from error
    finally:
        if cells is not None:  # the cells are all in the suite's report.json, kept on failure
            shutil.rmtree(cells, ignore_errors=True)
    shutil.rmtree(folder, ignore_errors=True)
    return logged


def _log(
    client: Any,
    uri: str,
    report: Report,
    content: RunContent,
    children: Mapping[str, tuple[RunContent, str | None]],
    folder: str,
    run: Any,
    experiment: str | None,
    run_name: str | None,
) -> LoggedRun:
    own = run is None
    if own:
        experiment_id = _experiment_id(client, experiment)
        run_id = start_run(client, experiment_id, run_name or _default_name(report))
    else:
        run_id = _run_id(run)
        experiment_id = str(client.get_run(run_id).info.experiment_id)
    child_ids: dict[str, str] = {}
    try:
        fill_run(client, run_id, content, folder)
        for name, (child, files) in children.items():
            child_ids[name] = start_run(client, experiment_id, name, parent=run_id)
            fill_run(client, child_ids[name], child, files)
            client.set_terminated(child_ids[name], "FINISHED")
    except Exception:
        if own:
            for each in [*child_ids.values(), run_id]:
                try:
                    client.set_terminated(each, "FAILED")
                except Exception:  # the server is gone: the first error says so
                    break
        raise
    if own:
        client.set_terminated(run_id, "FINISHED")
    return LoggedRun(run_id, experiment_id, uri, child_ids)


def fetch_report(
    run_id: str, *, tracking_uri: str | None = None, timeout: int | None = None
) -> bytes:
    """The bytes of the report logged to the run ``run_id``, exactly as they were logged.

    :raises ReportNotFoundError: for no such run, or a run without ``ef/report.json``.
    :raises TrackingError: when the server cannot be reached, naming its URI.
    """
    seconds = request_timeout(timeout)
    uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or "MLflow's default tracking URI"
    try:
        with bounded_requests(seconds), tempfile.TemporaryDirectory() as folder:
            client, uri = mlflow_client(tracking_uri)
            where = f"mlflow:{run_id} (tracking server {uri})"
            _found_run(client, run_id, where)
            listed = {item.path for item in client.list_artifacts(run_id, ARTIFACTS)}
            if f"{ARTIFACTS}/{REPORT_FILE}" not in listed:
                raise ReportNotFoundError(
                    f"{where}: the run holds no {ARTIFACTS}/{REPORT_FILE}; a report is logged by "
                    "ef-evaluation-mlflow (a comparison's report is on its parent run)"
                )
            path = client.download_artifacts(run_id, f"{ARTIFACTS}/{REPORT_FILE}", folder)
            with open(path, "rb") as file:
                return file.read()
    except ReportNotFoundError:
        raise
    except Exception as error:
        raise tracking_failure(uri, seconds, f"read the report of run {run_id}", error) from error


def _found_run(client: Any, run_id: str, where: str) -> None:
    from mlflow.exceptions import MlflowException

    try:
        client.get_run(run_id)
    except MlflowException as error:
        if getattr(error, "error_code", "") == "RESOURCE_DOES_NOT_EXIST":
            raise ReportNotFoundError(f"{where}: no such run") from error
        raise
