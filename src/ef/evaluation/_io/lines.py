"""The lines and fields of untrusted dataset files: length limits, numbers and JSON records.

Every reader applies the same rules, so a file means the same thing wherever it is read:

- a line is at most :data:`MAX_TREC_LINE` bytes (TREC and TSV files) or :data:`MAX_JSONL_LINE`
  bytes (JSON Lines), its line end not counted; a longer line is refused without being read
  into memory whole;
- a number (a score or a grade) is an ASCII decimal,
  ``[+-]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][+-]?\\d+)?``, that is finite as a float: underscores,
  non-ASCII digits, hex, ``inf`` and ``nan`` are refused, although :func:`float` reads them,
  because trec_eval does not (it reads ``1_0`` as 1);
- a JSON record is strict JSON (:func:`~ef.evaluation._json.loads_strict`);
- a JSON document read whole (a ranx ``.json`` run) holds at most :data:`MAX_JSON_DOCUMENT`
  characters once decompressed, and no file holds more than :data:`MAX_BLANK_RUN` characters
  of whitespace in a row (blank lines of a JSON Lines file, whitespace of a JSON document):
  a small gzip file can hold gigabytes of either, read for minutes for nothing.

Each refusal is a :class:`~ef.evaluation.DatasetFormatError` naming file and line.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterator
from typing import IO, Any

from ef.evaluation._exceptions import DatasetFormatError
from ef.evaluation._io.files import PathArg
from ef.evaluation._json import JsonProblem, NumberParser, loads_strict

__all__ = [
    "MAX_BLANK_RUN",
    "MAX_JSONL_LINE",
    "MAX_JSON_DOCUMENT",
    "MAX_TREC_LINE",
    "NUMBER_EXPECTED",
    "bounded_lines",
    "check_blank_run",
    "check_length",
    "json_number",
    "load_json_line",
    "number_problem",
    "read_document",
    "read_number",
]

MAX_TREC_LINE = 1 << 20
"""The longest line of a TREC run, TREC qrels or BEIR qrels file, in bytes (1 MiB)."""
MAX_JSONL_LINE = 64 << 20
"""The longest line of a JSON Lines file, in bytes (64 MiB)."""
MAX_JSON_DOCUMENT = 1 << 30
"""The largest JSON document read whole (a ranx ``.json`` run), in characters of decompressed
text (1 GiB); readers take a larger limit as an option."""
MAX_BLANK_RUN = 1 << 20
"""The most whitespace in a row, in characters (1 MiB): blank lines of a JSON Lines file, or
whitespace between the values of a JSON document."""

NUMBER_EXPECTED = "a finite number in ASCII decimal notation, such as 2, 0.5 or -1e-3"

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def bounded_lines(text: IO[str], max_bytes: int) -> Iterator[str]:
    """The lines of ``text``, each cut after ``max_bytes + 2`` characters.

    A line longer than that comes in pieces, and its first piece is already too long for
    :func:`check_length`: no line is held whole in memory before it is found too long.

    :param text: a text stream, as :func:`~ef.evaluation._io.files.open_text` opens it.
    :param max_bytes: the longest line allowed, in bytes, its line end not counted.
    """
    # A character is at least one byte: max_bytes + 2 characters (with a "\r\n" end) suffice
    # for every allowed line.
    return iter(functools.partial(text.readline, max_bytes + 2), "")


def check_length(path: PathArg, number: int, line: str, max_bytes: int) -> None:
    """Refuse ``line`` if it is longer than ``max_bytes`` bytes, its line end not counted.

    Readers call it only for lines of more than ``max_bytes // 4`` characters (a character is
    at most four bytes), so the common short line costs one comparison.

    :raises DatasetFormatError: naming the file and line.

    >>> check_length("run.txt", 3, "x" * 10 + "\\r\\n", 10)
    >>> check_length("run.txt", 3, "é" * 6 + "\\n", 10)
    Traceback (most recent call last):
    ...
    ef.evaluation.DatasetFormatError: run.txt:3: the line is longer than 10 bytes; \
