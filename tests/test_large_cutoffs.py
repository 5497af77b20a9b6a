"""A huge cutoff costs what the rankings cost, never memory in proportion to k."""

from __future__ import annotations

import tracemalloc

import pytest

from ef.evaluation import evaluate_run, ndcg_at_k

HUGE_K = 100_000_000
QRELS = {"q1": {"d1": 1.0, "d3": 2.0}, "q2": {"d2": 1.0}}
RUN = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d2": 1.0}}


@pytest.mark.parametrize(
    "metrics",
    [
        ("ndcg", "recall", "precision", "mrr", "map"),  # the fused built-in step
        ("ndcg", "hit_rate"),  # a plugin metric beside it: each metric's all-cutoffs form
    ],
    ids=["builtins", "with-plugin-metric"],
)
def test_a_huge_cutoff_allocates_nothing_in_proportion_to_it(metrics):
    tracemalloc.start()
    try:
        report = evaluate_run(RUN, QRELS, k_values=(10, HUGE_K), metrics=metrics)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000, f"peak {peak:,} bytes for a two-query run"
    expected = (ndcg_at_k(["d1", "d2"], QRELS["q1"], HUGE_K) + 1.0) / 2
    assert report.metrics[f"ndcg@{HUGE_K}"] == pytest.approx(expected, abs=1e-12)
    assert report.metrics[f"ndcg@{HUGE_K}"] == pytest.approx(report.metrics["ndcg@10"], abs=1e-12)
