"""compare() against ranx's compare on the same runs: the t-test exactly, Fisher's test within
its Monte-Carlo error, wins/ties/losses exactly, Tukey's HSD for every pair.

ranx's outputs are recorded in ``tests/oracles/ranx_compare.json.gz`` for the seeded runs of
``tests/oracles/inputs.py`` (``tests/oracles/README.md``): these tests never import ranx.
"""

from __future__ import annotations

from typing import Any

import pytest

from ef.evaluation import compare, evaluate_run
from oracles.inputs import COMPARE_METRIC, compare_inputs, compare_runs
from oracles.recorded import recorded

QRELS, RUNS = compare_runs()
# ef is given the grades as floats, ranx as ints.
FLOAT_QRELS = {q: {d: float(g) for d, g in judged.items()} for q, judged in QRELS.items()}


@pytest.fixture(scope="module")
def ranx_comparison() -> dict[str, Any]:
    """ranx's comparisons of RUNS (t-test, Fisher, Tukey) and its per-query values."""
    outputs: dict[str, Any] = recorded("ranx_compare", compare_inputs(QRELS, RUNS))
    return outputs


def test_ranx_scores_the_same_per_query_values(ranx_comparison: dict[str, Any]) -> None:
    for name, run in RUNS.items():
        ours = evaluate_run(run, FLOAT_QRELS, k_values=(10,), metrics=("ndcg",))
        theirs = ranx_comparison["per_query"][name]
        assert set(ours.per_query) == set(theirs)
        for query_id, values in ours.per_query.items():
            assert values[COMPARE_METRIC] == pytest.approx(theirs[query_id], abs=1e-12)


def test_t_test_and_randomization_agree_with_ranx_compare(
    ranx_comparison: dict[str, Any],
) -> None:
    report = compare(
        RUNS, FLOAT_QRELS, baseline="bm25", tests=("t-test", "randomization"), correction=None
    )
    for system in ("dense", "hybrid"):
        row = report.comparison(system, COMPARE_METRIC)
        student = ranx_comparison["student"]["bm25"]["comparisons"][system][COMPARE_METRIC]
        fisher = ranx_comparison["fisher"]["bm25"]["comparisons"][system][COMPARE_METRIC]
        assert row.p_values["t-test"] == pytest.approx(student, abs=1e-9, rel=1e-9)
        # Monte-Carlo tolerance: the two estimates' standard errors (10,000 and 100,000
        # permutations) combine to at most 0.0053, so 0.02 is more than 3.7 of them.
        assert row.p_values["randomization"] == pytest.approx(fisher, abs=0.02)
        win_tie_loss = ranx_comparison["student"][system]["win_tie_loss"]["bm25"][COMPARE_METRIC]
        assert (row.wins, row.ties, row.losses) == (
            win_tie_loss["W"],
            win_tie_loss["T"],
            win_tie_loss["L"],
        )
    # The data must exercise the tests: one significant difference, one that is not.
    dense, hybrid = (
        report.comparison(s, COMPARE_METRIC).p_values["t-test"] for s in ("dense", "hybrid")
    )
    assert dense is not None and hybrid is not None
    assert 0.001 < dense < 0.05 < hybrid < 0.95


def test_tukey_agrees_with_ranx_compare_for_every_pair(ranx_comparison: dict[str, Any]) -> None:
    report = compare(RUNS, FLOAT_QRELS, tests=("tukey",))
    assert report.baseline is None
    names = list(RUNS)
    for a in names:
        for b in names:
            if a != b:
                theirs = ranx_comparison["tukey"][a]["comparisons"][b][COMPARE_METRIC]
                ours = report.comparison(a, COMPARE_METRIC, against=b).p_values["tukey"]
                assert ours == pytest.approx(theirs, abs=1e-12)