expected lines of at most 10 bytes
    """
    content = line[:-1] if line.endswith("\n") else line
    if line.endswith("\r\n"):
        content = content[:-1]
    if len(content) > max_bytes or len(content.encode("utf-8")) > max_bytes:
        size = _size(max_bytes)
        raise DatasetFormatError(
            path, number, f"the line is longer than {size}", f"lines of at most {size}"
        )


def _size(count: int) -> str:
    if count % (1 << 20) == 0:
        return f"{count >> 20} MiB"
    return f"{count} bytes"


def read_number(text: str) -> float | None:
    """The value of a score or grade, or ``None`` if ``text`` is not one.

    A number is an ASCII decimal, ``[+-]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][+-]?\\d+)?``, finite
    as a float; the value is :func:`float`'s, correctly rounded.

    >>> read_number("2"), read_number("-1.5e-3"), read_number(".5")
    (2.0, -0.0015, 0.5)
    >>> [read_number(text) for text in ("1_0", "\\uff19", "0x1", "inf", "nan", "1e999", " 1")]
    [None, None, None, None, None, None, None]
    """
    if _DECIMAL.fullmatch(text) is None:
        return None
    value = float(text)
    return value if value - value == 0.0 else None


def number_problem(what: str, text: str) -> str:
    """Say why ``text`` is not a number :func:`read_number` accepts.

    >>> number_problem("score", "high"), number_problem("grade", "1_0")
    ("score 'high' is not a number", "grade '1_0' is not a plain ASCII decimal number")
    >>> number_problem("score", "nan"), number_problem("score", "1e999")
    ("score 'nan' is not finite", "score '1e999' overflows to infinity")
    """
    if _DECIMAL.fullmatch(text) is not None:
        return f"{what} {text!r} overflows to infinity"
    try:
        value = float(text)
    except ValueError:
        return f"{what} {text!r} is not a number"
    if math.isfinite(value):
        return f"{what} {text!r} is not a plain ASCII decimal number"
    return f"{what} {text!r} is not finite"


def json_number(literal: str) -> float:
    """The value of a JSON number that holds a score: a float, refused when not finite.

    The check of :func:`read_number`; a JSON number is always an ASCII decimal, so only its
    range is left to check (``1e400`` or an integer of 400 digits overflows a float).

    >>> json_number("2"), json_number("-1.5e-3")
    (2.0, -0.0015)
    >>> json_number("1e400")
    Traceback (most recent call last):
    ...
    ef.evaluation._exceptions.JsonProblem: number '1e400' overflows to infinity
    """
    value = float(literal)
    if value - value == 0.0:
        return value
    if len(literal) > 40:
        shown = f"{literal[:20]}… ({len(literal)} characters)"
        raise JsonProblem(f"number {shown} overflows to infinity")
    raise JsonProblem(number_problem("number", literal))


def check_blank_run(
    path: PathArg, start: int, characters: int, max_blank: int = MAX_BLANK_RUN
) -> None:
    """Refuse a run of ``characters`` of whitespace that began on line ``start``, if longer
    than ``max_blank``.

    >>> check_blank_run("run.jsonl", 2, 11, 10)
    Traceback (most recent call last):
    ...
    ef.evaluation.DatasetFormatError: run.jsonl:2: a run of more than 10 bytes of whitespace \
starts here; expected at most 10 bytes of blank lines or spaces in a row
    """
    if characters > max_blank:
        size = _size(max_blank)
        raise DatasetFormatError(
            path,
            start,
            f"a run of more than {size} of whitespace starts here",
            f"at most {size} of blank lines or spaces in a row",
        )


_BLANK = " \t\r\n"


def read_document(
    path: PathArg,
    text: IO[str],
    max_chars: int = MAX_JSON_DOCUMENT,
    max_blank: int = MAX_BLANK_RUN,
) -> str:
    """All of ``text``, read in pieces and refused as soon as it is too long or too blank.

    :param path: the file, for errors.
    :param text: the stream, as :func:`~ef.evaluation._io.files.open_text` opens it.
    :param max_chars: the most characters the document may hold.
    :param max_blank: the most whitespace characters in a row (:func:`check_blank_run`).
    :raises DatasetFormatError: naming the file and the line where the limit is passed.

    >>> import io
    >>> read_document("run.json", io.StringIO('{"q1":' + " " * 20 + "{}}"), 100, 30)
    '{"q1":                    {}}'
    >>> read_document("run.json", io.StringIO("{\\n" + " " * 40), 100, 30)
    Traceback (most recent call last):
    ...
    ef.evaluation.DatasetFormatError: run.json:1: a run of more than 30 bytes of whitespace \
starts here; expected at most 30 bytes of blank lines or spaces in a row
    """
    # No piece is longer than max_blank: a run of whitespace inside one piece is then short
    # enough, and only runs that span pieces need counting.
    piece_size = max(1, min(1 << 20, max_blank))
    pieces: list[str] = []
    size = 0
    line = 1  # the line the next piece starts on
    blank = 0  # whitespace in a row, up to the end of the pieces read so far
    blank_start = 1  # the line that run began on
    for piece in iter(lambda: text.read(piece_size), ""):
        size += len(piece)
        if size > max_chars:
            limit = _size(max_chars)
            raise DatasetFormatError(
                path,
                line,
                f"the document goes on past {limit} (decompressed)",
                f"a JSON document of at most {limit}; read it with a larger max_bytes",
            )
        head = len(piece) - len(piece.lstrip(_BLANK))
        if blank == 0 and head:
            blank_start = line
        blank += head
        check_blank_run(path, blank_start, blank, max_blank)
        if head < len(piece):
            tail = len(piece) - len(piece.rstrip(_BLANK))
            blank = tail
            if tail:
                blank_start = line + piece.count("\n", 0, len(piece) - tail)
        line += piece.count("\n")
        pieces.append(piece)
    return "".join(pieces)


def load_json_line(
    path: PathArg,
    number: int,
    line: str,
    expected: str,
    *,
    unique_keys: bool = False,
    parse_number: NumberParser | None = None,
) -> Any:
    """Decode one line of a JSON Lines file as strict JSON.

    :param unique_keys: refuse an object that names a key twice.
    :param parse_number: reads each number (:func:`json_number` for scores).
    :raises DatasetFormatError: naming the file and line, for anything
        :func:`~ef.evaluation._json.loads_strict` refuses (syntax, ``NaN``, a huge integer,
        deep nesting, a lone surrogate).

    >>> load_json_line("a.jsonl", 2, '{"_id": "d1"}\\n', "a record")
    {'_id': 'd1'}
    >>> load_json_line("a.jsonl", 2, '[' * 100_000, "a record")
    Traceback (most recent call last):
    ...
    ef.evaluation.DatasetFormatError: a.jsonl:2: JSON nested too deeply; expected a record
    """
    try:
        return loads_strict(line, unique_keys=unique_keys, parse_number=parse_number)
    except JsonProblem as problem:
        raise DatasetFormatError(path, number, str(problem), expected) from None
