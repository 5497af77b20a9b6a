"""The scoring core's fast paths for small evaluations give what the careful ways give.

Plain judgements (a ``dict`` of ``dict`` with ``str`` ids and finite ``int``/``float`` grades)
are checked once for the whole qrels; anything else — one NaN, one odd type anywhere — sends
every query through the careful per-judgement check, which names what is wrong. The ideal DCG
of a query's grades is kept across evaluations: a later evaluation with other cutoffs or other
grades must not read another's values.
"""

from __future__ import annotations

import contextlib
import math
import random
from collections import OrderedDict

import pytest

from ef.evaluation import evaluate_run
from ef.evaluation._metric_names.api import lookup_metrics
from ef.evaluation._scoring import cutoffs as _cutoffs
from ef.evaluation._scoring import query_plan as _plan
from ef.evaluation._scoring.metrics import plain_judgements
from ef.evaluation._scoring.query_plan import QueryPlan, digest

METRICS = ("ndcg", "recall", "precision", "mrr", "map")


def _graded(n_queries: int, seed: int) -> tuple[dict[str, list[str]], dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    run: dict[str, list[str]] = {}
    qrels: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        docs = [f"d{i}" for i in rng.sample(range(80), 40)]
        run[f"q{q}"] = docs[: rng.choice([3, 10, 40])]
        qrels[f"q{q}"] = {d: float(rng.choice([0, 0, 1, 2, 3])) for d in docs[: rng.randint(1, 30)]}
    return run, qrels


@pytest.mark.parametrize(
    ("bad", "error", "words"),
    [
        (math.nan, ValueError, "grade of doc 'd1' for query 'q2' is nan"),
        (math.inf, ValueError, "grade of doc 'd1' for query 'q2' is inf"),
        (10**400, ValueError, "for query 'q2'"),
        ("1", TypeError, "grade of doc 'd1' for query 'q2' is '1' (a str)"),
        (None, TypeError, "(a NoneType)"),
    ],
)
def test_one_bad_grade_anywhere_is_named_as_before(bad, error, words):
    qrels = {"q1": {"d1": 1.0, "d2": 0.0}, "q2": {"d0": 2, "d1": bad}, "q3": {"d1": 1}}
    assert not plain_judgements(qrels)
    with pytest.raises(error, match="grades must be finite numbers") as caught:
        evaluate_run({"q1": ["d1"]}, qrels, k_values=(1,), metrics=("ndcg",))
    assert words in str(caught.value)


def test_a_doc_id_that_is_not_a_string_is_named():
    qrels = {"q1": {"d1": 1.0}, "q2": {7: 1.0}}
    assert not plain_judgements(qrels)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="doc id 7 for query 'q2' is not a string"):
        evaluate_run({"q1": ["d1"]}, qrels, k_values=(1,), metrics=("ndcg",))  # type: ignore[arg-type]


def test_judgements_that_are_not_plain_dicts_score_as_plain_ones():
    run, qrels = _graded(40, seed=3)
    odd = {
        q: OrderedDict((d, True if g == 1.0 else g) for d, g in j.items()) for q, j in qrels.items()
    }
    assert plain_judgements(qrels) and not plain_judgements(odd)
    plain_report = evaluate_run(run, qrels, k_values=(1, 5, 10), metrics=METRICS)
    odd_report = evaluate_run(run, odd, k_values=(1, 5, 10), metrics=METRICS)
    assert odd_report.per_query == plain_report.per_query
    assert odd_report.metrics == plain_report.metrics


def test_the_plain_digest_is_the_checked_one():
    _, qrels = _graded(20, seed=5)
    qrels["q0"]["dint"] = 2  # ints and floats together
    assert plain_judgements(qrels)
    plan = QueryPlan(qrels, None, metrics=lookup_metrics(["ndcg"]), k_values=(1,))
    assert plan.digests()["qrels"] == digest(qrels)


