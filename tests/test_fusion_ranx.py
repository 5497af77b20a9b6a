"""fuse() and optimize_fusion() against ranx on generated runs: the same numbers to 1e-9.

Every fusion method under every normalisation, every normalisation on its own, and the grid
search, on seeded runs of different depths (empty queries included), with docs disjoint across
the runs for some queries and overlapping for the others, and queries missing from some runs
(given to ranx as empty: ranx refuses runs whose queries differ). Scores are distinct within a
query: ties are ordered differently on purpose (trec_eval's order here) and each such case is an
explicit expected difference below, as in ``docs/fusion.md``.

ranx compiles each of its numba kernels on its first call in a fresh environment, so every ranx
call happens once, in one module-scoped fixture, on small inputs; the tests compare. The
compiled kernels are kept in the user's cache (``tests/ranx_cache.py``), shared with
``tests/test_compare_ranx.py`` and across virtual environments.
"""

from __future__ import annotations

import importlib
import math
import random
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ef.evaluation import fuse, optimize_fusion, registry
from ef.evaluation._fusion._inputs import prepare_runs
from ef.evaluation._fusion.methods import condorcet_order
from ranx_cache import cached_outputs, kernel_cache_root, share_ranx_kernel_cache

# Before anything imports ranx: numba places a kernel's cache when ranx decorates it, and the
# fusion kernels take minutes to compile in a fresh environment (tests/ranx_cache.py).
share_ranx_kernel_cache()

pytestmark = pytest.mark.timeout(600)

NORMS = ("none", "min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda")
PARAMS: dict[str, dict[str, Any]] = {
    "rrf": {"k": 60},
    "logn_isr": {"sigma": 0.01},
    "rbc": {"phi": 0.8},
    "gmnz": {"gamma": 0.5},
    "slidefuse": {"w": 2},
    "probfuse": {"n_segments": 3},
}
SUPERVISED_TRAINED = {
    "probfuse": "probs",
    "segfuse": "probs",
    "slidefuse": "probs",
    "posfuse": "probs",
    "bayesfuse": "log_odds",
    "mapfuse": "map_scores",
}
# Methods that read ranks: under the borda normalisation a run's unranked candidates tie, and
# ranx ranks them in set order (an expected difference, tested below).
POSITIONAL = {
    "rrf",
    "isr",
    "log_isr",
    "logn_isr",
    "rbc",
    "bordafuse",
    "w_bordafuse",
    "condorcet",
    "w_condorcet",
    *SUPERVISED_TRAINED,
}
CONDORCETS = {"condorcet", "w_condorcet"}
WEIGHTS3 = [0.5, 0.3, 0.2]
OPTIMIZED = ("wsum", "rrf", "rbc", "gmnz", "logn_isr", "probfuse", "slidefuse", "wmnz")


def generated(seed: int) -> tuple[list[dict[str, dict[str, float]]], dict[str, dict[str, int]]]:
    """Three runs and judgements: depths 0-30, disjoint docs for even queries, shared for odd
    ones, some queries missing from some runs, distinct scores (some negative) per query."""
    rng = random.Random(seed)
    runs: list[dict[str, dict[str, float]]] = [{}, {}, {}]
    qrels: dict[str, dict[str, int]] = {}
    for q in range(8):
        query_id = f"q{q}"
        shared = [f"doc{i:02d}" for i in range(40)]
        for r, run in enumerate(runs):
            if rng.random() < 0.15:
                continue  # missing from this run
            pool = shared if q % 2 else [f"r{r}d{i:02d}" for i in range(40)]
            depth = rng.choice((0, 1, 2, 5, 9, 14, 22, 30))
            docs = rng.sample(pool, depth)
            scores = rng.sample(range(-300, 1000), depth)
            run[query_id] = {doc: score / 37 for doc, score in zip(docs, scores, strict=True)}
        retrieved = sorted({doc for run in runs for doc in run.get(query_id, {})})
        judged = rng.sample(retrieved, min(len(retrieved), 6)) or [f"unre{q}"]
        qrels[query_id] = {doc: rng.choice((0, 1, 2)) for doc in judged}
        qrels[query_id][judged[0]] = 1 + (q % 2)  # every query has a positive judgement
    return runs, qrels


