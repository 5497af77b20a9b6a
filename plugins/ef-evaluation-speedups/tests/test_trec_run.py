"""The C parser reads every file exactly as the built-in reader does.

The oracle is ef.evaluation's own pure-Python reader, :func:`ef.evaluation.read_trec_run` with
this plugin switched off. Generated files mix ASCII and Unicode whitespace, non-ASCII ids, NUL,
many spellings of numbers, blank lines, CRLF, byte-order marks and gzip, and are parsed with
tiny chunk sizes so that lines and the byte-order mark are cut at every possible place. Tables
are compared in order and float by float, bit for bit.
"""

from __future__ import annotations

import contextlib
import gc
import gzip
import io
import math
import random
import re
import string
import struct
import subprocess
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from ef.evaluation import DatasetFormatError, read_trec_run, write_trec_run
from ef.evaluation.extending import reference_trec_run_groups
from hypothesis import (
    HealthCheck,
    assume,
    currently_in_test_context,
    event,
    example,
    given,
    settings,
)
from hypothesis import strategies as st

import ef_evaluation_speedups
from ef_evaluation_speedups import LineError, fast_float, parse_trec_run
from ef_evaluation_speedups._trec_run import RunParser
from speedups_switch import speedups_hooks, speedups_off, speedups_on

CHUNK_SIZES = (1, 2, 3, 7, 64, ef_evaluation_speedups.CHUNK_SIZE)
BOM = b"\xef\xbb\xbf"
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

Table = dict[str, dict[str, float]]

# str.split() whitespace, ASCII (handled in C) and beyond (left to Python's str.split).
ASCII_SPACE = " \t\v\f\r\x1c\x1d\x1e\x1f"
UNICODE_SPACE = "\xa0\u2000\u3000\x85\u2028\u2029\u1680\u202f"
# Id characters: none is whitespace, though some look like it (NUL, zero-width space, BOM).
ID_CHARS = string.ascii_letters + string.digits + "é中_-.:+\x00\u200b\ufeff"
assert not "".join(ASCII_SPACE + UNICODE_SPACE).split()
assert all(not char.isspace() for char in ID_CHARS)

# Scores that are finite ASCII decimals, in spellings that take every path of the parser:
# Clinger's fast path and CPython's parser (long mantissas, large exponents, subnormals).
FINITE_WORDS = [
    "0", "-0", "+0", "-0.0", "0.0", "1", "-1", "39.9998", "-1.5e-3", "1E+5", ".5", "+.5",
    "-.5e+2", "5.", "-5.", "0.1", "2.675", "1e22", "-1e-22", "1e23",
    "1e-23", "9007199254740992", "9007199254740993", "123456789012345678901234567890",
    "0." + "0" * 30 + "1", "1" + "0" * 40, "4.9e-324", "2.2250738585072014e-308",
    "1.7976931348623157e308", "1e-999", "-0e999", "0e-99999", "1e0010",
]  # fmt: skip
# Scores it rejects: not finite...
NOT_FINITE_WORDS = [
    "inf", "-inf", "+inf", "Infinity", "-iNfInItY", "nan", "NaN", "-nan", "1e999", "-1e999",
    "1e309", "1_0e1_000", "9" * 400, "0." + "9" * 400 + "e400",
]  # fmt: skip
# ... or finite for float(), but not an ASCII decimal (trec_eval reads "1_0" as 1) ...
NOT_DECIMAL_WORDS = [
    "1_000.5", "1_0e1_0", "\u0661\u0662", "\uff11.\uff15", "\uff11e3", "\u0663", "\uff19",
]  # fmt: skip
# ... or not a number float() understands.
NOT_NUMBER_WORDS = [
    "0x10", "1e", "e1", ".", "-", "+", "1.2.3", "1__0", "_1", "1_", "1_.5", "abc", "--1", "1e+",
    "1\x00", "\u0661x", "1,5", "\u00bd", "\u2155", "1.5é",
]  # fmt: skip


SIGNS = st.sampled_from(["", "+", "-"])


def exponents(max_digits: int) -> st.SearchStrategy[str]:
    """No exponent, or ``e``/``E``, a sign and up to ``max_digits`` digits."""
    return st.one_of(
        st.just(""),
        st.builds(
            "{}{}{}".format,
            st.sampled_from("eE"),
            SIGNS,
            st.text(string.digits, min_size=1, max_size=max_digits),
        ),
    )


