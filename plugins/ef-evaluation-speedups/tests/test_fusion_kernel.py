"""The C fusion kernel gives ef.evaluation's pure-Python fused runs, bit for bit, or steps aside.

The oracle is ``fuse()`` with this plugin switched off (the pure-Python path).
Generated runs — 2 to 4 runs, depths 0 to 60, disjoint and overlapping docs, ties (0.0 with
-0.0 among them), empty queries, queries missing from some runs, ints among floats, non-ASCII
ids, huge and tiny magnitudes, sums that overflow to inf — are fused both ways for every method
and normalisation the kernel takes; each outcome (every query and doc in order, each score's
type and bits, or the exception's type, message and notes) must be the same. Input the kernel
does not take makes it return ``None``, and ``fuse()`` raises the pure-Python path's error.
"""

from __future__ import annotations

import contextlib
import random
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from ef.evaluation import fuse, optimize_fusion, registry
from ef.evaluation.testing import registered_plugin

from ef_evaluation_speedups import _fusion
from speedups_switch import speedups_hooks, speedups_off

Run = dict[str, Any]

# (method, norm, weights for 4 runs, params): every method and normalisation the kernel takes.
CASES: list[tuple[str, str | None, list[float] | None, dict[str, Any] | None]] = [
    ("rrf", "default", None, None),
    ("rrf", "min-max", None, {"k": 5}),
    ("rrf", "sum", None, {"k": 0.5}),
    ("rrf", "max", None, {"k": 1}),
    ("rbc", "default", None, {"phi": 0.8}),
    ("rbc", "min-max", None, {"phi": 0.3}),
    ("sum", "default", None, None),
    ("sum", None, None, None),
    ("sum", "max", None, None),
    ("wsum", "default", [0.5, 0.3, 0.2, 0.7], None),
    ("wsum", None, [1.0, -2.0, 0.25, 3.0], None),
    ("wsum", "max", [0.1, 0.7, 0.2, 1e-300], None),
]
IDS = ["d1", "d10", "d2", "D", "", "é", "e\u0301", "中文", "中", "\U0001f600", "a\x00b", "zz"]


def _scores(rng: random.Random, n: int) -> list[Any]:
    kind = rng.randrange(8)
    if kind == 0:
        return [float(rng.randrange(3)) for _ in range(n)]  # many ties
    if kind == 1:
        return [rng.choice([0.0, -0.0, 1.5, -2.0]) for _ in range(n)]  # signed zeros
    if kind == 2:
        return [rng.choice([1, -3, 2.5, 0, 2**52, -(2**52)]) for _ in range(n)]  # ints
    if kind == 3:
        return [rng.uniform(-1, 1) * 10.0 ** rng.randrange(290, 308) for _ in range(n)]
    if kind == 4:
        return [rng.choice([5e-324, -5e-324, 1e-310, 2.2e-308, 0.0]) for _ in range(n)]
    if kind == 5:
        return [1e308, 1.7e308, *(rng.uniform(1e307, 1e308) for _ in range(n))][:n]
    return [rng.gauss(0, 1) for _ in range(n)]


def _runs(seed: int) -> list[Run]:
    rng = random.Random(seed)
    n_runs = rng.choice([2, 3, 3, 4])
    shared = [*IDS, *(f"d{i:03d}" for i in range(50))]
    runs: list[Run] = [{} for _ in range(n_runs)]
    for q in range(14):
        query = f"q{q}" if q % 5 else f"q{q}-é"
        for index, run in enumerate(runs):
            if rng.random() < 0.15:
                continue  # the query is missing from this run
            depth = rng.choice([0, 1, 2, 3, 7, 20, 60])
            pool = shared if q % 3 else [f"r{index}-{i}" for i in range(80)]  # disjoint
            docs = rng.sample(pool, min(depth, len(pool)))
            pairs = list(zip(docs, _scores(rng, len(docs)), strict=True))
            order = rng.randrange(3)
            if order == 0:
                pairs.sort(key=lambda pair: pair[1], reverse=True)  # descending, ties as drawn
            elif order == 1:
                pairs.sort(key=lambda pair: (pair[1], pair[0]), reverse=True)  # rank order
            run[query] = dict(pairs)
    return runs