def for_ranx(runs: list[dict[str, dict[str, float]]]) -> list[dict[str, dict[str, float]]]:
    """The same runs with every query in every run (empty where missing)."""
    queries = sorted({query for run in runs for query in run})
    return [{query: dict(run.get(query, {})) for query in queries} for run in runs]


def method_params(method: str) -> dict[str, Any]:
    return dict(PARAMS.get(method, {}))


SEEDS = (11, 12)


def cases() -> Iterator[tuple[int, str, str]]:
    for seed in SEEDS:
        for method in sorted(set(registry().fusion_methods) - CONDORCETS):
            for norm in NORMS:
                if norm == "borda" and method in POSITIONAL:
                    continue
                yield seed, method, norm


@pytest.fixture(scope="module")
def ranx_outputs() -> dict[str, Any]:
    """Every ranx call of this module, made once and kept in the user's cache under a key of
    this module's source, its inputs and ranx's version (``tests/ranx_cache.py``)."""
    inputs = ([generated(seed) for seed in SEEDS], optimization_input())
    return cached_outputs(__file__, inputs, ranx_calls)


def ranx_calls() -> dict[str, Any]:
    """Every ranx call of this module: fused runs, normalised runs, grid searches."""
    from numba.core.errors import NumbaTypeSafetyWarning
    from ranx import Qrels, Run
    from ranx import fuse as ranx_fuse
    from ranx import optimize_fusion as ranx_optimize
    from ranx.fusion import (
        bayesfuse_train,
        mapfuse_train,
        posfuse_train,
        probfuse_train,
        segfuse_train,
        slidefuse_train,
    )
    from ranx.normalization import norm_switch

    trainers = {
        "probfuse": lambda q, r: probfuse_train(q, r, PARAMS["probfuse"]["n_segments"]),
        "segfuse": segfuse_train,
        "slidefuse": slidefuse_train,
        "posfuse": posfuse_train,
        "bayesfuse": bayesfuse_train,
        "mapfuse": mapfuse_train,
    }
    out: dict[str, Any] = {"fused": {}, "norms": {}, "optimized": {}}
    with warnings.catch_warnings():
        # numba warns about casts inside ranx's kernels while it compiles them: not our code.
        warnings.simplefilter("ignore", NumbaTypeSafetyWarning)
        for seed in SEEDS:
            runs, qrels = generated(seed)
            ranx_qrels = Qrels(qrels)
            raw = [Run(run) for run in for_ranx(runs)]
            for norm in NORMS:
                normalized = ranx_normalized(raw, norm, norm_switch, Run)
                out["norms"][seed, norm] = [dict(run.to_dict()) for run in normalized]
                for seed_, method, norm_ in cases():
                    if (seed_, norm_) != (seed, norm):
                        continue
                    params = method_params(method)
                    if method in SUPERVISED_TRAINED:
                        params.pop("n_segments", None)
                        trained = trainers[method](ranx_qrels, normalized)
                        params[SUPERVISED_TRAINED[method]] = trained
                    if method.startswith("w") or method == "mixed":
                        params["weights"] = WEIGHTS3
                    fused = ranx_fuse(normalized, norm=None, method=method, params=params)
                    out["fused"][seed, method, norm] = dict(fused.to_dict())
        runs, qrels = optimization_input()
        for method in OPTIMIZED:
            ranx_runs = [Run(run) for run in for_ranx(runs)]
            norm = "min-max" if method in {"wsum", "gmnz", "wmnz"} else None
            best, report = ranx_optimize(
                Qrels(qrels),
                ranx_runs,
                norm=norm,
                method=method,
                metric="ndcg@5",
                return_optimization_report=True,
                show_progress=False,
            )
            configs = dict(zip(report.configs, report.results, strict=True))
            out["optimized"][method] = (best, configs, norm)
    return out


def ranx_normalized(raw: list[Any], norm: str, norm_switch: Any, run_type: Any) -> list[Any]:
    """ranx's normalisation of each run, query by query: ranx normalises a whole run in parallel
    chunks, and ``zmuv`` there drops the queries after an empty one in the same chunk (an
    expected difference, below), so each query goes through on its own."""
    if norm == "none":
        return raw
    if norm == "borda":
        return list(norm_switch("borda")(raw))
    normalized = []
    for run in raw:
        queries: dict[str, dict[str, float]] = {}
        for query, results in run.to_dict().items():
            queries[query] = {}
            if results:
                one = norm_switch(norm)(run_type({query: dict(results)}))
                queries[query] = dict(one.to_dict()[query])
        normalized.append(run_type(queries))
    return normalized


