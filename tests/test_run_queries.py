"""A run's query ids are checked against the judged queries, the same way at every entry point.

No judged query in the run is an error naming both sides and the likely cause (a prefix, zero
padding, letter case); some judged queries missing is one warning with the counts and the
first ids; the manifest records the counts; ``missing_queries`` chooses another rule.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pandas
import pytest
from speedups_switch import speedups_off, speedups_on

from ef.evaluation import (
    MissingQueriesError,
    MissingQueriesWarning,
    compare,
    evaluate_rag,
    evaluate_retrieval,
    evaluate_run,
    fuse,
    write_run,
)
from ef.evaluation._scoring.run_queries import check_run_queries, likely_cause

QRELS = {"1": {"d1": 1.0}, "2": {"d2": 1.0}, "3": {"d3": 1.0}}
PREFIXED = {"q1": ["d1"], "q2": ["d2"], "q3": ["d3"]}
OPTIONS: dict[str, Any] = {"k_values": (1,), "metrics": ("ndcg",)}


def _no_warning() -> Any:
    catcher = warnings.catch_warnings()
    catcher.__enter__()
    warnings.simplefilter("error")
    return catcher


# The one check and its guess


@pytest.mark.parametrize(
    ("judged", "present", "cause", "example"),
    [
        (["1", "2", "3"], ["q1", "q2", "q3"], "a prefix", ("1", "q1")),
        (["q1", "q2"], ["query_1", "query_2"], "a prefix", ("q1", "query_1")),
        (["1", "2", "10"], ["001", "002", "010"], "zero padding", ("1", "001")),
        (["Q1", "Q2"], ["q1", "q2"], "letter case", ("Q1", "q1")),
        (["1", "2"], ["1 ", "2 "], "whitespace", ("1", "1 ")),
        (["1", "2"], ["1-test", "2-test"], "a suffix", ("1", "1-test")),
        (["1", "2", "3"], ["Q001", "Q002", "Q003"], "zero padding and a prefix", ("1", "Q001")),
    ],
)
def test_the_likely_cause_of_a_mismatch_is_named_with_an_example(judged, present, cause, example):
    assert likely_cause(judged, present) == (cause, example)


def test_ids_no_simple_difference_relates_have_no_cause():
    assert likely_cause(["1", "2", "3"], ["a", "b", "c"]) is None
    assert likely_cause(["q1"], ["q2"]) is None  # one id each: no prefix stripped to nothing
    assert likely_cause([], ["q1"]) is None


def test_one_shared_query_is_a_warning_not_an_error():
    with pytest.warns(MissingQueriesWarning, match="2 of 3 judged queries are not in the run"):
        coverage = check_run_queries(["1", "2", "3"], {"1", "x"}, missing_queries="warn")
    assert (coverage.judged, coverage.found) == (3, 1)


def test_an_unknown_rule_is_refused_before_anything_is_scored():
    with pytest.raises(ValueError, match="missing_queries must be 'zero', 'warn' or 'error'"):
        evaluate_run(PREFIXED, QRELS, missing_queries="skip")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="missing_queries must be"):
        compare({"a": PREFIXED, "b": PREFIXED}, QRELS, baseline="a", missing_queries="Zero")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="missing_queries must be"):
        fuse([PREFIXED, PREFIXED], missing_queries=None)  # type: ignore[arg-type]


# evaluate_run: every form of run


def test_a_run_sharing_no_query_with_the_qrels_is_refused_naming_both_sides_and_the_cause():
    with pytest.raises(MissingQueriesError) as caught:
        evaluate_run(PREFIXED, QRELS)
    assert str(caught.value) == (
        "none of the judged queries (3) is in the run, which has 3 queries "
        "(the qrels: '1', '2', '3'; the run: 'q1', 'q2', 'q3'); "
        "likely cause: a prefix ('q1' in the run is '1' in the qrels)"
    )
    assert isinstance(caught.value, ValueError)  # code catching ValueError keeps working


@pytest.mark.parametrize(
    ("run", "words"),
    [
        ({"001": ["d1"], "002": ["d2"]}, "likely cause: zero padding ('001' in the run is '1'"),
        ({"Q-1": ["d1"]}, "likely cause: a prefix ('Q-1' in the run is '1' in the qrels)"),
        ({"a": ["d1"], "b": ["d2"]}, "no prefix, suffix, zero padding, letter case or whitespace"),
        ({}, "which has no query at all (the qrels: '1', '2', '3')"),
    ],
)
def test_each_mismatch_names_its_likely_cause(run, words):
    with pytest.raises(MissingQueriesError, match="none of the judged queries") as caught:
        evaluate_run(run, QRELS)
    assert words in str(caught.value)


def test_a_run_missing_some_judged_queries_warns_once_with_the_counts_and_the_first_ids():
    qrels = {str(i): {"d1": 1.0} for i in range(300)}
    run = {str(i): ["d1"] for i in range(300) if i % 5 < 3}  # 180 of them
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = evaluate_run(run, qrels, **OPTIONS)
    assert [type(w.message) for w in caught] == [MissingQueriesWarning]
    assert str(caught[0].message) == (
        "120 of 300 judged queries are not in the run; they score 0: "
        "'3', '4', '8', '9', '13' and 115 more"
    )
    assert caught[0].filename == __file__  # pointed at the caller
    assert report.metrics["ndcg@1"] == 0.6 and report.n_queries == 300
    assert report.manifest["run"] == {
        "queries": 180,
        "judged_queries": 300,
        "judged_queries_in_run": 180,
        "missing_queries": "warn",
    }


def test_missing_queries_zero_scores_them_0_silently_even_with_no_shared_id():
    catcher = _no_warning()
    try:
        report = evaluate_run(PREFIXED, QRELS, missing_queries="zero", **OPTIONS)
        partial = evaluate_run({"1": ["d1"]}, QRELS, missing_queries="zero", **OPTIONS)
    finally:
        catcher.__exit__(None, None, None)
    assert report.metrics["ndcg@1"] == 0.0 and report.n_queries == 3
    assert report.manifest["run"]["judged_queries_in_run"] == 0
    assert partial.manifest["run"] == {
        "queries": 1,
        "judged_queries": 3,
        "judged_queries_in_run": 1,
        "missing_queries": "zero",
    }


def test_missing_queries_error_refuses_a_run_lacking_any_judged_query():
    with pytest.raises(MissingQueriesError) as caught:
        evaluate_run({"1": ["d1"], "2": ["d2"]}, QRELS, missing_queries="error")
    assert str(caught.value) == (
        "1 of 3 judged queries are not in the run: '3' (refused under missing_queries='error')"
    )
    full = evaluate_run({"1": ["d1"], "2": ["d2"], "3": []}, QRELS, missing_queries="error")
    assert full.manifest["run"]["judged_queries_in_run"] == 3


def test_a_partial_mismatch_names_its_cause_from_the_runs_other_ids():
    run = {"1": ["d1"], "002": ["d2"], "003": ["d3"]}
    with pytest.warns(MissingQueriesWarning) as caught:
        evaluate_run(run, QRELS)
    assert str(caught[0].message) == (
        "2 of 3 judged queries are not in the run; they score 0: '2', '3'; "
        "likely cause: zero padding ('002' in the run is '2' in the qrels)"
    )


def test_only_judged_queries_count_and_unjudged_ones_in_the_run_are_ignored():
    qrels = {**QRELS, "4": {"d4": 0.0}}  # nothing relevant: skipped, not judged here
    report = evaluate_run({"1": ["d1"], "2": [], "3": [], "x": ["d9"]}, qrels, **OPTIONS)
    assert report.manifest["run"]["judged_queries"] == 3
    assert report.manifest["run"]["judged_queries_in_run"] == 3


def test_a_bad_entry_is_named_before_the_runs_queries_are_judged():
    with pytest.raises(TypeError, match="run, query '1': the entry is a int"):
        evaluate_run({"1": 5}, QRELS)


def test_a_dataframe_run_is_checked_as_its_dict():
    frame = pandas.DataFrame({"qid": ["q1", "q2"], "docno": ["d1", "d2"], "score": [1.0, 1.0]})
    with pytest.raises(MissingQueriesError, match=r"likely cause: a prefix \('q1' in the run"):
        evaluate_run(frame, QRELS)
    partial = pandas.DataFrame({"qid": ["1"], "docno": ["d1"], "score": [1.0]})
    with pytest.warns(MissingQueriesWarning, match="2 of 3 judged queries are not in the run"):
        report = evaluate_run(partial, QRELS, **OPTIONS)
    assert report.manifest["run"]["judged_queries_in_run"] == 1


@pytest.mark.parametrize("name", ["run.json", "run.jsonl", "run.parquet"])
def test_a_run_file_read_whole_is_checked_and_named_by_its_path(tmp_path, name):
    path = tmp_path / name
    write_run(path, {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}})
    with pytest.raises(MissingQueriesError) as caught:
        evaluate_run(path, QRELS)
    assert f"none of the judged queries (3) is in {path}, which has 2 queries" in str(caught.value)
    write_run(path, {"1": {"d1": 1.0}})
    with pytest.warns(MissingQueriesWarning, match=f"2 of 3 judged queries are not in {path}"):
        report = evaluate_run(path, QRELS, **OPTIONS)
    assert report.manifest["run"]["judged_queries_in_run"] == 1


def test_a_streamed_trec_run_file_is_checked_once_read(trec_run_parser, tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 1.0 x\nq2 Q0 d2 1 1.0 x\n")
    with pytest.raises(MissingQueriesError) as caught:
        evaluate_run(path, QRELS)
    assert str(caught.value) == (
        f"none of the judged queries (3) is in {path}, which has 2 queries (the qrels: '1', "
        f"'2', '3'; {path}: 'q1', 'q2'); likely cause: a prefix ('q1' in {path} is '1' in the "
        "qrels)"
    )
    path.write_text("1 Q0 d1 1 1.0 x\n3 Q0 d1 1 1.0 x\n")
    with pytest.warns(MissingQueriesWarning) as warned:
        streamed = evaluate_run(path, QRELS, **OPTIONS)
    assert str(warned[0].message) == f"1 of 3 judged queries are not in {path}; they score 0: '2'"
    assert warned[0].filename == __file__
    assert streamed.manifest["run"] == {
        "queries": 2,
        "judged_queries": 3,
        "judged_queries_in_run": 2,
        "missing_queries": "warn",
    }
    with pytest.raises(MissingQueriesError, match="refused under missing_queries='error'"):
        evaluate_run(path, QRELS, missing_queries="error")
    zero = evaluate_run(path, QRELS, missing_queries="zero", **OPTIONS)
    assert zero.metrics == streamed.metrics


def test_evaluate_retrieval_keeps_asking_every_judged_query_without_a_word():
    catcher = _no_warning()
    try:
        report = evaluate_retrieval(
            lambda query: [], QRELS, {q: q for q in QRELS}, k_values=(1,), metrics=("ndcg",)
        )
    finally:
        catcher.__exit__(None, None, None)
    assert report.metrics["ndcg@1"] == 0.0 and report.n_queries == 3
    assert "run" not in report.manifest


# compare


def test_compare_names_the_system_whose_run_shares_no_query_with_the_qrels():
    runs = {"bm25": {"1": ["d1"], "2": ["d2"], "3": ["d3"]}, "dense": PREFIXED}
    with pytest.raises(MissingQueriesError) as caught:
        compare(runs, QRELS, baseline="bm25", metrics=("ndcg@10",))
    assert "none of the judged queries (3) is in system 'dense'" in str(caught.value)
    assert "likely cause: a prefix ('q1' in system 'dense' is '1' in the qrels)" in str(
        caught.value
    )


def test_compare_warns_once_per_partial_run_and_takes_the_rule():
    runs = {"bm25": {"1": ["d1"], "2": ["d2"], "3": ["d3"]}, "dense": {"1": ["d1"]}}
    options: dict[str, Any] = {"baseline": "bm25", "metrics": ("ndcg@10",), "tests": ("t-test",)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = compare(runs, QRELS, **options)
    assert [str(w.message) for w in caught] == [
        "2 of 3 judged queries are not in system 'dense'; they score 0: '2', '3'"
    ]
    assert report.n_queries == 3 and report.means["dense"]["ndcg@10"] == pytest.approx(1 / 3)
    with pytest.raises(MissingQueriesError, match="not in system 'dense': '2', '3'"):
        compare(runs, QRELS, missing_queries="error", **options)
    catcher = _no_warning()
    try:
        assert compare(runs, QRELS, missing_queries="zero", **options) == report
    finally:
        catcher.__exit__(None, None, None)


def test_compare_names_the_likely_cause_when_reports_hold_differently_spelled_ids():
    plain = evaluate_run({"1": ["d1"], "2": ["d2"], "3": ["d3"]}, QRELS)
    padded_qrels = {f"00{q}": judged for q, judged in QRELS.items()}
    padded = evaluate_run({"001": ["d1"], "002": ["d2"], "003": []}, padded_qrels)
    with pytest.raises(MissingQueriesError) as caught:
        compare({"a": plain, "b": padded}, baseline="a")
    message = str(caught.value)
    assert "system 'a' lacks 3 queries: '001', '002', '003'" in message
    assert "likely cause: zero padding, '1' in system 'a' is '001' elsewhere" in message


def test_compare_of_rag_reports_names_the_likely_cause_of_ids_that_do_not_pair():
    samples = [{"response": "Paris", "reference": "Paris"}, {"response": "4", "reference": "4"}]
    first = evaluate_rag(samples, metrics=["exact_match"], ids=["1", "2"])
    second = evaluate_rag(samples, metrics=["exact_match"], ids=["Q1", "Q2"])
    with pytest.raises(MissingQueriesError) as caught:
        compare({"a": first, "b": second}, baseline="a")
    assert "likely cause: a prefix, 'Q1' in system 'b' is '1' elsewhere" in str(caught.value)


# fuse


@pytest.fixture(params=["compiled", "python"])
def fusion_path(request: pytest.FixtureRequest) -> Any:
    """With the speedups plugin's compiled kernel (plain dicts), then without it."""
    switch = speedups_on if request.param == "compiled" else speedups_off
    with switch():
        yield request.param