def _weights(weights: list[float] | None, n_runs: int) -> list[float] | None:
    return None if weights is None else weights[:n_runs]


def outcome(call: Callable[[], Any]) -> Any:
    """What ``call`` gives — every query and doc in order with each score's type and bits —
    or the exception's type, message and notes."""
    try:
        fused = call()
    except Exception as error:
        return type(error), str(error), getattr(error, "__notes__", None)
    return [
        (query, [(doc, type(s).__name__, s.hex() if isinstance(s, float) else s) for doc, s in d])
        for query, d in ((query, scores.items()) for query, scores in fused.items())
    ]


@pytest.fixture(scope="module", autouse=True)
def plugin(speedups_loaded: None) -> None:
    """Every test here runs with the plugin loaded (conftest.py)."""


@contextlib.contextmanager
def pure_python() -> Iterator[None]:
    """The plugin switched off: ``fuse()`` takes its pure-Python path."""
    with speedups_off():
        yield
    assert "ef_evaluation_fusion_kernel" in (speedups_hooks() or ())


@contextlib.contextmanager
def counted() -> Iterator[list[bool]]:
    """Each call of the C kernel, recorded: whether it fused (``True``) or declined."""
    calls: list[bool] = []
    real = _fusion.fuse

    def spy(*args: Any) -> Any:
        result = real(*args)
        calls.append(result is not None)
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_fusion, "fuse", spy)
        yield calls


def both(calls: list[Callable[[], Any]]) -> tuple[list[Any], list[Any], list[list[bool]]]:
    """The outcomes with the kernel (and the kernel's calls for each), then without it."""
    with_kernel, kernel_calls = [], []
    for call in calls:
        with counted() as seen:
            with_kernel.append(outcome(call))
        kernel_calls.append(seen)
    with pure_python():
        plain = [outcome(call) for call in calls]
    return with_kernel, plain, kernel_calls


def _case_call(runs: list[Run], method: str, norm: Any, weights: Any, params: Any) -> Any:
    return lambda: fuse(runs, method=method, norm=norm, weights=weights, params=params)


@pytest.mark.parametrize("seed", range(8))
def test_the_kernel_fuses_generated_runs_to_the_pure_python_bits(seed: int) -> None:
    runs = _runs(seed)
    calls = [
        _case_call(runs, method, norm, _weights(weights, len(runs)), params)
        for method, norm, weights, params in CASES
    ]
    with_kernel, plain, kernel_calls = both(calls)
    for case, mine, theirs in zip(CASES, with_kernel, plain, strict=True):
        assert mine == theirs, case
    # The kernel did the work wherever the input let it: ints under an unnormalised sum and a
    # sum overflowing to inf are the only runs it leaves to Python, which then fuses or raises.
    for case, seen, theirs in zip(CASES, kernel_calls, plain, strict=True):
        assert seen, case
        if seen[0] is False:
            ints = any(type(s) is int for run in runs for d in run.values() for s in d.values())
            assert ((case[0], case[1]) == ("sum", None) and ints) or isinstance(theirs, tuple)


def test_generated_runs_take_the_kernel_and_fail_as_python_does_on_overflow() -> None:
    # Across the seeds, both outcomes occur: fused runs and the overflow error.
    generated = [_runs(seed) for seed in range(8)]
    # The generated runs lack some of each other's queries on purpose.
    outcomes = [
        outcome(lambda r=runs: fuse(r, method="sum", norm=None, missing_queries="zero"))
        for runs in generated
    ]
    assert any(isinstance(o, list) for o in outcomes)
    assert any(isinstance(o, tuple) and "fused scores must be finite" in o[1] for o in outcomes)


