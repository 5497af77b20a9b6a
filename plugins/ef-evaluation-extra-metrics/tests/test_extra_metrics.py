"""The extra metrics agree with trec_eval (through pytrec_eval) and work inside ef.evaluation."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import pytest
import pytrec_eval
from ef.evaluation import (
    RETRIEVAL_METRICS,
    evaluate_retrieval,
    evaluate_run,
    list_plugins,
    registry,
)
from ef.evaluation.testing import registered_plugin
from hypothesis import given, settings
from hypothesis import strategies as st

import ef_evaluation_extra_metrics
from ef_evaluation_extra_metrics import bpref, hit_rate, judged, r_precision

PLUGIN_NAME = "extra_metrics"  # the entry point's name in pyproject.toml
CUTOFFS = (1, 5, 10)
METRICS = ("hit_rate", "r_precision", "bpref", "judged")
DOCS = [f"d{i}" for i in range(25)]
TREC_MEASURES = {"success.1,5,10", "Rprec", "bpref"}
TREC_KEYS = [*(f"success_{k}" for k in CUTOFFS), "Rprec", "bpref"]

# trec_eval reads integer grades: > 0 relevant, 0 judged non-relevant, < 0 pooled but unjudged.
judgements = st.dictionaries(st.sampled_from(DOCS), st.integers(-2, 3), min_size=1, max_size=20)
# Rankings repeat ids and return unjudged ones ("u…"), as real retrievers do.
rankings = st.lists(st.sampled_from([*DOCS, "u1", "u2", "u3"]), max_size=40)


@pytest.fixture(scope="module")
def plugin() -> Iterator[None]:
    """The plugin, registered as ef.evaluation would load it once installed.

    When the distribution is installed its entry point has loaded it already; otherwise it is
    registered in-process for this module's tests.
    """
    if any(info.name == PLUGIN_NAME for info in list_plugins()):
        yield
        return
    with registered_plugin(ef_evaluation_extra_metrics, name=PLUGIN_NAME):
        yield


def as_trec_run(ranked: Sequence[str]) -> dict[str, float]:
    """A ranking as trec_eval takes it: distinct ids with strictly decreasing scores."""
    unique = list(dict.fromkeys(ranked))
    return {doc_id: float(len(unique) - i) for i, doc_id in enumerate(unique)}


def trec_eval(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Sequence[str]],
    measures: set[str],
    keys: Sequence[str],
) -> dict[str, dict[str, float]]:
    """pytrec_eval's values for every query in ``qrels``, keyed by trec_eval's names.

    A query with nothing relevant or nothing retrieved scores 0 under every measure here
    (trec_eval -c); such queries are not sent, as pytrec_eval 0.5 can crash on them.
    """
    sent = {
        q: as_trec_run(run[q])
        for q, relevant in qrels.items()
        if run.get(q) and any(grade > 0 for grade in relevant.values())
    }
    values: dict[str, dict[str, float]] = {}
    if sent:
        evaluator = pytrec_eval.RelevanceEvaluator({q: dict(qrels[q]) for q in sent}, measures)
        values = evaluator.evaluate(sent)
    return {q: values.get(q, dict.fromkeys(keys, 0.0)) for q in qrels}


def ir_measures_judged(qrels: Mapping[str, int], ranked: Sequence[str], cutoff: int) -> float:
    """ir_measures' ``Judged@k`` (``JudgedEvaluator._iter_calc``, 0.3.1), transcribed."""
    run = as_trec_run(ranked)
    sorted_run = sorted(run.items(), key=lambda x: (-x[1], x[0]))
    judged_c = sum((did in qrels) for did, _ in sorted_run[:cutoff])
    return judged_c / cutoff