def decimal_strings(max_digits: int = 22, max_exponent_digits: int = 4) -> st.SearchStrategy[str]:
    """Decimal numbers as text: sign, digits, point, digits, exponent; some malformed."""
    digits = st.text(string.digits, max_size=max_digits)
    point = st.sampled_from(["", "."])
    return st.builds(
        "{}{}{}{}{}".format, SIGNS, digits, point, digits, exponents(max_exponent_digits)
    )


def finite_decimals() -> st.SearchStrategy[str]:
    """Decimal spellings of finite numbers (a two-digit exponent cannot overflow)."""
    digits = st.text(string.digits, max_size=22)
    some_digits = st.text(string.digits, min_size=1, max_size=22)
    exponent = exponents(2)
    return st.one_of(
        st.builds("{}{}{}".format, SIGNS, some_digits, exponent),
        st.builds("{}{}.{}{}".format, SIGNS, some_digits, digits, exponent),
        st.builds("{}{}.{}{}".format, SIGNS, digits, some_digits, exponent),
    )


DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _is_number(text: str) -> bool:
    """A score both readers accept: an ASCII decimal that is finite as a float."""
    return DECIMAL.fullmatch(text) is not None and math.isfinite(float(text))


assert all(map(_is_number, FINITE_WORDS))
assert not any(map(_is_number, NOT_FINITE_WORDS + NOT_DECIMAL_WORDS + NOT_NUMBER_WORDS))
assert all(math.isfinite(float(word)) for word in NOT_DECIMAL_WORDS)

finite_scores = st.one_of(
    st.sampled_from(FINITE_WORDS),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(str),
    finite_decimals(),
    st.integers(-(10**30), 10**30).map(str),
)
bad_scores = st.one_of(
    st.sampled_from(NOT_FINITE_WORDS),
    st.sampled_from(NOT_DECIMAL_WORDS),
    st.sampled_from(NOT_NUMBER_WORDS),
    st.builds(
        "{}{}".format, finite_decimals(), st.sampled_from(["e", "x", "..", "_", "e+", "é", "\x00"])
    ),
    st.text(ID_CHARS, min_size=1, max_size=4),
).filter(lambda text: not _is_number(text))
any_scores = st.one_of(finite_scores, bad_scores, decimal_strings())
id_tokens = st.one_of(
    st.sampled_from(["q1", "q2", "10", "Q0", "é", "中文", "d_1", "a", "\x00", "\ufeffx"]),
    st.text(ID_CHARS, min_size=1, max_size=4),
)
fillers = st.one_of(st.just("Q0"), st.integers(0, 1000).map(str), id_tokens)
separators = st.one_of(
    st.just(" "), st.just("\t"), st.text(ASCII_SPACE + UNICODE_SPACE, min_size=1, max_size=3)
)
margins = st.one_of(st.just(""), st.text(ASCII_SPACE + UNICODE_SPACE, max_size=2))
# The strategies run_lines and run_files draw from are made once, not for each line or file: a
# new strategy is validated when it is first drawn from, which costs more than the draw.
LINE_CHARS = ID_CHARS + ASCII_SPACE + UNICODE_SPACE
garbage = st.text(LINE_CHARS, max_size=30)
# Garbage that is not a blank line: up to 30 characters, one of them not whitespace.
garbage_not_blank = st.builds(
    "{}{}{}".format,
    st.text(LINE_CHARS, max_size=14),
    st.sampled_from(ID_CHARS),
    st.text(LINE_CHARS, max_size=15),
)
column_counts = st.sampled_from([1, 2, 3, 4, 5, 7, 8, 12])
line_ends = st.sampled_from(["\n", "\r\n"])
INVALID_UTF8 = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xe4\xb8", b"\x80"]
invalid_utf8 = st.sampled_from(INVALID_UTF8)
one_in_three = st.sampled_from([False, False, True])
one_in_six = st.sampled_from([False] * 5 + [True])

CLEAN_KINDS = ["valid"] * 8 + ["blank"]
MIXED_KINDS = [*CLEAN_KINDS, "columns", "score", "garbage"]
any_kinds = st.sampled_from([CLEAN_KINDS, CLEAN_KINDS, MIXED_KINDS])
kind_choices: dict[tuple[str, ...], st.SearchStrategy[str]] = {}  # a line's kind, by kinds


