"""A first evaluation of plain judgements takes the lean path, and gives what the careful one gives.

Plain judgements (a ``dict`` of ``dict`` with ``str`` ids and finite ``int``/``float`` grades,
checked all at once) are planned from each query's largest grade, and a ranking is scored off
the judgements themselves (:func:`summarize` without the positive pairs); any other judgements
are checked query by query and scored off their positive pairs. Both must give the same values,
bit for bit, the same manifest, and the same errors.
"""

from __future__ import annotations

import functools
import math
import random
import warnings
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pytest

from ef.evaluation import RelevanceLevelWarning, hookimpl
from ef.evaluation import evaluate_run as _evaluate_run
from ef.evaluation._metric_names.api import lookup_metrics
from ef.evaluation._scoring import cutoffs as _cutoffs
from ef.evaluation._scoring import query_plan as _plan
from ef.evaluation._scoring.grades import plain_judgements, relevant_grades
from ef.evaluation._scoring.measures.summary import Judging
from ef.evaluation._scoring.query_plan import QueryPlan
from ef.evaluation._scoring.ranked import summarize
from ef.evaluation._scoring.score_sheet import ScoreSheet
from ef.evaluation.testing import registered_plugin
from oracle import PRIMITIVES

# The workloads leave some judged queries out of the run on purpose (they score 0): no warning.
evaluate_run = functools.partial(_evaluate_run, missing_queries="zero")

METRICS = ("ndcg", "recall", "precision", "mrr", "map")
KS = (1, 3, 10, 100, 1000)
GRADES = {
    "graded": (0, 1, 2),
    "binary": (1,),
    "float": (0.0, 0.5, 1.0, 2.0, 3.25),
    "negative": (-1, 0, 1, 2),
    "mixed": (1, 1.0, 2, 2.0, 0, -1.0),  # equal int and float grades keep judgement order
}


def _workload(
    grades: tuple[float, ...], depth: int, seed: int, *, duplicates: bool = False
) -> tuple[dict[str, list[str]], dict[str, dict[str, float]]]:
    """Rankings of ``depth`` ids and judgements of 0–40 ids per query, some of them retrieved."""
    rng = random.Random(seed)
    run: dict[str, list[str]] = {}
    qrels: dict[str, dict[str, float]] = {}
    for q in range(24):
        pool = [f"d{i}" for i in rng.sample(range(4 * depth + 80), depth + 40)]
        ranked = pool[:depth]
        if duplicates and ranked:
            for _ in range(rng.randint(1, 3)):
                ranked.insert(rng.randrange(len(ranked)), rng.choice(ranked))
        n_judged = 0 if q == 0 else rng.randint(1, 40)
        judged = rng.sample(pool, n_judged)
        qrels[f"q{q}"] = {doc: rng.choice(grades) for doc in judged}
        if q % 5 != 4:  # some judged queries are missing from the run
            run[f"q{q}"] = ranked
    qrels["q1"] = {"a": 1}  # at least one query to score, whatever the draw
    return run, qrels


