"""Report keys become MLflow names (``ndcg@10`` → ``ndcg_at_10``); two keys that would share a
name, or a name that would be another's folder, are refused before anything is written or sent,
never one value hiding another."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from ef.evaluation import RetrievalEvalReport
from ef_evaluation_mlflow import log_report, mlflow_name


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
