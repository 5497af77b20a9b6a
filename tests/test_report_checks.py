"""A report is checked where it is made: a value JSON could not hold, or a count below 0, is
refused naming the report class, the field (with the query or metric key inside it) and the
value, as strictly as a report read from JSON, whose fields are checked once."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from ef.evaluation import (
    GroupResult,
    MeanIntervals,
    QueryFailure,
    RagEvalReport,
    RetrievalEvalReport,
    check,
    compare,
    evaluate_rag,
    judgement_agreement,
    parse_rule,
    pool_runs,
    qrels_statistics,
    suite_report,
)
from ef.evaluation._report.fields import JsonReport, checked, finite

NAN, INF = math.nan, math.inf
QRELS = {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}, "q3": {"d3": 1.0}}


def retrieval(values: dict[str, float]) -> RetrievalEvalReport:
    per_query = {query: {"ndcg@10": value} for query, value in values.items()}
    mean = sum(values.values()) / len(values)
    return RetrievalEvalReport({"ndcg@10": mean}, per_query, len(values), (10,))


BASELINE = retrieval({"q1": 0.2, "q2": 0.4, "q3": 0.3})
BETTER = retrieval({"q1": 0.6, "q2": 0.5, "q3": 0.7})


def test_a_report_of_impossible_values_is_refused_naming_the_field_and_value() -> None:
    with pytest.raises(ValueError) as caught:
        RetrievalEvalReport({"ndcg@10": NAN}, {"q1": {"ndcg@10": INF}}, -3, (10,))
    assert str(caught.value) == (
        "RetrievalEvalReport.metrics['ndcg@10'] is nan; expected a finite number"
    )


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (
            lambda: RetrievalEvalReport({"ndcg@10": 0.5}, {"q1": {"ndcg@10": INF}}, 1, (10,)),
            ValueError,
            "RetrievalEvalReport.per_query['q1']['ndcg@10'] is inf; expected a finite number",
        ),
        (
            lambda: RetrievalEvalReport({}, {}, -3, (10,)),
            ValueError,
            "RetrievalEvalReport.n_queries is -3; expected an integer >= 0",
        ),
        (
            lambda: RetrievalEvalReport({}, {}, "3", (10,)),
            TypeError,
            "RetrievalEvalReport.n_queries is '3' (a str); expected an integer",
        ),
        (
            lambda: RetrievalEvalReport({}, {}, 0, (10, -1)),
            ValueError,
            "RetrievalEvalReport.k_values[1] is -1; expected an integer >= 0",
        ),
        (
            lambda: RetrievalEvalReport({"P@5": "0.5"}, {}, 0, (5,)),
            TypeError,
            "RetrievalEvalReport.metrics['P@5'] is '0.5' (a str); expected a number",
        ),
        (
            lambda: RetrievalEvalReport({}, {}, 0, (10,), latency={"q7": -INF}),
            ValueError,
            "RetrievalEvalReport.latency['q7'] is -inf; expected a finite number",
        ),
        (
            lambda: RetrievalEvalReport({}, {}, 0, (10,), skipped={"q2": None}),
            TypeError,
            "RetrievalEvalReport.skipped['q2'] is None; expected a string",
        ),
        (
            lambda: RetrievalEvalReport(
                {}, {}, 0, (10,), failures=[{"query_id": "q1", "attempts": 1}]
            ),
            TypeError,
            "RetrievalEvalReport.failures[0] is {'query_id': 'q1', 'attempts': 1} (a dict); "
            "expected a QueryFailure",
        ),
        (
            lambda: QueryFailure("q1", "TimeoutError", "timed out", -1),
            ValueError,
            "QueryFailure.attempts is -1; expected an integer >= 0",
        ),
        (
            lambda: RagEvalReport({"token_f1": 0.5}, {"token_f1": 1}, 1, per_sample=[{"x": NAN}]),
            ValueError,
            "RagEvalReport.per_sample[0]['x'] is nan; expected a finite number",
        ),
        (
            lambda: RagEvalReport({"exact_match": 0.5}, {"exact_match": -4}, 4),
            ValueError,
            "RagEvalReport.coverage['exact_match'] is -4; expected an integer >= 0",
        ),
        (
            lambda: GroupResult({"ndcg@10": NAN}, 2),
            ValueError,
            "GroupResult.metrics['ndcg@10'] is nan; expected a finite number",
        ),
        (
            lambda: MeanIntervals("t", NAN, {}),
            ValueError,
            "MeanIntervals.confidence_level is nan; expected a finite number",
        ),
    ],
)
def test_each_field_is_checked_where_the_report_is_made(
    make: Callable[[], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as caught:
        make()
    assert str(caught.value) == message


def real_reports() -> dict[str, Any]:
    """One report of each class made by the library, to change one field of."""
    comparison = compare({"a": BASELINE, "b": BETTER}, baseline="a", tests=("randomization",))
    gate = check(BETTER, BASELINE, [parse_rule("ndcg@10 >= 0.1")])
    agreement = judgement_agreement(
        {"alice": {"q1": {"d1": 1, "d2": 0}}, "bob": {"q1": {"d1": 1, "d2": 1}}}
    )
    return {
        "ComparisonReport": comparison,
        "PairedComparison": comparison.comparisons[0],
        "CheckReport": gate,
        "RuleResult": gate.results[0],
        "JudgementAgreement": agreement,
        "JudgementPool": pool_runs({"bm25": {"q1": ["d1", "d2"]}}, depth=2),
        "QrelsStatistics": qrels_statistics(QRELS),
        "SuiteReport": suite_report({"a": {"bm25": BASELINE}}, systems=("bm25",)),
        "RagEvalReport": evaluate_rag(
            [{"response": "Paris", "reference": "Paris", "retrieved_contexts": []}]
        ),
    }


@pytest.mark.parametrize(
    ("name", "changes", "error", "message"),
    [
        ("ComparisonReport", {"alpha": NAN}, ValueError, "alpha is nan"),
        ("ComparisonReport", {"means": {"a": {"ndcg@10": INF}}}, ValueError, "means['a']"),
        ("PairedComparison", {"difference": -INF}, ValueError, "difference is -inf"),
        ("PairedComparison", {"wins": -1}, ValueError, "wins is -1"),
        ("CheckReport", {"n_queries": 1.5}, TypeError, "n_queries is 1.5 (a float)"),
        ("CheckReport", {"results": ({"rule": "x"},)}, TypeError, "results[0] is {'rule'"),
        ("RuleResult", {"value": NAN}, ValueError, "value is nan"),
        ("RuleResult", {"rule": {"metric": "ndcg@10"}}, TypeError, "rule is {'metric'"),
        ("JudgementAgreement", {"fleiss_kappa": INF}, ValueError, "fleiss_kappa is inf"),
        ("JudgementPool", {"depth": -2}, ValueError, "depth is -2"),
        ("QrelsStatistics", {"depth": "10"}, TypeError, "depth is '10' (a str)"),
        ("SuiteReport", {"macro": {"bm25": {"ndcg@10": NAN}}}, ValueError, "macro['bm25']"),
        ("RagEvalReport", {"metrics": {"token_f1": INF}}, ValueError, "metrics['token_f1']"),
    ],
)
def test_every_report_class_checks_its_fields_when_made_or_changed(
    name: str, changes: dict[str, Any], error: type[Exception], message: str
) -> None:
    report = real_reports()[name]
    with pytest.raises(error) as caught:
        attrs.evolve(report, **changes)
    assert str(caught.value).startswith(f"{name}.{message}"), str(caught.value)


def test_the_check_of_many_values_at_once_is_exact() -> None:
    # Finite values whose sum overflows, and integers, pass; one bad value among thousands
    # (a NaN, an infinity, a string, a number JSON cannot hold) is found and named.
    huge = {f"q{i}": {"num_ret": 1e308, "ndcg@10": 0.5, "num_rel": i} for i in range(2000)}
    assert RetrievalEvalReport({}, huge, 2000, (10,)).per_query["q7"]["num_rel"] == 7
    cases = [(NAN, "nan"), (-INF, "-inf"), ("1", "'1' (a str)"), (1j, "1j (a complex)")]
    for bad, shown in cases:
        values = {**huge, "q1999": {**huge["q1999"], "ndcg@10": bad}}
        with pytest.raises((TypeError, ValueError), match=r"^RetrievalEvalReport\.per_query"):
            RetrievalEvalReport({}, values, 2000, (10,))
        with pytest.raises((TypeError, ValueError)) as caught:
            RetrievalEvalReport({}, values, 2000, (10,))
        assert f"per_query['q1999']['ndcg@10'] is {shown};" in str(caught.value)


def test_each_field_is_checked_once_whether_made_in_code_or_read_from_json() -> None:
    seen: list[str] = []

    def counted(value: Any, where: str) -> float:
        seen.append(where)
        return finite(value, where)

    @attrs.frozen
    class Point(JsonReport):
        x: float = attrs.field(metadata=checked(counted))

    point = Point(0.5)
    assert seen == ["Point.x"]
    seen.clear()
    assert Point.from_json(point.to_json()) == point
    assert seen == ["x"]  # by the JSON's checks, named as in the file; not again when made
    with pytest.raises(ValueError, match=r"^x is inf; expected a finite number$"):
        Point.from_dict({"x": INF})


def test_a_report_read_from_json_keeps_the_json_words() -> None:
    data = BASELINE.to_dict()
    data["per_query"]["q1"]["ndcg@10"] = "0.5"
    with pytest.raises(TypeError) as caught:
        RetrievalEvalReport.from_dict(data)
    assert str(caught.value) == "per_query['q1']['ndcg@10'] is a JSON string; expected a number"
    # Made in code, the same value is named by its Python type, with the class.
    with pytest.raises(TypeError, match=r"^RetrievalEvalReport\.per_query\['q1'\]\['ndcg@10'\] "):
        RetrievalEvalReport({}, data["per_query"], 3, (10,))
