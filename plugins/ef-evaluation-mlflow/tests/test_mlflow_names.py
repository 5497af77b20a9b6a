"""Report keys become MLflow names (``ndcg@10`` → ``ndcg_at_10``); two keys that would share a
name, or a name that would be another's folder, are refused before anything is written or sent,
never one value hiding another. A dataset is tagged by its name, as a suite names it, and the
path it was given as beside it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from ef.evaluation import RetrievalEvalReport, write_beir
from ef_evaluation_mlflow import log_report, mlflow_name
from in_process_cli import ef_eval


@pytest.mark.parametrize(
    "key, name",
    [
        ("ndcg@10", "ndcg_at_10"),
        ("P(rel=2)@5", "P_rel_2__at_5"),
        ("nDCG(dcg='log2')@10", "nDCG_dcg__log2___at_10"),
        ("P.5", "P.5"),
        ("bpref", "bpref"),
    ],
)
def test_a_key_becomes_a_name_mlflow_takes(key, name):
    assert mlflow_name(key) == name


@pytest.mark.parametrize(
    "metrics, message",
    [
        (
            {"ndcg@10": 0.5, "ndcg_at_10": 0.4},
            r"'ndcg@10' and 'ndcg_at_10' would both be .* 'ndcg_at_10'",
        ),
        ({"succ": 0.5, "succ/strict@1": 0.4}, r"'succ' and 'succ/strict_at_1' cannot both be"),
    ],
)
def test_names_that_would_collide_are_refused_before_anything_is_sent(
    metrics, message, closed_server, tmp_path, monkeypatch
):
    report = RetrievalEvalReport(metrics, {}, 0, (1,))
    # A temporary folder of the test's own: other workers stage in the shared one meanwhile.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(ValueError, match=message):
        log_report(report, tracking_uri=closed_server)
    assert list(Path(tmp_path).glob("ef-mlflow-*")) == []  # nothing staged


@pytest.mark.parametrize(
    ("given", "name"), [("../data/tiny", "tiny"), ("builtin:stdlib-docs", "stdlib-docs")]
)
def test_a_dataset_is_tagged_by_its_name_and_the_path_as_given(given, name, tmp_path):
    corpus = {"d1": "sort a list", "d2": "open a file"}
    write_beir(tmp_path / "data" / "tiny", corpus, {"q1": "sort"}, {"q1": {"d1": 1}})
    (tmp_path / "work").mkdir()
    store = (tmp_path / "mlruns").as_uri()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "EF_EVALUATION_"))},
        "MLFLOW_ALLOW_FILE_STORE": "true",
        "EF_EVALUATION_PLUGINS": "mlflow",
    }
    argv = ["retrieval", given, "--retriever", "bm25", "--k", "1", "--no-progress"]
    flags = ["--mlflow", "--mlflow-uri", store, "--mlflow-experiment", "names"]
    done = ef_eval(*argv, *flags, env=env, cwd=tmp_path / "work")
    assert done.returncode == 0, done.stderr
    client = MlflowClient(store)
    experiment = client.get_experiment_by_name("names")
    assert experiment is not None
    [run] = client.search_runs([experiment.experiment_id])
    assert run.data.tags["ef.dataset"] == name
    assert run.data.tags["ef.dataset_source"] == given