def optimization_input() -> tuple[list[dict[str, dict[str, float]]], dict[str, dict[str, int]]]:
    """Two runs over the same 16 docs per query in orders with no two docs at the same pair of
    ranks, so no fused score ties (ties are ordered differently, on purpose)."""
    rng = random.Random(7)
    runs: list[dict[str, dict[str, float]]] = [{}, {}]
    qrels: dict[str, dict[str, int]] = {}
    for q in range(12):
        docs = [f"doc{i:02d}" for i in range(16)]
        while True:
            order = rng.sample(range(16), 16)
            if all(order[order[i]] != i or order[i] == i for i in range(16)):
                break
        runs[0][f"q{q}"] = {doc: (16 - i) + rng.random() / 2 for i, doc in enumerate(docs)}
        runs[1][f"q{q}"] = {docs[j]: (16 - i) * 0.37 for i, j in enumerate(order)}
        relevant = rng.sample(docs, 3)
        qrels[f"q{q}"] = {doc: rng.choice((1, 2)) for doc in relevant}
    return runs, qrels


def assert_same(ours: dict[str, dict[str, float]], theirs: dict[str, dict[str, float]]) -> None:
    """Per query and doc, the same scores to 1e-9 (relative for large ones)."""
    for query, scores in theirs.items():
        mine = ours.get(query, {})
        assert set(mine) == set(scores), query
        for doc, score in scores.items():
            assert math.isclose(mine[doc], score, rel_tol=1e-9, abs_tol=1e-9), (query, doc)
    assert not set(ours) - set(theirs)


@pytest.mark.parametrize(("seed", "method", "norm"), list(cases()))
def test_fused_scores_equal_ranx(ranx_outputs, seed, method, norm):
    runs, qrels = generated(seed)
    params = method_params(method)
    weights = WEIGHTS3 if registry().fusion_methods[method].weighted else None
    supervised = method in SUPERVISED_TRAINED
    ours = fuse(
        runs,
        method=method,
        norm=norm,
        weights=weights,
        params=params,
        qrels=qrels if supervised else None,
        missing_queries="zero",  # some queries are missing from some runs on purpose
    )
    assert_same(ours, ranx_outputs["fused"][seed, method, norm])


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("seed", SEEDS)
def test_normalised_scores_equal_ranx(ranx_outputs, seed, norm):
    runs, _ = generated(seed)
    prepared = prepare_runs(for_ranx(runs))
    fn = registry().normalizations[norm].fn
    normalized = {query: fn(rankings) for query, rankings in prepared.by_query.items()}
    for index, theirs in enumerate(ranx_outputs["norms"][seed, norm]):
        assert_same({q: runs_[index] for q, runs_ in normalized.items()}, theirs)


@pytest.mark.parametrize("norm", [n for n in NORMS if n != "borda"])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_condorcet_sorts_ranx_candidates_like_ranx(ranx_outputs, seed, norm, weighted):
    """Given ranx's candidate order (a set's), ef's Condorcet sort is ranx's, query by query;
    ef itself passes the order of first appearance (see the expected difference below)."""
    from ranx import Run
    from ranx import fuse as ranx_fuse

    runs, _ = generated(seed)
    prepared = prepare_runs(for_ranx(runs))
    norm_fn = registry().normalizations[norm].fn
    weights = WEIGHTS3 if weighted else None
    from ranx.fusion.condorcet import get_candidates
    from ranx.normalization import norm_switch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        normalized = ranx_normalized([Run(run) for run in for_ranx(runs)], norm, norm_switch, Run)
        # ranx's candidates come in a set's order, which differs between processes: they are
        # taken here, beside the fusion they are compared with, never from the cache.
        candidates = [list(query) for query in get_candidates([run.run for run in normalized])]
        theirs = ranx_fuse(
            normalized,
            norm=None,
            method="w_condorcet" if weighted else "condorcet",
            params={"weights": WEIGHTS3} if weighted else {},
        ).to_dict()
    for (query, rankings), pool in zip(sorted(prepared.by_query.items()), candidates, strict=True):
        normalized = [
            dict(sorted(r.items(), key=lambda item: (item[1], item[0]), reverse=True))
            for r in norm_fn(rankings)
        ]
        order = condorcet_order(normalized, pool, weights)
        assert {doc: float(len(order) - i) for i, doc in enumerate(order)} == theirs[query]