class Score(float):
    pass


class Doc(str):
    pass


def _declined_inputs() -> list[tuple[str, list[Any], dict[str, Any]]]:
    good = {"q1": {"d1": 1.0, "d2": 0.5}}
    return [
        ("NaN", [good, {"q1": {"d1": float("nan")}}], {}),
        ("inf", [good, {"q2": {"d1": float("-inf")}}], {"method": "sum"}),
        ("bool", [good, {"q1": {"d1": True}}], {"method": "sum"}),
        ("str score", [good, {"q1": {"d1": "1.0"}}], {}),
        ("float subclass", [good, {"q1": {"d1": Score(2.0)}}], {"method": "wsum"}),
        ("str subclass doc", [good, {"q1": {Doc("d3"): 2.0}}], {"method": "sum"}),
        ("int doc", [good, {"q1": {3: 2.0}}], {"method": "sum", "norm": None}),
        ("int query", [good, {1: {"d1": 2.0}}], {}),
        ("huge int", [good, {"q1": {"d1": 2**53 + 1}}], {"method": "sum"}),
        ("huger int", [good, {"q1": {"d1": 10**400}}], {"method": "sum"}),
        ("int summed", [{"q1": {"d1": 3}}, {"q1": {"d1": 4}}], {"method": "sum", "norm": None}),
        ("ranked list", [good, {"q1": ["d2", "d1"]}], {}),
        ("ranked list, scores", [good, {"q1": ["d2", "d1"]}], {"method": "sum"}),
        ("OrderedDict run", [good, OrderedDict(good)], {}),
        ("OrderedDict query", [good, {"q1": OrderedDict({"d1": 1.0})}], {"method": "sum"}),
        ("tuple of runs", (good, {"q1": {"d9": 1.0}}), {}),
        ("one run", [good], {}),
        ("a run as a list", [good, [("q1", "d1", 1.0)]], {}),
        ("runs as a dict", {"a": good, "b": good}, {}),  # type: ignore[list-item]
        ("k = -1", [good, {"q1": {"d3": 1.0}}], {"params": {"k": -1}}),
        ("k a str", [good, good], {"params": {"k": "60"}}),
        ("k a bool", [good, good], {"params": {"k": True}}),
        ("unknown param", [good, good], {"params": {"kk": 1}}),
        ("weights, NaN", [good, {"q1": {"d1": float("nan")}}], {"method": "wsum", "weights": [1]}),
        ("weight count", [good, good], {"method": "wsum", "weights": [1.0]}),
        ("qrels", [good, good], {"qrels": {"q1": {"d1": 1}}}),
        ("overflow", [{"q": {"a": 1e308}}, {"q": {"a": 1e308}}], {"method": "sum", "norm": None}),
        ("weighted overflow", [good, good], {"method": "wsum", "weights": [1e308, 1e308]}),
        ("min-max overflow", [{"q": {"a": 1.7e308, "b": -1.7e308}}, good], {"method": "sum"}),
    ]


def test_input_the_kernel_does_not_take_gives_the_pure_python_outcome() -> None:
    cases = _declined_inputs()
    calls = [lambda runs=runs, kw=kw: fuse(runs, **kw) for _, runs, kw in cases]
    with_kernel, plain, _ = both(calls)
    for (name, _, _), mine, theirs in zip(cases, with_kernel, plain, strict=True):
        assert mine == theirs, name


@pytest.mark.parametrize(
    "name", ["NaN", "bool", "float subclass", "str subclass doc", "int query", "huge int"]
)
def test_the_kernel_itself_declines_input_it_does_not_take(name: str) -> None:
    runs = next(runs for case, runs, _ in _declined_inputs() if case == name)
    assert _fusion.fuse(runs, "min-max", None, None, False) is None
    assert _fusion.fuse(runs, None, (1.0, 1.0), None, False) is None