@st.composite
def run_lines(
    draw: st.DrawFn,
    kinds: list[str],
    min_size: int = 0,
    max_size: int = 25,
    garbage_lines: st.SearchStrategy[str] = garbage,
) -> list[str]:
    """Lines of a run file, without their line ends; a line of kind ``garbage`` is drawn from
    ``garbage_lines``."""
    if tuple(kinds) not in kind_choices:
        kind_choices[tuple(kinds)] = st.sampled_from(kinds)
    line_kinds = kind_choices[tuple(kinds)]
    qids = st.sampled_from(list(dict.fromkeys(draw(st.lists(id_tokens, min_size=1, max_size=4)))))
    docs = st.sampled_from(list(dict.fromkeys(draw(st.lists(id_tokens, min_size=1, max_size=12)))))
    distinct_docs = draw(st.booleans())  # else doc ids repeat within a query
    lines = []
    for index in range(draw(st.integers(min_size, max_size))):
        kind = draw(line_kinds)
        if kind == "blank":
            lines.append(draw(margins))
            continue
        if kind == "garbage":
            lines.append(draw(garbage_lines))
            continue
        doc = draw(docs) + (f"~{index}" if distinct_docs else "")
        scores = {"score": any_scores, "bad score": bad_scores}.get(kind, finite_scores)
        score = draw(scores)
        tokens = [draw(qids), draw(fillers), doc, draw(fillers), score]
        tokens.append(draw(fillers))
        if kind == "columns":
            count = draw(column_counts)
            tokens = (tokens * 2)[:count]
        line = draw(margins)
        for token in tokens[:-1]:
            line += token + draw(separators)
        lines.append(line + tokens[-1] + draw(margins))
    return lines


@st.composite
def run_files(
    draw: st.DrawFn,
    kinds: list[str] | None = None,
    damaged: bool | None = None,
    max_lines: int = 25,
) -> bytes:
    """The bytes of a run file: lines, CRLF or LF, maybe a BOM, bad UTF-8 or gzip."""
    if kinds is None:
        kinds = draw(any_kinds)
    lines = draw(run_lines(kinds, max_size=max_lines))
    text = "".join(line + draw(line_ends) for line in lines)
    if lines and draw(st.booleans()):
        text = text.removesuffix("\n").removesuffix("\r")  # no line end after the last line
    data = text.encode()
    if draw(one_in_three):
        data = BOM + data
    if damaged is None:
        damaged = draw(one_in_six)
    if damaged:
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(invalid_utf8) + data[at:]
    if draw(one_in_three):
        data = gzip.compress(data, mtime=0)
    return data


# the plugin on and off


@pytest.fixture(scope="module", autouse=True)
def plugin(speedups_loaded: None) -> None:
    """Every test here runs with the plugin loaded (conftest.py) and reading TREC runs."""
    assert "ef_evaluation_trec_run_parser" in (speedups_hooks() or ())


@pytest.fixture
def plugin_off_between_reads() -> Iterator[None]:
    """The plugin switched off for a whole property test, its examples switching it on for the
    reads that need it (:func:`plugin_reader`).

    Registering the plugin's module for a read and removing it again is cheap; switching the
    plugin off is not (afterwards every installed plugin is loaded again), and would otherwise
    be most of each example's time.
    """
    with speedups_off():
        yield


@contextlib.contextmanager
def plugin_reader() -> Iterator[None]:
    """The plugin on: ``read_trec_run`` tries its parser first. Where a test switched the plugin
    off, its module is registered again for the block, as conftest.py registers it where it is
    not selected."""
    with speedups_on():
        assert "ef_evaluation_trec_run_parser" in (speedups_hooks() or ())
        yield


@contextlib.contextmanager
def builtin_reader() -> Iterator[None]:
    """The plugin off: ``read_trec_run`` uses its built-in pure-Python reader. Where a test
    switched it off already (:func:`plugin_off_between_reads`), it stays off."""
    if speedups_hooks() is None:
        yield
        return
    with speedups_off():
        yield


def read_outcome(path: Path) -> Table | DatasetFormatError:
    try:
        return read_trec_run(path)
    except DatasetFormatError as error:
        return error


def builtin_read(path: Path, *, keep_duplicates: bool = False) -> Table | DatasetFormatError:
    """What the built-in reader makes of ``path``.

    ``keep_duplicates``: the table it has built when it finds a doc id listed twice for a
    query, instead of the error it then raises (a later copy overwrites an earlier one), which
    is what the parser returns for the caller to check.
    """
    if not keep_duplicates:
        with builtin_reader():
            return read_outcome(path)
    # The built-in reader's one loop over the lines, its runs of lines joined as it joins them.
    table: Table = {}
    try:
        for qid, scores, *_ in reference_trec_run_groups(path):
            table.setdefault(qid, {}).update(scores)
    except DatasetFormatError as error:
        return error
    return table


@contextlib.contextmanager
def open_binary(path: Path) -> Iterator[io.BufferedReader | gzip.GzipFile]:
    """The file's bytes, gzip undone (recognised by its magic bytes, as the readers do)."""
    with open(path, "rb") as raw:
        if raw.peek(2)[:2] == b"\x1f\x8b":
            with gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
                yield unzipped
        else:
            yield raw


