"""The journal's file format: a header line, then one JSON record per finished query.

Everything read from a journal is checked before it is trusted: a journal is a file on disk that
a crash may have cut, a disk may have damaged and a person may have edited. Each line ends with
a ``"crc"`` member, the CRC-32 of the line written without it, so that a changed byte cannot
turn one valid record into another (a line without one, as earlier versions wrote, is read
too). A line that is not exactly what this module writes is a :class:`JournalCorruptError`
naming the file and the line; nothing here modifies a file.
"""

from __future__ import annotations

import json
import math
import os
import re
import zlib
from collections.abc import Mapping
from typing import Any

import attrs

from ef.evaluation._exceptions import JournalCorruptError
from ef.evaluation._io.files import PathArg
from ef.evaluation._json import JsonProblem, json_type, loads_strict
from ef.evaluation._report.reports import QueryFailure

__all__ = [
    "FORMAT_VERSION",
    "JournalEntry",
    "JournalRecords",
    "header_line",
    "parse_header",
    "parse_records",
    "unfinished_header",
]

FORMAT_VERSION = 1
HEADER_START = b'{"ef_journal": '
"""How every header begins: a file holding less than this, or a cut header, is a journal whose
writer was stopped before any query finished."""
_HEADER_EXPECTED = 'a JSON object with "ef_journal", "fingerprint", "limit" and "retriever"'
_RECORD_EXPECTED = (
    'a JSON object {"query_id", "ranked" (distinct doc ids), "scores", "retrieved", '
    '"latency", "attempts"} or {"query_id", "failure", "latency", "attempts"}'
)


# The checksum closes the line: `,"crc":N}` in records, `, "crc": N}` in the header.
_CRC = re.compile(rb',\s?"crc":\s?(\d{1,10})\}[ \t\r\n]*\Z')


def _with_crc(line: str, separator: str) -> str:
    """``line`` (a JSON object) with its CRC-32 added as its last member."""
    crc = zlib.crc32(line.encode("utf-8"))
    return f'{line[:-1]},{separator}"crc":{separator}{crc}}}'


