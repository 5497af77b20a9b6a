"""Runs and qrels as pandas, polars and pyarrow frames in; reports as frames out.

A frame must give exactly the report its dict gives, in every library and under every column
alias; every shape that is neither a run nor a frame is a TypeError naming the accepted types
(once, a pandas DataFrame was scored 0 on every query).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import narwhals.stable.v2 as nw
import numpy
import pandas
import polars
import pyarrow
import pytest

from ef.evaluation import (
    MissingQueriesWarning,
    RagEvalReport,
    compare,
    evaluate_rag,
    evaluate_run,
    fuse,
    read_trec_qrels,
    read_trec_run,
    write_trec_qrels,
    write_trec_run,
)

Frame = Callable[[dict[str, list[Any]]], Any]
LIBRARIES: dict[str, Frame] = {
    "pandas": pandas.DataFrame,
    "polars": polars.DataFrame,
    "pyarrow": pyarrow.table,
}

RUN = {
    "q1": {"d1": 0.9, "d2": 0.4, "d3": 0.4, "d7": 0.1},
    "q2": {"d3": 2.0, "d9": 1.5},
    "q3": {"d1": 1.0},
    "q4": {"d5": 3.0, "d6": 3.0},
}
QRELS = {
    "q1": {"d2": 1.0, "d3": 2.0, "d8": 0.0},
    "q2": {"d9": 1.0},
    "q3": {"d4": 1.0},
    "q5": {"d1": 1.0},
}
# q5 is judged but not in RUN (it scores 0), q4 in RUN but not judged: on purpose, no warning.
OPTIONS: dict[str, Any] = {
    "k_values": (1, 3, 10),
    "metrics": ("ndcg", "map", "recall", "P"),
    "missing_queries": "zero",
}


def run_columns(query: str = "query_id", doc: str = "doc_id", score: str = "score") -> dict:
    rows = [(q, d, s) for q, scores in RUN.items() for d, s in scores.items()]
    return {
        query: [row[0] for row in rows],
        doc: [row[1] for row in rows],
        score: [row[2] for row in rows],
    }


def qrels_columns(query: str = "query_id", doc: str = "doc_id", grade: str = "relevance"):
    rows = [(q, d, g) for q, grades in QRELS.items() for d, g in grades.items()]
    return {
        query: [row[0] for row in rows],
        doc: [row[1] for row in rows],
        grade: [row[2] for row in rows],
    }


@pytest.fixture(scope="module")
def expected():
    return evaluate_run(RUN, QRELS, **OPTIONS)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize(
    "names",
    [
        ("query_id", "doc_id", "score"),  # ef's own
        ("q_id", "doc_id", "score"),  # ranx
        ("qid", "docno", "score"),  # PyTerrier, ir_measures
        ("query-id", "corpus-id", "similarity"),
    ],
)
def test_a_run_frame_gives_the_report_of_its_dict(library, names, expected):
    frame = LIBRARIES[library](run_columns(*names))
    assert evaluate_run(frame, QRELS, **OPTIONS) == expected


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize(
    "names",
    [("query_id", "doc_id", "relevance"), ("q_id", "doc_id", "score"), ("qid", "docno", "label")],
)
def test_a_qrels_frame_gives_the_report_of_its_dict(library, names, expected):
    frame = LIBRARIES[library](qrels_columns(*names))
    assert evaluate_run(RUN, frame, **OPTIONS) == expected


def test_a_pyterrier_frame_reads_qid_and_docno_beside_query_text_and_docid(expected):
    columns = run_columns("qid", "docno")
    columns["query"] = ["text"] * len(columns["qid"])
    columns["docid"] = list(range(len(columns["qid"])))
    columns["rank"] = [0] * len(columns["qid"])
    assert evaluate_run(pandas.DataFrame(columns), QRELS, **OPTIONS) == expected


def test_a_rank_column_without_scores_orders_each_query():
    frame = polars.DataFrame(
        {"qid": ["q1", "q1", "q2"], "docno": ["d3", "d2", "d9"], "rank": [2, 1, 1]}
    )
    report = evaluate_run(
        frame, QRELS, k_values=(1,), metrics=("precision",), missing_queries="zero"
    )
    assert report.per_query["q1"]["precision@1"] == 1.0  # d2, ranked 1, is relevant


def test_integer_ids_are_the_same_ids_as_text():
    frame = pandas.DataFrame({"qid": [1, 1], "docno": ["d1", "d2"], "score": [2, 1]})
    qrels = pandas.DataFrame({"query_id": [1], "doc_id": ["d2"], "relevance": [1]})
    report = evaluate_run(frame, qrels, k_values=(1, 2), metrics=("recall",))
    assert report.per_query == {"1": {"recall@1": 0.0, "recall@2": 1.0}}


@pytest.mark.parametrize("library", LIBRARIES)
def test_a_null_score_or_a_repeated_row_is_a_value_error(library):
    make = LIBRARIES[library]
    with pytest.raises(ValueError, match=r"row 1: score column 'score' has no value"):
        evaluate_run(make({"qid": ["q1", "q1"], "docno": ["a", "b"], "score": [1.0, None]}), QRELS)
    repeated = make({"qid": ["q1", "q1"], "docno": ["a", "a"], "score": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"row 1: doc 'a' listed again for query 'q1' \(first"):
        evaluate_run(repeated, QRELS)


@pytest.mark.parametrize("library", LIBRARIES)
def test_a_frame_whose_queries_are_not_grouped_reads_as_its_rows_in_order(library):
    from ef.evaluation._io.frames import run_from_frame

    rows = [("q2", "x", 0.5), ("q1", "a", 1.0), ("q2", "y", 2.0), ("q1", "b", 3.0), ("q3", "a", 1)]
    frame = LIBRARIES[library](
        {
            "qid": [q for q, _, _ in rows],
            "docno": [d for _, d, _ in rows],
            "score": [float(v) for *_, v in rows],
        }
    )
    expected: dict[str, dict[str, float]] = {}
    for query_id, doc_id, score in rows:  # the plain loop over the rows: the oracle
        expected.setdefault(query_id, {})[doc_id] = float(score)
    table = run_from_frame(frame)
    assert table == expected
    assert [list(docs) for docs in table.values()] == [list(docs) for docs in expected.values()]
    assert list(table) == ["q2", "q1", "q3"]
    repeated = LIBRARIES[library](
        {"qid": ["q1", "q2", "q1"], "docno": ["a", "b", "a"], "score": [1.0, 2.0, 3.0]}
    )
    with pytest.raises(ValueError, match=r"row 2: doc 'a' listed again for query 'q1' \(first"):
        evaluate_run(repeated, QRELS)
    nan = LIBRARIES[library](
        {"qid": ["q1", "q1"], "docno": ["a", "b"], "score": [1.0, float("nan")]}
    )
    with pytest.raises(ValueError, match=r"row 1: score column 'score'"):
        evaluate_run(nan, QRELS)


def _generator():
    yield ("q1", "d1", 1.0)


WRONG_RUNS = {
    "missing score": pandas.DataFrame({"qid": ["q1"], "docno": ["d1"]}),
    "missing doc": polars.DataFrame({"qid": ["q1"], "score": [1.0]}),
    "ambiguous query": pyarrow.table({"qid": ["q"], "q_id": ["q"], "doc_id": ["d"], "score": [1]}),
    "text scores": pandas.DataFrame({"qid": ["q1"], "docno": ["d1"], "score": ["high"]}),
    "float ids": pandas.DataFrame({"qid": [1.5], "docno": ["d1"], "score": [1.0]}),
    "series": pandas.Series([1.0]),
    "polars series": polars.Series([1.0]),
    "numpy array": numpy.array([["q1", "d1", "1"]]),
    "list of tuples": [("q1", "d1", 1.0)],
    "set": {("q1", "d1")},
    "generator": _generator(),
    "lazy frame": polars.LazyFrame({"qid": ["q1"], "docno": ["d1"], "score": [1.0]}),
}


@pytest.mark.parametrize("name", WRONG_RUNS)
def test_every_wrong_run_shape_is_a_type_error_naming_what_is_accepted(name):
    with pytest.raises(TypeError) as caught:
        evaluate_run(WRONG_RUNS[name], QRELS)
    message = str(caught.value)
    assert "pandas or polars DataFrame or pyarrow Table" in message or "column" in message


def test_a_run_of_sets_is_a_type_error():
    with pytest.raises(
        TypeError, match=r"query 'q1': the entry is a set; expected a list of doc ids"
    ):
        evaluate_run({"q1": {"d1", "d2"}}, QRELS)


@pytest.mark.parametrize(
    "qrels",
    [
        pandas.DataFrame({"qid": ["q1"], "docno": ["d1"]}),
        pandas.Series([1.0]),
        numpy.array([["q1", "d1", "1"]]),
        [("q1", "d1", 1.0)],
        {("q1", "d1")},
        {"q1": {"d1", "d2"}},
    ],
    ids=["no grade column", "series", "array", "tuples", "set", "dict of sets"],
)
def test_every_wrong_qrels_shape_is_a_type_error(qrels):
    with pytest.raises(TypeError, match=r"relevance"):
        evaluate_run(RUN, qrels)


def test_a_missing_run_file_path_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        evaluate_run(str(tmp_path / "missing.txt"), QRELS)


def test_no_dataframe_library_is_imported_for_dicts_and_files():
    code = (
        "import sys, tempfile, pathlib\n"
        "from ef.evaluation import evaluate_run, write_run, read_run\n"
        "run = {'q1': {'d1': 1.0}}\n"
        "evaluate_run(run, {'q1': {'d1': 1}})\n"
        "with tempfile.TemporaryDirectory() as tmp:\n"
        "    for name in ('r.txt', 'r.json', 'r.jsonl.gz'):\n"
        "        write_run(pathlib.Path(tmp, name), run)\n"
        "        evaluate_run(pathlib.Path(tmp, name), {'q1': {'d1': 1}})\n"
        "heavy = {'pandas', 'polars', 'pyarrow', 'narwhals', 'numpy'} & set(sys.modules)\n"
        "print(sorted(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


# Writers, fusion and compare take frames too


@pytest.mark.parametrize("library", LIBRARIES)
def test_trec_writers_take_frames(library, tmp_path):
    make = LIBRARIES[library]
    write_trec_run(tmp_path / "run.txt", make(run_columns("qid", "docno")))
    assert read_trec_run(tmp_path / "run.txt") == RUN
    write_trec_qrels(tmp_path / "qrels.txt", make(qrels_columns("qid", "docno", "label")))
    assert read_trec_qrels(tmp_path / "qrels.txt") == QRELS


@pytest.mark.parametrize("library", LIBRARIES)
def test_fuse_and_compare_take_frames(library):
    other = {"q1": {"d2": 1.0, "d3": 0.5}, "q2": {"d9": 3.0}}
    frame = LIBRARIES[library](run_columns())
    with pytest.warns(MissingQueriesWarning, match="2 of 4 queries of run 1 are not in run 2"):
        fused_frame = fuse([frame, other], method="rrf")
    assert fused_frame == fuse([RUN, other], method="rrf", missing_queries="zero")
    with pytest.raises(TypeError, match=r"run 2 is a pandas.Series; expected"):
        fuse([RUN, pandas.Series([1.0])], method="rrf")
    options: dict[str, Any] = {
        "baseline": "a",
        "metrics": ("ndcg@10",),
        "tests": ("t-test",),
        "missing_queries": "zero",
    }
    assert compare({"a": frame, "b": other}, QRELS, **options) == compare(
        {"a": RUN, "b": other}, QRELS, **options
    )


# Reports out


def _native(report: Any, library: str, means: bool = False) -> Any:
    method = {"pandas": "to_pandas", "polars": "to_polars", "pyarrow": "to_arrow"}[library]
    return nw.from_native(getattr(report, method)(means=means), eager_only=True)


@pytest.mark.parametrize("library", LIBRARIES)
def test_a_retrieval_report_is_a_long_frame_and_its_means(library, expected):
    frame = _native(expected, library)
    assert frame.columns == ["query_id", "metric", "value"]
    assert len(frame) == sum(len(values) for values in expected.per_query.values())
    per_query: dict[str, dict[str, float]] = {}
    for query_id, metric, value in frame.iter_rows():
        per_query.setdefault(query_id, {})[metric] = value
    assert per_query == expected.per_query
    assert list(per_query) == list(expected.per_query)  # queries in report order
    means = _native(expected, library, means=True)
    assert means.columns == ["metric", "value"]
    assert dict(means.iter_rows()) == expected.metrics


@pytest.mark.parametrize("library", LIBRARIES)
def test_a_frame_round_trips_through_a_report(library, expected):
    """DataFrame → run → report → DataFrame: the values of the report, row for row."""
    report = evaluate_run(LIBRARIES[library](run_columns()), QRELS, **OPTIONS)
    out = _native(report, library)
    rebuilt: dict[str, dict[str, float]] = {}
    for query_id, metric, value in out.iter_rows():
        rebuilt.setdefault(query_id, {})[metric] = value
    assert rebuilt == expected.per_query


def test_an_empty_report_keeps_its_columns_and_types():
    empty = evaluate_run({}, QRELS, k_values=(1,), metrics=("ndcg",), missing_queries="zero")
    table = empty.to_arrow()
    assert table.num_rows == len(empty.per_query)
    assert table.schema.names == ["query_id", "metric", "value"]
    assert str(table.schema.field("value").type) == "double"


@pytest.mark.parametrize("library", LIBRARIES)
def test_a_rag_report_has_a_row_per_sample_and_metric(library):
    samples = [
        {"user_input": "a?", "response": "Paris", "reference": "Paris", "retrieved_contexts": []},
        {"user_input": "b?", "response": "no", "retrieved_contexts": ["x"]},
    ]
    report = evaluate_rag(samples)
    assert isinstance(report, RagEvalReport)
    rows = list(_native(report, library).iter_rows())
    assert len(rows) == sum(len(values) for values in report.per_sample)
    by_sample = {(sample, metric): value for sample, metric, value in rows}
    ids = report.sample_ids or tuple(map(str, range(len(report.per_sample))))
    for sample_id, values in zip(ids, report.per_sample, strict=True):
        for metric, value in values.items():
            assert _missing_as_none(by_sample[sample_id, metric]) == value
    nameless = RagEvalReport({}, {}, 1, per_sample=[{"m": None}])
    [(sample_id, metric, value)] = _native(nameless, library).iter_rows()
    assert (sample_id, metric, _missing_as_none(value)) == ("0", "m", None)

    means = _native(report, library, means=True)
    assert means.columns == ["metric", "value", "coverage"]
    assert {m: (v, c) for m, v, c in means.iter_rows()} == {
        m: (v, report.coverage[m]) for m, v in report.metrics.items()
    }


def _missing_as_none(value: float | None) -> float | None:
    """A value that did not apply: None, or NaN where pandas has no None for floats."""
    return None if value is None or value != value else value


@pytest.mark.parametrize("library", LIBRARIES)
def test_a_comparison_report_has_a_row_per_comparison(library):
    other = {"q1": {"d2": 1.0, "d3": 0.5}, "q2": {"d9": 3.0}}
    report = compare(
        {"a": RUN, "b": other},
        QRELS,
        baseline="a",
        metrics=("ndcg@10", "recall@10"),
        tests=("t-test", "bootstrap"),
        n_resamples=200,
        missing_queries="zero",
    )
    frame = _native(report, library)
    assert frame.columns[:9] == [
        "system",
        "metric",
        "mean",
        "baseline_mean",
        "difference",
        "wins",
        "ties",
        "losses",
        "effect_size",
    ]
    assert frame.columns[9:] == [
        "p_t-test",
        "adjusted_p_t-test",
        "p_bootstrap",
        "adjusted_p_bootstrap",
        "ci_low",
        "ci_high",
    ]
    for row, comparison in zip(frame.iter_rows(named=True), report.comparisons, strict=True):
        assert (row["system"], row["metric"]) == (comparison.system, comparison.metric)
        assert row["difference"] == comparison.difference
        assert row["p_t-test"] == comparison.p_values["t-test"]
        assert (row["ci_low"], row["ci_high"]) == comparison.confidence_interval
    means = _native(report, library, means=True)
    assert {(s, m): v for s, m, v in means.iter_rows()} == {
        (s, m): v for s, values in report.means.items() for m, v in values.items()
    }
