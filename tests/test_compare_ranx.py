"""compare() against ranx's compare on the same runs: the t-test exactly, Fisher's test within
its Monte-Carlo error, wins/ties/losses exactly.

ranx compiles its numba kernels on first use: about 45 s of CPU on a fresh install, which is why
these tests live in their own module, share one ranx call, and have a longer timeout. The
compiled kernels are kept in the user's cache directory (see ``tests/ranx_cache.py``),
so a fresh clone with a new virtual environment loads them instead (about 8 s).
"""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

import numpy as np
import pytest

from ef.evaluation import compare, evaluate_run
from ranx_cache import cached_outputs, kernel_cache_root, share_ranx_kernel_cache

# Before anything imports ranx: numba places a kernel's cache when ranx decorates it.
share_ranx_kernel_cache()

pytestmark = pytest.mark.timeout(300)

N_QUERIES = 50


@pytest.fixture(scope="module")
def ranx_comparison():
    """One set of runs compared by ranx (t-test and Fisher), with ranx's per-query values, kept
    in the user's cache under a key of this module's source and ranx's version (the runs come
    from a seeded generator in this module: ``tests/ranx_cache.py``)."""
    return cached_outputs(__file__, N_QUERIES, ranx_calls)


def ranx_calls():
    """The runs, ranx's comparisons of them and its per-query values."""
    from numba.core.errors import NumbaTypeSafetyWarning
    from ranx import Qrels, Run
    from ranx import compare as ranx_compare

    rng = np.random.default_rng(2024)
    docs = [f"d{i}" for i in range(40)]
    qrels = {
        f"q{q}": {str(d): int(rng.integers(1, 4)) for d in rng.choice(docs, 5, replace=False)}
        for q in range(N_QUERIES)
    }
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for name, skill in (("bm25", 0.0), ("dense", 0.02), ("hybrid", 0.0)):
        runs[name] = {}
        for query_id, judged in qrels.items():
            # Continuous scores never tie: ties would be broken differently by the two libraries.
            scores = rng.random(len(docs))
            runs[name][query_id] = {
                doc: float(score) + skill * judged.get(doc, 0)
                for doc, score in zip(docs, scores, strict=True)
            }
    with warnings.catch_warnings():
        # Numba warns about casts inside ranx's kernels while it compiles them: not our code.
        warnings.simplefilter("ignore", NumbaTypeSafetyWarning)
        ranx_runs = [Run.from_dict(run, name=name) for name, run in runs.items()]
        ranx_qrels = Qrels.from_dict(qrels)
        student = ranx_compare(ranx_qrels, ranx_runs, ["ndcg@10"], stat_test="student", max_p=0.05)
        # ranx's Fisher test has its own generator: more permutations shrink its share of the
        # error.
        fisher = ranx_compare(
            ranx_qrels,
            ranx_runs,
            ["ndcg@10"],
            stat_test="fisher",
            n_permutations=100_000,
            max_p=0.05,
        )
        tukey = ranx_compare(ranx_qrels, ranx_runs, ["ndcg@10"], stat_test="tukey", max_p=0.05)
    per_query = {run.name: dict(run.scores["ndcg@10"]) for run in ranx_runs}
    return {
        "qrels": {q: {d: float(g) for d, g in judged.items()} for q, judged in qrels.items()},
        "runs": runs,
        "per_query": per_query,
        "student": student.to_dict(),
        "fisher": fisher.to_dict(),
        "tukey": tukey.to_dict(),
    }


def test_ranx_scores_the_same_per_query_values(ranx_comparison):
    for name, run in ranx_comparison["runs"].items():
        ours = evaluate_run(run, ranx_comparison["qrels"], k_values=(10,), metrics=("ndcg",))
        theirs = ranx_comparison["per_query"][name]
        assert set(ours.per_query) == set(theirs)
        for query_id, values in ours.per_query.items():
            assert values["ndcg@10"] == pytest.approx(theirs[query_id], abs=1e-12)


def test_t_test_and_randomization_agree_with_ranx_compare(ranx_comparison):
    report = compare(
        ranx_comparison["runs"],
        ranx_comparison["qrels"],
        baseline="bm25",
        tests=("t-test", "randomization"),
        correction=None,
    )
    for system in ("dense", "hybrid"):
        row = report.comparison(system, "ndcg@10")
        student = ranx_comparison["student"]["bm25"]["comparisons"][system]["ndcg@10"]
        fisher = ranx_comparison["fisher"]["bm25"]["comparisons"][system]["ndcg@10"]
        assert row.p_values["t-test"] == pytest.approx(student, abs=1e-9, rel=1e-9)
        # Monte-Carlo tolerance: the two estimates' standard errors (10,000 and 100,000
        # permutations) combine to at most 0.0053, so 0.02 is more than 3.7 of them.
        assert row.p_values["randomization"] == pytest.approx(fisher, abs=0.02)
        win_tie_loss = ranx_comparison["student"][system]["win_tie_loss"]["bm25"]["ndcg@10"]
        assert (row.wins, row.ties, row.losses) == (
            win_tie_loss["W"],
            win_tie_loss["T"],
            win_tie_loss["L"],
        )
    # The data must exercise the tests: one significant difference, one that is not.
    p_values = {s: report.comparison(s, "ndcg@10").p_values["t-test"] for s in ("dense", "hybrid")}
    assert 0.001 < p_values["dense"] < 0.05 < p_values["hybrid"] < 0.95


def test_tukey_agrees_with_ranx_compare_for_every_pair(ranx_comparison):
    report = compare(ranx_comparison["runs"], ranx_comparison["qrels"], tests=("tukey",))
    assert report.baseline is None
    names = list(ranx_comparison["runs"])
    for a in names:
        for b in names:
            if a != b:
                theirs = ranx_comparison["tukey"][a]["comparisons"][b]["ndcg@10"]
                ours = report.comparison(a, "ndcg@10", against=b).p_values["tukey"]
                assert ours == pytest.approx(theirs, abs=1e-12)


def test_ranx_kernels_are_cached_by_module_in_the_user_cache():
    from numba.core.errors import NumbaTypeSafetyWarning
    from ranx import Qrels, Run, evaluate

    # One small call compiles the kernel or loads it (ranx_comparison may have come from its
    # cache).
    with warnings.catch_warnings():
        # numba warns about casts inside ranx's kernels while it compiles them: not our code.
        warnings.simplefilter("ignore", NumbaTypeSafetyWarning)
        evaluate(Qrels({"q": {"a": 1}}), Run({"q": {"a": 1.0, "b": 0.5}}), "ndcg@10")
    ndcg = importlib.import_module("ranx.metrics.ndcg")
    cache = Path(ndcg._ndcg._cache._cache_path)
    assert cache == kernel_cache_root() / "ranx.metrics.ndcg"
    assert list(cache.glob("ndcg._ndcg-*.nbi")), "the kernel was not saved there"
