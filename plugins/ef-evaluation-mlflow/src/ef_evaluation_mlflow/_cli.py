"""``--mlflow`` on ``ef-eval``'s evaluating commands (``run``, ``retrieval``, ``rag``,
``compare``, ``check`` and ``suite``), and ``mlflow:RUN_ID`` as a report location.

``--mlflow-uri`` and ``--mlflow-timeout`` take effect for the whole command as soon as it is
parsed (they set ``MLFLOW_TRACKING_URI`` and ``EF_EVALUATION_MLFLOW_TIMEOUT``), so
``ef-eval check --baseline mlflow:RUN_ID --mlflow-uri URI`` reads its baseline from that
server even without ``--mlflow``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from ef.evaluation import ComparisonReport, SuiteDataset, SuiteReport, redact_url
from ef_evaluation_mlflow._logging import fetch_report, log_report
from ef_evaluation_mlflow._tracker import DEFAULT_TIMEOUT, ENV_TIMEOUT

__all__ = ["add_options", "fetch", "finished"]


class _Setting(argparse.Action):
    """Store the option's value, and put it in the environment variable ``setting`` for the
    rest of the command."""

    def __init__(self, *args: Any, setting: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.setting = setting

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        os.environ[self.setting] = str(values)


def _seconds(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of seconds >= 1, got {text!r}")
    return int(text)


def add_options(parser: argparse.ArgumentParser, command: str) -> None:
    """Add ``--mlflow``, ``--mlflow-uri``, ``--mlflow-experiment`` and ``--mlflow-timeout``."""
    group = parser.add_argument_group("MLflow (plugin ef-evaluation-mlflow)")
    what = "the run's report" if command == "check" else "the report"
    group.add_argument(
        "--mlflow",
        action="store_true",
        help=f"also log {what} to an MLflow run, after the command's own output is written",
    )
    baseline = " and where --baseline mlflow:RUN_ID is read" if command == "check" else ""
    group.add_argument(
        "--mlflow-uri",
        metavar="URI",
        action=_Setting,
        setting="MLFLOW_TRACKING_URI",
        help=f"the tracking server{baseline} (default: $MLFLOW_TRACKING_URI, else MLflow's)",
    )
    group.add_argument(
        "--mlflow-experiment",
        metavar="NAME",
        help="the experiment, created when missing (default: $MLFLOW_EXPERIMENT_NAME, else "
        "MLflow's default experiment)",
    )
    group.add_argument(
        "--mlflow-timeout",
        metavar="SECONDS",
        type=_seconds,
        action=_Setting,
        setting=ENV_TIMEOUT,
        help=f"seconds each request to the server may take, never retried (default: "
        f"${ENV_TIMEOUT}, else {DEFAULT_TIMEOUT})",
    )


def finished(
    command: str, reports: Mapping[str, Any], args: argparse.Namespace, **details: Any
) -> None:
    """Log each report to its own MLflow run when ``--mlflow`` was given, and say where on
    standard error (standard output is the command's)."""
    if not getattr(args, "mlflow", False):
        return
    tags = {"ef.command": command}
    source = details.get("dataset")
    dataset = None
    if source is not None:
        # Named as a suite names its datasets (a folder's or a bundled dataset's name, an
        # ir_datasets id as it is); the path as typed, relative to where the command ran, is
        # kept beside it.
        reader = getattr(args, "reader", None) if command == "retrieval" else None
        dataset = SuiteDataset(source, reader=reader or "beir").name
        tags["ef.dataset_source"] = redact_url(source)
    files: dict[str, str] = {}
    check_report = details.get("check_report")
    if check_report is not None:
        tags["ef.gate"] = "passed" if check_report.passed else "failed"
        files["check.md"] = check_report.to_markdown()
    # A suite's page links to its cells' pages beside it: the run gets a page of its own.
    html = getattr(args, "html", None) if len(reports) == 1 and command != "suite" else None
    for name, report in reports.items():
        logged = log_report(
            report,
            experiment=args.mlflow_experiment,
            tracking_uri=args.mlflow_uri,
            # A comparison or a suite is named after its systems ("comparison of bm25.txt,
            # dense.txt", "suite of bm25, dense on scifact, nfcorpus").
            run_name=None if isinstance(report, ComparisonReport | SuiteReport) else name,
            dataset=dataset,
            tags=tags,
            html=html,
            files=files,
        )
        where = redact_url(logged.url or f"run {logged.run_id} at {logged.tracking_uri}")
        print(f"ef-eval: {name} logged to MLflow: {where}", file=sys.stderr)
        if logged.children and isinstance(report, SuiteReport):
            print(f"ef-eval: with {len(logged.children)} child runs, one per cell", file=sys.stderr)


def fetch(run_id: str) -> bytes:
    """The JSON of the report logged to the run ``run_id`` (``read_report("mlflow:RUN_ID")``)."""
    return fetch_report(run_id.strip())