def _careful(qrels: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """The same judgements as read-only mappings: not plain, so checked query by query."""
    return {q: MappingProxyType(dict(judged)) for q, judged in qrels.items()}


def _same(a: Any, b: Any) -> bool:
    """Equal, with NaN nowhere and each float the same bits (``==`` would let -0.0 be 0.0)."""
    return repr(a) == repr(b) and a == b


@pytest.mark.parametrize("depth", [0, 5, 40, 200, 2000])
@pytest.mark.parametrize("grades", list(GRADES))
@pytest.mark.parametrize("duplicates", [False, True])
def test_a_first_evaluation_scores_as_the_careful_path(grades, depth, duplicates):
    run, qrels = _workload(GRADES[grades], depth, seed=depth + len(grades), duplicates=duplicates)
    careful = _careful(qrels)
    assert plain_judgements(qrels) and not plain_judgements(careful)
    _plan._KNOWN_QRELS.clear()
    _cutoffs._IDEAL_DCGS.clear()
    first = evaluate_run(run, qrels, k_values=KS, metrics=METRICS)
    again = evaluate_run(run, qrels, k_values=KS, metrics=METRICS)
    _cutoffs._IDEAL_DCGS.clear()
    checked = evaluate_run(run, careful, k_values=KS, metrics=METRICS)
    assert _same(first.per_query, checked.per_query)
    assert _same(first.metrics, checked.metrics)
    assert first.skipped == checked.skipped
    assert first.manifest == checked.manifest
    assert first == again == checked


@pytest.mark.parametrize("depth", [5, 40, 200])
@pytest.mark.parametrize("grades", ["graded", "float", "negative", "mixed"])
def test_a_first_evaluation_gives_the_per_k_functions_values(grades, depth):
    """The public per-k functions sum in their own loops: the same floats, bit for bit."""
    run, qrels = _workload(GRADES[grades], depth, seed=depth, duplicates=True)
    _plan._KNOWN_QRELS.clear()
    _cutoffs._IDEAL_DCGS.clear()
    report = evaluate_run(run, qrels, k_values=KS, metrics=METRICS)
    assert report.n_queries > 10
    for query_id, values in report.per_query.items():
        ranked, relevant = run.get(query_id, []), qrels[query_id]
        expected = {
            f"{name}@{k}": PRIMITIVES[name](ranked, relevant, k) for name in METRICS for k in KS
        }
        assert _same(dict(values), expected), query_id


@pytest.mark.parametrize("depth", [1, 10, 33, 100, 1000])
@pytest.mark.parametrize("grades", list(GRADES))
def test_a_summary_without_the_positive_pairs_is_the_one_with_them(grades, depth):
    run, qrels = _workload(GRADES[grades], depth, seed=7 * depth, duplicates=depth % 2 == 1)
    for query_id, relevant in qrels.items():
        ranked = run.get(query_id, [])
        lean = summarize(ranked, relevant)
        full = summarize(ranked, relevant, positives=relevant_grades(relevant))
        for name in ("positions", "gains", "ideal_gains", "n_relevant", "ranked"):
            assert _same(getattr(lean, name), getattr(full, name)), (query_id, name)


def test_queries_are_planned_from_their_largest_grade():
    qrels = {
        "empty": {},
        "zeros": {"a": 0, "b": 0.0},
        "negative": {"a": -2.0},
        "tiny": {"a": 0, "b": 5e-324},
        "one": {"a": 0, "b": 1},
        "two": {"a": 2.0},
    }
    metrics = lookup_metrics(["ndcg"])
    planned = ["tiny", "one", "two"]
    # A relevance level does not change which queries are scored (trec_eval scores them all);
    # the planned queries with nothing relevant at it are named in a warning.
    for relevance_level, below in [(None, []), (2, ["tiny", "one"])]:
        judging = Judging(relevance_level=relevance_level)
        for given in (qrels, _careful(qrels)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                plan = QueryPlan(given, None, metrics=metrics, k_values=(1,), judging=judging)
            assert [type(w.message) for w in caught] == [RelevanceLevelWarning] * bool(below)
            assert plan.planned == planned
            assert plan.below_level == below
            assert list(plan.skipped) == [q for q in qrels if q not in planned]
            assert plan.plain is (given is qrels)
            assert plan.positives["two"] == [("a", 2.0)]


def test_measures_and_scored_runs_read_the_positive_pairs_made_on_demand():
    run, qrels = _workload(GRADES["negative"], 30, seed=3)
    scored = {q: {d: float(len(ids) - i) for i, d in enumerate(ids)} for q, ids in run.items()}
    careful = _careful(qrels)
    names = ("ndcg", "map", "bpref", "infAP", "Rndcg", "num_rel_ret")
    for given_run in (run, scored):
        for options in ({}, {"relevance_level": 2}, {"judged_only": True}):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RelevanceLevelWarning)  # the same in both
                lean = evaluate_run(given_run, qrels, k_values=(5, 10), metrics=names, **options)
                checked = evaluate_run(
                    given_run, careful, k_values=(5, 10), metrics=names, **options
                )
            assert _same(lean.per_query, checked.per_query)
            assert lean == checked


def test_the_positive_pairs_are_made_when_asked_for_and_never_kept():
    _, qrels = _workload(GRADES["graded"], 10, seed=5)
    plan = QueryPlan(qrels, None, metrics=lookup_metrics(["ndcg"]), k_values=(10,))
    assert plan.plain and dict(plan.positives) == {}
    query_id = plan.planned[-1]
    assert plan.positives[query_id] == relevant_grades(qrels[query_id])
    assert plan.positives[query_id] == relevant_grades(qrels[query_id])  # made again, equal
    assert dict(plan.positives) == {}  # a million queries' pairs are not held to the end


BAD = [
    ("q2", {"d0": 2, "d1": math.nan}, ValueError, "grade of doc 'd1' for query 'q2' is nan"),
    ("q2", {"d1": -math.inf}, ValueError, "grade of doc 'd1' for query 'q2' is -inf"),
    ("q2", {"d1": 10**400}, ValueError, "grade of doc 'd1' for query 'q2' is 1000000"),
    ("q2", {"d1": "2"}, TypeError, "grade of doc 'd1' for query 'q2' is '2' (a str)"),
    ("q2", {"d1": None}, TypeError, "grade of doc 'd1' for query 'q2' is None (a NoneType)"),
    ("q2", {3: 1.0}, TypeError, "doc id 3 for query 'q2' is not a string"),
    ("q2", [("d1", 1)], TypeError, "the judgements of query 'q2' are a list"),
]


@pytest.mark.parametrize(("query_id", "judged", "error", "words"), BAD)
def test_bad_judgements_are_named_on_a_first_evaluation_and_after_good_ones(
    query_id, judged, error, words
):
    good = {"q1": {"d1": 1.0, "d2": 0}, "q2": {"d1": 1}, "q3": {"d1": 2}}
    _plan._KNOWN_QRELS.clear()
    bad = {**good, query_id: judged}
    for _ in range(2):  # first as new judgements, then after the good ones were seen
        with pytest.raises(error) as caught:
            evaluate_run({"q1": ["d1"]}, bad, k_values=(1,), metrics=("ndcg",))
        assert words in str(caught.value)
        evaluate_run({"q1": ["d1"]}, good, k_values=(1,), metrics=("ndcg",))


def test_a_bool_grade_is_not_plain_and_scores_as_the_careful_path_scores_it():
    qrels = {"q1": {"d1": True, "d2": False}, "q2": {"d1": 2, "d3": True}}
    run = {"q1": ["d2", "d1"], "q2": ["d3", "d1"]}
    assert not plain_judgements(qrels)
    report = evaluate_run(run, qrels, k_values=(2,), metrics=METRICS)
    assert report == evaluate_run(run, _careful(qrels), k_values=(2,), metrics=METRICS)
    assert report.per_query["q1"]["mrr@2"] == 0.5


class _Careless:
    """A plugin whose metric empties the ideal grades it is shown."""

    @hookimpl
    def ef_evaluation_register_metrics(self, register):
        def careless(summary, ks):
            summary.ideal_gains.clear()
            return [0.0 for _ in ks]

        register("careless", lambda ranked, relevant, k: 0.0, all_cutoffs=careless)


def test_a_plugin_metric_that_changes_the_ideal_grades_leaves_later_evaluations_alone():
    run, qrels = _workload(GRADES["graded"], 40, seed=9)
    _plan._KNOWN_QRELS.clear()
    before = evaluate_run(run, qrels, k_values=(5, 10), metrics=("ndcg", "map"))
    with registered_plugin(_Careless(), name="careless-plugin"):
        evaluate_run(run, qrels, k_values=(5, 10), metrics=("careless",))
    assert evaluate_run(run, qrels, k_values=(5, 10), metrics=("ndcg", "map")) == before


@pytest.mark.parametrize("grades", ["graded", "negative", "mixed"])
def test_a_ranking_scored_without_a_summary_scores_as_with_one(grades):
    """Followed query by query (a progress callback), each ranking is summarized first."""
    run, qrels = _workload(GRADES[grades], 40, seed=21, duplicates=True)
    plan = QueryPlan(qrels, None, metrics=lookup_metrics(METRICS), k_values=KS)
    lean = ScoreSheet(plan, parameters={})
    followed = ScoreSheet(plan, parameters={}, progress=lambda progress: None)
    assert lean._lean and not followed._lean
    for query_id in plan.planned:
        ranked = run.get(query_id, [])
        assert _same(lean.add_ranking(query_id, ranked), followed.add_ranking(query_id, ranked))
    assert lean.report() == followed.report()
