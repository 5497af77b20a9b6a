"""Run scores pass one check wherever a run enters: dicts, DataFrames, every run file format.

A score is a finite number; an integer score stays exact; a key given twice in a JSON run is
an error, as a doc listed twice is in every other format; a file that unpacks to a flood of
whitespace, or a damaged Parquet page, is refused where it is read, naming the file.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pandas
import polars
import pyarrow
import pyarrow.parquet
import pytest

from ef.evaluation import (
    DatasetFormatError,
    evaluate_run,
    fuse,
    read_run,
    write_run,
    write_trec_run,
)
from ef.evaluation._io import runs as run_files
from ef.evaluation._scoring.order import rank_by_score

QRELS = {"q1": {"d1": 1.0}}
NOT_FINITE = [math.nan, math.inf, -math.inf, 10**400]
NOT_NUMBERS = ["0.5", True, None, [1.0]]
EF_EVAL = shutil.which("ef-eval", path=str(Path(sys.executable).parent))


def ef_eval(*args: object) -> subprocess.CompletedProcess[str]:
    assert EF_EVAL is not None, "the ef-eval script is not installed: pip install -e ."
    environment = {**os.environ, "EF_EVALUATION_PLUGINS": ""}
    return subprocess.run(
        [EF_EVAL, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        check=False,
    )


# --- 1. one check for every run -----------------------------------------------------------------


def test_a_nan_score_is_refused_when_it_is_the_only_score_of_its_query():
    with pytest.raises(ValueError, match=r"score of 'd1' is NaN"):
        rank_by_score({"d1": math.nan})
    with pytest.raises(ValueError, match=r"run, query 'q1': doc 'd1' has score nan"):
        evaluate_run({"q1": {"d1": math.nan}}, QRELS)


@pytest.mark.parametrize("score", NOT_FINITE, ids=["nan", "inf", "-inf", "int 10**400"])
def test_a_score_that_is_not_finite_is_refused_by_every_door(score, tmp_path):
    run = {"q1": {"d1": 1.0, "d2": score}}
    message = r"query 'q1': doc 'd2' has score (nan|inf|-inf|an integer of 401 digits)"
    with pytest.raises(ValueError, match=message):
        evaluate_run(run, QRELS)
    with pytest.raises(ValueError, match=message):
        fuse([run, {"q1": {"d1": 1.0}}], method="rrf")
    for name in ("run.txt", "run.json", "run.jsonl", "run.parquet"):
        with pytest.raises(ValueError, match=message):
            write_run(tmp_path / name, run)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("score", NOT_NUMBERS, ids=["str", "bool", "None", "list"])
def test_a_score_that_is_no_number_is_refused_even_when_it_is_alone(score):
    with pytest.raises(TypeError, match=r"run, query 'q1': score .* is a \w+ \(doc 'd1'\)"):
        evaluate_run({"q1": {"d1": score}}, QRELS)


def test_an_entry_of_the_wrong_type_is_refused_even_for_an_unjudged_query():
    with pytest.raises(TypeError, match=r"run, query 'q9': the entry is a int; expected a list"):
        evaluate_run({"q1": ["d1"], "q9": 5}, QRELS)
    with pytest.raises(ValueError, match=r"query 'q9': doc 'd1' has score inf"):
        evaluate_run({"q1": ["d1"], "q9": {"d1": math.inf}}, QRELS)


def test_numpy_scores_and_large_integers_are_scores():
    numpy = pytest.importorskip("numpy")
    run = {"q1": {"d1": numpy.float32(0.5), "d2": numpy.int64(3), "d3": 2**60}}
    assert evaluate_run(run, QRELS, metrics=("mrr",), k_values=(3,)).metrics["mrr@3"] == 1 / 3


def frames(columns: dict[str, list[object]]) -> list[object]:
    return [pandas.DataFrame(columns), polars.DataFrame(columns), pyarrow.table(columns)]


@pytest.mark.parametrize("kind", ["pandas", "polars", "pyarrow"])
def test_int64_scores_above_2_53_keep_their_order_as_in_a_dict(kind):
    # Through float64 both scores are 2**53: they would tie, and the tie goes to d2.
    run = {"q1": {"d1": 2**53 + 1, "d2": 2**53}}
    columns: dict[str, list[object]] = {
        "query_id": ["q1", "q1"],
        "doc_id": ["d1", "d2"],
        "score": [2**53 + 1, 2**53],
    }
    frame = dict(zip(["pandas", "polars", "pyarrow"], frames(columns), strict=True))[kind]
    options = {"metrics": ("ndcg",), "k_values": (1,)}
    from_dict = evaluate_run(run, QRELS, **options).metrics
    assert from_dict == {"ndcg@1": 1.0}
    assert evaluate_run(frame, QRELS, **options).metrics == from_dict


@pytest.mark.parametrize("score", [math.inf, -math.inf], ids=["inf", "-inf"])
def test_a_frame_score_that_is_not_finite_names_its_row_and_column(score):
    columns: dict[str, list[object]] = {
        "qid": ["q1", "q1", "q1"],
        "docno": ["d1", "d2", "d3"],
        "score": [1.0, 0.5, score],
    }
    for frame in frames(columns):
        with pytest.raises(ValueError, match=r"run: row 2: score column 'score' is -?inf"):
            evaluate_run(frame, QRELS)


def test_a_pandas_na_score_and_a_column_named_twice_name_row_and_column():
    frame = pandas.DataFrame(
        {
            "query_id": ["q1", "q1"],
            "doc_id": ["d1", "d2"],
            "score": pandas.array([1.0, None], dtype="Float64"),
        }
    )
    with pytest.raises(ValueError, match=r"run: row 1: score column 'score' has no value"):
        evaluate_run(frame, QRELS)
    twice = pandas.DataFrame([["q1", "d1", 1.0, 2.0]], columns=["qid", "docno", "score", "score"])
    with pytest.raises(TypeError, match=r"run: column 'score' appears more than once"):
        evaluate_run(twice, QRELS)
    table = pyarrow.table([["q1"], ["d1"], [1.0], [2.0]], names=["qid", "docno", "score", "score"])
    with pytest.raises(TypeError, match=r"run: column 'score' appears more than once"):
        evaluate_run(table, QRELS)


# --- 2. run files: the same rule, with the file and the line ----------------------------------

JSON_RUN = '{\n  "q1": {\n    "d1": 1.5,\n    "d2": %s\n  }\n}\n'


@pytest.mark.parametrize(
    ("literal", "problem"),
    [
        ("1e400", r"number '1e400' overflows to infinity"),
        ("-1e309", r"number '-1e309' overflows to infinity"),
        ("1" + "0" * 400, r"number 10{19}… \(401 characters\) overflows to infinity"),
        ("NaN", r"NaN is not a JSON number"),
        ("Infinity", r"Infinity is not a JSON number"),
    ],
)
@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_a_json_score_beyond_a_float_names_the_file_and_line(
    tmp_path, literal, problem, compressed
):
    text = (JSON_RUN % literal).encode()
    json_path = tmp_path / "run.json"
    json_path.write_bytes(gzip.compress(text) if compressed else text)
    with pytest.raises(DatasetFormatError, match=rf"run.json:4: query 'q1', doc 'd2': {problem}"):
        read_run(json_path)
    record = {"query_id": "q1", "doc_id": "d2"}
    lines = json.dumps({**record, "doc_id": "d1", "score": 1}) + "\n"
    lines += json.dumps(record)[:-1] + f', "score": {literal}}}\n'
    jsonl_path = tmp_path / "run.jsonl"
    jsonl_path.write_bytes(gzip.compress(lines.encode()) if compressed else lines.encode())
    with pytest.raises(DatasetFormatError, match=rf"run.jsonl:2: {problem}"):
        read_run(jsonl_path)


def test_a_json_score_that_is_no_number_names_its_line(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(JSON_RUN % '"0.5"')
    with pytest.raises(
        DatasetFormatError, match=r"run.json:4: query 'q1': score of doc 'd2' is no number"
    ):
        read_run(path)


def test_a_score_refused_in_a_file_is_refused_when_evaluate_run_reads_the_file(tmp_path):
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 1e400 x\n")
    with pytest.raises(DatasetFormatError, match=r"run.txt:1: .*not finite|run.txt:1: "):
        evaluate_run(tmp_path / "run.txt", QRELS)
    (tmp_path / "run.json").write_text(JSON_RUN % "1e999")
    with pytest.raises(DatasetFormatError, match=r"run.json:4: "):
        evaluate_run(tmp_path / "run.json", QRELS)


@pytest.mark.parametrize("score", [math.inf, math.nan], ids=["inf", "nan"])
def test_a_parquet_score_that_is_not_finite_names_the_file_and_row(tmp_path, score):
    path = tmp_path / "run.parquet"
    table = pyarrow.table({"q_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [1.0, score]})
    pyarrow.parquet.write_table(table, path)
    with pytest.raises(
        DatasetFormatError,
        match=r"run.parquet:1: run file .*: row 1: score column 'score' (is|has no value)",
    ):
        read_run(path)


def test_parquet_int64_scores_stay_exact(tmp_path):
    path = tmp_path / "run.parquet"
    scores = [2**53 + 1, 2**53]
    table = pyarrow.table({"q_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": scores})
    pyarrow.parquet.write_table(table, path)
    assert read_run(path) == {"q1": {"d1": 2**53 + 1, "d2": 2**53}}
    options = {"metrics": ("ndcg",), "k_values": (1,)}
    assert evaluate_run(path, QRELS, **options).metrics == {"ndcg@1": 1.0}


# --- 3. keys given twice in JSON ------------------------------------------------------------------


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_a_doc_or_a_query_given_twice_in_a_json_run_names_both_lines(tmp_path, compressed):
    path = tmp_path / "run.json"

    def write(text: str) -> None:
        path.write_bytes(gzip.compress(text.encode()) if compressed else text.encode())

    write('{\n  "q1": {\n    "d1": 1.0,\n    "d1": 5.0\n  }\n}\n')
    with pytest.raises(
        DatasetFormatError,
        match=r"run.json:4: query 'q1': doc 'd1' appears again \(first on line 3\)",
    ):
        read_run(path)
    write('{\n  "q1": {"d1": 1.0},\n  "q2": {},\n  "q1": {"d2": 2.0}\n}\n')
    with pytest.raises(
        DatasetFormatError, match=r"run.json:4: query 'q1' appears again \(first on line 2\)"
    ):
        read_run(path)


def test_a_key_given_twice_in_a_json_lines_record_is_refused(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text(
        '{"query_id": "q1", "doc_id": "d1", "score": 1}\n'
        '{"query_id": "q1", "doc_id": "d2", "score": 1.0, "score": 5.0}\n'
    )
    with pytest.raises(
        DatasetFormatError, match=r"run.jsonl:2: key 'score' appears twice in one object"
    ):
        read_run(path)


def test_a_json_run_that_reads_well_reads_as_before(tmp_path):
    run = {"q1": {"d1": 1.5, "d2": -2.0}, "q é": {}, "q3": {"d\u2028": 1e-300}}
    write_run(tmp_path / "run.json", run)
    assert read_run(tmp_path / "run.json") == {
        "q1": {"d1": 1.5, "d2": -2.0},
        "q é": {},
        "q3": {"d\u2028": 1e-300},
    }
    (tmp_path / "pretty.json").write_text(json.dumps(run, indent="\t"))
    assert read_run(tmp_path / "pretty.json") == run
    (tmp_path / "ints.json").write_text('{"q1": {"d1": 3, "d2": -0}}')
    assert read_run(tmp_path / "ints.json") == {"q1": {"d1": 3.0, "d2": 0.0}}


# --- 4. decompressed size and blank runs ----------------------------------------------------------


def gzip_then_damage(data: bytes) -> bytes:
    """``data`` gzip-compressed, its last bytes (the checksum) broken: a reader that reads to
    the end fails on the damage; one that stops at a limit first never sees it."""
    packed = bytearray(gzip.compress(data, compresslevel=9, mtime=0))
    packed[-5] ^= 0xFF
    return bytes(packed)


def test_a_json_run_of_mostly_whitespace_stops_at_the_blank_limit(tmp_path):
    path = tmp_path / "run.json.gz"
    blank = 16 << 20  # 16 MiB of whitespace, past the 1 MiB limit: a few kB compressed
    path.write_bytes(gzip_then_damage(b'{"q1":\n' + b" " * blank + b'{"d1": 1}}\n'))
    assert path.stat().st_size < 64 << 10
    with pytest.raises(DatasetFormatError) as caught:
        read_run(path)
    # The whitespace is refused, not the damaged end: the reader stopped early.
    assert str(caught.value).startswith(
        f"{path}:1: a run of more than 1 MiB of whitespace starts here"
    )


def test_a_json_lines_run_of_blank_lines_stops_at_the_blank_limit(tmp_path):
    path = tmp_path / "run.jsonl.gz"
    record = b'{"query_id": "q1", "doc_id": "d1", "score": 1}\n'
    path.write_bytes(gzip_then_damage(record + b"\n" * (16 << 20) + record))
    with pytest.raises(DatasetFormatError) as caught:
        read_run(path)
    assert str(caught.value).startswith(
        f"{path}:2: a run of more than 1 MiB of whitespace starts here"
    )
    path.write_bytes(gzip.compress(record + b"\n" * (1 << 20) + b'{"query_id": "q2", "doc_id":'
                                   b' "d1", "score": 1}\n'))  # fmt: skip
    assert read_run(path) == {"q1": {"d1": 1.0}, "q2": {"d1": 1.0}}  # 1 MiB is allowed


def test_the_blank_limit_counts_runs_across_pieces_and_lines(tmp_path):
    path = tmp_path / "run.json.gz"
    text = '{"q1": {"d1": 1},' + " \n" * 20 + '"q2":' + "\t" * 31 + '{"d1": 2}}'
    path.write_bytes(gzip.compress(text.encode()))
    with pytest.raises(DatasetFormatError, match=r"run.json.gz:1: a run of more than 32 bytes"):
        run_files.read_run_with(path, max_blank=32)
    assert run_files.read_run_with(path, max_blank=40) == {"q1": {"d1": 1.0}, "q2": {"d1": 2.0}}
    path = tmp_path / "run.jsonl"
    path.write_text('\n{"query_id": "q", "doc_id": "d", "score": 1}\n' + "  \n" * 11)
    with pytest.raises(DatasetFormatError, match=r"run.jsonl:3: a run of more than 32 bytes"):
        run_files.read_run_with(path, max_blank=32)
    assert run_files.read_run_with(path, max_blank=33) == {"q": {"d": 1.0}}


def test_a_json_run_larger_than_max_bytes_is_refused_and_read_with_a_larger_limit(tmp_path):
    path = tmp_path / "run.json.gz"
    run = {f"q{n}": {f"d{m}": float(m) for m in range(20)} for n in range(50)}
    path.write_bytes(gzip.compress(json.dumps(run).encode()))
    size = len(json.dumps(run))
    with pytest.raises(
        DatasetFormatError, match=r"run.json.gz:1: the document goes on past 4096 bytes"
    ):
        read_run(path, max_bytes=4096)
    assert read_run(path, max_bytes=size) == run


def test_the_cli_refuses_a_whitespace_bomb_naming_the_file(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    path = tmp_path / "run.json.gz"
    path.write_bytes(gzip_then_damage(b"{" + b"\n" * (4 << 20) + b"}"))
    result = ef_eval("run", tmp_path / "qrels.txt", path)
    assert result.returncode != 0
    assert f"{path}:1: a run of more than 1 MiB of whitespace starts here" in result.stderr
    assert "Traceback" not in result.stderr


# --- 5. damaged Parquet ---------------------------------------------------------------------------


def test_a_parquet_file_with_a_flipped_byte_is_refused_naming_file_row_group_and_column(tmp_path):
    path = tmp_path / "run.parquet"
    run = {f"q{n}": {f"d{m}": m / 7 for m in range(40)} for n in range(30)}
    write_run(path, run)
    data = path.read_bytes()
    footer = int.from_bytes(data[-8:-4], "little")
    # Flip one bit in every position of the data pages in turn (the footer's metadata aside):
    # each copy is either refused, naming the file, or (a bit no page uses) read the same.
    refused = 0
    for at in range(4, len(data) - 8 - footer, 7):
        damaged = bytearray(data)
        damaged[at] ^= 1 << (at % 8)
        (tmp_path / "damaged.parquet").write_bytes(damaged)
        try:
            assert read_run(tmp_path / "damaged.parquet") == run
        except DatasetFormatError as error:
            assert error.path == str(tmp_path / "damaged.parquet")
            refused += 1
    assert refused > 0
    damaged = bytearray(data)
    damaged[data.index(b"d39") + 1] ^= 0x01  # inside the compressed doc ids
    (tmp_path / "damaged.parquet").write_bytes(damaged)
    with pytest.raises(
        DatasetFormatError,
        match=r"damaged.parquet:1: damaged data in row group 0 \(rows 0-1199\), column ",
    ):
        read_run(tmp_path / "damaged.parquet")


def test_a_damaged_parquet_file_from_elsewhere_is_refused_where_pyarrow_refuses_it(tmp_path):
    """A file without page checksums (pandas', ranx's): a flip pyarrow notices, such as
    ``OSError: Corrupt snappy compressed data`` without the file, is refused naming it."""
    path = tmp_path / "other.parquet"
    table = pyarrow.table(
        {"q_id": ["q1"] * 500, "doc_id": [f"doc-{n}" for n in range(500)], "score": [1.0] * 500}
    )
    pyarrow.parquet.write_table(table, path, compression="snappy")
    data = path.read_bytes()
    message = ""
    for at in range(4, len(data)):
        damaged = bytearray(data)
        damaged[at] ^= 0xFF
        path.write_bytes(damaged)
        try:
            pyarrow.parquet.read_table(path)
        except OSError as raw:
            message = str(raw)
        except Exception as other:  # other damage: look further for pyarrow's OSError
            message = str(other)
        if "snappy" in message:
            break
    else:
        pytest.fail("no flipped byte gives pyarrow's snappy error")
    assert str(path) not in message
    with pytest.raises(DatasetFormatError) as caught:
        read_run(path)
    assert str(caught.value).startswith(f"{path}:1: damaged data in row group 0 (rows 0-499)")
    assert "Corrupt snappy compressed data" in str(caught.value)


def test_write_trec_run_still_refuses_what_the_readers_refuse(tmp_path):
    with pytest.raises(ValueError, match=r"query 'q1': doc 'd1' has score inf"):
        write_trec_run(tmp_path / "run.txt", {"q1": {"d1": math.inf}})


def test_zlib_is_what_damaged_gzip_raises_without_the_reader():
    # Pins the premise of the early-stop tests: the damage alone is an error when read to the end.
    with pytest.raises((OSError, EOFError, zlib.error)):
        gzip.decompress(gzip_then_damage(b"x" * 1000))
