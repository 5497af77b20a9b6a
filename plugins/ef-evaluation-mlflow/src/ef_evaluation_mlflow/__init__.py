"""ef-evaluation plugin: evaluations into MLflow, and baselines back out of it.

:func:`log_report` logs a retrieval, RAG, comparison or suite report to an MLflow run
(parameters, mean metrics, tags, the report's JSON and HTML page and its per-query values as
artifacts; a child run per system of a comparison, per cell of a suite). With the plugin
installed, ``ef-eval run``, ``retrieval``, ``rag``, ``compare``, ``check`` and ``suite`` take
``--mlflow``, and
``read_report("mlflow:RUN_ID")`` (``ef-eval check --baseline mlflow:RUN_ID``) reads a logged
report back, byte for byte.

Loading the plugin imports nothing of MLflow: its client is imported when a report is logged or
read.
"""

from __future__ import annotations

from collections.abc import Callable

from ef.evaluation import hookimpl
from ef_evaluation_mlflow._cli import add_options, fetch, finished
from ef_evaluation_mlflow._content import mlflow_name
from ef_evaluation_mlflow._logging import LoggedRun, fetch_report, log_report
from ef_evaluation_mlflow._tracker import (
    DEFAULT_TIMEOUT,
    ENV_TIMEOUT,
    ReportNotFoundError,
    TrackingError,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "ENV_TIMEOUT",
    "LoggedRun",
    "ReportNotFoundError",
    "TrackingError",
    "fetch_report",
    "log_report",
    "mlflow_name",
]


@hookimpl
def ef_evaluation_register_report_locations(register: Callable[..., None]) -> None:
    """``mlflow:RUN_ID``: the report logged to that run."""
    register("mlflow", fetch, description="the report logged to an MLflow run: mlflow:RUN_ID")


@hookimpl
def ef_evaluation_register_command_extensions(register: Callable[..., None]) -> None:
    """``--mlflow`` and its options on the evaluating commands."""
    register("mlflow", add_options, finished, description="log the reports to MLflow")