def test_kept_ideal_dcgs_never_cross_cutoffs_or_grades():
    run, qrels = _graded(60, seed=11)
    first = evaluate_run(run, qrels, k_values=(1, 5, 10), metrics=METRICS)
    # Other cutoffs, then other grades for the same ids: values as from a fresh process.
    other_ks = evaluate_run(run, qrels, k_values=(2, 5, 40), metrics=METRICS)
    doubled = {q: {d: g * 2 + 1 for d, g in j.items()} for q, j in qrels.items()}
    other_grades = evaluate_run(run, doubled, k_values=(1, 5, 10), metrics=METRICS)
    _cutoffs._IDEAL_DCGS.clear()
    assert evaluate_run(run, qrels, k_values=(1, 5, 10), metrics=METRICS) == first
    assert evaluate_run(run, qrels, k_values=(2, 5, 40), metrics=METRICS) == other_ks
    assert evaluate_run(run, doubled, k_values=(1, 5, 10), metrics=METRICS) == other_grades
    assert other_ks.metrics["ndcg@5"] == first.metrics["ndcg@5"]
    assert other_grades.metrics["ndcg@10"] != first.metrics["ndcg@10"]


def _pure_path():
    """The pure-Python path: a compiled kernel, when a plugin offers one, keeps no ideal DCGs."""
    from ef.evaluation import list_plugins
    from ef.evaluation.extending import plugin_disabled

    loaded = any(info.name == "speedups" for info in list_plugins())
    return plugin_disabled("speedups") if loaded else contextlib.nullcontext()


def test_kept_ideal_dcgs_stay_bounded(monkeypatch):
    with _pure_path():
        _kept_ideal_dcgs_stay_bounded(monkeypatch)


def _kept_ideal_dcgs_stay_bounded(monkeypatch):
    monkeypatch.setattr(_cutoffs, "_IDEAL_DCGS_KEPT", 5)
    monkeypatch.setattr(_cutoffs, "_IDEAL_DCGS_CUTOFFS", 2)
    _cutoffs._IDEAL_DCGS.clear()
    run, qrels = _graded(60, seed=13)
    reports = [evaluate_run(run, qrels, k_values=ks, metrics=METRICS) for ks in ((1,), (2,), (3,))]
    assert list(_cutoffs._IDEAL_DCGS) == [(3,)]
    assert 0 < len(_cutoffs._IDEAL_DCGS[(3,)]) <= 5
    _cutoffs._IDEAL_DCGS.clear()
    monkeypatch.undo()
    fresh = [evaluate_run(run, qrels, k_values=ks, metrics=METRICS) for ks in ((1,), (2,), (3,))]
    assert fresh == reports


def test_known_judgements_follow_their_content_not_their_object():
    run, qrels = _graded(30, seed=17)
    before = evaluate_run(run, qrels, k_values=(5, 10), metrics=METRICS)
    query, docs = "q0", run["q0"]
    qrels[query] = {docs[0]: 3.0, **{d: 0.0 for d in docs[1:]}}  # the same object, new content
    after = evaluate_run(run, qrels, k_values=(5, 10), metrics=METRICS)
    assert after.per_query[query]["recall@5"] == 1.0
    assert after.per_query[query] != before.per_query[query]
    assert after.manifest["fingerprints"] != before.manifest["fingerprints"]
    _plan._KNOWN_QRELS.clear()
    assert evaluate_run(run, qrels, k_values=(5, 10), metrics=METRICS) == after


def test_known_judgements_never_stand_in_for_bad_ones():
    qrels = {"q1": {"d1": 1.0}, "q2": {"d1": 2.0}}
    evaluate_run({"q1": ["d1"], "q2": []}, qrels, k_values=(1,), metrics=("ndcg",))
    qrels["q2"]["d1"] = math.nan
    for _ in range(2):
        with pytest.raises(ValueError, match="grade of doc 'd1' for query 'q2' is nan"):
            evaluate_run({"q1": ["d1"], "q2": []}, qrels, k_values=(1,), metrics=("ndcg",))


def test_known_judgements_stay_bounded():
    _plan._KNOWN_QRELS.clear()
    for seed in range(_plan._KNOWN_QRELS_KEPT + 3):
        run, qrels = _graded(5, seed=seed)
        evaluate_run(run, qrels, k_values=(1,), metrics=("ndcg",))
    assert len(_plan._KNOWN_QRELS) == _plan._KNOWN_QRELS_KEPT
    assert list(_plan._KNOWN_QRELS.values())[-1].keys() == qrels.keys()