def test_the_kernel_declines_arguments_it_does_not_know() -> None:
    runs = [{"q": {"a": 1.0}}, {"q": {"b": 2.0}}]
    assert _fusion.fuse(runs, "zmuv", None, None, False) is None
    assert _fusion.fuse(runs, None, (1.0,), None, False) is None  # one weight for two runs
    assert _fusion.fuse(runs, None, (1.0, 1), None, False) is None  # an int weight
    assert _fusion.fuse(runs, None, None, (1.0, "x"), False) is None
    assert _fusion.fuse([*runs, {"q": {"a": 1.0, "c": 0.5}}], None, None, (1.0,), False) is None
    assert _fusion.fuse(iter(runs), None, None, None, False) == {"q": {"b": 2.0, "a": 1.0}}


def test_ties_are_ordered_by_doc_id_descending_in_the_input_and_the_result() -> None:
    # Tied input scores: the rank (and so rrf) follows doc id descending, by code point.
    runs = [{"q": {"a": 1.0, "é": 1.0, "b": -0.0, "\U0001f600": 1.0, "c": 0.0}}, {}]
    table = tuple(float(i) for i in range(8, 0, -1))
    fused = _fusion.fuse(runs, None, None, table, False)
    assert fused == {"q": {"\U0001f600": 8.0, "é": 7.0, "a": 6.0, "c": 5.0, "b": 4.0}}
    assert list(fused["q"]) == ["\U0001f600", "é", "a", "c", "b"]


def test_signed_zeros_keep_their_sign() -> None:
    # The first run's -0.0 stays; a doc first met later starts from 0.0 (0.0 + -0.0 is 0.0).
    runs = [{"q": {"a": -0.0, "b": -1.0}}, {"q": {"c": -0.0}}, {"q": {"b": 0.0}}]
    fused = _fusion.fuse(runs, None, (1.0, 1.0, 1.0), None, False)
    assert [(doc, str(score)) for doc, score in fused["q"].items()] == [
        ("c", "0.0"), ("a", "-0.0"), ("b", "-1.0")
    ]  # fmt: skip


def test_queries_come_in_order_of_first_appearance_and_missing_ones_are_empty() -> None:
    runs = [{"q2": {"a": 1.0}, "q0": {}}, {"q1": {"a": 2.0}, "q2": {"b": 1.0}}, {"q3": {}}]
    fused = fuse(runs, method="rrf", missing_queries="zero")
    assert list(fused) == ["q2", "q0", "q1", "q3"]
    assert fused["q0"] == {} and fused["q3"] == {}
    assert fused["q1"] == {"a": 1 / 61}


def test_fuse_uses_the_kernel_when_the_plugin_is_installed() -> None:
    assert "ef_evaluation_fusion_kernel" in (speedups_hooks() or ())
    # Seed 8 does not overflow; its int scores made floats, every case is the kernel's.
    runs = [
        {q: {d: float(s) for d, s in docs.items()} for q, docs in run.items()} for run in _runs(8)
    ]
    for method, norm, weights, params in CASES:
        with counted() as seen:
            fuse(
                runs,
                method=method,
                norm=norm,
                weights=_weights(weights, len(runs)),
                params=params,
                missing_queries="zero",  # the generated runs lack some queries on purpose
            )
        assert seen == [True], (method, norm)
    # Methods and normalisations it does not cover never reach it.
    small = [{"q": {"a": 1.0, "b": 0.5}}, {"q": {"b": 2.0}}]
    for method, norm in [("condorcet", "default"), ("mnz", "zmuv"), ("rrf", "min-max-inverted")]:
        with counted() as seen:
            fuse(small, method=method, norm=norm)
        assert seen == [], (method, norm)


