"""The C kernel's other combines — ``mnz``, ``anz``, ``gmnz``, ``max``, ``min``, ``med``,
``wmnz``, ``mixed``, ``isr``, ``log_isr``, ``logn_isr``, ``bordafuse``, ``w_bordafuse`` — give
ef.evaluation's pure-Python fused runs bit for bit, and ranx's numbers.

The oracle is ``fuse()`` with the plugin switched off (the pure-Python path),
as in ``test_fusion_kernel.py``, on that module's generated runs and on runs made for these
methods: docs retrieved by one to five runs (so every count of runs, and both parities of a
median, occur), queries held by one run only, empty queries, ties, signed zeros, negative and
int scores, and sums that cancel (where Python's ``sum()`` compensates from Python 3.12 on).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from ef.evaluation import fuse, optimize_fusion

from ef_evaluation_speedups import COMBINES, _fusion, fusion_kernel
from speedups_switch import speedups_hooks
from test_fusion_kernel import (
    _runs,
    _scores,
    both,
    counted,
    outcome,
    pure_python,
    root_tests_on_path,
)

Run = dict[str, Any]
W = [0.5, 0.3, 0.2, 0.7, 0.1]
W_ODD = [1.0, -2.0, 0.25, 3.0, 1e-300]
SCORE_NORMS = ["default", None, "max"]
RANK_NORMS = ["default", "min-max", "sum"]

# (method, norm, weights for 5 runs, params): each method under each normalisation the kernel
# takes (default: min-max for score-based methods, none for rank-based ones).
CASES: list[tuple[str, Any, list[float] | None, dict[str, Any] | None]] = [
    *((method, norm, None, None) for method in ("mnz", "anz", "max", "min", "med")
      for norm in SCORE_NORMS),
    *(("gmnz", norm, None, {"gamma": gamma}) for norm in SCORE_NORMS for gamma in (1.5, 2, -0.5)),
    *((method, norm, weights, None) for method in ("wmnz", "mixed") for norm in SCORE_NORMS
      for weights in (W, W_ODD)),
    *((method, norm, None, None) for method in ("isr", "log_isr", "bordafuse")
      for norm in RANK_NORMS),
    *(("logn_isr", norm, None, params) for norm in RANK_NORMS
      for params in (None, {"sigma": 1}, {"sigma": 0.0})),
    *(("w_bordafuse", norm, weights, None) for norm in RANK_NORMS for weights in (W, W_ODD)),
]  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def plugin(speedups_loaded: None) -> None:
    """Every test here runs with the plugin loaded (conftest.py)."""


def _cancelling(rng: random.Random, n: int) -> list[float]:
    """Scores whose sums lose digits: Python 3.12's compensated sum() differs from a plain one."""
    return [rng.choice([1e16, -1e16, 1.0, -1.0, 0.1, 3e-17, 2.0**53]) for _ in range(n)]


def _overlapping_runs(seed: int) -> list[Run]:
    """2 to 5 runs over a small pool of docs, so a doc is retrieved by any number of them."""
    rng = random.Random(seed)
    n_runs = rng.choice([2, 3, 4, 5, 5])
    runs: list[Run] = [{} for _ in range(n_runs)]
    pool = ["a", "b", "c", "d", "e", "f", "g", "é", "中", "\U0001f600"]
    for q in range(12):
        query = f"q{q}"
        holders = [0] if q == 0 else [i for i in range(n_runs) if rng.random() > 0.1]
        for index in holders:
            docs = rng.sample(pool, rng.choice([0, 1, 3, 6, 10]) if q != 1 else 0)
            scores = _cancelling(rng, len(docs)) if q % 4 == 2 else _scores(rng, len(docs))
            runs[index][query] = dict(zip(docs, scores, strict=True))
    return runs


def _calls(runs: list[Run]) -> list[Any]:
    def call(method: str, norm: Any, weights: Any, params: Any) -> Any:
        return lambda: fuse(
            runs,
            method=method,
            norm=norm,
            weights=None if weights is None else weights[: len(runs)],
            params=params,
            missing_queries="zero",
        )

    return [call(*case) for case in CASES]


def _int_scores(runs: list[Run]) -> bool:
    return any(type(s) is int for run in runs for scores in run.values() for s in scores.values())


@pytest.mark.parametrize("seed", range(12))
def test_the_kernel_fuses_generated_runs_to_the_pure_python_bits(seed: int) -> None:
    runs = _overlapping_runs(seed) if seed % 2 else _runs(seed)
    with_kernel, plain, kernel_calls = both(_calls(runs))
    for case, mine, theirs in zip(CASES, with_kernel, plain, strict=True):
        assert mine == theirs, case
    for (method, norm, weights, _), seen, theirs in zip(CASES, kernel_calls, plain, strict=True):
        assert seen, method
        if seen[0] is False:
            # Int scores combined as they are (no normalisation, no weight multiplying them)
            # stay ints in Python: the kernel leaves them to it; otherwise only an overflow.
            raw = norm is None and (weights is None or method == "wmnz")
            assert (raw and _int_scores(runs)) or isinstance(theirs, tuple), (method, norm)


def test_every_count_of_runs_and_both_parities_of_the_median_occur() -> None:
    # The generated runs do reach the cases the combines tell apart.
    counts = set()
    for seed in range(1, 12, 2):
        runs = _overlapping_runs(seed)
        for query in {q for run in runs for q in run}:
            held = [set(run.get(query, {})) for run in runs]
            for doc in set().union(*held):
                counts.add(sum(doc in docs for docs in held))
    assert counts == {1, 2, 3, 4, 5}


