"""Tests for reading and writing BEIR datasets."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation._exceptions import DatasetFormatError
from ef.evaluation._io.beir import _DEFAULT_QRELS_PATHS, read_beir, write_beir

HEADER = "query-id\tcorpus-id\tscore\n"


def jsonl(*records: Any) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def make_dataset(
    root: Path,
    *,
    corpus: str | None = None,
    queries: str | None = None,
    qrels: str | None = None,
    qrels_name: str = "qrels.tsv",
) -> Path:
    """A small valid dataset, with any of its three files replaced (None keeps the default)."""
    files = {
        "corpus.jsonl": corpus if corpus is not None else jsonl({"_id": "d1", "text": "one"}),
        "queries.jsonl": queries if queries is not None else jsonl({"_id": "q1", "text": "q"}),
        qrels_name: qrels if qrels is not None else HEADER + "q1\td1\t1\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(text.encode())
    return root


def assert_points_at(error: DatasetFormatError, path: Path, line: int) -> None:
    assert error.path == str(path)
    assert error.line == line
    assert str(error).startswith(f"{path}:{line}: ")


# --- reading ------------------------------------------------------------------------------------


def test_reads_the_triple(tmp_path: Path) -> None:
    make_dataset(
        tmp_path,
        corpus=jsonl(
            {"_id": "d1", "title": "Paris", "text": "Capital of France.", "metadata": {}},
            {"_id": "d2", "title": "", "text": "No title."},
        ),
        queries=jsonl({"_id": "q1", "text": "capital?", "metadata": {"a": 1}}),
        qrels=HEADER + "q1\td1\t1\nq1\td2\t0\n",
    )
    corpus, queries, qrels = read_beir(str(tmp_path))
    assert corpus == {"d1": "Paris Capital of France.", "d2": "No title."}
    assert queries == {"q1": "capital?"}
    assert qrels == {"q1": {"d1": 1.0, "d2": 0.0}}
    assert type(qrels["q1"]["d1"]) is float


@pytest.mark.parametrize(
    ("record", "text"),
    [
        ({"_id": "d", "title": "T", "text": "body"}, "T body"),
        ({"_id": "d", "title": "T", "text": ""}, "T"),
        ({"_id": "d", "title": "", "text": "body"}, "body"),
        ({"_id": "d", "title": None, "text": "body"}, "body"),
        ({"_id": "d", "text": "body"}, "body"),
        ({"_id": "d", "title": "", "text": ""}, ""),
        ({"_id": "d", "title": " T ", "text": " body"}, " T   body"),
    ],
)
def test_title_and_text_are_joined_by_one_space_when_both_non_empty(
    tmp_path: Path, record: dict[str, Any], text: str
) -> None:
    make_dataset(tmp_path, corpus=jsonl(record), qrels=HEADER)
    assert read_beir(tmp_path)[0] == {"d": text}


def test_queries_ignore_a_title(tmp_path: Path) -> None:
    make_dataset(tmp_path, queries=jsonl({"_id": "q1", "title": "T", "text": "q"}))
    assert read_beir(tmp_path)[1] == {"q1": "q"}


def test_gzip_bom_crlf_and_blank_lines_are_accepted(tmp_path: Path) -> None:
    corpus = '\ufeff{"_id": "d1", "text": "é\\r\\n"}\r\n\r\n{"_id": "d2", "text": "x"}\r\n'
    (tmp_path / "corpus.jsonl.gz").write_bytes(gzip.compress(corpus.encode()))
    queries = '\ufeff\r\n{"_id": "q1", "text": "ü"}\r\n'
    (tmp_path / "queries.jsonl").write_bytes(gzip.compress(queries.encode()))  # gzip, plain name
    (tmp_path / "qrels.tsv").write_bytes(f"\ufeff{HEADER}".replace("\n", "\r\n").encode())
    with (tmp_path / "qrels.tsv").open("a", newline="") as out:
        out.write("q1\td1\t2\r\n\r\nq1\td2\t0\r\n")
    assert read_beir(tmp_path) == (
        {"d1": "é\r\n", "d2": "x"},
        {"q1": "ü"},
        {"q1": {"d1": 2.0, "d2": 0.0}},
    )


def test_tsv_ids_are_kept_verbatim(tmp_path: Path) -> None:
    make_dataset(tmp_path, qrels=HEADER + "query one\t doc 1 \t1\n")
    assert read_beir(tmp_path)[2] == {"query one": {" doc 1 ": 1.0}}


def test_headerless_trec_qrels_are_detected(tmp_path: Path) -> None:
    make_dataset(tmp_path, qrels="\nq1 0 d1 2\nq1\t0\td2\t0\n")
    assert read_beir(tmp_path)[2] == {"q1": {"d1": 2.0, "d2": 0.0}}


def test_empty_qrels_file_gives_no_judgements(tmp_path: Path) -> None:
    make_dataset(tmp_path, qrels="")
    assert read_beir(tmp_path)[2] == {}


def test_default_qrels_paths_are_tried_in_order(tmp_path: Path) -> None:
    assert _DEFAULT_QRELS_PATHS == (
        "qrels.tsv",
        "qrels/test.tsv",
        "qrels/dev.tsv",
        "qrels/train.tsv",
    )
    make_dataset(tmp_path, qrels=HEADER + "q1\ttrain\t1\n", qrels_name="qrels/train.tsv")
    assert read_beir(tmp_path)[2] == {"q1": {"train": 1.0}}
    (tmp_path / "qrels" / "dev.tsv.gz").write_bytes(gzip.compress(b"q1 0 dev 1\n"))
    assert read_beir(tmp_path)[2] == {"q1": {"dev": 1.0}}
    (tmp_path / "qrels" / "test.tsv").write_text(HEADER + "q1\ttest\t1\n")
    assert read_beir(tmp_path)[2] == {"q1": {"test": 1.0}}
    (tmp_path / "qrels.tsv").write_text(HEADER + "q1\ttop\t1\n")
    assert read_beir(tmp_path)[2] == {"q1": {"top": 1.0}}


def test_named_qrels_file_is_relative_to_the_directory(tmp_path: Path) -> None:
    make_dataset(tmp_path)
    make_dataset(tmp_path, qrels=HEADER + "q1\tother\t3\n", qrels_name="splits/my.tsv")
    assert read_beir(tmp_path, qrels="splits/my.tsv")[2] == {"q1": {"other": 3.0}}
    assert read_beir(tmp_path, qrels=Path("splits", "my.tsv"))[2] == {"q1": {"other": 3.0}}


def test_plain_file_wins_over_its_gzip_twin(tmp_path: Path) -> None:
    make_dataset(tmp_path)
    (tmp_path / "corpus.jsonl.gz").write_bytes(
        gzip.compress(jsonl({"_id": "gz", "text": ""}).encode())
    )
    assert read_beir(tmp_path)[0] == {"d1": "one"}


# --- missing files ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["corpus.jsonl", "queries.jsonl"])
def test_missing_jsonl_file_is_named(tmp_path: Path, name: str) -> None:
    make_dataset(tmp_path)
    (tmp_path / name).unlink()
    with pytest.raises(FileNotFoundError) as caught:
        read_beir(tmp_path)
    assert caught.value.filename == str(tmp_path)
    assert f"tried {name}, {name}.gz" in str(caught.value)


def test_missing_qrels_lists_every_candidate(tmp_path: Path) -> None:
    make_dataset(tmp_path)
    (tmp_path / "qrels.tsv").unlink()
    with pytest.raises(FileNotFoundError) as caught:
        read_beir(tmp_path)
    tried = ", ".join(f"{name}, {name}.gz" for name in _DEFAULT_QRELS_PATHS)
    assert f"no qrels file in the BEIR dataset (tried {tried})" in str(caught.value)


def test_missing_named_qrels_is_named(tmp_path: Path) -> None:
    make_dataset(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"tried qrels/x\.tsv, qrels/x\.tsv\.gz"):
        read_beir(tmp_path, qrels="qrels/x.tsv")


def test_missing_directory_is_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as caught:
        read_beir(tmp_path / "nope")
    assert caught.value.filename == str(tmp_path / "nope")


def test_all_files_are_located_before_any_is_parsed(tmp_path: Path) -> None:
    make_dataset(tmp_path, corpus="not json\n")
    (tmp_path / "qrels.tsv").unlink()
    with pytest.raises(FileNotFoundError):
        read_beir(tmp_path)


# --- malformed input ----------------------------------------------------------------------------

GOOD = '{"_id": "ok", "text": "fine"}\n'


@pytest.mark.parametrize("file", ["corpus.jsonl", "queries.jsonl"])
@pytest.mark.parametrize(
    ("bad_line", "problem", "expected"),
    [
        (
            '{"_id": "x", "text": "a"',
            "invalid JSON (Expecting ',' delimiter at column 25)",
            'one JSON object per line, such as {"_id": "d1", "text": "..."}',
        ),
        (
            '["x", "a"]',
            "a JSON array is not a record",
            'one JSON object per line, such as {"_id": "d1", "text": "..."}',
        ),
        ('"x"', "a JSON string is not a record", None),
        ('{"text": "a"}', "record has no '_id'", "a string '_id'"),
        ('{"_id": 7, "text": "a"}', "'_id' of record is a JSON number", "a string '_id'"),
        ('{"_id": "x"}', "record 'x' has no 'text'", "a string 'text'"),
        ('{"_id": "x", "text": null}', "'text' of record 'x' is a JSON null", "a string 'text'"),
        ('{"_id": "x", "text": ["a"]}', "'text' of record 'x' is a JSON array", None),
        (
            '{"_id": "ok", "text": "again"}',
            "duplicate _id 'ok' (first on line 2)",
            "each _id only once",
        ),
    ],
)
def test_bad_record_is_reported_with_file_and_line(
    tmp_path: Path, file: str, bad_line: str, problem: str, expected: str | None
) -> None:
    make_dataset(tmp_path, **{file.removesuffix(".jsonl"): f"\n{GOOD}{GOOD.replace('ok', 'o2')}"})
    path = tmp_path / file
    with path.open("a") as out:
        out.write(bad_line + "\n" + GOOD.replace("ok", "o3"))
    with pytest.raises(DatasetFormatError) as caught:
        read_beir(tmp_path)
    assert_points_at(caught.value, path, 4)
    assert caught.value.problem == problem
    if expected is not None:
        assert caught.value.expected == expected


def test_non_string_title_is_reported(tmp_path: Path) -> None:
    make_dataset(tmp_path, corpus=jsonl({"_id": "d1", "title": 3, "text": "a"}))
    with pytest.raises(DatasetFormatError) as caught:
        read_beir(tmp_path)
    assert_points_at(caught.value, tmp_path / "corpus.jsonl", 1)
    assert caught.value.problem == "'title' of record 'd1' is a JSON number"


def test_duplicate_id_in_a_gzip_corpus_names_both_lines(tmp_path: Path) -> None:
    make_dataset(tmp_path)
    (tmp_path / "corpus.jsonl").unlink()
    path = tmp_path / "corpus.jsonl.gz"
    records = jsonl(
        {"_id": "a", "text": ""}, {"_id": "b\t", "text": ""}, {"_id": "b\t", "text": ""}
    )
    path.write_bytes(gzip.compress(records.encode()))
    with pytest.raises(DatasetFormatError) as caught:
        read_beir(tmp_path)
    assert_points_at(caught.value, path, 3)
    assert caught.value.problem == "duplicate _id 'b\\t' (first on line 2)"


@pytest.mark.parametrize(
    ("bad_line", "problem", "expected"),
    [
        ("q1\td2", "found 2 tab-separated columns", "3 tab-separated columns"),
        ("q1\td2\t1\t1", "found 4 tab-separated columns", "3 tab-separated columns"),
        ("q1 d2 1", "found 1 tab-separated columns", "3 tab-separated columns"),
        ("q1\td2\thigh", "score 'high' is not a number", "a finite number"),
        ("q1\td2\tinf", "score 'inf' is not finite", "a finite number"),
        ("q1\td1\t0", "doc 'd1' judged again for query 'q1' (first on line 3)", "each (query"),
    ],
)
def test_bad_tsv_qrels_line_is_reported_with_file_and_line(
    tmp_path: Path, bad_line: str, problem: str, expected: str
) -> None:
    make_dataset(tmp_path, qrels=f"\n{HEADER}q1\td1\t1\nq2\td1\t1\n{bad_line}\n")
    with pytest.raises(DatasetFormatError) as caught:
        read_beir(tmp_path)
    assert_points_at(caught.value, tmp_path / "qrels.tsv", 5)
    assert caught.value.problem == problem
    assert caught.value.expected.startswith(expected)


def test_bad_trec_qrels_line_is_reported_with_file_and_line(tmp_path: Path) -> None:
    make_dataset(tmp_path, qrels="q1 0 d1 1\nq1 0 d2 x\n", qrels_name="qrels/test.tsv")
    with pytest.raises(DatasetFormatError) as caught:
        read_beir(tmp_path)
    assert_points_at(caught.value, tmp_path / "qrels" / "test.tsv", 2)
    assert caught.value.problem == "grade 'x' is not a number"


def test_three_columns_without_header_is_explained(tmp_path: Path) -> None:
    make_dataset(tmp_path, qrels="\nq1\td1\t1\n")
    with pytest.raises(DatasetFormatError) as caught:
        read_beir(tmp_path)
    assert_points_at(caught.value, tmp_path / "qrels.tsv", 2)
    assert "header" in caught.value.problem
    assert "query-id iteration doc-id grade" in caught.value.expected


# --- writing ------------------------------------------------------------------------------------


def test_writes_the_three_files_in_beir_layout(tmp_path: Path) -> None:
    root = tmp_path / "a" / "b"
    write_beir(root, {"d1": "x"}, {"q1": "y"}, {"q1": {"d1": 1.0, "d2": 0.5}, "q2": {}})
    assert [json.loads(line) for line in (root / "corpus.jsonl").read_text().splitlines()] == [
        {"_id": "d1", "title": "", "text": "x"}
    ]
    assert [json.loads(line) for line in (root / "queries.jsonl").read_text().splitlines()] == [
        {"_id": "q1", "text": "y"}
    ]
    assert (root / "qrels.tsv").read_text() == HEADER + "q1\td1\t1\nq1\td2\t0.5\n"


def test_write_keeps_non_ascii_readable(tmp_path: Path) -> None:
    write_beir(tmp_path, {"d1": "café 日本"}, {}, {})
    assert "café 日本" in (tmp_path / "corpus.jsonl").read_text(encoding="utf-8")


def test_write_replaces_an_existing_dataset(tmp_path: Path) -> None:
    write_beir(tmp_path, {"old": "x"}, {"old": "x"}, {"old": {"old": 1}})
    write_beir(tmp_path, {"new": "y"}, {"q": "z"}, {"q": {"new": 2}})
    assert read_beir(tmp_path) == ({"new": "y"}, {"q": "z"}, {"q": {"new": 2.0}})


@pytest.mark.parametrize(
    ("qrels", "error", "message"),
    [
        ({"q\t1": {"d1": 1.0}}, ValueError, "query id 'q\\t1' cannot be written to a TSV file"),
        ({"q1": {"d\n1": 1.0}}, ValueError, "doc id 'd\\n1' cannot be written"),
        ({"q1": {"d\r1": 1.0}}, ValueError, "doc id 'd\\r1' cannot be written"),
        ({"q1": {"d1": math.nan}}, ValueError, "grade of doc 'd1' for query 'q1' is nan"),
        ({"q1": {"d1": -math.inf}}, ValueError, "is -inf"),
        ({1: {"d1": 1.0}}, TypeError, "query id 1 is not a string"),
    ],
)
def test_unwritable_qrels_are_refused_before_anything_is_written(
    tmp_path: Path, qrels: Any, error: type[Exception], message: str
) -> None:
    root = tmp_path / "out"
    with pytest.raises(error) as caught:
        write_beir(root, {"d1": "x"}, {"q1": "y"}, qrels)
    assert message in str(caught.value)
    assert not root.exists()


@pytest.mark.parametrize(
    ("corpus", "queries", "message"),
    [
        ({"d1": None}, {}, "corpus: text of document 'd1' is NoneType; expected str"),
        ({}, {"q1": 3}, "queries: text of query 'q1' is int; expected str"),
        ({2: "x"}, {}, "corpus: document id 2 is not a string; expected str ids"),
    ],
)
def test_non_string_ids_and_texts_are_refused(
    tmp_path: Path, corpus: Any, queries: Any, message: str
) -> None:
    with pytest.raises(TypeError) as caught:
        write_beir(tmp_path / "out", corpus, queries, {})
    assert str(caught.value) == message
    assert not (tmp_path / "out").exists()


# Texts with everything JSON must escape, plus line breaks a naive reader would split on.
texts = st.text() | st.text(alphabet='\t\n\r"\\\u2028\u2029\x85\ufeff é日😀 ab', max_size=30)
ids = st.text(max_size=8)
tsv_ids = st.text(max_size=8).filter(lambda value: not set(value) & {"\t", "\n", "\r"})
grades = st.integers(-3, 3).map(float) | st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=75)
@given(
    corpus=st.dictionaries(ids, texts, max_size=6),
    queries=st.dictionaries(ids, texts, max_size=6),
    qrels=st.dictionaries(tsv_ids, st.dictionaries(tsv_ids, grades, min_size=1), max_size=4),
)
def test_write_then_read_round_trips_exactly(
    tmp_path_factory: pytest.TempPathFactory,
    corpus: dict[str, str],
    queries: dict[str, str],
    qrels: dict[str, dict[str, float]],
) -> None:
    root = tmp_path_factory.mktemp("beir") / "dataset"
    write_beir(root, corpus, queries, qrels)
    read_corpus, read_queries, read_qrels = read_beir(root)
    assert read_corpus == corpus
    assert read_queries == queries
    assert read_qrels == qrels
    assert list(read_corpus) == list(corpus)
