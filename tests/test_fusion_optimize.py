"""optimize_fusion(): ranx's grids, the first best on ties, training, folds, refused input."""

from __future__ import annotations

import json
import random

import attrs
import pytest

from ef.evaluation import FusionOptimization, evaluate_run, fuse, optimize_fusion
from ef.evaluation._fusion.grids import weight_grid


def judged_runs(n_queries: int = 12, seed: int = 3):
    """Two runs over 10 docs per query, one better on even queries, the other on odd ones."""
    rng = random.Random(seed)
    runs: list[dict[str, dict[str, float]]] = [{}, {}]
    qrels: dict[str, dict[str, int]] = {}
    for q in range(n_queries):
        docs = [f"q{q}d{i}" for i in range(10)]
        relevant = docs[:2]
        qrels[f"q{q}"] = dict.fromkeys(relevant, 1)
        for r, run in enumerate(runs):
            order = docs[:]
            rng.shuffle(order)
            if (q + r) % 2 == 0:  # this run ranks the relevant docs on top
                order = relevant + [d for d in order if d not in relevant]
            run[f"q{q}"] = {doc: 10.0 - i + rng.random() / 10 for i, doc in enumerate(order)}
    return runs, qrels


def test_the_weight_grid_keeps_the_combinations_ranx_float_sums_drop():
    grid = weight_grid(3)
    assert len(grid) == 66 and (0.2, 0.7, 0.1) in grid
    assert sum((0.2, 0.7, 0.1)) != 1.0  # why ranx's `sum(seq) == 1.0` filter drops it
    assert weight_grid(2) == [(i / 10, 1 - i / 10) for i in range(11)][:1] + weight_grid(2)[1:]
    assert weight_grid(2)[-1] == (1.0, 0.0)
    with pytest.raises(ValueError, match="the weight step must divide 1"):
        weight_grid(2, step=0.3)


def test_ties_go_to_the_first_best_configuration():
    runs, qrels = judged_runs()
    same = [runs[0], runs[0]]  # every weighting ranks alike
    result = optimize_fusion(same, qrels, method="wsum", metric="ndcg@10")
    assert len(result.tries) == 11
    assert len({score for _, score in result.tries[1:-1]}) == 1
    assert result.best_params == {"weights": [0.0, 1.0]}  # ranx would keep the last, (1.0, 0.0)


def test_the_best_configuration_fuses_as_fuse_does():
    runs, qrels = judged_runs()
    result = optimize_fusion(runs, qrels, method="wsum", metric="ndcg@10")
    assert result.method == "wsum" and result.norm == "min-max" and result.metric == "ndcg@10"
    assert result.best_score == max(score for _, score in result.tries)
    fused = fuse(runs, method="wsum", weights=result.best_params["weights"])
    assert result.fuse(runs) == fused
    assert evaluate_run(fused, qrels, k_values=(10,), metrics=("ndcg",)).metrics["ndcg@10"] == (
        result.best_score
    )
    assert json.loads(json.dumps(attrs.asdict(result)))["best_score"] == result.best_score


def test_rrf_searches_k_from_10_to_100():
    runs, qrels = judged_runs()
    result = optimize_fusion(runs, qrels, method="rrf", metric="mrr@10")
    assert [config for config, _ in result.tries] == [{"k": k} for k in range(10, 101, 10)]
    assert result.norm is None


def test_a_training_only_method_returns_its_trained_parameters():
    runs, qrels = judged_runs()
    result = optimize_fusion(runs, qrels, method="bayesfuse", metric="ndcg@10")
    assert result.tries == (({}, result.best_score),)
    assert len(result.best_params["log_odds"]) == 2
    assert result.fuse(runs) == fuse(runs, method="bayesfuse", qrels=qrels)


def test_probfuse_trains_once_per_number_of_segments():
    runs, qrels = judged_runs()
    result = optimize_fusion(runs, qrels, method="probfuse", search_space={"n_segments": [1, 2, 5]})
    assert [config for config, _ in result.tries] == [{"n_segments": n} for n in (1, 2, 5)]
    chosen = result.best_params
    assert len(chosen["probs"][0]) == chosen["n_segments"]


