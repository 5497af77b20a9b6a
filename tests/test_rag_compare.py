"""compare() on RAG reports: pairing samples by id, leaving not-applicable pairs out."""

from __future__ import annotations

import math
from typing import Any

import attrs
import pytest
from scipy import stats

from ef.evaluation import (
    ComparisonReport,
    RagEvalReport,
    RetrievalEvalReport,
    compare,
    evaluate_rag,
)

QUESTIONS = [f"question {i}?" for i in range(12)]
REFERENCES = [f"answer number {i} is here" for i in range(12)]


def pipeline(answers: list[str | None]) -> list[dict[str, Any]]:
    """Samples of one pipeline; ``None`` leaves the response out (the metric does not apply)."""
    samples = []
    for question, reference, answer in zip(QUESTIONS, REFERENCES, answers, strict=True):
        sample: dict[str, Any] = {"user_input": question, "reference": reference}
        if answer is not None:
            sample["response"] = answer
        samples.append(sample)
    return samples


BASELINE = [
    "answer",
    "number",
    None,
    "answer number 3",
    "here",
    "x",
    "answer 6",
    "7",
    "is",
    "answer number 9 is",
    "number 10",
    "no",
]
BETTER = [
    "answer number 0",
    "answer number 1 is here",
    "answer number 2",
    None,
    "answer number 4 is",
    "answer 5",
    "answer number 6 is here",
    "number 7",
    "is here",
    "answer number 9 is here",
    "answer number 10",
    "answer",
]


def test_two_pipelines_pair_by_user_input_and_match_scipy() -> None:
    base = evaluate_rag(pipeline(BASELINE), metrics=["token_f1"])
    better = evaluate_rag(pipeline(BETTER), metrics=["token_f1"])
    assert base.sample_ids == tuple(QUESTIONS)
    report = compare({"base": base, "better": better}, baseline="base", tests=("t-test",))
    assert report.metrics == ("token_f1",)  # the default metric for RAG reports
    row = report.comparison("better", "token_f1")
    kept = [
        (ours["token_f1"], theirs["token_f1"])
        for ours, theirs in zip(better.per_sample, base.per_sample, strict=True)
        if ours["token_f1"] is not None and theirs["token_f1"] is not None
    ]
    assert row.not_applicable == 2  # sample 2 (baseline) and sample 3 (better) lack a response
    assert row.wins + row.ties + row.losses == len(kept) == 10
    values, baseline_values = [v for v, _ in kept], [b for _, b in kept]
    assert row.mean == pytest.approx(math.fsum(values) / 10, abs=1e-12)
    assert row.baseline_mean == pytest.approx(math.fsum(baseline_values) / 10, abs=1e-12)
    expected = stats.ttest_rel(values, baseline_values).pvalue
    assert row.p_values["t-test"] == pytest.approx(expected, abs=1e-12)
    # The report's means are each system's own, over the samples its metric applied to.
    assert report.means["base"]["token_f1"] == base.metrics["token_f1"]
    assert report.means["better"]["token_f1"] == better.metrics["token_f1"]
    assert report.n_queries == 12


def test_rag_comparison_is_the_retrieval_comparison_on_the_kept_pairs() -> None:
    """Same tests, corrections, intervals and tables as retrieval, on the applicable pairs."""
    base = evaluate_rag(pipeline(BASELINE), metrics=["token_f1"])
    better = evaluate_rag(pipeline(BETTER), metrics=["token_f1"])
    options: dict[str, Any] = {
        "baseline": "base",
        "tests": ("randomization", "t-test", "wilcoxon", "bootstrap"),
        "n_permutations": 500,
        "n_resamples": 500,
        "seed": 3,
    }
    rag = compare({"base": base, "better": better}, **options)

    def as_retrieval(report: RagEvalReport) -> RetrievalEvalReport:
        per_query = {
            sample_id: {"token_f1": float(values["token_f1"] or 0.0)}
            for sample_id, values in zip(report.sample_ids, report.per_sample, strict=True)
            if sample_id not in (QUESTIONS[2], QUESTIONS[3])
        }
        return RetrievalEvalReport({}, per_query, len(per_query), (10,))

    retrieval = compare(
        {"base": as_retrieval(base), "better": as_retrieval(better)},
        metrics=["token_f1"],
        **options,
    )
    ours, theirs = rag.comparison("better", "token_f1"), retrieval.comparison("better", "token_f1")
    assert attrs.evolve(ours, not_applicable=0) == theirs
    # The tables say which pairs were left out (the means are each system's own).
    left_out = "Pairs left out where the metric did not apply to a side: better on token_f1: 2."
    assert rag.to_markdown().endswith(left_out + "\n")
    assert "Pairs left out" not in retrieval.to_markdown()
    assert "better on token_f1: 2" in rag.to_details_table().caption