def test_fuse_refuses_a_run_sharing_no_query_with_the_others(fusion_path):
    bm25 = {"1": {"d1": 2.0}, "2": {"d2": 1.0}}
    dense = {"q1": {"d1": 0.5}, "q2": {"d3": 0.4}}
    with pytest.raises(MissingQueriesError) as caught:
        fuse([bm25, dense], method="rrf")
    assert str(caught.value) == (
        "none of the queries of run 2 (2) is in run 1, which has 2 queries (run 2: 'q1', 'q2'; "
        "run 1: '1', '2'); likely cause: a prefix ('1' in run 1 is 'q1' in run 2)"
    )
    catcher = _no_warning()
    try:
        fused = fuse([bm25, dense], method="rrf", missing_queries="zero")
    finally:
        catcher.__exit__(None, None, None)
    assert list(fused) == ["1", "2", "q1", "q2"]


def test_fuse_warns_of_each_run_lacking_the_others_queries(fusion_path):
    runs = [
        {"q1": {"d1": 2.0}, "q2": {"d2": 1.0}, "q3": {"d3": 1.0}},
        {"q1": {"d1": 0.5}, "q2": {}},  # q2: returned nothing, but it is there
        {"q1": {"d1": 0.5}, "q2": {"d2": 0.1}, "q3": {"d3": 0.2}},
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fused = fuse(runs, method="sum")
    assert [str(w.message) for w in caught] == [
        "1 of 3 queries of the other runs are not in run 2; they are fused from the other runs "
        "alone: 'q3'"
    ]
    assert caught[0].filename == __file__
    assert fused == fuse(runs, method="sum", missing_queries="zero")
    with pytest.raises(MissingQueriesError, match="not in run 2: 'q3' \\(refused under"):
        fuse(runs, method="sum", missing_queries="error")


def test_fuse_checks_dataframe_runs_once_read():
    frame = pandas.DataFrame({"qid": ["1", "2"], "docno": ["d1", "d2"], "score": [1.0, 0.5]})
    with pytest.raises(MissingQueriesError, match=r"likely cause: a prefix \('1' in run 1"):
        fuse([frame, {"q1": {"d1": 1.0}, "q2": {"d2": 0.5}}], method="rrf")
    with pytest.warns(MissingQueriesWarning, match="1 of 2 queries of run 1 are not in run 2"):
        fuse([frame, {"1": {"d1": 1.0}}], method="rrf")


def test_fuse_checks_the_arguments_before_the_queries():
    with pytest.raises(ValueError, match="1 weights given for 2 runs"):
        fuse([{"q1": {"d1": 1.0}}, {"q2": {"d1": 1.0}}], method="wsum", weights=[1.0])


def test_a_file_named_in_a_warning_is_the_callers(tmp_path: Path):
    with pytest.warns(MissingQueriesWarning) as caught:
        compare(
            {"a": {"1": ["d1"]}, "b": {"1": ["d1"], "2": [], "3": []}},
            QRELS,
            baseline="a",
            tests=("t-test",),
        )
    assert caught[0].filename == __file__