def test_fuse_asks_the_hook_for_its_kernel() -> None:
    # A kernel in plain Python, registered after the C one: its answer is fuse()'s, so the hook
    # is wired; for a method the hook does not cover, it is never asked.
    from ef.evaluation import hookimpl

    given: list[tuple[Any, ...]] = []

    class Plugin:
        @staticmethod
        @hookimpl
        def ef_evaluation_fusion_kernel() -> object:
            def kernel(runs: Any, **arguments: Any) -> Any:
                given.append((runs, arguments))
                return {"q": {"from the kernel": 1.0}}

            return kernel

    runs = [{"q": {"a": 1.0}}, {"q": {"b": 2.0}}]
    with registered_plugin(Plugin()):
        assert fuse(runs, method="wsum", norm="max", weights=[1, 2]) == {
            "q": {"from the kernel": 1.0}
        }
        assert fuse(runs, method="mnz") == {"q": {"b": 0.0, "a": 0.0}}
    assert given == [
        (runs, {"norm": "max", "weights": (1.0, 2.0), "rank_scores": None, "in_rank_order": False})
    ]


def test_a_plugin_method_of_a_built_in_name_never_takes_the_kernel() -> None:
    from ef.evaluation import hookimpl

    sum_ = registry().fusion_methods["sum"].fn

    class Plugin:
        @staticmethod
        @hookimpl
        def ef_evaluation_register_fusion_methods(register: Any) -> None:
            # The built-in sum's function, wrapped: the same numbers, but not the same function.
            register("plugin_sum", lambda rankings: sum_(rankings), rank_based=False)

    runs = [{"q": {"a": 1.0}}, {"q": {"b": 2.0}}]
    with registered_plugin(Plugin()), counted() as seen:
        assert fuse(runs, method="plugin_sum") == {"q": {"b": 0.0, "a": 0.0}}
    assert seen == []


def test_optimize_fusion_fuses_with_the_kernel_to_the_same_result() -> None:
    runs = [
        {q: d for q, d in run.items() if all(type(s) is float for s in d.values())}
        for run in _runs(5)
    ]
    qrels = {q: {doc: 1 for doc in list(d)[:3]} for q, d in runs[0].items() if d}

    def search(method: str) -> Any:
        result = optimize_fusion(runs, qrels, method=method, metric="ndcg@10")
        return outcome(lambda: {"best": result.best_params}), result.best_score, result.tries

    with counted() as seen:
        mine = [search("wsum"), search("rrf")]
    assert seen and all(seen)
    with pure_python():
        theirs = [search("wsum"), search("rrf")]
    assert mine == theirs


def root_tests_on_path() -> None:
    """ef-evaluation's ``tests/`` on the path, for its ``oracles`` package: ranx's outputs
    recorded in ``tests/oracles/*.json.gz`` and the inputs they were recorded for (its README
    there), so ranx is never imported. The repository's test run has ``tests/`` on its path;
    a run of this plugin's tests on their own does not."""
    root_tests = str(Path(__file__).resolve().parents[3] / "tests")
    if root_tests not in sys.path:
        sys.path.append(root_tests)


def test_ranx_gives_the_same_numbers_through_the_kernel() -> None:
    root_tests_on_path()
    from oracles.inputs import KERNEL_METHODS, KERNEL_SEED, kernel_inputs, kernel_runs
    from oracles.recorded import recorded

    runs = kernel_runs(KERNEL_SEED, 6, (1, 5, 20))  # distinct scores: no ties
    fused_by_ranx = recorded("ranx_fusion_kernel", kernel_inputs(KERNEL_SEED, runs, KERNEL_METHODS))
    for method, _, params in KERNEL_METHODS:
        with counted() as seen:
            ours = fuse(runs, method=method, weights=params.get("weights"))
        assert seen == [True]
        theirs = fused_by_ranx[method]
        assert set(ours) == set(theirs)
        for query, scores in ours.items():
            other = theirs[query]
            assert set(scores) == set(other)
            assert all(abs(scores[d] - other[d]) <= 1e-9 for d in scores)