def _check_crc(line: bytes) -> str | None:
    """What is wrong with the line's checksum, or None (a line without one is not checked)."""
    match = _CRC.search(line)
    if match is None:
        return None
    if zlib.crc32(line[: match.start()] + b"}") != int(match[1]):
        return "its checksum does not match (the line was damaged or edited)"
    return None


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _utf8(text: str) -> str:
    """``text`` with anything UTF-8 cannot encode (a lone surrogate) escaped: messages only."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@attrs.frozen
class JournalEntry:
    """One finished query as the journal holds it."""

    query_id: str
    ranked: tuple[str, ...] = ()
    scores: tuple[float, ...] | None = None
    retrieved: int | None = None
    latency: float | None = None
    attempts: int = 1
    failure: QueryFailure | None = None

    def to_json(self) -> str:
        """The record's line, without its newline.

        Scores are kept only when every one is finite: JSON has no NaN or infinity, and a run
        file cannot hold them either. A failure's message is kept with any lone surrogate
        escaped, so it can always be written.
        """
        record: dict[str, Any] = {"query_id": self.query_id}
        if self.failure is not None:
            failure = attrs.asdict(self.failure)
            failure["message"] = _utf8(self.failure.message)
            record["failure"] = failure
        else:
            scores = self.scores
            if scores is not None and not all(map(math.isfinite, scores)):
                scores = None
            record["ranked"] = list(self.ranked)
            record["scores"] = None if scores is None else list(scores)
            record["retrieved"] = self.retrieved
        record["latency"] = self.latency
        record["attempts"] = self.attempts
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return _with_crc(line, "")

    def unencodable(self) -> str | None:
        """What in this entry UTF-8 cannot encode (a lone surrogate), for an error; or None."""
        for what, text in (("query id", self.query_id), *(("doc id", d) for d in self.ranked)):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                return f"{what} {text!r}"
        return None


def header_line(fingerprint: str, limit: int, retriever: str) -> bytes:
    """The header a new journal starts with, newline included."""
    header = {
        "ef_journal": FORMAT_VERSION,
        "fingerprint": fingerprint,
        "limit": limit,
        "retriever": _utf8(retriever),
    }
    return _with_crc(json.dumps(header, ensure_ascii=False), " ").encode("utf-8") + b"\n"


def unfinished_header(data: bytes) -> bool:
    """Whether ``data`` (a file without a newline) is a header cut short: empty, the start of
    one, or one cut before its end. No query can have been journaled in such a file."""
    if HEADER_START.startswith(data):
        return True
    if not data.startswith(HEADER_START):
        return False
    try:
        loads_strict(data)
    except JsonProblem:
        return True
    return False


def parse_header(path: PathArg, line: bytes) -> dict[str, Any]:
    """The header on the first line of the journal at ``path``, checked.

    :raises JournalCorruptError: for anything but a header this version writes.
    """
    try:
        header = loads_strict(line)
    except JsonProblem as error:
        raise JournalCorruptError(
            path, 1, f"not an ef evaluation journal header ({error})", _HEADER_EXPECTED
        ) from None
    if not isinstance(header, dict) or "ef_journal" not in header:
        raise JournalCorruptError(path, 1, "not an ef evaluation journal header", _HEADER_EXPECTED)
    damage = _check_crc(line)
    if damage is not None:
        raise JournalCorruptError(path, 1, f"bad journal header: {damage}", _HEADER_EXPECTED)
    version = header["ef_journal"]
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise JournalCorruptError(
            path, 1, f"journal format {version!r} is not one this version reads", "format 1"
        )
    limit = header.get("limit")
    problem = None
    if not isinstance(header.get("fingerprint"), str):
        problem = "the header's fingerprint is missing or not a string"
    elif isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        problem = f"the header's limit is {limit!r}, not an integer >= 1"
    elif not isinstance(header.get("retriever", ""), str):
        problem = "the header's retriever is not a string"
    if problem is not None:
        raise JournalCorruptError(path, 1, problem, _HEADER_EXPECTED)
    return header


@attrs.frozen
class JournalRecords:
    """What the records of a journal hold, and where its last complete line ends.

    :param entries: each query's last record, in the order queries first appear.
    :param complete: the offset just past the last newline.
    :param tail: the bytes after it (a record a crash cut short, or a whole record whose
        newline was not written).
    :param tail_entry: the record ``tail`` holds when it is a whole, valid one.
    """

    entries: dict[str, JournalEntry]
    complete: int
    tail: bytes
    tail_entry: JournalEntry | None


def parse_records(path: PathArg, data: bytes, start: int, limit: int) -> JournalRecords:
    """Parse the records of a journal's bytes ``data`` from offset ``start`` (line 2).

    :param path: the journal, for errors.
    :param limit: the header's limit; no ranking may be longer.
    :raises JournalCorruptError: for a bad record on a complete line.
    """
    entries: dict[str, JournalEntry] = {}
    number = 1 + data.count(b"\n", 0, start)
    position = start
    while (end := data.find(b"\n", position)) >= 0:
        line = data[position:end]
        position = end + 1
        if line.strip():
            entry = parse_record(path, number, line, limit)
            entries[entry.query_id] = entry
        number += 1
    tail = data[position:]
    tail_entry = None
    if tail.strip():
        try:
            tail_entry = parse_record(path, number, tail, limit)
        except JournalCorruptError:
            tail_entry = None
        else:
            entries[tail_entry.query_id] = tail_entry
    return JournalRecords(entries, position, tail, tail_entry)


def parse_record(path: PathArg, number: int, line: bytes, limit: int) -> JournalEntry:
    """One record, checked: :class:`JournalCorruptError` naming ``path:number`` if it is bad."""
    try:
        record = loads_strict(line)
        damage = _check_crc(line) if isinstance(record, dict) else None
        if damage is not None:
            raise ValueError(damage)
        return _entry(record, limit)
    except (JsonProblem, ValueError) as problem:
        raise JournalCorruptError(
            os.fspath(path), number, f"bad journal record: {problem}", _RECORD_EXPECTED
        ) from None


def _entry(record: Any, limit: int) -> JournalEntry:
    if not isinstance(record, dict):
        raise ValueError(f"a JSON {json_type(record)}, not an object")
    query_id = record.get("query_id")
    if not isinstance(query_id, str):
        raise ValueError(f"query_id is {_shown(query_id)}, not a string")
    latency = record.get("latency")
    if latency is not None and not (_finite(latency) and latency >= 0):
        raise ValueError(f"latency is {_shown(latency)}, not a number of seconds >= 0")
    attempts = record.get("attempts", 1)
    if not _count(attempts, 1):
        raise ValueError(f"attempts is {_shown(attempts)}, not an integer >= 1")
    failure = record.get("failure")
    if failure is not None:
        if record.get("ranked"):
            raise ValueError("a failed query holds a ranking")
        return JournalEntry(
            query_id, latency=latency, attempts=attempts, failure=_failure(failure, query_id)
        )
    ranked = _ranking(record.get("ranked"), limit)
    scores = record.get("scores")
    if scores is not None:
        if not isinstance(scores, list) or len(scores) != len(ranked):
            raise ValueError(f"scores is {_shown(scores)}, not one number per ranked doc id")
        bad = next((i for i, score in enumerate(scores) if not _finite(score)), None)
        if bad is not None:
            raise ValueError(f"scores[{bad}] is {_shown(scores[bad])}, not a finite number")
        scores = tuple(float(score) for score in scores)
    retrieved = record.get("retrieved")
    if retrieved is not None and not _count(retrieved, len(ranked)):
        raise ValueError(
            f"retrieved is {_shown(retrieved)}, not a count >= the {len(ranked)} ranked doc ids"
        )
    return JournalEntry(query_id, ranked, scores, retrieved, latency, attempts)


def _count(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _shown(value: Any) -> str:
    """A decoded JSON value in a message: short, and named by its JSON type when long."""
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 40 else f"a JSON {json_type(value)}"


def _ranking(ranked: Any, limit: int) -> tuple[str, ...]:
    if not isinstance(ranked, list):
        raise ValueError(f"ranked is {_shown(ranked)}, not an array of doc ids")
    first: dict[str, int] = {}
    for position, doc_id in enumerate(ranked, 1):
        if not isinstance(doc_id, str):
            raise ValueError(f"ranked[{position - 1}] is {_shown(doc_id)}, not a doc id string")
        earlier = first.setdefault(doc_id, position)
        if earlier != position:
            raise ValueError(f"doc id {doc_id!r} is ranked twice (at {earlier} and {position})")
    if len(ranked) > limit:
        raise ValueError(
            f"ranked holds {len(ranked)} doc ids, more than the journal's limit {limit}"
        )
    return tuple(ranked)


def _failure(failure: Any, query_id: str) -> QueryFailure:
    if not isinstance(failure, Mapping):
        raise ValueError(f"failure is {_shown(failure)}, not an object")
    if failure.get("query_id", query_id) != query_id:
        raise ValueError(f"the failure is of query {failure.get('query_id')!r}, not {query_id!r}")
    error_type, message = failure.get("error_type"), failure.get("message")
    attempts = failure.get("attempts")
    if not isinstance(error_type, str) or not isinstance(message, str):
        raise ValueError("a failure needs error_type and message strings")
    if not isinstance(attempts, int) or not _count(attempts, 1):
        raise ValueError(f"the failure's attempts is {_shown(attempts)}, not an integer >= 1")
    return QueryFailure(query_id, error_type, message, attempts)
