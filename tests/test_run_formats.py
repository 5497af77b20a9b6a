"""Run files in TREC, ranx's JSON, JSON Lines and Parquet: round trips, format choice, errors."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

import pyarrow
import pyarrow.parquet
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import (
    DatasetFormatError,
    MissingQueriesWarning,
    evaluate_run,
    read_run,
    write_run,
)
from ef.evaluation.cli import main

NAMES = {
    "trec": "run.txt",
    "trec.gz": "run.txt.gz",
    "json": "run.json",
    "json.gz": "run.json.gz",
    "jsonl": "run.jsonl",
    "jsonl.gz": "run.ndjson.gz",
    "parquet": "run.parquet",
}

# Ids every format can hold: no whitespace (a TREC column), no lone surrogate (UTF-8).
ids = st.text(
    st.characters(
        blacklist_categories=("Z", "Cc", "Cs"), blacklist_characters="\x1c\x1d\x1e\x1f\x85"
    ),
    min_size=1,
    max_size=6,
)
scores = st.floats(allow_nan=False, allow_infinity=False, width=64)
runs = st.dictionaries(ids, st.dictionaries(ids, scores, min_size=1, max_size=5), max_size=5)


@pytest.mark.parametrize("kind", NAMES)
@settings(max_examples=30)
@given(run=runs)
def test_every_format_reads_back_the_run_it_wrote(kind, run):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, NAMES[kind])
        write_run(path, run)
        assert read_run(path) == run
        if kind.endswith(".gz"):
            assert path.read_bytes()[:2] == b"\x1f\x8b"


@settings(max_examples=25)
@given(run=runs, order=st.lists(ids, max_size=4, unique=True))
def test_rankings_without_scores_read_back_in_their_order(run, order):
    ranked = {**{q: list(d) for q, d in run.items()}, "q-listed": order}
    with tempfile.TemporaryDirectory() as tmp:
        for name in NAMES.values():
            path = Path(tmp, name)
            write_run(path, ranked)
            back = read_run(path)
            for query_id, docs in ranked.items():
                got = back.get(query_id, {})
                assert sorted(got, key=got.__getitem__, reverse=True) == docs


@pytest.mark.parametrize("kind", ["json", "jsonl", "parquet", "trec.gz"])
def test_a_run_file_of_each_format_scores_as_its_dict(kind, tmp_path):
    run = {"q1": {"d1": 0.5, "d2": 0.9}, "q2": {"d3": 1.0}}
    qrels = {"q1": {"d1": 1.0}, "q2": {"d3": 1.0}, "q3": {"d1": 1.0}}
    path = tmp_path / NAMES[kind]
    write_run(path, run)
    with pytest.warns(MissingQueriesWarning, match="1 of 3 judged queries are not in .*'q3'"):
        from_file = evaluate_run(path, qrels)
    with pytest.warns(MissingQueriesWarning, match="1 of 3 judged queries are not in the run"):
        assert from_file == evaluate_run(run, qrels)


def test_the_format_can_be_named_whatever_the_file_name(tmp_path):
    path = tmp_path / "run.data"
    write_run(path, {"q1": {"d1": 1.0}}, format="jsonl")
    assert path.read_text() == '{"query_id": "q1", "doc_id": "d1", "score": 1.0}\n'
    assert read_run(path, format="jsonl") == {"q1": {"d1": 1.0}}
    report = evaluate_run(path, {"q1": {"d1": 1.0}}, run_format="jsonl", k_values=(1,))
    assert report.metrics["ndcg@1"] == 1.0
    with pytest.raises(DatasetFormatError, match=r"run.data:1: score '\"score\":' is not a number"):
        read_run(path)  # by its name, a TREC file
    with pytest.raises(ValueError, match=r"unknown run format 'csv'; expected one of trec, json"):
        read_run(path, format="csv")


def test_parquet_is_written_with_ranx_columns_and_read_with_aliases(tmp_path):
    path = tmp_path / "run.parquet"
    write_run(path, {"q1": ["d2", "d1"]})
    table = pyarrow.parquet.read_table(path)
    assert table.schema.names == ["q_id", "doc_id", "score"]
    assert table.to_pydict() == {"q_id": ["q1", "q1"], "doc_id": ["d2", "d1"], "score": [2.0, 1.0]}
    other = tmp_path / "pyterrier.parquet"
    pyarrow.parquet.write_table(
        pyarrow.table({"qid": ["q1"], "docno": ["d9"], "score": [3.5], "query": ["text"]}), other
    )
    assert read_run(other) == {"q1": {"d9": 3.5}}
    pyarrow.parquet.write_table(pyarrow.table({"qid": ["q1"], "score": [3.5]}), other)
    with pytest.raises(DatasetFormatError, match=r"pyterrier.parquet:1: .*no doc_id column"):
        read_run(other)
    (tmp_path / "not.parquet").write_text("q1 Q0 d1 1 1 x\n")
    with pytest.raises(DatasetFormatError, match=r"not.parquet:1: not a Parquet file"):
        read_run(tmp_path / "not.parquet")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"query_id": "q1", "doc_id": "d1", "score": 1}\n{"x"', r"run.jsonl:2: .*expected a JSON"),
        ('{"q1": {"d1": 1}}\n', r"run.jsonl:1: query_id is missing"),
        ('{"query_id": "q1", "doc_id": "d1", "score": "1"}\n', r":1: score is no number"),
        ('{"query_id": "q1", "doc_id": "d1", "score": NaN}\n', r":1: .*NaN"),
        ('["q1"]\n', r"run.jsonl:1: the line is no JSON object"),
        (
            '{"query_id": "q1", "doc_id": "d1", "score": 1}\n\n'
            '{"query_id": "q1", "doc_id": "d1", "score": 2}\n',
            r"run.jsonl:3: doc 'd1' listed again for query 'q1' \(first on line 1\)",
        ),
    ],
)
def test_a_bad_json_lines_record_is_named_by_file_and_line(tmp_path, text, message):
    path = tmp_path / "run.jsonl"
    path.write_text(text)
    with pytest.raises(DatasetFormatError, match=message):
        read_run(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", r"the document is no JSON object"),
        ('{"q1": ["d1"]}', r"query 'q1' maps to no object"),
        ('{"q1": {"d1": true}}', r"query 'q1': score of doc 'd1' is no number"),
        ('{"q1": {"d1": Infinity}}', r"run.json:1: .*Infinity"),
    ],
)
def test_a_bad_json_run_is_refused(tmp_path, text, message):
    path = tmp_path / "run.json"
    path.write_bytes(gzip.compress(text.encode()))  # gzip is recognised by its bytes
    with pytest.raises(DatasetFormatError, match=message):
        read_run(path)


def test_writing_refuses_what_could_not_be_read_back(tmp_path):
    with pytest.raises(
        ValueError, match=r"query 'q1': doc 'd1' has score nan; expected a finite number"
    ):
        write_run(tmp_path / "run.jsonl", {"q1": {"d1": float("nan")}})
    with pytest.raises(ValueError, match=r"lone surrogate"):
        write_run(tmp_path / "run.json", {"q1": {"d\ud800": 1.0}})
    with pytest.raises(TypeError, match=r"run is a list; expected"):
        write_run(tmp_path / "run.json", [("q1", "d1", 1.0)])
    assert not list(tmp_path.iterdir())  # nothing half-written is left


def test_an_empty_run_is_written_and_read_in_every_format(tmp_path):
    for name in NAMES.values():
        write_run(tmp_path / name, {})
        assert read_run(tmp_path / name) == {}
    assert json.loads((tmp_path / "run.json").read_text()) == {}


JSON_MRR = ("--format", "json", "--metrics", "mrr")


def test_the_cli_scores_each_format_by_name_or_by_run_format(tmp_path, capsys):
    run = {"q1": {"d1": 0.5, "d2": 0.9}}
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    for name in ("a.json", "b.jsonl", "c.parquet", "d.txt"):
        write_run(tmp_path / name, run)
    write_run(tmp_path / "e.data", run, format="json")
    args = ["run", tmp_path / "qrels.txt", *(tmp_path / n for n in ("a.json", "b.jsonl"))]
    assert main([*map(str, args), str(tmp_path / "c.parquet"), *JSON_MRR]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {name: data["metrics"]["mrr@10"] for name, data in rows.items()} == {
        "a.json": 0.5,
        "b.jsonl": 0.5,
        "c.parquet": 0.5,
    }
    command = ["run", str(tmp_path / "qrels.txt"), str(tmp_path / "e.data")]
    assert main([*command, "--run-format", "json", *JSON_MRR]) == 0
    assert json.loads(capsys.readouterr().out)["e.data"]["metrics"]["mrr@10"] == 0.5
    assert main([*command, "--run-format", "csv"]) == 2
    assert "invalid choice: 'csv'" in capsys.readouterr().err