def test_samples_pair_by_id_not_by_position() -> None:
    samples = pipeline(BETTER)
    forward = evaluate_rag(samples, metrics=["token_f1"], ids=[f"s{i}" for i in range(12)])
    backward = evaluate_rag(
        samples[::-1], metrics=["token_f1"], ids=[f"s{i}" for i in reversed(range(12))]
    )
    report = compare({"a": forward, "b": backward}, baseline="a", tests=("t-test",))
    row = report.comparison("b", "token_f1")
    assert (row.wins, row.losses, row.difference) == (0, 0, 0.0)
    assert row.ties == 11 and row.not_applicable == 1


def test_repeated_questions_need_ids_and_the_error_says_so() -> None:
    samples = [{"user_input": "same?", "response": "a", "reference": "a"}] * 2
    report = evaluate_rag(samples, metrics=["token_f1"])
    assert report.sample_ids == ()
    with pytest.raises(ValueError, match=r"system 'a'.* no sample ids.* pass ids= to evaluate_rag"):
        compare({"a": report, "b": report}, baseline="a")
    with_ids = evaluate_rag(samples, metrics=["token_f1"], ids=["x", "y"])
    assert with_ids.sample_ids == ("x", "y")
    assert compare({"a": with_ids, "b": with_ids}, baseline="a").n_queries == 2


def test_a_sample_without_user_input_leaves_the_report_without_ids() -> None:
    samples = [{"user_input": "q", "response": "a", "reference": "a"}, {"response": "b"}]
    report = evaluate_rag(samples, metrics=["token_f1"])
    assert report.sample_ids == ()


