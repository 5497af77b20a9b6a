"""Reports are values: read-only in fact, hashed by value, serialised through attrs."""

from __future__ import annotations

import copy
import json
import pickle

import attrs
import pytest

from ef.evaluation import (
    ComparisonReport,
    PairedComparison,
    QueryFailure,
    RagEvalReport,
    RetrievalEvalReport,
    compare,
    evaluate_retrieval,
    evaluate_run,
)

QRELS = {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}, "q3": {"d3": 2.0}}
QUERIES = {"q1": "alpha", "q2": "beta", "q3": "gamma"}
RANKINGS = {"alpha": ["d1", "d2"], "beta": ["d9", "d2"], "gamma": ["d3"]}


def retriever(query: str, *, limit: int = 10) -> list[str]:
    return RANKINGS[query][:limit]


def evaluated() -> RetrievalEvalReport:
    return evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(1, 2))


def comparison() -> ComparisonReport:
    runs = {
        "bm25": {"q1": ["d9", "d1"], "q2": ["d9", "d2"], "q3": ["d3"]},
        "dense": {"q1": ["d1"], "q2": ["d2"], "q3": ["d3"]},
    }
    return compare(runs, QRELS, baseline="bm25", metrics=("mrr@10",), tests=("randomization",))


def rag() -> RagEvalReport:
    return RagEvalReport(
        metrics={"exact_match": 0.5},
        coverage={"exact_match": 2},
        n_samples=2,
        per_sample=[{"exact_match": 1.0}, {"exact_match": 0.0}],
    )


# --- read-only in fact --------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r.metrics.__setitem__("ndcg@1", 1.0),
        lambda r: r.metrics.update({"ndcg@1": 1.0}),
        lambda r: r.metrics.pop("ndcg@1"),
        lambda r: r.metrics.clear(),
        lambda r: r.metrics.setdefault("x", 1.0),
        lambda r: r.metrics.popitem(),
        lambda r: r.metrics.__delitem__("ndcg@1"),
        lambda r: r.metrics.__ior__({"x": 1.0}),
        lambda r: r.per_query.__setitem__("q1", {}),
        lambda r: r.per_query["q1"].__setitem__("ndcg@1", 0.0),
        lambda r: r.manifest.__setitem__("version", "x"),
        lambda r: r.manifest["parameters"].__setitem__("limit", 1),
        lambda r: r.manifest["parameters"]["k_values"].append(100),
        lambda r: r.manifest["parameters"]["k_values"].__setitem__(0, 100),
        lambda r: r.manifest["fingerprints"].update(qrels="x"),
        lambda r: r.skipped.__setitem__("q9", "x"),
        lambda r: r.latency.__setitem__("q1", 0.0),
    ],
)
def test_assigning_into_a_retrieval_report_raises_type_error(change):
    report = evaluated()
    before = report.to_dict()
    with pytest.raises(TypeError, match="read-only"):
        change(report)
    assert report.to_dict() == before


def test_in_place_operators_rebind_instead_of_changing_the_report():
    report = evaluated()
    metrics = report.metrics
    with pytest.raises(TypeError, match="read-only"):
        metrics |= {"x": 1.0}
    k_values = report.manifest["parameters"]["k_values"]
    with pytest.raises(TypeError, match="read-only"):
        k_values += [100]
    assert report.manifest["parameters"]["k_values"] == [1, 2]


def test_every_report_class_refuses_changes_to_its_mappings():
    with pytest.raises(TypeError):
        rag().coverage["exact_match"] = 3
    with pytest.raises(TypeError):
        rag().per_sample[0]["exact_match"] = 0.5
    report = comparison()
    with pytest.raises(TypeError):
        report.means["dense"]["mrr@10"] = 0.0
    with pytest.raises(TypeError):
        report.comparison("dense", "mrr@10").p_values["randomization"] = 0.0
    with pytest.raises(TypeError):
        report.comparison("dense", "mrr@10").adjusted_p_values.clear()


def test_the_caller_keeps_its_own_dicts_and_a_copy_is_mutable():
    metrics = {"ndcg@10": 0.5}
    report = RetrievalEvalReport(metrics, {}, 0, (10,))
    metrics["ndcg@10"] = 1.0
    assert report.metrics == {"ndcg@10": 0.5}
    mine = dict(report.metrics)
    mine["ndcg@10"] = 0.0
    also_mine = report.metrics.copy()
    also_mine.clear()
    assert type(mine) is dict and type(also_mine) is dict
    assert report.metrics == {"ndcg@10": 0.5}


