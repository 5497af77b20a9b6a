"""fuse() and optimize_fusion() against ranx on generated runs: the same numbers to 1e-9.

Every fusion method under every normalisation, every normalisation on its own, and the grid
search, on seeded runs of different depths (empty queries included), with docs disjoint across
the runs for some queries and overlapping for the others, and queries missing from some runs
(given to ranx as empty: ranx refuses runs whose queries differ). Scores are distinct within a
query: ties are ordered differently on purpose (trec_eval's order here) and each such case is an
explicit expected difference below, as in ``docs/fusion.md``.

ranx's outputs are recorded in ``tests/oracles/ranx_fusion.json.gz`` for the seeded inputs of
``tests/oracles/inputs.py`` (``tests/oracles/README.md``): these tests never import ranx.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pytest

from ef.evaluation import fuse, optimize_fusion, registry
from ef.evaluation._fusion._inputs import prepare_runs
from ef.evaluation._fusion.methods import condorcet_order
from oracles.inputs import (
    DIFFERENCES,
    NORMS,
    OPTIMIZATION_METRIC,
    OPTIMIZED,
    SEEDS,
    SUPERVISED_TRAINED,
    WEIGHTS3,
    Qrels,
    Run,
    cases,
    for_ranx,
    fusion_inputs,
    generated,
    method_params,
    optimization_input,
)
from oracles.recorded import recorded


@pytest.fixture(scope="module")
def ranx_outputs() -> dict[str, Any]:
    """Every ranx output these tests compare with: fused runs, normalised runs, Condorcet's
    candidates and fusions, grid searches, the expected differences."""
    outputs: dict[str, Any] = recorded("ranx_fusion", fusion_inputs())
    return outputs


def assert_same(
    ours: Mapping[str, Mapping[str, float]], theirs: dict[str, dict[str, float]]
) -> None:
    """Per query and doc, the same scores to 1e-9 (relative for large ones)."""
    for query, scores in theirs.items():
        mine = ours.get(query, {})
        assert set(mine) == set(scores), query
        for doc, score in scores.items():
            assert math.isclose(mine[doc], score, rel_tol=1e-9, abs_tol=1e-9), (query, doc)
    assert not set(ours) - set(theirs)


@pytest.mark.parametrize(("seed", "method", "norm"), list(cases()))
def test_fused_scores_equal_ranx(
    ranx_outputs: dict[str, Any], seed: int, method: str, norm: str
) -> None:
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
    assert_same(ours, ranx_outputs["fused"][str(seed)][method][norm])


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("seed", SEEDS)
def test_normalised_scores_equal_ranx(ranx_outputs: dict[str, Any], seed: int, norm: str) -> None:
    runs, _ = generated(seed)
    prepared = prepare_runs(for_ranx(runs))
    fn = registry().normalizations[norm].fn
    normalized = {query: fn(rankings) for query, rankings in prepared.by_query.items()}
    for index, theirs in enumerate(ranx_outputs["norms"][str(seed)][norm]):
        assert_same({q: runs_[index] for q, runs_ in normalized.items()}, theirs)


@pytest.mark.parametrize("norm", [n for n in NORMS if n != "borda"])
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_condorcet_sorts_ranx_candidates_like_ranx(
    ranx_outputs: dict[str, Any], seed: int, norm: str, weighted: bool
) -> None:
    """Given ranx's candidate order (a set's), ef's Condorcet sort is ranx's, query by query;
    ef itself passes the order of first appearance (see the expected difference below)."""
    runs, _ = generated(seed)
    prepared = prepare_runs(for_ranx(runs))
    norm_fn = registry().normalizations[norm].fn
    weights = WEIGHTS3 if weighted else None
    # ranx's candidates come in a set's order: they were recorded beside the fusion they are
    # compared with, in the same process.
    record = ranx_outputs["condorcet"]["weighted" if weighted else "unweighted"][str(seed)][norm]
    candidates, theirs = record["candidates"], record["fused"]
    for (query, rankings), pool in zip(sorted(prepared.by_query.items()), candidates, strict=True):
        normalized = [
            dict(sorted(r.items(), key=lambda item: (item[1], item[0]), reverse=True))
            for r in norm_fn(rankings)
        ]
        order = condorcet_order(normalized, pool, weights)
        assert {doc: float(len(order) - i) for i, doc in enumerate(order)} == theirs[query]


@pytest.mark.parametrize("method", list(OPTIMIZED))
def test_optimize_fusion_picks_ranx_configuration(
    ranx_outputs: dict[str, Any], method: str
) -> None:
    """ranx's default grid, in ranx's order; on it, the same score for every configuration whose
    fused run has no tied scores (ties are ordered differently on purpose), and the same pick,
    save that ties go to the first best here and to the last in ranx. ProbFuse's and
    SlideFuse's fused runs are full of ties (equal probabilities), so there only the grid and
    the tie-free scores are compared."""
    best = ranx_outputs["optimized"][method]["best"]
    report = dict(ranx_outputs["optimized"][method]["configs"])
    runs, qrels = optimization_input()
    grid_name = {"probfuse": "n_segments", "slidefuse": "w"}.get(method) or next(iter(best))
    values = [_config(text) for text in report]
    if method == "rbc":  # ranx's grid ends at phi = 1.0 (every score 0), outside phi's domain
        assert values[-1] == 1.0
        values, report = values[:-1], dict(list(report.items())[:-1])
    norm = OPTIMIZED[method] or "none"
    result = optimize_fusion(runs, qrels, method=method, metric=OPTIMIZATION_METRIC, norm=norm)
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


def _tie_free(
    runs: list[Run], qrels: Qrels, method: str, norm: str, config: dict[str, Any]
) -> bool:
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


def test_ties_within_a_run_are_ranked_by_doc_id_descending_not_ranx_order(
    ranx_outputs: dict[str, Any],
) -> None:
    runs = DIFFERENCES["tied_rrf"]
    theirs = ranx_outputs["differences"]["tied_rrf"]
    # ranx: doc-a above doc-b (ids ascending, then a sort that is stable on short lists only)
    assert theirs["q1"] == {"doc-c": 1 / 63 + 1 / 61, "doc-a": 1 / 61, "doc-b": 1 / 62}
    ours = fuse(runs, method="rrf")
    # trec_eval's order: doc-b above doc-a
    assert ours["q1"] == {"doc-c": 1 / 63 + 1 / 61, "doc-b": 1 / 61, "doc-a": 1 / 62}


def test_condorcet_ties_follow_first_appearance_not_a_set_order() -> None:
    runs = [{"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 2.0, "a": 1.0}}]  # one vote each
    rankings = prepare_runs(runs).by_query["q"]
    # ranx's algorithm gives either answer, depending on its candidate set's order:
    assert condorcet_order(rankings, ["a", "b"]) == ["b", "a"]
    assert condorcet_order(rankings, ["b", "a"]) == ["a", "b"]
    # ef passes the order of first appearance, ["a", "b"]: the same answer every time.
    assert fuse(runs, method="condorcet") == {"q": {"b": 2.0, "a": 1.0}}


def test_borda_norm_ranks_a_runs_unranked_candidates_by_doc_id() -> None:
    runs = [{"q": {"a": 3.0}}, {"q": {"c": 3.0, "b": 2.0}}]
    ours = fuse(runs, method="rrf", norm="borda")
    # Run 1's unranked b and c tie; trec_eval's order puts c (doc id descending) first.
    assert ours["q"] == {"a": 1 / 61 + 1 / 63, "c": 1 / 62 + 1 / 61, "b": 1 / 63 + 1 / 62}


def test_min_and_max_use_only_the_runs_that_retrieved_the_doc(
    ranx_outputs: dict[str, Any],
) -> None:
    runs = DIFFERENCES["missing_min"]
    theirs = ranx_outputs["differences"]["missing_min"]
    assert theirs["q"]["doc-a"] == 1e9  # ranx's stand-in for "missing" wins
    assert fuse(runs, method="min", norm="none")["q"]["doc-a"] == 5e9


def test_training_ignores_queries_without_a_positive_judgement(
    ranx_outputs: dict[str, Any],
) -> None:
    runs, qrels = DIFFERENCES["posfuse_training"]["runs"], DIFFERENCES["posfuse_training"]["qrels"]
    theirs = ranx_outputs["differences"]["posfuse_training"]  # ranx's posfuse_train
    assert [list(p) for p in theirs] == [[0.5], [0.5]]  # q2 counted as a query with no hit
    result = optimize_fusion(runs, qrels, method="posfuse", metric="ndcg@1")
    assert result.best_params["probs"] == [[1.0], [1.0]]


def test_zmuv_keeps_every_query_of_a_run_with_an_empty_one(ranx_outputs: dict[str, Any]) -> None:
    run = DIFFERENCES["zmuv_run"]
    theirs = ranx_outputs["differences"]["zmuv_run"]  # ranx's zmuv of the whole run
    if ranx_outputs["differences"]["numba_threads"] < 8:  # the empty query shares a parallel
        assert theirs["q1"] == {}  # chunk with q1: dropped, silently
    ours = registry().normalizations["zmuv"].fn(prepare_runs([run]).by_query["q1"])
    assert ours == [{"doc-a": 1.0, "doc-b": -1.0}]


def test_bayesfuse_past_rank_1000_adds_the_odds_of_a_missing_doc() -> None:
    # ranx reads past the end of its 1,000-entry table there (undefined values).
    ranking = {f"d{i:04d}": 2000.0 - i for i in range(1001)}
    runs = [{"q": ranking}, {"q": {"d1000": 1.0}}]
    log_odds = [[0.0] * 1000, [1.0] * 1000]
    fused = fuse(runs, method="bayesfuse", params={"log_odds": log_odds})
    assert fused["q"]["d1000"] == pytest.approx(math.log(0.001 / 0.999) + 1.0)
