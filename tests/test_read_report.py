"""read_report: any saved report back as the class of its kind, or an error naming the file."""

from __future__ import annotations

import json

import pytest

from ef.evaluation import (
    ComparisonReport,
    RagEvalReport,
    RetrievalEvalReport,
    SuiteReport,
    compare,
    evaluate_rag,
    evaluate_run,
    read_report,
    suite_report,
)

QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 2}}
RUNS = {
    "a": {"q1": ["d9", "d1"], "q2": ["d2"], "q3": ["d8", "d7", "d3"]},
    "b": {"q1": ["d1"], "q2": ["d9", "d2"], "q3": ["d3"]},
}


def _saved(tmp_path, name, report):
    path = tmp_path / name
    path.write_text(report.to_json(), encoding="utf-8")
    return path


def test_each_kind_comes_back_as_its_class_and_equal(tmp_path):
    retrieval = evaluate_run(RUNS["a"], QRELS, k_values=(1, 3))
    rag = evaluate_rag(
        [{"user_input": "q", "response": "a b", "reference": "a c", "retrieved_contexts": []}]
    )
    comparison = compare(RUNS, QRELS, baseline="a", metrics=("ndcg@3",), tests=("t-test",))
    for report, cls in (
        (retrieval, RetrievalEvalReport),
        (rag, RagEvalReport),
        (comparison, ComparisonReport),
    ):
        loaded = read_report(_saved(tmp_path, f"{cls.__name__}.json", report))
        assert type(loaded) is cls
        assert loaded == cls.from_json(report.to_json()) == report


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[1, 2]", "JSON list"),
        ('{"metrics": {}}', "without the fields"),
        ("{not json", "not a report"),
        ('{"metrics": {"x": NaN}, "per_query": {}, "n_queries": 0, "k_values": [1]}', "NaN"),
    ],
)
def test_a_file_that_is_not_a_report_is_named(tmp_path, text, words):
    path = tmp_path / "thing.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=r"thing\.json") as caught:
        read_report(path)
    assert words in str(caught.value)


def test_a_report_with_a_wrong_field_is_named(tmp_path):
    data = json.loads(evaluate_run(RUNS["a"], QRELS).to_json())
    data["n_queries"] = "three"
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(TypeError, match=r"broken\.json: a retrieval report with .*n_queries"):
        read_report(path)


def test_a_suite_comes_back_as_a_suite_report_and_equal(tmp_path):
    # With a baseline, a suite also holds a comparison's fields: it must still read as a suite.
    other = {"q1": {"d1": 2}, "q2": {"d2": 1}, "q3": {"d9": 1}}
    cells = {
        dataset: {name: evaluate_run(run, qrels, k_values=(1, 3)) for name, run in RUNS.items()}
        for dataset, qrels in (("first", QRELS), ("second", other))
    }
    suite = suite_report(
        cells, metric="ndcg@3", baseline="a", compare_options={"tests": ("t-test",)}
    )
    assert suite.comparisons  # the fields a comparison report has are there
    path = _saved(tmp_path, "suite.json", suite)
    loaded = read_report(path)
    assert type(loaded) is SuiteReport
    assert loaded == SuiteReport.from_json(path.read_text(encoding="utf-8")) == suite
    assert loaded.to_json() == suite.to_json()