@pytest.mark.parametrize("method", OPTIMIZED)
def test_optimize_fusion_picks_ranx_configuration(ranx_outputs, method):
    """ranx's default grid, in ranx's order; on it, the same score for every configuration whose
    fused run has no tied scores (ties are ordered differently on purpose), and the same pick,
    save that ties go to the first best here and to the last in ranx. ProbFuse's and
    SlideFuse's fused runs are full of ties (equal probabilities), so there only the grid and
    the tie-free scores are compared."""
    best, report, norm = ranx_outputs["optimized"][method]
    runs, qrels = optimization_input()
    grid_name = {"probfuse": "n_segments", "slidefuse": "w"}.get(method) or next(iter(best))
    values = [_config(text) for text in report]
    if method == "rbc":  # ranx's grid ends at phi = 1.0 (every score 0), outside phi's domain
        assert values[-1] == 1.0
        values, report = values[:-1], dict(list(report.items())[:-1])
    norm = norm or "none"
    result = optimize_fusion(runs, qrels, method=method, metric="ndcg@5", norm=norm)
    assert [config for config, _ in result.tries] == [{grid_name: value} for value in values]
    tie_free = [_tie_free(runs, qrels, method, norm, {grid_name: value}) for value in values]
    if method not in {"probfuse", "slidefuse"}:
        assert sum(tie_free) >= len(values) // 2
    ours = [score for _, score in result.tries]
    theirs = list(report.values())
    for value, free, mine, score in zip(values, tie_free, ours, theirs, strict=True):
        if free:
            assert math.isclose(mine, score, rel_tol=1e-9, abs_tol=1e-12), value
    top = max(theirs)
    tops = [i for i, score in enumerate(theirs) if score == top]
    if all(tie_free[i] for i in tops):
        assert result.best_params[grid_name] == _plain(values[tops[0]])
        # ranx returns probfuse's trained probs, not n_segments; for rbc its pick may be the
        # phi = 1.0 ef refuses (all scores 0, so every doc ties and its last best wins).
        if method != "probfuse" and not (method == "rbc" and _plain(best[grid_name]) == 1.0):
            assert _plain(best[grid_name]) == _plain(values[tops[-1]])


def _tie_free(runs, qrels, method, norm, config) -> bool:
    params = dict(config)
    weights = params.pop("weights", None)
    fused = fuse(
        runs,
        method=method,
        norm=norm,
        weights=weights,
        params=params,
        qrels=qrels if method in SUPERVISED_TRAINED else None,
        missing_queries="zero",
    )
    return all(len(set(scores.values())) == len(scores) for scores in fused.values())


def _plain(value: Any) -> Any:
    return [float(v) for v in value] if isinstance(value, list | tuple) else value


def _config(text: str) -> Any:
    import numpy

    value = eval(text, {"np": numpy})  # ranx's report keys: str(weights) or str(number)
    return tuple(float(v) for v in value) if isinstance(value, list | tuple) else value


# Expected differences (docs/fusion.md lists each with both outputs) -----------------------


def test_ties_within_a_run_are_ranked_by_doc_id_descending_not_ranx_order():
    from ranx import Run
    from ranx import fuse as ranx_fuse

    runs = [{"q1": {"doc-a": 1.0, "doc-b": 1.0, "doc-c": 0.5}}, {"q1": {"doc-c": 2.0}}]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ranx_fuse([Run(r) for r in runs], norm=None, method="rrf").to_dict()
    # ranx: doc-a above doc-b (ids ascending, then a sort that is stable on short lists only)
    assert theirs["q1"] == {"doc-c": 1 / 63 + 1 / 61, "doc-a": 1 / 61, "doc-b": 1 / 62}
    ours = fuse(runs, method="rrf")
    # trec_eval's order: doc-b above doc-a
    assert ours["q1"] == {"doc-c": 1 / 63 + 1 / 61, "doc-b": 1 / 61, "doc-a": 1 / 62}