def count_lines(path: Path) -> tuple[int, int]:
    """Lines and blank lines, as the built-in reader counts them: UTF-8, a byte-order mark
    dropped, lines ended by ``"\\n"`` only (a last line may have no end)."""
    with open_binary(path) as stream:
        text = stream.read().decode("utf-8-sig")
    counted = [line.isspace() for line in re.findall(r"[^\n]*\n|[^\n]+$", text)]
    return len(counted), sum(counted)


def snapshot(table: Table) -> list[tuple[object, ...]]:
    """The table in order, with each float's exact bits (so 0.0 and -0.0 differ)."""
    return [
        (
            type(qid),
            qid,
            type(scores),
            [(type(doc), doc, type(v), struct.pack("<d", v)) for doc, v in scores.items()],
        )
        for qid, scores in table.items()
    ]


def parse(path: Path, chunk_size: int) -> tuple[Table, int, int] | LineError:
    with open_binary(path) as stream:
        try:
            return parse_trec_run(stream, chunk_size=chunk_size)
        except LineError as error:
            return error


def assert_parser_matches(path: Path, chunk_sizes: tuple[int, ...] = CHUNK_SIZES) -> None:
    """parse_trec_run gives the built-in reader's table and counts, or declines its bad line."""
    expected = builtin_read(path, keep_duplicates=True)
    counts = None if isinstance(expected, DatasetFormatError) else count_lines(path)
    if currently_in_test_context():  # for --hypothesis-show-statistics
        if isinstance(expected, DatasetFormatError):
            event(f"rejected: {expected.problem.split()[0]}")
        else:
            repeated = (
                counts is not None and sum(map(len, expected.values())) < counts[0] - counts[1]
            )
            event("read, doc id repeated" if repeated else "read")
    for chunk_size in chunk_sizes:
        got = parse(path, chunk_size)
        if isinstance(expected, DatasetFormatError):
            assert isinstance(got, LineError), f"chunk_size={chunk_size}: accepted {expected}"
            assert isinstance(got, ValueError)
            (number,) = got.args
            if expected.problem.startswith("invalid UTF-8"):
                # The built-in reader decodes ahead of the line it parses, so it may report
                # undecodable bytes after a line it would have rejected; the parser stops at
                # whichever comes first.
                assert number <= expected.line, (chunk_size, expected)
            else:
                assert number == expected.line, (chunk_size, expected)
            continue
        assert not isinstance(got, LineError), f"chunk_size={chunk_size}: declined {got.args}"
        table, lines, blank = got
        assert snapshot(table) == snapshot(expected), chunk_size
        assert (lines, blank) == counts, chunk_size


def assert_read_matches(path: Path, expected: Table | DatasetFormatError | None = None) -> None:
    """read_trec_run gives the same table, or the same error, with the plugin on and off.

    ``expected``: what the built-in reader made of ``path`` already, if the caller asked it.
    """
    if expected is None:
        expected = builtin_read(path)
    with plugin_reader():
        got = read_outcome(path)
    if isinstance(expected, DatasetFormatError):
        assert type(got) is DatasetFormatError
        assert (str(got), got.line) == (str(expected), expected.line)
    else:
        assert not isinstance(got, DatasetFormatError), got
        assert snapshot(got) == snapshot(expected)


