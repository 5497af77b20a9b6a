"""A suite logged to a real MLflow tracking server as one parent run with a child run per
(system, dataset) cell: the parent's metrics are the suite's macro and micro means, each child's
the means of its cell's own report, found with MLflow's own client (search, download) and
checked against the report and pytrec_eval; ``read_report("mlflow:RUN_ID")`` gives back the very
suite; ``ef-eval suite --mlflow`` does the same from the command line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval
from mlflow.tracking import MlflowClient

import ef.evaluation
from ef.evaluation import (
    RetrievalEvalReport,
    SuiteReport,
    evaluate_suite,
    read_dataset,
    read_report,
    write_beir,
)
from ef.evaluation.cli import main
from ef_evaluation_mlflow import ENV_TIMEOUT, TrackingError, log_report, mlflow_name

pytestmark = pytest.mark.timeout(300)  # the session's server starts within the first test

# A second system beside bm25: documents ranked by how many of the query's words they share.
OVERLAP = textwrap.dedent(
    """
    import re

    class Overlap:
        def __init__(self, corpus):
            self.words = {d: set(re.findall(r"\\w+", t.lower())) for d, t in corpus.items()}

        def __call__(self, query, limit=10):
            asked = set(re.findall(r"\\w+", query.lower()))
            scores = {d: len(asked & words) for d, words in self.words.items()}
            hits = sorted((d for d, s in scores.items() if s), key=lambda d: (-scores[d], d))
            return hits[:limit]
    """
)
CORPUS = {
    "d1": "the river runs past the old mill",
    "d2": "a castle stands on the hill above the river",
    "d3": "the engine of the boat needs oil",
    "d4": "roses grow in the castle garden",
    "d5": "the desert is dry and hot",
    "d6": "a violin plays in the harbor at night",
}
QUERIES = {"q1": "river mill", "q2": "castle garden roses", "q3": "boat engine", "q4": "violin"}
QRELS = {"q1": {"d1": 2, "d2": 1}, "q2": {"d4": 2, "d2": 1}, "q3": {"d3": 1}, "q4": {"d6": 1}}


@pytest.fixture
def suite_inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The bundled dataset and a BEIR folder made here; bm25 and a word-overlap retriever
    (importable as ``suite_systems:Overlap`` for the command line)."""
    folder = tmp_path / "tiny"
    write_beir(folder, CORPUS, QUERIES, QRELS)
    (tmp_path / "suite_systems.py").write_text(OVERLAP)
    monkeypatch.syspath_prepend(str(tmp_path))
    return {
        "datasets": ["builtin:stdlib-docs", str(folder)],
        "systems": {"bm25": "bm25", "overlap": "suite_systems:Overlap"},
    }


def _suite(inputs: dict[str, Any]) -> SuiteReport:
    return evaluate_suite(
        inputs["systems"],
        inputs["datasets"],
        metrics=("ndcg", "recall", "map"),
        k_values=(1, 10),
        baseline="bm25",
        tests=("t-test",),
        progress=False,
    )


def _children(client: MlflowClient, experiment_id: str, parent: str) -> dict[str, Any]:
    runs = client.search_runs([experiment_id], f"tags.mlflow.parentRunId = '{parent}'")
    return {run.info.run_name: run for run in runs}


def _check_cell(client: MlflowClient, run: Any, cell: RetrievalEvalReport, dataset: str) -> None:
    """A child run holds what its cell's report logged alone holds."""
    data = run.data
    for key, mean in cell.metrics.items():
        assert data.metrics[mlflow_name(key)] == mean, key
    assert data.metrics["n_queries"] == cell.n_queries
    assert json.loads(data.params["k_values"]) == list(cell.k_values)
    assert data.tags["ef.kind"] == "retrieval" and data.tags["ef.dataset"] == dataset
    assert read_report(f"mlflow:{run.info.run_id}") == cell


