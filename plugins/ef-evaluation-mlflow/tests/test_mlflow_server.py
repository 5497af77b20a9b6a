"""The plugin against a real MLflow tracking server: what ``log_report`` puts in a run, read
back with MLflow's own client (search, download) and checked against the reports, pytrec_eval
and scipy; ``read_report("mlflow:RUN_ID")`` giving back the very report; ``--mlflow`` on every
evaluating command; and the quality gate taking its baseline from MLflow.

One file, so the session's one server serves every test of it (files go to workers whole)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval
from mlflow.tracking import MlflowClient
from scipy import stats

import ef.evaluation
from ef.evaluation import (
    ComparisonReport,
    compare,
    evaluate_rag,
    evaluate_run,
    read_report,
    read_trec_qrels,
    read_trec_run,
)
from ef.evaluation.cli import main
from ef_evaluation_mlflow import ENV_TIMEOUT, ReportNotFoundError, log_report

pytestmark = pytest.mark.timeout(300)  # the session's server starts within the first test


def _downloaded(
    download: Callable[..., str], client: MlflowClient, run_id: str, folder: Path
) -> dict[str, bytes]:
    local = download(client, run_id, "ef", folder)
    return {name: Path(local, name).read_bytes() for name in sorted(os.listdir(local))}


def _rows(table: dict[str, Any], *key_columns: str) -> dict[tuple[Any, ...], Any]:
    columns = table["columns"]
    at = [columns.index(name) for name in key_columns]
    value = columns.index("value")
    return {tuple(row[i] for i in at): row[value] for row in table["data"]}


@pytest.mark.timeout(480)  # at least 10 times its time on an idle 2-core machine
def test_a_retrieval_report_is_logged_found_downloaded_and_read_back(
    tracking, inputs, tmp_path, download
):
    qrels = read_trec_qrels(inputs["qrels.txt"])
    report = evaluate_run(str(inputs["bm25.txt"]), qrels, k_values=(1, 3, 10), relevance_level=1)
    logged = log_report(report, experiment="logging", run_name="bm25", dataset="tiny-trec")
    client = MlflowClient(tracking)
    run = client.get_run(logged.run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == "bm25"
    assert logged.url == f"{tracking}/#/experiments/{run.info.experiment_id}/runs/{run.info.run_id}"

    # The means, float for float, under MLflow's names; and as pytrec_eval computes them.
    metrics = run.data.metrics
    for key, mean in report.metrics.items():
        assert metrics[key.replace("@", "_at_")] == mean, key
    judged = {q: {d: int(g) for d, g in docs.items()} for q, docs in qrels.items()}
    oracle = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10", "recip_rank"})
    per_query = oracle.evaluate(read_trec_run(inputs["bm25.txt"]))
    expected = sum(values["ndcg_cut_10"] for values in per_query.values()) / len(per_query)
    assert metrics["ndcg_at_10"] == pytest.approx(expected, abs=1e-12)
    assert metrics["n_queries"] == report.n_queries == 5

    params = run.data.params
    assert json.loads(params["k_values"]) == [1, 3, 10]
    assert json.loads(params["metrics"]) == list(report.metrics)
    assert params["relevance_level"] == "1"
    tags = run.data.tags
    assert tags["ef.kind"] == "retrieval" and tags["ef.dataset"] == "tiny-trec"
    assert tags["ef.library_version"] == ef.evaluation.__version__
    assert tags["ef.qrels_fingerprint"] == report.manifest["fingerprints"]["qrels"]

    found = client.search_runs(
        [run.info.experiment_id],
        filter_string="tags.`ef.dataset` = 'tiny-trec' and metrics.ndcg_at_10 > 0",
    )
    assert [each.info.run_id for each in found] == [logged.run_id]

    files = _downloaded(download, client, logged.run_id, tmp_path)
    assert sorted(files) == ["per_query.json", "report.html", "report.json"]
    assert files["report.json"] == report.to_json().encode()
    table = json.loads(files["per_query.json"])
    assert table["columns"] == ["query_id", "metric", "value"]
    assert _rows(table, "query_id", "metric") == {
        (query, key): value
        for query, values in report.per_query.items()
        for key, value in values.items()
    }
    assert (
        files["report.html"].lower().startswith(b"<!doctype html>")
        and b"ndcg@10" in files["report.html"]
    )

    back = read_report(f"mlflow:{logged.run_id}")
    assert back == report and back.to_json() == report.to_json()


def test_a_comparison_has_a_child_run_per_system_with_its_tests(
    tracking, inputs, tmp_path, download
):
    qrels = read_trec_qrels(inputs["qrels.txt"])
    reports = {
        name.removesuffix(".txt"): evaluate_run(str(inputs[name]), qrels, k_values=(10,))
        for name in ("bm25.txt", "dense.txt")
    }
    report = compare(
        reports,
        baseline="bm25",
        metrics=("ndcg@10", "recall@10"),
        tests=("t-test", "randomization", "bootstrap"),
        n_permutations=2000,
        n_resamples=2000,
    )
    logged = log_report(report, experiment="comparisons", dataset="tiny-trec")
    client = MlflowClient(tracking)
    children = client.search_runs(
        [logged.experiment_id], filter_string=f"tags.mlflow.parentRunId = '{logged.run_id}'"
    )
    assert {child.info.run_name: child.info.run_id for child in children} == logged.children
    assert sorted(logged.children) == ["bm25", "dense"]

    dense = client.get_run(logged.children["dense"]).data
    for row in report.comparisons:
        name = row.metric.replace("@", "_at_")
        assert dense.metrics[f"{name}/difference"] == row.difference
        for test in ("t-test", "randomization"):
            assert dense.metrics[f"{name}/p_{test}"] == row.p_values[test]
            assert dense.metrics[f"{name}/adjusted_p_{test}"] == row.adjusted_p_values[test]
        assert row.confidence_interval is not None
        low, high = row.confidence_interval
        assert (dense.metrics[f"{name}/ci_low"], dense.metrics[f"{name}/ci_high"]) == (low, high)
        significant = report.significant("dense", row.metric)
        assert dense.metrics[f"{name}/significant"] == (1.0 if significant else 0.0)
        # The paired t-test's p-value, as scipy computes it from the per-query values.
        queries = sorted(reports["bm25"].per_query)
        values = [[reports[s].per_query[q][row.metric] for q in queries] for s in ("dense", "bm25")]
        pvalue = stats.ttest_rel(*values).pvalue
        assert dense.metrics[f"{name}/p_t-test"] == pytest.approx(pvalue, rel=1e-9)
    assert dense.metrics["ndcg_at_10/mean"] == report.means["dense"]["ndcg@10"]
    bm25 = client.get_run(logged.children["bm25"]).data
    means = report.means["bm25"]
    assert bm25.metrics == {
        "ndcg_at_10/mean": means["ndcg@10"],
        "recall_at_10/mean": means["recall@10"],
    }

    parent = client.get_run(logged.run_id).data
    assert json.loads(parent.params["systems"]) == ["bm25", "dense"]
    assert parent.params["baseline"] == "bm25" and parent.tags["ef.kind"] == "comparison"
    files = _downloaded(download, client, logged.run_id, tmp_path)
    assert sorted(files) == ["comparisons.json", "per_query.json", "report.html", "report.json"]
    per_query = _rows(json.loads(files["per_query.json"]), "system", "query_id", "metric")
    assert per_query[("dense", "q1", "ndcg@10")] == report.per_query["dense"]["q1"]["ndcg@10"]

    back = read_report(f"mlflow:{logged.run_id}")
    assert isinstance(back, ComparisonReport) and back == report
    with pytest.raises(ReportNotFoundError, match="on its parent run"):
        read_report(f"mlflow:{logged.children['dense']}")


def test_a_rag_report_logs_its_means_and_coverage(tracking, tmp_path):
    samples = [
        {
            "id": "s1",
            "response": "Paris",
            "reference": "Paris",
            "retrieved_contexts": ["Paris is big"],
        },
        {
            "id": "s2",
            "response": "Lyon is",
            "reference": "Marseille",
            "retrieved_contexts": ["Lyon"],
        },
        {"id": "s3", "response": "Nice", "retrieved_contexts": ["Nice"]},
    ]
    report = evaluate_rag(samples, metrics=["exact_match", "token_f1"])
    logged = log_report(report, experiment="rag", run_name="answers")
    run = MlflowClient(tracking).get_run(logged.run_id)
    assert run.data.metrics["exact_match"] == report.metrics["exact_match"] == 0.5
    assert run.data.metrics["coverage/exact_match"] == report.coverage["exact_match"] == 2
    assert run.data.tags["ef.kind"] == "rag"
    assert read_report(f"mlflow:{logged.run_id}") == report


def test_a_report_goes_into_a_run_the_caller_opened_and_left_open(tracking, inputs):
    qrels = read_trec_qrels(inputs["qrels.txt"])
    report = evaluate_run(str(inputs["dense.txt"]), qrels, k_values=(5,))
    client = MlflowClient(tracking)
    experiment = client.create_experiment("caller's runs")
    opened = client.create_run(experiment, run_name="training step 3")
    logged = log_report(report, opened, dataset="tiny-trec")
    assert (logged.run_id, logged.experiment_id) == (opened.info.run_id, experiment)
    run = client.get_run(opened.info.run_id)
    assert (
        run.info.status == "RUNNING" and run.data.metrics["ndcg_at_5"] == report.metrics["ndcg@5"]
    )


def test_an_unknown_run_is_no_report(tracking):
    with pytest.raises(ReportNotFoundError, match=r"mlflow:0{32} .*no such run"):
        read_report("mlflow:" + "0" * 32)


def _cli(*argv: str) -> int:
    return main(list(argv))


def _runs(client: MlflowClient, experiment: str, command: str) -> dict[str, Any]:
    found = client.get_experiment_by_name(experiment)
    assert found is not None, experiment
    runs = client.search_runs([found.experiment_id], f"tags.`ef.command` = '{command}'")
    return {run.info.run_name: run for run in runs}


@pytest.fixture
def cli_settings(tracking: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """``--mlflow-uri`` and ``--mlflow-timeout`` set the environment for the command: put it
    back after the test."""
    for name in ("MLFLOW_TRACKING_URI", ENV_TIMEOUT):
        monkeypatch.setenv(name, tracking if name == "MLFLOW_TRACKING_URI" else "30")
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    monkeypatch.delenv(ENV_TIMEOUT)
    return tracking


def test_every_evaluating_command_logs_its_reports_with_mlflow(cli_settings, inputs, tmp_path):
    uri = cli_settings
    flags = [
        "--mlflow",
        "--mlflow-uri",
        uri,
        "--mlflow-experiment",
        "cli",
        "--mlflow-timeout",
        "20",
    ]
    qrels, bm25, dense = (str(inputs[name]) for name in ("qrels.txt", "bm25.txt", "dense.txt"))
    client = MlflowClient(uri)

    out = tmp_path / "run.json"
    assert (
        _cli("run", qrels, bm25, dense, "--k", "1,10", "--format", "json", "-o", str(out), *flags)
        == 0
    )
    written = json.loads(out.read_text())
    runs = _runs(client, "cli", "run")
    assert sorted(runs) == ["bm25.txt", "dense.txt"]
    for name, run in runs.items():
        assert run.data.tags["ef.dataset"] == "qrels.txt"
        assert run.data.tags["ef.dataset_source"] == qrels
        for key, mean in written[name]["metrics"].items():
            assert run.data.metrics[key.replace("@", "_at_")] == mean
        assert read_report(f"mlflow:{run.info.run_id}").metrics == written[name]["metrics"]

    out = tmp_path / "compare.json"
    argv = ["compare", qrels, bm25, dense, "--baseline", "bm25.txt", "--tests", "t-test"]
    assert _cli(*argv, "--format", "json", "-o", str(out), *flags) == 0
    [parent] = _runs(client, "cli", "compare").values()
    assert parent.info.run_name == "comparison of bm25.txt, dense.txt"
    assert read_report(f"mlflow:{parent.info.run_id}") == ComparisonReport.from_json(
        out.read_text()
    )
    children = client.search_runs(
        [parent.info.experiment_id], f"tags.mlflow.parentRunId = '{parent.info.run_id}'"
    )
    assert sorted(child.info.run_name for child in children) == ["bm25.txt", "dense.txt"]

    samples = tmp_path / "samples.jsonl"
    lines = [
        {"id": "a", "response": "Paris", "reference": "Paris", "retrieved_contexts": []},
        {"id": "b", "response": "Rome", "reference": "Milan", "retrieved_contexts": []},
    ]
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "rag.json"
    assert _cli("rag", str(samples), "--format", "json", "-o", str(out), *flags) == 0
    [rag] = _runs(client, "cli", "rag").values()
    assert rag.data.metrics["exact_match"] == json.loads(out.read_text())["metrics"]["exact_match"]

    out = tmp_path / "retrieval.json"
    argv = ["retrieval", "builtin:stdlib-docs", "--retriever", "bm25", "--k", "10", "--no-progress"]
    assert _cli(*argv, "--format", "json", "-o", str(out), *flags) == 0
    [retrieval] = _runs(client, "cli", "retrieval").values()
    assert retrieval.info.run_name == "bm25"
    metrics = json.loads(out.read_text())["metrics"]
    assert retrieval.data.metrics["ndcg_at_10"] == metrics["ndcg@10"]


def test_the_gate_takes_its_baseline_from_mlflow(cli_settings, inputs, tmp_path):
    uri = cli_settings
    qrels, bm25, dense = (str(inputs[name]) for name in ("qrels.txt", "bm25.txt", "dense.txt"))
    rule = ["--qrels", qrels, "--rule", "ndcg@10: max_drop = 0.01"]
    baseline = str(tmp_path / "baseline.json")
    flags = ["--mlflow", "--mlflow-uri", uri, "--mlflow-experiment", "gate"]
    assert _cli("check", dense, *rule, "--baseline", baseline, "--update-baseline", *flags) == 0
    client = MlflowClient(uri)
    [logged] = _runs(client, "gate", "check").values()
    assert read_report(f"mlflow:{logged.info.run_id}") == read_report(baseline)
    location = f"mlflow:{logged.info.run_id}"
    assert _cli("check", dense, *rule, "--baseline", location, "--mlflow-uri", uri) == 0
    # bm25 is worse than dense by more than the rule allows: a regression, logged as such.
    assert _cli("check", bm25, *rule, "--baseline", location, *flags) == 1
    failed = _runs(client, "gate", "check")["bm25.txt"]
    assert failed.data.tags["ef.gate"] == "failed"
    assert (
        "ndcg@10"
        in Path(
            client.download_artifacts(failed.info.run_id, "ef/check.md", str(tmp_path))
        ).read_text()
    )

    # The same from the installed command, the tracking server given by --mlflow-uri only.
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", ENV_TIMEOUT)}
    done = subprocess.run(
        [str(Path(sys.executable).with_name("ef-eval")), "check", dense, *rule,
         "--baseline", location, "--mlflow-uri", uri, "--format", "json"],
        capture_output=True, text=True, env=env, timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["passed"] is True  # standard output holds the JSON only


def test_the_options_are_there_only_with_the_plugin(tmp_path):
    command = [str(Path(sys.executable).with_name("ef-eval")), "run", "--help"]
    shown = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    assert "--mlflow-experiment" in shown.stdout
    env = {**os.environ, "EF_EVALUATION_PLUGINS": "extra_metrics"}
    hidden = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=120, check=True
    )
    assert "--mlflow" not in hidden.stdout and "--k" in hidden.stdout
