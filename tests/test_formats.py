"""Tests for the shared file-format helpers: opening, decoding, errors, atomic writes."""

from __future__ import annotations

import gzip
import math
import os
import pickle
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ef.evaluation._exceptions import DatasetFormatError
from ef.evaluation._io.atomic import write_text_atomically
from ef.evaluation._io.files import find_line, format_number, open_text


def read_lines(path: Path) -> list[str]:
    with open_text(path) as lines:
        return list(lines)


def test_error_message_names_file_line_problem_and_expectation(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    error = DatasetFormatError(path, 7, "found 5 columns", "6 columns")
    assert isinstance(error, ValueError)
    assert str(error) == f"{path}:7: found 5 columns; expected 6 columns"
    assert (error.path, error.line, error.problem, error.expected) == (
        str(path),
        7,
        "found 5 columns",
        "6 columns",
    )


def test_error_survives_pickling() -> None:
    error = DatasetFormatError("qrels.tsv", 2, "bad grade", "a number")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is DatasetFormatError
    assert (copy.path, copy.line, str(copy)) == ("qrels.tsv", 2, str(error))


def test_plain_file_lines_keep_their_endings(tmp_path: Path) -> None:
    path = tmp_path / "plain.txt"
    path.write_bytes(b"a b\nc d\n")
    assert read_lines(path) == ["a b\n", "c d\n"]


def test_byte_order_mark_is_dropped_only_at_the_start(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffa\n\ufeffb\n".encode())
    assert read_lines(path) == ["a\n", "\ufeffb\n"]


def test_crlf_lines_split_once_and_lone_separators_do_not_split(tmp_path: Path) -> None:
    path = tmp_path / "crlf.txt"
    path.write_bytes("a\r\nb\rc\u2028d\x85e\r\n".encode())
    assert read_lines(path) == ["a\r\n", "b\rc\u2028d\x85e\r\n"]


@pytest.mark.parametrize("name", ["data.txt.gz", "data.txt"])
def test_gzip_is_recognised_by_its_magic_bytes_whatever_the_name(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(gzip.compress("\ufeffé 1\r\nü 2\n".encode()))
    assert read_lines(path) == ["é 1\r\n", "ü 2\n"]


def test_empty_file_has_no_lines(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    assert read_lines(path) == []


def test_missing_file_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_lines(tmp_path / "absent.txt")


@pytest.mark.parametrize("compress", [False, True])
def test_invalid_utf8_names_the_line(tmp_path: Path, compress: bool) -> None:
    path = tmp_path / "latin1.txt"
    data = b"ok\nfine\ncaf\xe9\nafter\n"
    # Enough valid lines first that the bad byte is decoded in a later chunk.
    data = b"x\n" * 20_000 + data
    path.write_bytes(gzip.compress(data) if compress else data)
    with pytest.raises(DatasetFormatError) as caught:
        read_lines(path)
    assert caught.value.path == str(path)
    assert caught.value.line == 20_003
    assert str(caught.value).startswith(f"{path}:20003: invalid UTF-8")
    assert caught.value.expected == "UTF-8 text"


def test_truncated_gzip_names_the_first_unreadable_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.gz"
    whole = gzip.compress(b"".join(b"line %d\n" % i for i in range(50_000)))
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(DatasetFormatError) as caught:
        read_lines(path)
    assert caught.value.path == str(path)
    assert 1 < caught.value.line <= 50_000
    assert "gzip" in caught.value.problem


def test_a_decode_error_raised_by_the_caller_is_not_blamed_on_the_file(tmp_path: Path) -> None:
    path = tmp_path / "good.txt"
    path.write_text("fine\n")
    with pytest.raises(UnicodeDecodeError), open_text(path):
        b"\xff".decode("utf-8")


def test_find_line_returns_the_first_match_or_none(tmp_path: Path) -> None:
    path = tmp_path / "lines.txt"
    path.write_text("a\nb\nc\nb\n")
    assert find_line(path, lambda line: line.strip() == "b") == 2
    assert find_line(path, lambda line: line.strip() == "z") is None


def test_atomic_write_creates_the_file(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    with write_text_atomically(path) as out:
        out.write("é\nline\n")
    assert path.read_bytes() == "é\nline\n".encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_atomic_write_keeps_the_old_file_when_the_block_fails(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("old\n")
    with pytest.raises(RuntimeError), write_text_atomically(path) as out:
        out.write("half of the new\n")
        raise RuntimeError("boom")
    assert path.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_atomic_write_gives_the_usual_permissions(tmp_path: Path) -> None:
    reference = tmp_path / "reference.txt"
    reference.write_text("x")
    path = tmp_path / "out.txt"
    with write_text_atomically(path) as out:
        out.write("x")
    assert stat.S_IMODE(os.stat(path).st_mode) == stat.S_IMODE(os.stat(reference).st_mode)


def test_atomic_write_compresses_gz_names_reproducibly(tmp_path: Path) -> None:
    first, second = tmp_path / "a.txt.gz", tmp_path / "b.txt.gz"
    for path in (first, second):
        with write_text_atomically(path) as out:
            out.write("q1 Q0 d1 1 1 ef\n")
    assert gzip.decompress(first.read_bytes()) == b"q1 Q0 d1 1 1 ef\n"
    assert first.read_bytes() == second.read_bytes()
    assert read_lines(first) == ["q1 Q0 d1 1 1 ef\n"]


@given(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**60), 2**60))
def test_format_number_reads_back_as_the_same_float(value: float) -> None:
    text = format_number(value)
    assert float(text) == float(value)
    assert text.split() == [text]


@given(st.integers(-(2**53) + 1, 2**53 - 1))
def test_format_number_writes_whole_numbers_without_a_decimal_point(value: int) -> None:
    assert format_number(float(value)) == str(value)


def test_format_number_keeps_fractions_exact() -> None:
    assert format_number(0.1) == "0.1"
    assert float(format_number(math.pi)) == math.pi