@settings(max_examples=300, deadline=None)
@given(judgements, rankings)
def test_functions_equal_trec_eval(relevant, ranked):
    expected = trec_eval({"q": relevant}, {"q": ranked}, TREC_MEASURES, TREC_KEYS)["q"]
    for k in CUTOFFS:
        assert hit_rate(ranked, relevant, k) == pytest.approx(expected[f"success_{k}"], abs=1e-9)
    assert r_precision(ranked, relevant) == pytest.approx(expected["Rprec"], abs=1e-9)
    assert bpref(ranked, relevant) == pytest.approx(expected["bpref"], abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(judgements, rankings)
def test_judged_equals_ir_measures_and_precision_over_every_judgement(relevant, ranked):
    # Judged@k is P@k once every judgement, whatever its grade, counts as relevant.
    all_relevant = {doc_id: 1 for doc_id in relevant}
    precision = trec_eval(
        {"q": all_relevant}, {"q": ranked}, {"P.1,5,10"}, [f"P_{k}" for k in CUTOFFS]
    )["q"]
    for k in CUTOFFS:
        value = judged(ranked, relevant, k)
        assert value == pytest.approx(ir_measures_judged(relevant, ranked, k), abs=1e-9)
        assert value == pytest.approx(precision[f"P_{k}"], abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["q1", "q2", "q3", "q4"]),
        st.tuples(judgements, rankings),
        min_size=1,
        max_size=4,
    )
)
def test_evaluate_run_reports_trec_eval_values(plugin, queries):
    qrels = {q: relevant for q, (relevant, _) in queries.items()}
    run = {q: ranked for q, (_, ranked) in queries.items() if ranked}
    scored = [q for q, relevant in qrels.items() if any(g > 0 for g in relevant.values())]
    if not scored:
        with pytest.raises(ValueError, match="no query can be scored"):
            evaluate_run(run, qrels, k_values=CUTOFFS, metrics=METRICS)
        return
    report = evaluate_run(run, qrels, k_values=CUTOFFS, metrics=METRICS)
    expected = trec_eval(qrels, run, TREC_MEASURES, TREC_KEYS)
    assert sorted(report.per_query) == sorted(scored)
    for q in scored:
        values = report.per_query[q]
        assert list(values) == [
            *(f"hit_rate@{k}" for k in CUTOFFS),
            "r_precision",
            "bpref",
            *(f"judged@{k}" for k in CUTOFFS),
        ]
        for k in CUTOFFS:
            assert values[f"hit_rate@{k}"] == pytest.approx(expected[q][f"success_{k}"], abs=1e-9)
            assert values[f"judged@{k}"] == judged(run.get(q, []), qrels[q], k)
        assert values["r_precision"] == pytest.approx(expected[q]["Rprec"], abs=1e-9)
        assert values["bpref"] == pytest.approx(expected[q]["bpref"], abs=1e-9)
    for key, mean in report.metrics.items():
        assert mean == pytest.approx(sum(report.per_query[q][key] for q in scored) / len(scored))


def test_evaluate_retrieval_scores_the_ranking_it_asked_for(plugin):
    qrels = {"q1": {"d1": 2, "d2": 1, "n1": 0}, "q2": {"d3": 1, "n2": 0, "n3": -1}}
    queries = {"q1": "first", "q2": "second"}
    results = {"first": ["x", "d2", "n1", "d2", "d1"], "second": ["n3", "n2", "d3", "y"]}

    def retriever(query: str, *, limit: int = 10) -> list[str]:
        return results[query][:limit]

    report = evaluate_retrieval(
        retriever, qrels, queries, k_values=(1, 3), metrics=("ndcg", *METRICS), limit=5
    )
    assert set(report.metrics) == {
        "ndcg@1",
        "ndcg@3",
        "hit_rate@1",
        "hit_rate@3",
        "r_precision",
        "bpref",
        "judged@1",
        "judged@3",
    }
    for q, query in queries.items():
        ranked, relevant = results[query], qrels[q]
        values = report.per_query[q]
        for k in (1, 3):
            assert values[f"hit_rate@{k}"] == hit_rate(ranked, relevant, k)
            assert values[f"judged@{k}"] == judged(ranked, relevant, k)
        assert values["r_precision"] == r_precision(ranked, relevant)
        assert values["bpref"] == bpref(ranked, relevant)


def test_registration_describes_each_metric(plugin):
    metrics = registry().metrics
    for name in METRICS:
        assert name in RETRIEVAL_METRICS
        assert metrics[name].plugin == PLUGIN_NAME
        assert metrics[name].description
    assert RETRIEVAL_METRICS["bpref"] is bpref
    assert [name for name in METRICS if not metrics[name].cutoff] == ["r_precision", "bpref"]
    assert metrics["hit_rate"].all_cutoffs is not None
    assert metrics["judged"].all_cutoffs is not None


@settings(max_examples=200, deadline=None)
@given(judgements, rankings, st.integers(1, 50))
def test_values_are_fractions_and_a_perfect_ranking_scores_one(relevant, ranked, k):
    for value in (
        hit_rate(ranked, relevant, k),
        judged(ranked, relevant, k),
        r_precision(ranked, relevant),
        bpref(ranked, relevant),
    ):
        assert 0.0 <= value <= 1.0
    ideal = sorted(relevant, key=lambda doc_id: -relevant[doc_id])
    if any(grade > 0 for grade in relevant.values()):
        assert hit_rate(ideal, relevant, k) == 1.0
        assert r_precision(ideal, relevant) == 1.0
        assert bpref(ideal, relevant) == 1.0
    else:
        assert r_precision(ranked, relevant) == bpref(ranked, relevant) == 0.0


def test_bpref_skips_negative_grades_but_counts_zero_as_non_relevant():
    assert bpref(["n", "d"], {"d": 1, "n": -1}) == 1.0
    assert bpref(["n", "d"], {"d": 1, "n": 0}) == 0.0
    assert bpref(["x", "d"], {"d": 1}) == 1.0


def test_judged_counts_every_grade_and_divides_by_k():
    assert judged(["a", "b", "a"], {"a": -1, "b": 0}, 4) == 0.5


@pytest.mark.parametrize("k", [0, -1, True, 1.5, "3"])
@pytest.mark.parametrize("metric", [hit_rate, judged])
def test_a_bad_cutoff_raises(metric, k):
    with pytest.raises(ValueError, match="cutoff k must be an int >= 1"):
        metric(["d1"], {"d1": 1}, k)
