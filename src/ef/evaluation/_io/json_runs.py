"""Run files in JSON: ranx's ``{query_id: {doc_id: score}}`` document, and JSON Lines rows.

Both are read as strictly as a TREC run: a score is a finite number (a JSON number that
overflows a float, such as ``1e400``, is refused as the TREC reader refuses it), a key given
twice in one object (a doc for a query, a query, a JSON Lines record's ``"score"``) is refused
rather than keeping the last value as :func:`json.loads` does, and every error names the file
and the line. A ranx document is decoded one query at a time from its text, so a line is known
for each query and, on the error path, for each doc. Whitespace in a row and the size of a
document read whole are capped (:mod:`~ef.evaluation._io.lines`).
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any, NoReturn

from ef.evaluation._exceptions import DatasetFormatError
from ef.evaluation._io.files import PathArg, find_line, open_text
from ef.evaluation._io.lines import (
    MAX_BLANK_RUN,
    MAX_JSON_DOCUMENT,
    MAX_JSONL_LINE,
    bounded_lines,
    check_blank_run,
    check_length,
    json_number,
    load_json_line,
    read_document,
)
from ef.evaluation._json import JsonProblem, decode_at, json_type, loads_strict, lone_surrogate

__all__ = ["read_json_run", "read_jsonl_run"]

_JSON_EXPECTED = 'a JSON object {"query_id": {"doc_id": score, ...}, ...} (ranx\'s run format)'
_JSONL_EXPECTED = 'a JSON object {"query_id": "...", "doc_id": "...", "score": number}'
_SPACE = re.compile(r"[ \t\n\r]*")
_FLOAT = frozenset({float})


def read_json_run(
    path: PathArg, max_bytes: int = MAX_JSON_DOCUMENT, max_blank: int = MAX_BLANK_RUN
) -> dict[str, dict[str, float]]:
    """Read ranx's JSON run document ``path``.

    :param max_bytes: the most characters of decompressed text the document may hold.
    :param max_blank: the most whitespace characters in a row.
    :raises DatasetFormatError: naming the file and line.
    """
    with open_text(path) as text:
        document = read_document(path, text, max_bytes, max_blank)
    return _Document(path, document).run()


class _Document:
    """A ranx run document's text, read query by query with the position of each."""

    def __init__(self, path: PathArg, text: str) -> None:
        self.path = path
        self.text = text

    def run(self) -> dict[str, dict[str, float]]:
        text = self.text
        position = self._skip(0)
        if not text.startswith("{", position):
            value, _ = self._decode(position)
            self._fail(position, f"the document is no JSON object (a JSON {json_type(value)})")
        run: dict[str, dict[str, float]] = {}
        starts: dict[str, int] = {}  # query id -> where its key is, for a repeat's message
        position = self._skip(position + 1)
        closed = text.startswith("}", position)
        while not closed:
            key_at = position
            query_id, position = self._key(position)
            first = starts.setdefault(query_id, key_at)
            if first != key_at:
                problem = f"query {query_id!r} appears again (first on line {self._line(first)})"
                self._refuse(key_at, problem)
            value_at = position = self._colon(position)
            try:
                scores, position = decode_at(
                    text, position, unique_keys=True, parse_number=json_number
                )
            except json.JSONDecodeError as error:
                self._fail(error.pos, f"invalid JSON ({error.msg})")
            except JsonProblem as error:
                self._locate(query_id, value_at, str(error))
            if type(scores) is not dict:
                problem = f"query {query_id!r} maps to no object (a JSON {json_type(scores)})"
                self._refuse(value_at, problem)
            # json_number reads every number as a finite float: any other type is no score.
            if not set(map(type, scores.values())) <= _FLOAT:
                self._locate(query_id, value_at, "a score is no number")
            run[query_id] = scores
            position = self._skip(position)
            if text.startswith(",", position):
                position = self._skip(position + 1)
            elif text.startswith("}", position):
                closed = True
            else:
                self._syntax(position)
        position = self._skip(position + 1)
        if position != len(text):
            self._fail(position, "invalid JSON (Extra data)")
        return run

    def _locate(self, query_id: str, value_at: int, problem: str) -> NoReturn:
        """Find the doc of ``query_id`` whose entry is wrong, and fail on its line."""
        text = self.text
        position = value_at
        if text.startswith("{", position):
            seen: dict[str, int] = {}
            position = self._skip(position + 1)
            while text.startswith('"', position):
                key_at = position
                doc_id, position = self._key(position)
                first = seen.setdefault(doc_id, key_at)
                if first != key_at:
                    line = self._line(first)
                    self._refuse(
                        key_at,
                        f"query {query_id!r}: doc {doc_id!r} appears again (first on line {line})",
                    )
                try:
                    score, position = decode_at(
                        text, self._colon(position), unique_keys=True, parse_number=json_number
                    )
                except JsonProblem as error:
                    self._refuse(key_at, f"query {query_id!r}, doc {doc_id!r}: {error}")
                if type(score) is not float:  # json_number reads every number as a float
                    problem = f"is no number (a JSON {json_type(score)})"
                    self._refuse(key_at, f"query {query_id!r}: score of doc {doc_id!r} {problem}")
                position = self._skip(position)
                if text.startswith(",", position):
                    position = self._skip(position + 1)
        self._refuse(value_at, f"query {query_id!r}: {problem}")

    def _key(self, position: int) -> tuple[str, int]:
        """The string that starts at ``position`` (a key), and the position after it."""
        if not self.text.startswith('"', position):
            self._syntax(position)
        try:
            key, end = scanstring(self.text, position + 1, True)
        except json.JSONDecodeError as error:
            self._fail(error.pos, f"invalid JSON ({error.msg})")
        if lone_surrogate(key) is not None:
            self._fail(position, f"the key {key!r} holds a lone UTF-16 surrogate")
        return key, end

    def _colon(self, position: int) -> int:
        position = self._skip(position)
        if not self.text.startswith(":", position):
            self._syntax(position)
        return self._skip(position + 1)

    def _skip(self, position: int) -> int:
        match = _SPACE.match(self.text, position)
        assert match is not None  # it matches the empty string
        return match.end()

    def _decode(self, position: int) -> tuple[Any, int]:
        try:
            return decode_at(self.text, position)
        except json.JSONDecodeError as error:
            self._fail(error.pos, f"invalid JSON ({error.msg})")
        except JsonProblem as problem:
            self._fail(position, str(problem))

    def _syntax(self, position: int) -> NoReturn:
        """Fail with :mod:`json`'s own words for the syntax error at or after ``position``."""
        self._decode(self._skip(0))
        self._fail(position, "invalid JSON")

    def _refuse(self, position: int, problem: str) -> NoReturn:
        """Fail on a value that is valid JSON but no run, unless the document is no JSON at
        all (then that is the error, as for any file of another format)."""
        try:
            _, end = decode_at(self.text, self._skip(0))
        except json.JSONDecodeError as error:
            self._fail(error.pos, f"invalid JSON ({error.msg})")
        except JsonProblem:
            end = len(self.text)
        end = self._skip(end)
        if end != len(self.text):
            self._fail(end, "invalid JSON (Extra data)")
        self._fail(position, problem)

    def _line(self, position: int) -> int:
        return self.text.count("\n", 0, position) + 1

    def _fail(self, position: int, problem: str) -> NoReturn:
        raise DatasetFormatError(self.path, self._line(position), problem, _JSON_EXPECTED)


