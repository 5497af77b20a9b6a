"""MLflow 3's plain file store (``file://…/mlruns``), which it keeps in maintenance mode behind
``MLFLOW_ALLOW_FILE_STORE=true``: logged to and read back without a server, byte for byte; and
refused, without that setting, as one error naming the store, the report kept."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from ef.evaluation import compare, evaluate_run, read_report, read_trec_qrels
from ef_evaluation_mlflow import TrackingError, log_report

pytestmark = pytest.mark.timeout(180)


def test_a_file_store_holds_the_reports_and_gives_them_back(inputs, tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    store = (tmp_path / "mlruns").as_uri()
    qrels = read_trec_qrels(inputs["qrels.txt"])
    reports = {
        n: evaluate_run(str(inputs[f"{n}.txt"]), qrels, k_values=(10,)) for n in ("bm25", "dense")
    }
    comparison = compare(reports, baseline="bm25", tests=("t-test",))
    logged = log_report(comparison, tracking_uri=store, experiment="files")
    single = log_report(reports["dense"], tracking_uri=store, experiment="files")
    dense = MlflowClient(store).get_run(logged.children["dense"]).data.metrics
    assert dense["ndcg_at_10/difference"] == comparison.comparison("dense", "ndcg@10").difference
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store)
    assert read_report(f"mlflow:{logged.run_id}") == comparison
    assert read_report(f"mlflow:{single.run_id}").to_json() == reports["dense"].to_json()


def test_a_refused_file_store_is_one_error_naming_it(inputs, tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    store = (tmp_path / "mlruns").as_uri()
    report = evaluate_run(str(inputs["bm25.txt"]), read_trec_qrels(inputs["qrels.txt"]))
    with pytest.raises(
        TrackingError, match=rf"tracking server {store}: .*maintenance mode"
    ) as caught:
        log_report(report, tracking_uri=store)
    kept = Path(str(caught.value).rpartition("kept in ")[2])
    try:
        assert (kept / "report.json").read_text() == report.to_json()
    finally:
        shutil.rmtree(kept)