def test_folds_score_each_fold_with_the_configuration_of_the_others():
    runs, qrels = judged_runs(n_queries=9)
    result = optimize_fusion(runs, qrels, method="rrf", metric="ndcg@10", folds=3)
    assert [fold.queries for fold in result.folds] == [
        ("q0", "q1", "q2"),
        ("q3", "q4", "q5"),
        ("q6", "q7", "q8"),
    ]
    for fold in result.folds:
        kept = [q for q in qrels if q not in fold.queries]
        searched = optimize_fusion(
            [{q: run[q] for q in kept} for run in runs],
            {q: qrels[q] for q in kept},
            method="rrf",
            metric="ndcg@10",
        )
        assert fold.best_params == searched.best_params
        assert fold.train_score == searched.best_score
        held_out = fuse(
            [{q: run[q] for q in fold.queries} for run in runs],
            **{"method": "rrf", "params": fold.best_params},
        )
        value = evaluate_run(held_out, {q: qrels[q] for q in fold.queries}, k_values=(10,))
        assert fold.held_out_score == value.metrics["ndcg@10"]
    assert result.mean_held_out == pytest.approx(
        sum(fold.held_out_score for fold in result.folds) / 3
    )


def test_supervised_folds_train_on_the_other_folds_only():
    runs, qrels = judged_runs(n_queries=8)
    folds = [["q0", "q2", "q4", "q6"], ["q1", "q3", "q5", "q7"]]
    result = optimize_fusion(runs, qrels, method="posfuse", folds=folds)
    # Run 1 ranks a relevant doc first on even queries, run 2 on odd ones: each fold's model
    # learns that from the other fold's queries only.
    even_fold, odd_fold = result.folds
    assert even_fold.best_params["probs"][1][0] == 1.0
    assert even_fold.best_params["probs"][0][0] < 1.0
    assert odd_fold.best_params["probs"][0][0] == 1.0
    assert odd_fold.best_params["probs"][1][0] < 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "sum"}, "'sum' has nothing to optimise"),
        ({"method": "rrf", "search_space": {"phi": [1]}}, "search_space names 'phi'"),
        ({"method": "rrf", "search_space": {"k": []}}, r"search_space\['k'\] must be a non-empty"),
        ({"method": "rrf", "metric": "ndcg"}, "'ndcg' is reported at a cutoff: name it 'ndcg@K'"),
        ({"method": "rrf", "metric": "P"}, "'P' reports 'P_5', 'P_10', 'P_15', …: name one"),
        ({"method": "rrf", "metric": "ndcg@x"}, r"unknown metric name\(s\) 'ndcg@x'"),
        ({"method": "rrf", "metric": "ndgc@10"}, "unknown metric"),
        ({"method": "rrf", "folds": 1}, "folds=1: need 2 to 12 folds"),
        ({"method": "rrf", "folds": [["q0"], ["zz"]]}, "query 'zz' has no positive judgement"),
        ({"method": "rrf", "folds": [["q0"], ["q0", "q1"]]}, "fold 2 repeats query 'q0'"),
        ({"method": "rrf", "folds": [["q0"], []]}, "fold 2 is empty"),
        ({"method": "rrf", "folds": True}, "folds must be a number of folds"),
    ],
)
def test_bad_searches_are_refused(kwargs, message):
    runs, qrels = judged_runs()
    with pytest.raises(ValueError, match=message):
        optimize_fusion(runs, qrels, **kwargs)


def test_the_result_class_is_frozen():
    result = FusionOptimization("rrf", None, "ndcg@10", {"k": 60}, 0.5, (({"k": 60}, 0.5),))
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        result.best_score = 1.0  # type: ignore[misc]
    assert result.folds == () and result.mean_held_out is None


def test_a_result_is_read_only_however_deep():
    runs, qrels = judged_runs()
    result = optimize_fusion(runs, qrels, method="wsum", metric="ndcg@10", folds=3)
    best = result.best_params["weights"]
    with pytest.raises(TypeError, match="read-only"):
        result.best_params["weights"] = [1.0, 0.0]
    with pytest.raises(TypeError, match="read-only"):
        result.best_params["weights"][0] = 1.0
    with pytest.raises(TypeError, match="read-only"):
        result.tries[0][0]["weights"] = (1.0, 0.0)
    with pytest.raises(TypeError, match="read-only"):
        result.folds[0].best_params["weights"][0] = 1.0
    assert isinstance(result.folds, tuple) and isinstance(result.folds[0].queries, tuple)
    assert result.tries[0][0] == {"weights": (0.0, 1.0)}  # the grid's tuples stay tuples
    # What was printed stays what it fuses with, and still serialises as plain JSON.
    assert result.best_params["weights"] == best
    assert json.loads(json.dumps(attrs.asdict(result)))["best_params"] == {"weights": best}
    assert result.fuse(runs) == fuse(runs, method="wsum", weights=list(best))
