"""``ef-eval demo --interval``: the bundled dataset's BM25 means with their intervals."""

from __future__ import annotations

import json

from ef.evaluation import evaluate_retrieval, read_beir
from ef.source_manager import ingest
from test_judgements_cli import ef_eval


def test_demo_json_carries_the_intervals_the_library_gives():
    done = ef_eval(
        "demo", "--k", 10, "--metrics", "ndcg", "--interval", "bootstrap", "--format", "json"
    )
    assert done.returncode == 0, done.stderr
    corpus, queries, qrels = read_beir("builtin:stdlib-docs")
    report = evaluate_retrieval(ingest(corpus), qrels, queries, k_values=(10,), metrics=("ndcg",))
    expected = report.with_intervals("bootstrap", n_resamples=10_000, seed=0).intervals
    assert expected is not None
    assert json.loads(done.stdout)["intervals"] == expected.to_dict()