def test_read_only_mappings_are_still_dicts_for_json_and_comparison():
    report = evaluated()
    assert isinstance(report.metrics, dict)
    assert isinstance(report.per_query["q1"], dict)
    assert report.manifest["parameters"]["k_values"] == [1, 2]
    assert repr(report.manifest["parameters"]["k_values"]) == "[1, 2]"
    assert json.loads(json.dumps(report.metrics)) == report.metrics
    assert report.metrics == dict(report.metrics)


# --- hashed by value ----------------------------------------------------------------------


def test_equal_reports_hash_equal():
    first, second = evaluated(), evaluated()
    # The manifest's fingerprints match; latency differs between runs: drop it for equality.
    first, second = (attrs.evolve(r, latency={}) for r in (first, second))
    assert first == second and first is not second
    assert hash(first) == hash(second)
    assert len({first, second}) == 1
    run = {"q1": ["d1", "d2"], "q2": ["d9", "d2"], "q3": ["d3"]}
    assert hash(evaluate_run(run, QRELS)) == hash(evaluate_run(run, QRELS))


@pytest.mark.parametrize(
    "build",
    [
        evaluated,
        comparison,
        rag,
        lambda: comparison().comparisons[0],
        lambda: QueryFailure("q1", "TimeoutError", "slow", 2),
    ],
)
def test_every_report_class_hashes_and_survives_json_pickle_and_copy(build):
    report = build()
    cls = type(report)
    assert hash(report) == hash(cls.from_json(report.to_json()))
    assert cls.from_json(report.to_json()) == report
    assert pickle.loads(pickle.dumps(report)) == report
    assert copy.deepcopy(report) == report
    assert hash(copy.copy(report)) == hash(report)


def test_a_different_value_changes_the_hash_of_a_nested_field():
    report = RetrievalEvalReport({}, {"q1": {"ndcg@10": 0.5}}, 1, (10,))
    other = RetrievalEvalReport({}, {"q1": {"ndcg@10": 0.25}}, 1, (10,))
    assert report != other
    assert hash(report) != hash(other)


def test_a_report_with_failures_hashes_and_round_trips():
    report = RetrievalEvalReport(
        {"ndcg@10": 1.0},
        {"q1": {"ndcg@10": 1.0}},
        1,
        (10,),
        failures=[QueryFailure("q2", "TimeoutError", "slow", 3)],
        manifest={"parameters": {"retry_on": ["builtins.TimeoutError"]}, "version": None},
    )
    assert report.failures == (QueryFailure("q2", "TimeoutError", "slow", 3),)
    again = RetrievalEvalReport.from_json(report.to_json())
    assert again == report and hash(again) == hash(report)


# --- serialised through attrs --------------------------------------------------------------


def test_to_dict_is_plain_json_data_all_the_way_down():
    def plain(value: object) -> None:
        assert type(value) in (dict, list, str, int, float, bool, type(None)), type(value)
        if isinstance(value, dict):
            for item in value.values():
                plain(item)
        elif isinstance(value, list):
            for item in value:
                plain(item)

    for report in (evaluated(), comparison(), rag()):
        plain(report.to_dict())
    data = comparison().to_dict()
    assert isinstance(data["comparisons"][0], dict)
    assert data["systems"] == ["bm25", "dense"]


def test_from_dict_builds_nested_reports_and_checks_them():
    data = comparison().to_dict()
    rebuilt = ComparisonReport.from_dict(data)
    assert isinstance(rebuilt.comparisons[0], PairedComparison)
    row = dict(data["comparisons"][0], wins="2")
    with pytest.raises(TypeError, match=r"comparisons\[0\]\.wins is a JSON string"):
        ComparisonReport.from_dict({**data, "comparisons": [row]})
    failure = {"query_id": "q1", "error_type": "E", "message": "m", "attempts": -1}
    with pytest.raises(ValueError, match=r"failures\[0\]\.attempts is -1"):
        RetrievalEvalReport.from_dict(
            {"metrics": {}, "per_query": {}, "n_queries": 0, "k_values": [1], "failures": [failure]}
        )
