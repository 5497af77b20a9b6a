"""The lines and fields of untrusted dataset files: length limits, numbers and JSON records.

Every reader applies the same rules, so a file means the same thing wherever it is read:

- a line is at most :data:`MAX_TREC_LINE` bytes (TREC and TSV files) or :data:`MAX_JSONL_LINE`
  bytes (JSON Lines), its line end not counted; a longer line is refused without being read
  into memory whole;
- a number (a score or a grade) is an ASCII decimal,
  ``[+-]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][+-]?\\d+)?``, that is finite as a float: underscores,
  non-ASCII digits, hex, ``inf`` and ``nan`` are refused, although :func:`float` reads them,
  because trec_eval does not (it reads ``1_0`` as 1);
- a JSON record is strict JSON (:func:`~ef.evaluation._json.loads_strict`).

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
from ef.evaluation._json import JsonProblem, loads_strict

__all__ = [
    "MAX_JSONL_LINE",
    "MAX_TREC_LINE",
    "NUMBER_EXPECTED",
    "bounded_lines",
    "check_length",
    "load_json_line",
    "number_problem",
    "read_number",
]

MAX_TREC_LINE = 1 << 20
"""The longest line of a TREC run, TREC qrels or BEIR qrels file, in bytes (1 MiB)."""
MAX_JSONL_LINE = 64 << 20
"""The longest line of a JSON Lines file, in bytes (64 MiB)."""

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


def load_json_line(path: PathArg, number: int, line: str, expected: str) -> Any:
    """Decode one line of a JSON Lines file as strict JSON.

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
        return loads_strict(line)
    except JsonProblem as problem:
        raise DatasetFormatError(path, number, str(problem), expected) from None