@pytest.fixture(scope="module")
def run_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A file name to write each generated run to."""
    return tmp_path_factory.mktemp("runs") / "run.txt"


# generated files


@SETTINGS
@given(data=run_files())
def test_parser_matches_builtin_reader(run_path: Path, data: bytes) -> None:
    run_path.write_bytes(data)
    assert_parser_matches(run_path)


@pytest.mark.timeout(180)  # at least 10 times its time on an idle 2-core machine
@pytest.mark.usefixtures("plugin_off_between_reads")
@SETTINGS
@given(data=run_files())
def test_read_trec_run_same_with_plugin_on_and_off(run_path: Path, data: bytes) -> None:
    run_path.write_bytes(data)
    assert_read_matches(run_path)


@pytest.mark.timeout(300)  # at least 10 times its time on an idle 2-core machine
@pytest.mark.usefixtures("plugin_off_between_reads")
@SETTINGS
@given(
    before=run_files(kinds=CLEAN_KINDS, damaged=False, max_lines=10),
    bad=run_lines(
        kinds=["columns", "bad score", "garbage"],
        min_size=1,
        max_size=1,
        garbage_lines=garbage_not_blank,
    ),
    after=run_files(kinds=MIXED_KINDS, max_lines=5),
)
def test_line_error_names_the_first_bad_line(
    run_path: Path, before: bytes, bad: list[str], after: bytes
) -> None:
    """A bad line after good ones: the parser's line number is the built-in reader's."""
    if before[:2] == b"\x1f\x8b":
        before = gzip.decompress(before)
    if after[:2] == b"\x1f\x8b":
        after = gzip.decompress(after)
    if before and not before.endswith(b"\n"):
        before += b"\n"
    run_path.write_bytes(before + bad[0].encode() + b"\n" + after.removeprefix(BOM))
    expected = builtin_read(run_path)
    # Garbage is never blank, but may happen to be a valid line: only files with a bad line
    # are of use.
    assume(isinstance(expected, DatasetFormatError) and "listed again" not in expected.problem)
    assert_parser_matches(run_path, chunk_sizes=(1, 64))
    assert_read_matches(run_path, expected)


SPECIAL_FILES = {
    "empty": b"",
    "bom only": BOM,
    "bom, blank line": BOM + b"\n",
    "two boms": BOM + BOM + b"q Q0 d 1 1 t\n",
    "partial bom": b"\xef\xbbq Q0 d 1 1 t\n",
    "bom, no line end": BOM + b"q Q0 d 1 1 t",
    "blank lines": b"\n\r\n \t\n\x0b\x0c\x1c\n",
    "unicode blank line": "q Q0 d 1 1 t\n\xa0\u3000\u2028\n".encode(),
    "nbsp separates": "q\xa0Q0\u2000d 1 1\u3000t\n".encode(),
    "nel makes seven columns": "q Q0 d 1 1 t\x85x\n".encode(),
    "line separator after last column": "q Q0 d 1 1 t \u2028\n".encode(),
    "arabic-indic digits": "q Q0 d 1 \u0661\u0662 t\n".encode(),
    "fullwidth digits": "q Q0 d 1 \uff11.\uff15 t\n".encode(),
    "seven ascii columns, then bad utf-8": b"q Q0 d 1 1 t u \xff\n",
    "bad utf-8 after a bad line": b"q Q0 d 1 x t\nq Q0 e 1 1 t \xff\n",
    "ascii separators": b"q\x1cQ0\x1dd\x1e1\x1f1\x0bt\x0c\r\n",
    "nul in ids": b"q\x00 Q0 d\x00\x00 1 1 t\n",
    "nul in the score": b"q Q0 d 1 1\x00 t\n",
    "carriage return inside a line": b"q Q0 d 1 1 t\rq Q0 e 1 1 t\n",
    "crlf, no line end": b"q Q0 d 1 1 t\r\nq Q0 e 1 2 t",
    "queries interleaved": b"a Q0 d 1 1 t\nb Q0 d 1 2 t\na Q0 e 1 3 t\n\xc3\xa9 Q0 d 1 4 t\n",
    "doc repeated": b"q Q0 d 1 1 t\nq Q0 e 2 2 t\nq Q0 d 3 3 t\n",
    "doc repeated, other query between": b"q Q0 d 1 1 t\nr Q0 d 1 1 t\nq Q0 d 3 3 t\n",
    "doc repeated, unicode line": "q Q0 d 1 1 t\nq\xa0Q0 d 3 3 t\n".encode(),
    "negative zero": b"q Q0 d 1 -0 t\nq Q0 e 1 -0.0e5 t\nq Q0 f 1 -0e999 t\n",
    "subnormal and huge": b"q Q0 d 1 4.9e-324 t\nq Q0 e 1 1.7976931348623157e308 t\n",
    "overflow": b"q Q0 d 1 1e309 t\n",
    "nan": b"q Q0 d 1 nan t\n",
    "underscores": b"q Q0 d 1 1_000.5 t\nq Q0 e 1 1__0 t\n",
    "long mantissa": b"q Q0 d 1 " + b"9" * 400 + b"." + b"9" * 400 + b" t\n",
    "long line": b"q Q0 " + b"d" * 5000 + b" 1 1 t\n",
    "eight columns": b"q Q0 d 1 1 t x y\n",
    "score column empty of digits": b"q Q0 d 1 . t\n",
    "gzip": gzip.compress(BOM + b"q Q0 d 1 1 t\r\nq Q0 e 2 0.5 t\r\n", mtime=0),
}


@pytest.mark.parametrize("data", SPECIAL_FILES.values(), ids=SPECIAL_FILES.keys())
def test_special_files(run_path: Path, data: bytes) -> None:
    run_path.write_bytes(data)
    assert_parser_matches(run_path)
    assert_read_matches(run_path)


MAX = ef_evaluation_speedups.MAX_LINE_BYTES
# Lines around the length limit: the line end is not counted, a byte-order mark neither.
LONG_LINE_FILES = {
    "exactly the limit": b"q Q0 " + b"d" * (MAX - 11) + b" 1 1 t\n",
    "exactly the limit, crlf": b"q Q0 " + b"d" * (MAX - 11) + b" 1 1 t\r\n",
    "exactly the limit, bom, no line end": BOM + b"q Q0 " + b"d" * (MAX - 11) + b" 1 1 t",
    "one byte over": b"q Q0 d 1 1 t\nq Q0 " + b"d" * (MAX - 10) + b" 1 1 t\n",
    "one byte over, a carriage return last": b"q Q0 " + b"d" * (MAX - 11) + b" 1 1 t\r",
    "one byte over in two-byte characters": b"q Q0 d 1 1 t\nq Q0 "
    + "é".encode() * ((MAX - 9) // 2)
    + b" 1 1 t\n",
    "far over, no line end": b"q Q0 d 1 1 t\n" + b"x" * (3 * MAX),
}


@pytest.mark.parametrize("data", LONG_LINE_FILES.values(), ids=LONG_LINE_FILES.keys())
def test_lines_longer_than_the_limit_are_declined_as_the_builtin_reader_refuses_them(
    run_path: Path, data: bytes
) -> None:
    run_path.write_bytes(data)
    assert_parser_matches(run_path, chunk_sizes=(1 << 16, ef_evaluation_speedups.CHUNK_SIZE))
    assert_read_matches(run_path)


def test_parsing_stays_linear_in_the_length_of_a_line(run_path: Path) -> None:
    """A line without end is refused once it is over the limit, not after it is all read."""
    data = b"q Q0 d 1 1 t\n" + b"x" * (64 * MAX)

    class Counting(io.BytesIO):
        read_bytes = 0

        def read(self, size: int | None = -1, /) -> bytes:
            chunk = super().read(size)
            self.read_bytes += len(chunk)
            return chunk

    stream = Counting(data)
    with pytest.raises(LineError) as caught:
        parse_trec_run(stream)
    assert caught.value.args == (2,)
    assert stream.read_bytes <= 3 * ef_evaluation_speedups.CHUNK_SIZE + MAX


def test_damaged_gzip_is_reported_by_the_builtin_reader(run_path: Path) -> None:
    whole = gzip.compress(b"q Q0 d 1 1 t\n" * 2000, mtime=0)
    for data in (whole[: len(whole) // 2], whole[:-4], whole[:20]):
        run_path.write_bytes(data)
        expected = builtin_read(run_path)
        assert isinstance(expected, DatasetFormatError)
        assert_read_matches(run_path)


# typical files take the fast path


def typical_run(rng: random.Random, queries: int, depth: int) -> Table:
    return {
        str(rng.randrange(10**6)): {
            f"doc{rng.randrange(10**7)}": round(rng.uniform(-20, 60), rng.choice([2, 4, 6, 17]))
            for _ in range(depth)
        }
        for _ in range(queries)
    }


@contextlib.contextmanager
def builtin_reader_forbidden() -> Iterator[None]:
    """Fail unless read_trec_run reads with the parser, which takes the whole file (declining
    it would send the file to the built-in reader); the plugin on (:func:`plugin_reader`)."""
    outcomes: list[BaseException | None] = []
    feed = ef_evaluation_speedups._fed

    def fed(*args: Any) -> Iterator[bool]:
        try:
            yield from feed(*args)
        except BaseException as error:
            outcomes.append(error)
            raise
        outcomes.append(None)

    with plugin_reader(), mock.patch.object(ef_evaluation_speedups, "_fed", fed):
        yield
    assert outcomes and outcomes[-1] is None, f"the parser declined the file: {outcomes[-1]!r}"


# A leading U+FEFF would be read as the file's byte-order mark, so ids here do without it.
WRITTEN_ID_CHARS = ID_CHARS.replace("\ufeff", "")


@pytest.mark.usefixtures("plugin_off_between_reads")
@SETTINGS
@given(
    run=st.dictionaries(
        st.text(WRITTEN_ID_CHARS, min_size=1, max_size=6),
        st.dictionaries(
            st.text(WRITTEN_ID_CHARS, min_size=1, max_size=8),
            st.floats(allow_nan=False, allow_infinity=False),
            min_size=1,
            max_size=10,
        ),
        max_size=5,
    )
)
def test_files_the_core_writes_take_the_fast_path(run_path: Path, run: Table) -> None:
    write_trec_run(run_path, run, tag="bm25")
    expected = builtin_read(run_path)
    assert not isinstance(expected, DatasetFormatError)
    with builtin_reader_forbidden():
        got = read_trec_run(run_path)
    assert snapshot(got) == snapshot(expected)
    assert got == run  # in trec_eval's order, each score written exactly


@pytest.mark.parametrize("compress", [False, True])
def test_typical_run_takes_the_fast_path(tmp_path: Path, compress: bool) -> None:
    path = tmp_path / ("run.txt.gz" if compress else "run.txt")
    write_trec_run(path, typical_run(random.Random(7), queries=50, depth=200), tag="bm25")
    expected = builtin_read(path)
    assert not isinstance(expected, DatasetFormatError)
    with open_binary(path) as stream:
        table, lines, blank = parse_trec_run(stream)  # no LineError
    assert (lines, blank) == (10_000, 0)
    assert snapshot(table) == snapshot(expected)
    with builtin_reader_forbidden():
        assert snapshot(read_trec_run(path)) == snapshot(expected)


# the plugin's place in ef.evaluation


@pytest.mark.parametrize(
    ("selection", "loaded"),
    [(None, True), ("speedups", True), ("", False), ("extra_metrics", False)],
)
def test_plugin_selection_switches_the_parser(selection: str | None, loaded: bool) -> None:
    """EF_EVALUATION_PLUGINS without ``speedups`` leaves run files to the built-in reader."""
    # Whether read_trec_run reads a run file with the plugin's parser (its feeding loop).
    code = (
        "import pathlib, tempfile, warnings; warnings.simplefilter('ignore')\n"
        "import ef_evaluation_speedups\n"
        "from ef.evaluation import read_trec_run\n"
        "fed, feed = [], ef_evaluation_speedups._fed\n"
        "ef_evaluation_speedups._fed = lambda *args: fed.append(1) or feed(*args)\n"
        "path = pathlib.Path(tempfile.mkdtemp(), 'run.txt')\n"
        "path.write_text('q Q0 d 1 2.5 t\\n')\n"
        "assert read_trec_run(path) == {'q': {'d': 2.5}}\n"
        "print(bool(fed))\n"
    )
    environment = {"PATH": "", "PYTHONNOUSERSITE": "1"}
    if selection is not None:
        environment["EF_EVALUATION_PLUGINS"] = selection
    result = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == str(loaded)


# fast_float: the exact fast path


def in_fast_path_domain(text: str) -> bool:
    """Whether ``text`` is a decimal within Clinger's fast path: at most 2**53 as an integer of
    all its digits, scaled by at most 10**±22 (exponents written in up to three digits)."""
    match = re.fullmatch(r"[+-]?([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]{1,3}))?", text)
    if match is None or not (match[1] or match[2]):
        return False
    fraction = match[2] or ""
    exponent = int(match[3] or 0) - len(fraction)
    return int(match[1] + fraction) <= 2**53 and -22 <= exponent <= 22


def bits(value: float) -> bytes:
    return struct.pack("<d", value)


def assert_fast_float_exact(text: str) -> float | None:
    value = fast_float(text.encode())
    if value is not None:
        assert type(value) is float
        assert bits(value) == bits(float(text)), text
    if in_fast_path_domain(text):
        assert value is not None, f"{text!r} is within the fast path but was declined"
    return value


@settings(max_examples=1500, deadline=None)
@given(text=decimal_strings())
@example(text="9007199254740992")
@example(text="9007199254740993")
@example(text="-9007199254740992e-22")
@example(text="0.000000000000000000009007199254740992")
@example(text="9007199254740992e22")
@example(text="0" * 40 + "1.5")
@example(text="1" + "0" * 22)
@example(text="1" + "0" * 23)
@example(text="0.1e-21")
def test_fast_float_is_exact(text: str) -> None:
    assert_fast_float_exact(text)


@settings(max_examples=500, deadline=None)
@given(number=st.floats(allow_nan=False, allow_infinity=False))
def test_fast_float_of_repr(number: float) -> None:
    for text in (repr(number), f"{number:.6f}", f"{number:.3e}", f"{number:.15g}"):
        assert_fast_float_exact(text)


@pytest.mark.parametrize(
    "text",
    ["39.9998", "-1.5e-3", "0", "-0.0", "-0", "+.5", "5.", "1E+5", "1e22", "-1e-22",
     "9007199254740992", "0.1", "2.675", "12.345678", "000123.4500"],
)  # fmt: skip
def test_fast_float_takes_common_spellings(text: str) -> None:
    value = assert_fast_float_exact(text)
    assert value is not None
    assert math.copysign(1.0, value) == math.copysign(1.0, float(text))


@pytest.mark.parametrize(
    "text",
    ["inf", "-inf", "nan", "1_0", "", ".", "-", "1e", "1e+", "e5", "0x10", "1.2.3",
     "12345678901234567890", "1.2345678901234567890", "-9876543210.9876543210e3"],
)  # fmt: skip
def test_fast_float_declines(text: str) -> None:
    assert fast_float(text.encode()) is None


def test_fast_float_takes_bytes_like_only() -> None:
    assert fast_float(bytearray(b"2.5")) == fast_float(memoryview(b"2.5")) == 2.5
    with pytest.raises(TypeError):
        fast_float("2.5")  # type: ignore[arg-type]


# memory: nothing leaks, nothing is over- or under-referenced


def mixed_run_bytes(rng: random.Random, lines: int) -> bytes:
    """ASCII and Unicode lines, queries in turn (the current query changes on every line),
    scores on the fast path and off it."""
    qids = [f"q{n}" for n in range(40)] + ["qé1", "q中2"]
    spellings: list[Callable[[float], str]] = [repr, "{:.4f}".format, "{:_.2f}".format]
    out = []
    for n in range(lines):
        score = rng.choice(spellings)(rng.uniform(-100, 100))
        separator = "\xa0" if n % 5 == 0 else " "
        out.append(f"{qids[n % len(qids)]} Q0 doc{n}{separator}{n} {score} tag\n")
    return "".join(out).encode()


def retained_after(data: bytes, times: int) -> int:
    """Bytes still allocated after parsing ``data`` ``times`` times and dropping the results."""
    for _ in range(times):
        try:
            parse_trec_run(io.BytesIO(data), chunk_size=4096)
        except LineError:
            pass
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


@pytest.mark.parametrize(
    "tail",
    [b"", b"q Q0 d 1 nan t\n", b"q Q0 d 1 1_0x t\n", "q Q0 d 1 1\xa0t x\n".encode(), b"\xff\n"],
    ids=["valid", "not finite", "not a number", "unicode line", "bad utf-8"],
)
def test_no_leak(tail: bytes) -> None:
    data = mixed_run_bytes(random.Random(3), 8_000) + tail
    tracemalloc.start()
    try:
        retained_after(data, 1)  # warm up caches and free lists
        baseline = retained_after(data, 0)
        tracemalloc.reset_peak()
        after_one = retained_after(data, 1)
        peak = tracemalloc.get_traced_memory()[1] - baseline
        after_more = retained_after(data, 4)
    finally:
        tracemalloc.stop()
    assert peak > 500_000  # the parses were traced: 8,000 floats, strings and dict entries
    # A leaked float, string or key per line would keep about 200 kB or more per parse.
    assert after_one - baseline < 20_000
    assert after_more - after_one < 20_000


def reference_counts(table: Table) -> list[tuple[int, int]]:
    """The reference counts of each query id and its dict, then of each doc id and its score."""
    counts = []
    for qid in table:
        scores = table[qid]
        counts.append((sys.getrefcount(qid), sys.getrefcount(scores)))
        counts.extend((sys.getrefcount(doc), sys.getrefcount(scores[doc])) for doc in scores)
    return counts


def test_reference_counts_match_the_builtin_reader(run_path: Path) -> None:
    data = mixed_run_bytes(random.Random(5), 2_000)
    run_path.write_bytes(data)
    expected = builtin_read(run_path)
    assert not isinstance(expected, DatasetFormatError)
    table, _, _ = parse_trec_run(io.BytesIO(data), chunk_size=100)
    assert sys.getrefcount(table) == sys.getrefcount(expected) == 2
    assert reference_counts(table) == reference_counts(expected)
    # Each object is held by the table alone (plus the loop variable and getrefcount's argument
    # for ids and dicts, getrefcount's argument for a score).
    assert set(reference_counts(table)) == {(3, 3), (3, 2)}


def test_a_parser_that_was_never_initialised_refuses_to_feed():
    parser = RunParser.__new__(RunParser)
    with pytest.raises(TypeError, match="was not called"):
        parser.feed(b"q Q0 d 1 1 t\n")


def test_the_current_query_outlives_its_removal_from_the_table():
    table: dict[str, dict[str, float]] = {}
    parser = RunParser(table)
    parser.feed(b"q Q0 d 1 1 t\n")
    removed = table.pop("q")
    del table
    junk = [{} for _ in range(50)]  # would reuse the memory of a freed dict
    parser.feed(b"q Q0 e 1 2 t\n")
    assert removed == {"d": 1.0, "e": 2.0}
    assert all(not each for each in junk)
