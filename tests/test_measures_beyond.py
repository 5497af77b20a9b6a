"""The measures beyond trec_eval, each against its own source of truth, on generated inputs.

Exponential nDCG, F1 and hits against ranx (its outputs recorded in
``tests/oracles/ranx_measures.json.gz``: ranx is not imported here); exponential nDCG and ERR
against gdeval (run by ir_measures); RBP against cwl_eval (ir_measures' provider); R_cap and
Unjudged against BEIR's ``evaluate_custom``; Judged against ir_measures; RBP's residual against
a hand computation.
Runs have no tied scores (each peer breaks ties its own way, see docs/semantics.md); the cases
where a peer is wrong are pinned at the end, with both values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ef.evaluation import evaluate_run
from oracles.inputs import MEASURES_CUTOFFS, MEASURES_SEED, judged_run, measures_inputs
from oracles.recorded import recorded

K = MEASURES_CUTOFFS

QRELS, RUN = judged_run(MEASURES_SEED)


def _ef(metrics: list[str], qrels: Mapping[str, Mapping[str, int]] = QRELS,
        run: Mapping[str, Mapping[str, float]] = RUN) -> dict[str, dict[str, float]]:  # fmt: skip
    report = evaluate_run(run, qrels, metrics=metrics)  # type: ignore[arg-type]
    return {q: dict(values) for q, values in report.per_query.items()}


def ours_of(ours: dict[str, dict[str, float]], name: str) -> dict[str, float]:
    return {q: values[name] for q, values in ours.items()}


def _close(ours: dict[str, float], theirs: dict[str, float], tolerance: float) -> None:
    assert set(ours) == set(theirs)
    wrong = {q: (ours[q], theirs[q]) for q in ours if abs(ours[q] - theirs[q]) > tolerance}
    assert not wrong


@pytest.fixture(scope="module")
def ranx_scores() -> dict[str, dict[str, float]]:
    """ranx's per-query ndcg_burges, f1 and hits at each cutoff, recorded in
    ``tests/oracles/ranx_measures.json.gz`` (``tests/oracles/README.md``)."""
    scores: dict[str, Any] = recorded("ranx_measures", measures_inputs(QRELS, RUN))
    return scores


@pytest.mark.parametrize("k", K)
def test_exponential_ndcg_f1_and_hits_equal_ranx(
    ranx_scores: dict[str, dict[str, float]], k: int
) -> None:
    ours = _ef([f"nDCG(dcg='exp-log2')@{k}", f"F1@{k}", f"Hits@{k}"])
    for notation, theirs in (
        (f"nDCG(dcg='exp-log2')@{k}", f"ndcg_burges@{k}"),
        (f"F1@{k}", f"f1@{k}"),
        (f"Hits@{k}", f"hits@{k}"),
    ):
        _close({q: v[notation] for q, v in ours.items()}, ranx_scores[theirs], 1e-9)


@pytest.mark.parametrize("k", [3, 10, 20])
def test_err_and_exponential_ndcg_equal_gdeval(k: int) -> None:
    import ir_measures
    from ir_measures import ERR, nDCG

    # gdeval reads grades 0-4 only and prints 5 decimals.
    qrels = {q: {d: max(g, 0) for d, g in judged.items()} for q, judged in QRELS.items()}
    ours = _ef([f"nDCG(dcg='exp-log2')@{k}", f"ERR@{k}"], qrels)
    theirs: dict[str, dict[str, float]] = {"nDCG": {}, "ERR": {}}
    for metric in ir_measures.gdeval.iter_calc([nDCG(dcg="exp-log2") @ k, ERR @ k], qrels, RUN):
        theirs[metric.measure.NAME][metric.query_id] = metric.value
    _close({q: v[f"nDCG(dcg='exp-log2')@{k}"] for q, v in ours.items()}, theirs["nDCG"], 5e-6)
    _close({q: v[f"ERR@{k}"] for q, v in ours.items()}, theirs["ERR"], 5e-6)


@pytest.mark.parametrize(("rel", "p"), [(1, 0.8), (2, 0.5), (3, 0.95)])
def test_rbp_equals_cwl_eval(rel: int, p: float) -> None:
    import ir_measures
    from ir_measures import RBP

    name = f"RBP(rel={rel},p={p})"
    ours = _ef([name])
    theirs = {
        m.query_id: float(m.value)
        for m in ir_measures.cwl_eval.iter_calc([RBP(rel=rel, p=p)], QRELS, RUN)
    }
    _close(ours_of(ours, name), theirs, 1e-9)


def test_rbp_residual_is_the_weight_of_the_unjudged_ranks_and_the_tail() -> None:
    p = 0.7
    ours = _ef([f"RBP_residual(p={p})", f"RBP(p={p})", "RBP_residual(p=0.7)@5"])
    for q, scores in RUN.items():
        ranked = sorted(scores, key=lambda doc: -scores[doc])
        judged = QRELS[q]
        unjudged = [i for i, doc in enumerate(ranked) if judged.get(doc, -1) < 0]
        residual = p ** len(ranked) + sum((1 - p) * p**i for i in unjudged)
        assert ours[q][f"RBP_residual(p={p})"] == pytest.approx(residual, abs=1e-12)
        depth = min(5, len(ranked))
        residual = p**depth + sum((1 - p) * p**i for i in unjudged if i < depth)
        assert ours[q]["RBP_residual(p=0.7)@5"] == pytest.approx(residual, abs=1e-12)
        # RBP + residual bounds what RBP could turn out to be once everything is judged.
        gained = sum((1 - p) * p**i for i, doc in enumerate(ranked) if judged.get(doc, 0) > 0)
        assert ours[q][f"RBP(p={p})"] == pytest.approx(gained, abs=1e-12)


@pytest.mark.parametrize("metric", ["r_cap", "hole"])
@pytest.mark.parametrize("k", K)
def test_r_cap_and_unjudged_equal_beir_per_query(metric: str, k: int) -> None:
    from beir.retrieval.evaluation import EvaluateRetrieval

    ours_name, beir_name = {"r_cap": ("R_cap", "R_cap"), "hole": ("Unjudged", "Hole")}[metric]
    ours = _ef([f"{ours_name}@{k}"])
    # One query at a time: BEIR reports only the mean, rounded to 5 decimals.
    theirs = {
        q: EvaluateRetrieval.evaluate_custom({q: QRELS[q]}, {q: RUN[q]}, [k], metric)[
            f"{beir_name}@{k}"
        ]
        for q in RUN
    }
    _close({q: v[f"{ours_name}@{k}"] for q, v in ours.items()}, theirs, 5e-6)


@pytest.mark.parametrize("k", [*K, None])
def test_judged_equals_ir_measures(k: int | None) -> None:
    import ir_measures
    from ir_measures import Judged

    name = "Judged" if k is None else f"Judged@{k}"
    ours = _ef([name])
    measure = Judged if k is None else Judged @ k
    theirs = {m.query_id: m.value for m in ir_measures.judged.iter_calc([measure], QRELS, RUN)}
    _close({q: v[name] for q, v in ours.items()}, theirs, 1e-12)


# Where a peer is wrong: docs/semantics.md lists each case with its minimal input.


def test_ir_measures_judged_breaks_ties_by_ascending_doc_id() -> None:
    import ir_measures
    from ir_measures import Judged

    qrels, run = {"1": {"b": 1}}, {"1": {"a": 1.0, "b": 1.0}}
    # trec_eval (and ef) rank tied scores by doc id descending: b first, judged.
    assert _ef(["Judged@1"], qrels, run)["1"]["Judged@1"] == 1.0
    (theirs,) = ir_measures.judged.iter_calc([Judged @ 1], qrels, run)
    assert theirs.value == 0.0


def test_beir_hole_counts_a_document_judged_for_another_query_as_judged() -> None:
    from beir.retrieval.evaluation import EvaluateRetrieval

    qrels = {"1": {"a": 1}, "2": {"b": 1}}
    run = {"1": {"a": 2.0, "b": 1.0}, "2": {"b": 1.0}}
    ours = evaluate_run(run, qrels, metrics=["Unjudged@2"])  # type: ignore[arg-type]
    assert ours.per_query["1"]["Unjudged@2"] == 0.5  # b is not judged for query 1
    assert ours.metrics["Unjudged@2"] == 0.25
    assert EvaluateRetrieval.evaluate_custom(qrels, run, [2], "hole")["Hole@2"] == 0.0
    # BEIR's name is BEIR's definition: ef does not give another number under it.
    for name in ("Hole@2", "Hole@10"):
        with pytest.raises(ValueError, match=rf"metric '{name}': BEIR's Hole@k counts a document "
                           r"judged for any query .* Unjudged@k"):  # fmt: skip
            evaluate_run(run, qrels, metrics=[name])  # type: ignore[arg-type]


def test_beir_r_cap_divides_by_zero_on_a_query_without_positives() -> None:
    from beir.retrieval.evaluation import EvaluateRetrieval

    qrels, run = {"1": {"a": 1}, "2": {"b": 0}}, {"1": {"a": 1.0}, "2": {"b": 1.0}}
    with pytest.raises(ZeroDivisionError):
        EvaluateRetrieval.evaluate_custom(qrels, run, [1], "r_cap")
    report = evaluate_run(run, qrels, metrics=["R_cap@1"])  # type: ignore[arg-type]
    assert dict(report.per_query) == {"1": {"R_cap@1": 1.0}}
    assert report.skipped == {"2": "no positive judgement"}


def test_beir_ranks_tied_scores_in_insertion_order() -> None:
    from beir.retrieval.evaluation import EvaluateRetrieval

    qrels, run = {"1": {"b": 1}}, {"1": {"a": 1.0, "b": 1.0}}
    assert _ef(["R_cap@1"], qrels, run)["1"]["R_cap@1"] == 1.0  # b ranks first, as trec_eval
    assert EvaluateRetrieval.evaluate_custom(qrels, run, [1], "r_cap")["R_cap@1"] == 0.0