@pytest.mark.parametrize(
    ("ids", "error", "message"),
    [
        (["a"], ValueError, r"ids has 1 ids for 2 samples"),
        (["a", "a"], ValueError, r"ids must be unique: 'a' is given twice"),
        (["a", 2], TypeError, r"ids\[1\] must be a string"),
        ("ab", TypeError, r"ids must be a sequence of strings"),
    ],
)
def test_bad_ids_are_refused(ids: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        evaluate_rag(
            [{"response": "a", "reference": "a"}, {"response": "b"}], ids=ids, metrics=["token_f1"]
        )


def test_systems_missing_samples_are_named() -> None:
    full = evaluate_rag(pipeline(BETTER), metrics=["token_f1"])
    part = evaluate_rag(pipeline(BETTER)[:10], metrics=["token_f1"])
    with pytest.raises(ValueError, match=r"system 'part' lacks 2 queries: 'question 10\?'"):
        compare({"full": full, "part": part}, baseline="full")


def test_a_metric_not_computed_is_named_with_what_the_report_has() -> None:
    report = evaluate_rag(pipeline(BETTER), metrics=["token_f1"])
    with pytest.raises(ValueError, match=r"has no 'exact_match'.*\(it has: token_f1\)"):
        compare({"a": report, "b": report}, baseline="a", metrics=["exact_match"])


def test_a_metric_that_applies_to_no_pair_is_an_error() -> None:
    answered = evaluate_rag(pipeline(BETTER[:6] + [None] * 6), metrics=["token_f1"])
    unanswered = evaluate_rag(pipeline([None] * 6 + BETTER[6:]), metrics=["token_f1"])
    with pytest.raises(ValueError, match=r"'token_f1' applies to no sample of both 'b' and"):
        compare({"a": answered, "b": unanswered}, baseline="a")


def test_rag_reports_and_retrieval_systems_do_not_mix() -> None:
    rag = evaluate_rag(pipeline(BETTER), metrics=["token_f1"])
    retrieval = RetrievalEvalReport({}, {"q": {"ndcg@10": 1.0}}, 1, (10,))
    with pytest.raises(TypeError, match=r"'a' \(a RAG report\) and 'b' \(retrieval\)"):
        compare({"a": rag, "b": retrieval}, baseline="a")


def test_a_hand_made_report_without_per_sample_values_is_refused() -> None:
    report = RagEvalReport({"token_f1": 0.5}, {"token_f1": 2}, 2)
    with pytest.raises(ValueError, match=r"no per-sample values to pair"):
        compare({"a": report, "b": report}, baseline="a")


def test_sample_ids_and_the_left_out_count_round_trip_through_json() -> None:
    base = evaluate_rag(pipeline(BASELINE), metrics=["token_f1", "exact_match"])
    better = evaluate_rag(pipeline(BETTER), metrics=["token_f1", "exact_match"])
    assert RagEvalReport.from_json(base.to_json()) == base
    report = compare(
        {"base": base, "better": better},
        baseline="base",
        metrics=["token_f1", "exact_match"],
        tests=("t-test",),
    )
    assert ComparisonReport.from_json(report.to_json()) == report
    # A report written before the field existed still reads, with nothing left out.
    data = report.to_dict()
    for row in data["comparisons"]:
        del row["not_applicable"]
    assert ComparisonReport.from_dict(data).comparisons[0].not_applicable == 0


@pytest.mark.parametrize(
    ("sample_ids", "message"),
    [(("a",), r"sample_ids names 1 samples, per_sample has 2"), (("a", "a"), r"unique")],
)
def test_inconsistent_sample_ids_are_refused(sample_ids: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RagEvalReport({}, {}, 2, per_sample=[{}, {}], sample_ids=sample_ids)


@pytest.mark.parametrize(
    ("sample_ids", "error", "message"),
    [
        ([1, "b"], TypeError, r"sample_ids\[0\] is a JSON number; expected a string"),
        ("ab", TypeError, r"sample_ids is a JSON string; expected an array"),
        (None, TypeError, r"sample_ids is a JSON null; expected an array"),
        (["a", "a"], ValueError, r"sample_ids must be unique"),
        (["a"], ValueError, r"sample_ids names 1 samples, per_sample has 2"),
    ],
)
def test_a_damaged_saved_rag_report_names_its_sample_ids(
    sample_ids: object, error: type[Exception], message: str
) -> None:
    data = evaluate_rag(pipeline(BASELINE)[:2], metrics=["token_f1"]).to_dict()
    data["sample_ids"] = sample_ids
    with pytest.raises(error, match=message):
        RagEvalReport.from_dict(data)


def test_a_rag_report_saved_before_sample_ids_reads_without_them() -> None:
    data = evaluate_rag(pipeline(BASELINE)[:2], metrics=["token_f1"]).to_dict()
    del data["sample_ids"]
    assert RagEvalReport.from_dict(data).sample_ids == ()


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (-1, ValueError, r"not_applicable is -1; expected an integer >= 0"),
        (True, TypeError, r"not_applicable is a JSON boolean; expected an integer"),
        (1.5, TypeError, r"not_applicable is a JSON number; expected an integer"),
    ],
)
def test_a_damaged_left_out_count_is_refused(
    value: object, error: type[Exception], message: str
) -> None:
    base = evaluate_rag(pipeline(BASELINE), metrics=["token_f1"])
    better = evaluate_rag(pipeline(BETTER), metrics=["token_f1"])
    data = compare({"base": base, "better": better}, baseline="base", tests=("t-test",)).to_dict()
    data["comparisons"][0]["not_applicable"] = value
    with pytest.raises(error, match=message):
        ComparisonReport.from_dict(data)