def read_jsonl_run(path: PathArg, max_blank: int = MAX_BLANK_RUN) -> dict[str, dict[str, float]]:
    """Read a JSON Lines run file ``path``, one ``{"query_id", "doc_id", "score"}`` a line.

    :param max_blank: the most characters of blank lines in a row.
    :raises DatasetFormatError: naming the file and line.
    """
    run: dict[str, dict[str, float]] = {}
    blank = blank_start = 0
    with open_text(path) as text:
        for number, line in enumerate(bounded_lines(text, MAX_JSONL_LINE), 1):
            if len(line) > MAX_JSONL_LINE // 4:
                check_length(path, number, line, MAX_JSONL_LINE)
            if line.isspace():
                if not blank:
                    blank_start = number
                blank += len(line)
                check_blank_run(path, blank_start, blank, max_blank)
                continue
            blank = 0
            query_id, doc_id, score = _jsonl_record(path, number, line)
            inner = run.get(query_id)
            if inner is None:
                inner = run[query_id] = {}
            elif doc_id in inner:
                _raise_repeated_record(path, number, query_id, doc_id)
            inner[doc_id] = score
    return run


def _raise_repeated_record(path: PathArg, number: int, query_id: str, doc_id: str) -> None:
    def same(line: str) -> bool:
        try:
            record = loads_strict(line)
        except JsonProblem:
            return False
        return isinstance(record, dict) and (record.get("query_id"), record.get("doc_id")) == (
            query_id,
            doc_id,
        )

    first = find_line(path, same)
    problem = f"doc {doc_id!r} listed again for query {query_id!r} (first on line {first})"
    raise DatasetFormatError(path, number, problem, "each doc id at most once per query")


def _jsonl_record(path: PathArg, number: int, line: str) -> tuple[str, str, float]:
    record = load_json_line(
        path, number, line, _JSONL_EXPECTED, unique_keys=True, parse_number=json_number
    )
    if not isinstance(record, dict):
        raise DatasetFormatError(path, number, "the line is no JSON object", _JSONL_EXPECTED)
    query_id, doc_id, score = record.get("query_id"), record.get("doc_id"), record.get("score")
    for name, value in (("query_id", query_id), ("doc_id", doc_id)):
        if not isinstance(value, str):
            problem = f"{name} is {'missing' if value is None else 'no string'}"
            raise DatasetFormatError(path, number, problem, _JSONL_EXPECTED)
    if type(score) is not float:  # json_number reads every number as a finite float
        missing = "score" not in record
        problem = (
            "score is missing" if missing else f"score is no number (a JSON {json_type(score)})"
        )
        raise DatasetFormatError(path, number, problem, _JSONL_EXPECTED)
    return query_id, doc_id, score  # type: ignore[return-value]