def test_a_suite_is_one_parent_run_with_a_child_run_per_cell(
    tracking, suite_inputs, tmp_path, download
):
    suite = _suite(suite_inputs)
    assert suite.datasets == ("stdlib-docs", "tiny") and suite.systems == ("bm25", "overlap")
    logged = log_report(suite, experiment="suites")
    client = MlflowClient(tracking)
    parent = client.get_run(logged.run_id)
    assert parent.info.status == "FINISHED"
    assert parent.info.run_name == "suite of bm25, overlap on stdlib-docs, tiny"

    # The parent: each system's macro and micro means, float for float.
    metrics = parent.data.metrics
    for average, means in (("macro", suite.macro), ("micro", suite.micro)):
        for system in suite.systems:
            assert means[system], (average, system)
            for key, mean in means[system].items():
                assert metrics[f"{system}/{average}/{mlflow_name(key)}"] == mean
    # The macro mean is the mean over the datasets of each cell's mean (BEIR's "Avg." row).
    for system in suite.systems:
        cells = [suite.cells[dataset][system].metrics["ndcg@10"] for dataset in suite.datasets]
        assert metrics[f"{system}/macro/ndcg_at_10"] == pytest.approx(sum(cells) / len(cells))
    assert metrics["n_datasets"] == 2 and metrics["n_cells"] == 4
    params = parent.data.params
    assert json.loads(params["datasets"]) == ["stdlib-docs", "tiny"]
    assert json.loads(params["systems"]) == ["bm25", "overlap"]
    assert params["metric"] == "ndcg@10" and params["baseline"] == "bm25"
    assert json.loads(params["k_values"]) == [1, 10]
    tags = parent.data.tags
    assert tags["ef.kind"] == "suite" and tags["ef.library_version"] == ef.evaluation.__version__

    found = client.search_runs(
        [logged.experiment_id], "tags.`ef.kind` = 'suite' and metrics.`bm25/macro/ndcg_at_10` > 0"
    )
    assert [run.info.run_id for run in found] == [logged.run_id]

    local = Path(download(client, logged.run_id, "ef", tmp_path))
    assert sorted(os.listdir(local)) == [
        "cells.json",
        "means.json",
        "report.html",
        "report.json",
        "suite.md",
    ]
    assert (local / "report.json").read_bytes() == suite.to_json().encode()
    assert (local / "suite.md").read_text() == suite.to_markdown()
    back = read_report(f"mlflow:{logged.run_id}")
    assert isinstance(back, SuiteReport) and back == suite
    assert back.to_json() == suite.to_json()

    # A child run per cell, named "SYSTEM on DATASET", each its cell's report logged alone.
    children = _children(client, logged.experiment_id, logged.run_id)
    names = [f"{s} on {d}" for s in suite.systems for d in suite.datasets]
    assert sorted(children) == sorted(names) and list(logged.children) == names
    assert {name: run.info.run_id for name, run in children.items()} == logged.children
    for name, run in children.items():
        system, _, dataset = name.partition(" on ")
        assert run.data.tags["ef.system"] == system
        _check_cell(client, run, suite.cells[dataset][system], dataset)
    (tmp_path / "cell").mkdir()
    cell_files = download(client, logged.children["bm25 on tiny"], "ef", tmp_path / "cell")
    assert sorted(os.listdir(cell_files)) == ["per_query.json", "report.html", "report.json"]

    # The tiny dataset's cells, as pytrec_eval computes them from the runs the suite made.
    corpus, queries, qrels = read_dataset(suite_inputs["datasets"][1])
    oracle = pytrec_eval.RelevanceEvaluator(
        {q: {d: int(g) for d, g in docs.items()} for q, docs in qrels.items()}, {"ndcg_cut.10"}
    )
    words = {d: set(re.findall(r"\w+", t.lower())) for d, t in corpus.items()}
    ranked = {}
    for query, text in queries.items():
        asked = set(re.findall(r"\w+", text.lower()))
        shared = {d: len(asked & w) for d, w in words.items()}
        hits = sorted((d for d, s in shared.items() if s), key=lambda d: (-shared[d], d))[:10]
        ranked[query] = {d: float(len(hits) - i) for i, d in enumerate(hits)}
    per_query = oracle.evaluate(ranked)
    expected = sum(values["ndcg_cut_10"] for values in per_query.values()) / len(qrels)
    child = children["overlap on tiny"].data.metrics["ndcg_at_10"]
    assert child == pytest.approx(expected, abs=1e-12)


