"""Query groups files: TSV lines ``query_id<TAB>group`` or JSON Lines records.

A file is JSON Lines when its first non-blank line starts with ``{``, else TSV. Either form may
name a query on several lines, one group per line (or, in JSON Lines, several in ``"groups"``).
Blank lines are skipped; a TSV file may start with the header ``query_id<TAB>group``. Every
other departure from the form is a :class:`~ef.evaluation.DatasetFormatError` naming the file
and the line; the file may be gzip-compressed, as every dataset file may.
"""

from __future__ import annotations

from typing import Any

from ef.evaluation._exceptions import DatasetFormatError
from ef.evaluation._groups.query_groups import QueryGroups
from ef.evaluation._io.files import PathArg, open_text, read_regular
from ef.evaluation._io.lines import (
    MAX_JSON_DOCUMENT,
    MAX_JSONL_LINE,
    MAX_TREC_LINE,
    bounded_lines,
    check_length,
    load_json_line,
)

__all__ = ["read_query_groups"]

_TSV = "2 tab-separated columns 'query_id<TAB>group'"
_JSONL = 'a JSON object {"query_id": "...", "group": "..."} or {"query_id": "...", "groups": [...]}'
_HEADERS = {("query_id", "group"), ("query-id", "group"), ("qid", "group")}


def read_query_groups(path: PathArg) -> QueryGroups:
    """Read a query groups file: which groups each query belongs to.

    TSV: one ``query_id<TAB>group`` line per membership, a query on as many lines as it has
    groups (an optional first line ``query_id<TAB>group`` is a header). JSON Lines: one object
    per line, ``{"query_id": "q1", "group": "navigational"}`` or ``{"query_id": "q1",
    "groups": ["long", "typo"]}``. Queries keep the order of their first line, and a query's
    groups the order of its lines.

    :param path: the file (gzip-compressed or not), a regular file: it is read whole, and a
        FIFO or a device, which could keep the reader waiting forever, is refused unopened.
    :raises DatasetFormatError: for a line that breaks the form (a missing or extra column, an
        empty query id or group, a query given the same group twice, a JSON record that is no
        object, lacks ``query_id`` or has another key), naming the file and the line; for a
        file that names no query at all.
    :raises FileNotFoundError: if ``path`` does not exist.
    :raises ValueError: naming ``path``, when it is not a regular file or holds more than
        :data:`~ef.evaluation._io.lines.MAX_JSON_DOCUMENT` bytes.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = pathlib.Path(folder, 'groups.tsv')
    ...     _ = path.write_text('q1\\tshort\\nq2\\tlong\\nq2\\tquestion\\n')
    ...     read_query_groups(path).memberships
    {'q1': ('short',), 'q2': ('long', 'question')}
    """
    memberships: dict[str, list[str]] = {}
    seen: dict[tuple[str, str], int] = {}

    def add(number: int, query_id: str, group: str, expected: str) -> None:
        if not query_id.strip():
            raise DatasetFormatError(path, number, "the query id is empty", expected)
        if not group.strip():
            raise DatasetFormatError(
                path, number, f"query {query_id!r} has an empty group", expected
            )
        first = seen.setdefault((query_id, group), number)
        if first != number:
            raise DatasetFormatError(
                path,
                number,
                f"query {query_id!r} is in group {group!r} already (line {first})",
                "each query named in a group once",
            )
        memberships.setdefault(query_id, []).append(group)

    json_lines: bool | None = None
    with open_text(path, read_regular(path, MAX_JSON_DOCUMENT)) as text:
        for number, line in enumerate(bounded_lines(text, MAX_JSONL_LINE), start=1):
            if not line.strip():
                continue
            if json_lines is None:
                json_lines = line.lstrip().startswith("{")
                if not json_lines and tuple(line.rstrip("\r\n").split("\t")) in _HEADERS:
                    continue
            if json_lines:
                check_length(path, number, line, MAX_JSONL_LINE)
                query_id, groups = _json_record(path, number, line)
                for group in groups:
                    add(number, query_id, group, _JSONL)
            else:
                check_length(path, number, line, MAX_TREC_LINE)
                fields = line.rstrip("\r\n").split("\t")
                if len(fields) != 2:
                    raise DatasetFormatError(path, number, f"{len(fields)} columns", _TSV)
                add(number, fields[0].strip(), fields[1].strip(), _TSV)
    if not memberships:  # a file that groups nothing would report no group, silently
        raise DatasetFormatError(path, 1, "the file names no query in any group", _TSV)
    return QueryGroups(memberships)


def _json_record(path: PathArg, number: int, line: str) -> tuple[str, list[str]]:
    record: Any = load_json_line(path, number, line, _JSONL, unique_keys=True)
    if not isinstance(record, dict):
        raise DatasetFormatError(path, number, "the record is no JSON object", _JSONL)
    unknown = sorted(set(record) - {"query_id", "group", "groups"})
    if unknown:
        raise DatasetFormatError(path, number, f"unknown key {unknown[0]!r}", _JSONL)
    query_id = record.get("query_id")
    if not isinstance(query_id, str):
        problem = "no 'query_id'" if query_id is None else "'query_id' is not a string"
        raise DatasetFormatError(path, number, problem, _JSONL)
    if ("group" in record) == ("groups" in record):
        raise DatasetFormatError(path, number, "give one of 'group' and 'groups'", _JSONL)
    if "group" in record:
        groups = [record["group"]]
    else:
        groups = record["groups"]
        if not isinstance(groups, list) or not groups:
            raise DatasetFormatError(
                path, number, "'groups' is not a non-empty list of names", _JSONL
            )
    for group in groups:
        if not isinstance(group, str):
            raise DatasetFormatError(path, number, f"group {group!r} is not a string", _JSONL)
    return query_id, groups