def test_fuse_takes_the_kernel_for_every_covered_method() -> None:
    rng = random.Random(3)
    runs = [  # the generated runs' docs, scored without overflow
        {q: {d: rng.choice([rng.uniform(-5, 5), 1.0]) for d in docs} for q, docs in run.items()}
        for run in _overlapping_runs(3)
    ]
    for call, case in zip(_calls(runs), CASES, strict=True):
        with counted() as seen:
            call()
        assert seen == [True], case
    # condorcet is left to Python.
    for method, weights in [("condorcet", None), ("w_condorcet", W[: len(runs)])]:
        with counted() as seen:
            fuse(runs, method=method, weights=weights, missing_queries="zero")
        assert seen == [], method


def test_a_kernel_without_the_combines_is_not_asked_for_them() -> None:
    from ef.evaluation import hookimpl
    from ef.evaluation.testing import registered_plugin

    given: list[dict[str, Any]] = []

    class Plugin:
        @staticmethod
        @hookimpl
        def ef_evaluation_fusion_kernel() -> object:
            def kernel(runs: Any, **arguments: Any) -> Any:
                given.append(arguments)
                return {"q": {"from the kernel": 1.0}}

            return kernel  # no combines attribute: the additive methods only

    runs = [{"q": {"a": 1.0}}, {"q": {"a": 2.0, "b": 1.0}}]
    with registered_plugin(Plugin()):
        assert fuse(runs, method="mnz", norm="none") == {"q": {"a": 6.0, "b": 1.0}}
        assert fuse(runs, method="sum") == {"q": {"from the kernel": 1.0}}
    assert [arguments.get("combine", "total") for arguments in given] == ["total"]


def test_the_kernel_declines_combines_it_cannot_do() -> None:
    runs = [{"q": {"a": 1.0, "b": 0.5}}, {"q": {"b": 2.0}}, {"q": {"a": 0.5}}]
    factors = (1.0, 2.0, 3.0)
    assert _fusion.fuse(runs, None, None, None, False, "nope") is None
    assert _fusion.fuse(runs, None, None, None, False, 1) is None
    assert _fusion.fuse(runs, None, None, None, False, "sum_times") is None  # no factors
    assert _fusion.fuse(runs, None, None, None, False, "sum_over", factors[:2]) is None
    assert _fusion.fuse(runs, None, None, None, False, "sum_times", (1.0, 2, 3.0)) is None
    assert _fusion.fuse(runs, None, None, None, False, "max", factors) is None
    assert _fusion.fuse(runs, None, None, None, False, "sum_times_weights") is None  # no weights
    assert _fusion.fuse(runs, None, None, (1.0, 0.5), False, "borda") is None
    # Int scores that would reach the result as ints are Python's to combine.
    assert _fusion.fuse([{"q": {"a": 1}}, {"q": {"a": 2}}], None, None, None, False, "max") is None
    assert fusion_kernel(
        runs, norm=None, weights=None, rank_scores=None, in_rank_order=False, combine="sum_times",
        factors=factors,
    ) == {"q": {"b": 5.0, "a": 3.0}}  # fmt: skip
    assert {"total", "sum_times", "borda"} <= COMBINES
    assert "ef_evaluation_fusion_kernel" in (speedups_hooks() or ())


def test_python_sum_is_followed_to_the_bit() -> None:
    # 1e16 + 1.0 - 1e16: a plain sum gives 0.0, Python 3.12's compensated sum() 1.0.
    runs = [{"q": {"a": 1e16}}, {"q": {"a": 1.0}}, {"q": {"a": -1e16}}]
    fused = fuse(runs, method="mnz", norm=None)
    assert fused == {"q": {"a": sum([1e16, 1.0, -1e16]) * 3}}
    with pure_python():
        assert fuse(runs, method="mnz", norm=None) == fused


def test_optimize_fusion_fuses_the_new_methods_with_the_kernel_to_the_same_result() -> None:
    runs = [
        {q: {d: float(s) for d, s in docs.items()} for q, docs in run.items()}
        for run in _overlapping_runs(3)  # 3 runs: 66 weightings, not 1,001 as for 5
    ]
    qrels = {q: {doc: 1 for doc in list(d)[:2]} for q, d in runs[0].items() if d}

    def search(method: str) -> Any:
        result = optimize_fusion(runs, qrels, method=method, metric="ndcg@10")
        return outcome(lambda: {"best": result.best_params}), result.best_score, result.tries

    methods = ["logn_isr", "gmnz", "wmnz"]
    with counted() as seen:
        mine = [search(method) for method in methods]
    assert seen and all(seen)
    with pure_python():
        theirs = [search(method) for method in methods]
    assert mine == theirs


# ranx ---------------------------------------------------------------------------------------


def test_ranx_gives_the_same_numbers_through_the_kernel() -> None:
    root_tests_on_path()
    from oracles.inputs import COMBINES_METHODS, COMBINES_SEED, kernel_inputs, kernel_runs
    from oracles.recorded import recorded

    runs = kernel_runs(COMBINES_SEED, 8, (1, 2, 5, 20))  # distinct scores: no ties
    inputs = kernel_inputs(COMBINES_SEED, runs, COMBINES_METHODS)
    fused_by_ranx = recorded("ranx_fusion_kernel_combines", inputs)
    for method, _, params in COMBINES_METHODS:
        options = {name: value for name, value in params.items() if name != "weights"}
        with counted() as seen:
            ours = fuse(runs, method=method, weights=params.get("weights"), params=options)
        assert seen == [True], method
        theirs = fused_by_ranx[method]
        assert set(ours) == set(theirs), method
        for query, scores in ours.items():
            other = theirs[query]
            assert set(scores) == set(other), (method, query)
            assert all(abs(scores[d] - other[d]) <= 1e-9 for d in scores), (method, query)