def test_condorcet_ties_follow_first_appearance_not_a_set_order():
    runs = [{"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 2.0, "a": 1.0}}]  # one vote each
    rankings = prepare_runs(runs).by_query["q"]
    # ranx's algorithm gives either answer, depending on its candidate set's order:
    assert condorcet_order(rankings, ["a", "b"]) == ["b", "a"]
    assert condorcet_order(rankings, ["b", "a"]) == ["a", "b"]
    # ef passes the order of first appearance, ["a", "b"]: the same answer every time.
    assert fuse(runs, method="condorcet") == {"q": {"b": 2.0, "a": 1.0}}


def test_borda_norm_ranks_a_runs_unranked_candidates_by_doc_id():
    runs = [{"q": {"a": 3.0}}, {"q": {"c": 3.0, "b": 2.0}}]
    ours = fuse(runs, method="rrf", norm="borda")
    # Run 1's unranked b and c tie; trec_eval's order puts c (doc id descending) first.
    assert ours["q"] == {"a": 1 / 61 + 1 / 63, "c": 1 / 62 + 1 / 61, "b": 1 / 63 + 1 / 62}


def test_min_and_max_use_only_the_runs_that_retrieved_the_doc():
    from ranx import Run
    from ranx import fuse as ranx_fuse

    runs = [{"q": {"doc-a": 5e9}}, {"q": {"doc-b": 1.0}}]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ranx_fuse([Run(r) for r in runs], norm=None, method="min").to_dict()
    assert theirs["q"]["doc-a"] == 1e9  # ranx's stand-in for "missing" wins
    assert fuse(runs, method="min", norm="none")["q"]["doc-a"] == 5e9


def test_training_ignores_queries_without_a_positive_judgement():
    from ranx import Qrels, Run
    from ranx.fusion import posfuse_train

    runs = [{"q1": {"doc-a": 1.0}, "q2": {"doc-x": 1.0}}] * 2
    qrels = {"q1": {"doc-a": 1}, "q2": {"doc-b": 0}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = posfuse_train(Qrels(qrels), [Run(r) for r in runs])
    assert [list(p) for p in theirs] == [[0.5], [0.5]]  # q2 counted as a query with no hit
    result = optimize_fusion(runs, qrels, method="posfuse", metric="ndcg@1")
    assert result.best_params["probs"] == [[1.0], [1.0]]


def test_zmuv_keeps_every_query_of_a_run_with_an_empty_one():
    import numba
    from ranx import Run
    from ranx.normalization import norm_switch

    run = {"q0": {}} | {f"q{i}": {"doc-a": float(i), "doc-b": 0.0} for i in range(1, 8)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = norm_switch("zmuv")(Run(run)).to_dict()
    if numba.get_num_threads() < 8:  # the empty query shares a parallel chunk with q1
        assert theirs["q1"] == {}  # dropped, silently
    ours = registry().normalizations["zmuv"].fn(prepare_runs([run]).by_query["q1"])
    assert ours == [{"doc-a": 1.0, "doc-b": -1.0}]


def test_bayesfuse_past_rank_1000_adds_the_odds_of_a_missing_doc():
    # ranx reads past the end of its 1,000-entry table there (undefined values).
    ranking = {f"d{i:04d}": 2000.0 - i for i in range(1001)}
    runs = [{"q": ranking}, {"q": {"d1000": 1.0}}]
    log_odds = [[0.0] * 1000, [1.0] * 1000]
    fused = fuse(runs, method="bayesfuse", params={"log_odds": log_odds})
    assert fused["q"]["d1000"] == pytest.approx(math.log(0.001 / 0.999) + 1.0)


def test_ranx_fusion_kernels_are_cached_by_module_in_the_user_cache():
    from numba.core.errors import NumbaTypeSafetyWarning
    from ranx import Run
    from ranx import fuse as ranx_fuse

    # One small call compiles the kernel or loads it (ranx_outputs may have come from its cache).
    with warnings.catch_warnings():
        # numba warns about casts inside ranx's kernels while it compiles them: not our code.
        warnings.simplefilter("ignore", NumbaTypeSafetyWarning)
        ranx_fuse([Run({"q": {"a": 1.0, "b": 0.5}}), Run({"q": {"b": 2.0}})], method="rrf")
    rrf = importlib.import_module("ranx.fusion.rrf")
    cache = Path(rrf._rrf_score._cache._cache_path)
    assert cache == kernel_cache_root() / "ranx.fusion.rrf"
    assert list(cache.glob("rrf._rrf_score-*.nbi")), "the kernel was not saved there"