def test_ef_eval_suite_with_mlflow_logs_the_suite(tracking, suite_inputs, tmp_path, monkeypatch):
    for name in ("MLFLOW_TRACKING_URI", ENV_TIMEOUT):  # set by the options: put back after
        monkeypatch.setenv(name, "unused")
        monkeypatch.delenv(name)
    out = tmp_path / "suite.json"
    argv = ["suite", *suite_inputs["datasets"]]
    for name, spec in suite_inputs["systems"].items():
        argv += ["--system", f"{name}={spec}"]
    argv += ["--baseline", "bm25", "--k", "1,10", "--no-progress", "--format", "json"]
    argv += ["-o", str(out), "--mlflow", "--mlflow-uri", tracking]
    argv += ["--mlflow-experiment", "suite-cli", "--mlflow-timeout", "20"]
    assert main(argv) == 0
    written = SuiteReport.from_json(out.read_text())
    client = MlflowClient(tracking)
    experiment = client.get_experiment_by_name("suite-cli")
    assert experiment is not None
    [parent] = client.search_runs(
        [experiment.experiment_id], "tags.`ef.command` = 'suite' and tags.`ef.kind` = 'suite'"
    )
    assert read_report(f"mlflow:{parent.info.run_id}") == written
    for system in written.systems:
        for key, mean in written.micro[system].items():
            assert parent.data.metrics[f"{system}/micro/{mlflow_name(key)}"] == mean
    children = _children(client, experiment.experiment_id, parent.info.run_id)
    assert sorted(children) == [
        "bm25 on stdlib-docs",
        "bm25 on tiny",
        "overlap on stdlib-docs",
        "overlap on tiny",
    ]
    for name, run in children.items():
        system, _, dataset = name.partition(" on ")
        assert run.data.tags["ef.command"] == "suite"
        _check_cell(client, run, written.cells[dataset][system], dataset)


def test_ef_eval_suite_takes_the_options_only_with_the_plugin():
    command = [str(Path(sys.executable).with_name("ef-eval")), "suite", "--help"]
    shown = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    assert "--mlflow-experiment" in shown.stdout and "--mlflow-timeout" in shown.stdout
    env = {**os.environ, "EF_EVALUATION_PLUGINS": "extra_metrics"}
    hidden = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=120, check=True
    )
    assert "--mlflow" not in hidden.stdout and "--baseline" in hidden.stdout


def test_a_suite_for_a_closed_server_is_kept_whole_and_the_cells_folders_removed(
    closed_server, suite_inputs, tmp_path, monkeypatch
):
    suite = _suite(suite_inputs)
    staging = tmp_path / "staging"  # the local folders go here, for this test only
    staging.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(staging))
    with pytest.raises(TrackingError) as caught:
        log_report(suite, tracking_uri=closed_server, timeout=2)
    message = str(caught.value)
    assert f"at the MLflow tracking server {closed_server}:" in message
    found = re.search(r"the report \(report\.json\) and its files are kept in (\S+)", message)
    assert found, message
    kept = Path(found[1])
    assert (kept / "report.json").read_bytes() == suite.to_json().encode()
    assert read_report(kept / "report.json") == suite  # every cell is in it
    assert (kept / "suite.md").read_text() == suite.to_markdown()
    assert list(staging.iterdir()) == [kept]  # the cells' folders are gone
