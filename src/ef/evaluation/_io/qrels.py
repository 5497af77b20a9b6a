"""Relevance judgement files in either form, and the checks the TREC line readers share.

Two forms of qrels are in use, and every reader of qrels recognises both, file by file, from
the first non-blank line: BEIR's TSV starts with the header ``query-id corpus-id score`` (tab-
separated); a line of 4 whitespace-separated columns starts TREC qrels
``query-id iteration doc-id grade``. Anything else is refused with an error naming both forms.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, Sized
from itertools import accumulate, chain
from typing import NamedTuple

from ef.evaluation._exceptions import DatasetFormatError
from ef.evaluation._io.files import PathArg, find_line, open_text, rereadable
from ef.evaluation._io.lines import (
    MAX_TREC_LINE,
    NUMBER_EXPECTED,
    bounded_lines,
    check_length,
    number_problem,
    read_number,
)
from ef.evaluation._scoring.packed_qrels import PackedQrels

__all__ = [
    "QRELS",
    "QRELS_FORMS",
    "RUN",
    "Layout",
    "check_no_repeats",
    "line_error",
    "read_packed_qrels",
    "read_qrels",
]

TSV_HEADER = ("query-id", "corpus-id", "score")
QRELS_FORMS = (
    "BEIR qrels, a TSV starting with the header 'query-id<TAB>corpus-id<TAB>score', "
    "or TREC qrels lines of 4 whitespace-separated columns 'query-id iteration doc-id grade'"
)
_TSV_COLUMNS = "3 tab-separated columns 'query-id corpus-id score'"
# Lines longer than this many characters may be longer than MAX_TREC_LINE bytes.
_QUICK_LENGTH = MAX_TREC_LINE // 4

# The most distinct grade texts whose float is shared by all their judgements.
_SHARED_GRADES = 256


class Layout(NamedTuple):
    """The shape of a TREC line, for error messages."""

    columns: int
    value_column: int
    value_name: str
    description: str


RUN = Layout(6, 4, "score", "6 whitespace-separated columns 'query-id Q0 doc-id rank score tag'")
QRELS = Layout(4, 3, "grade", "4 whitespace-separated columns 'query-id iteration doc-id grade'")


def read_qrels(path: PathArg) -> dict[str, dict[str, float]]:
    """Read qrels in either form into ``{query_id: {doc_id: grade}}``.

    :param path: the qrels file; a pipe or FIFO is copied once, so it can be read again.
    :raises FileNotFoundError: if ``path`` does not exist.
    :raises DatasetFormatError: naming the file and line.
    """
    with rereadable(path) as source:
        form = _form(source)
        if form is None:
            return {}
        return _read_tsv(source, header_line=form) if form else _read_trec(source)


def read_packed_qrels(path: PathArg) -> PackedQrels:
    """Read qrels in either form as :func:`read_qrels` does, into :class:`PackedQrels`.

    TREC qrels whose lines are grouped by query (each query's lines together, as most are) are
    read straight into the arrays; other files are read into dicts first.

    :raises FileNotFoundError: if ``path`` does not exist.
    :raises DatasetFormatError: naming the file and line.
    """
    with rereadable(path) as source:
        form = _form(source)
        if form == 0:
            packed = _read_trec_packed(source)
            if packed is not None:
                return packed
            table = _read_trec(source)
        else:
            table = {} if form is None else _read_tsv(source, header_line=form)
    values = table.values()
    return PackedQrels(
        list(table),
        list(accumulate(map(len, values))),
        list(chain.from_iterable(values)),
        array("d", chain.from_iterable(map(dict.values, values))),
    )


def _form(source: PathArg) -> int | None:
    """``None`` for a file without a non-blank line, 0 for TREC qrels, else BEIR's TSV: the
    number of its header line.

    :raises DatasetFormatError: for a first line of neither form.
    """
    first = _first_nonblank_line(source)
    if first is None:
        return None
    number, line = first
    if line.rstrip("\r\n").split("\t") == list(TSV_HEADER):
        return number
    columns = line.split()
    if len(columns) == QRELS.columns:
        return 0
    if tuple(columns) == TSV_HEADER:
        problem = "the 'query-id corpus-id score' header is not tab-separated"
    elif len(columns) == len(TSV_HEADER):
        problem = "3 columns but no 'query-id corpus-id score' header"
    else:
        problem = f"found {len(columns)} columns"
    raise DatasetFormatError(source, number, problem, QRELS_FORMS)


def _first_nonblank_line(path: PathArg) -> tuple[int, str] | None:
    with open_text(path) as text:
        for number, line in enumerate(bounded_lines(text, MAX_TREC_LINE), 1):
            if len(line) > _QUICK_LENGTH:
                check_length(path, number, line, MAX_TREC_LINE)
            if not line.isspace():
                return number, line
    return None


def _trec_judgements(path: PathArg) -> Iterator[tuple[str, str, float]]:
    """Each ``(query_id, doc_id, grade)`` of TREC qrels lines, in file order; the iteration
    column is ignored, as trec_eval does."""
    grades: dict[str, float] = {}  # one float per grade written alike: a million "1" are one
    to_float = float
    with open_text(path) as text:
        for number, line in enumerate(bounded_lines(text, MAX_TREC_LINE), 1):
            if len(line) > _QUICK_LENGTH:
                check_length(path, number, line, MAX_TREC_LINE)
            try:
                qid, _, doc, grade = line.split()
            except ValueError:
                if line.isspace():
                    continue
                raise line_error(path, number, line, QRELS) from None
            value = grades.get(grade)
            if value is None:
                try:
                    value = to_float(grade)
                except ValueError:
                    raise line_error(path, number, line, QRELS) from None
                # float() also reads inf, nan, underscores and non-ASCII digits: none is a number.
                if value - value or "_" in grade or not grade.isascii():
                    raise line_error(path, number, line, QRELS)
                if len(grades) < _SHARED_GRADES:
                    grades[grade] = value
            yield qid, doc, value


def _read_trec(path: PathArg) -> dict[str, dict[str, float]]:
    """Read TREC qrels lines into dicts."""
    table: dict[str, dict[str, float]] = {}
    records = 0
    for qid, doc, value in _trec_judgements(path):
        records += 1
        judgements = table.get(qid)
        if judgements is None:
            judgements = table[qid] = {}
        judgements[doc] = value
    check_no_repeats(path, records, table)
    return table


def _read_trec_packed(path: PathArg) -> PackedQrels | None:
    """Read TREC qrels lines grouped by query into :class:`PackedQrels`; ``None`` when a
    query's lines are not all together."""
    ids: list[str] = []
    ends = array("Q")
    docs: list[str] = []
    grades = array("d")
    add_doc, add_grade = docs.append, grades.append
    current: str | None = None
    start = 0
    repeated = False
    for qid, doc, value in _trec_judgements(path):
        if qid != current:
            if current is not None:
                repeated = _end_query(docs, start, ends) or repeated
                start = len(docs)
            ids.append(qid)
            current = qid
        add_doc(doc)
        add_grade(value)
    if current is not None:
        repeated = _end_query(docs, start, ends) or repeated
    # Reported once every line is read, as the dicts' reader does: a bad line after it wins.
    if repeated:
        raise_duplicate(path)
    try:
        return PackedQrels(ids, ends, docs, grades)
    except ValueError:  # a query whose lines are apart
        return None


def _end_query(docs: list[str], start: int, ends: array[int]) -> bool:
    """Note that a query's doc ids end here; whether one of them is there twice."""
    end = len(docs)
    ends.append(end)
    return end - start > 1 and len(set(docs[start:end])) != end - start


def _read_tsv(path: PathArg, *, header_line: int) -> dict[str, dict[str, float]]:
    """Read the rows of BEIR's qrels TSV; ids are kept verbatim, spaces included."""
    qrels: dict[str, dict[str, float]] = {}
    with open_text(path) as text:
        for number, line in enumerate(bounded_lines(text, MAX_TREC_LINE), 1):
            if len(line) > _QUICK_LENGTH:
                check_length(path, number, line, MAX_TREC_LINE)
            if number <= header_line or line.isspace():
                continue
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) != len(TSV_HEADER):
                problem = f"found {len(fields)} tab-separated columns"
                raise DatasetFormatError(path, number, problem, _TSV_COLUMNS)
            qid, doc, score = fields
            grade = read_number(score)
            if grade is None:
                problem = number_problem("score", score)
                raise DatasetFormatError(path, number, problem, NUMBER_EXPECTED)
            judgements = qrels.get(qid)
            if judgements is None:
                judgements = qrels[qid] = {}
            elif doc in judgements:
                _raise_repeated_tsv_row(path, number, qid, doc)
            judgements[doc] = grade
    return qrels


def _raise_repeated_tsv_row(path: PathArg, number: int, qid: str, doc: str) -> None:
    first = find_line(path, lambda row: row.rstrip("\r\n").split("\t")[:2] == [qid, doc])
    problem = f"doc {doc!r} judged again for query {qid!r} (first on line {first})"
    raise DatasetFormatError(path, number, problem, "each (query, doc) pair once")


def line_error(path: PathArg, number: int, line: str, layout: Layout) -> DatasetFormatError:
    """The error for a TREC line without the expected columns, or whose value is no number."""
    parts = line.split()
    if len(parts) != layout.columns:
        return DatasetFormatError(path, number, f"found {len(parts)} columns", layout.description)
    problem = number_problem(layout.value_name, parts[layout.value_column])
    return DatasetFormatError(path, number, problem, NUMBER_EXPECTED)


def check_no_repeats(path: PathArg, records: int, table: Mapping[str, Sized]) -> None:
    """Report a repeated (query, doc) pair if ``table`` holds fewer entries than ``records``.

    A repeated doc id overwrites its first copy: counting once here is cheaper than checking
    once per line.
    """
    if records != sum(map(len, table.values())):
        raise_duplicate(path)


def raise_duplicate(path: PathArg, *, start: int = 1, query: str | None = None) -> None:
    """Find the first repeated (query, doc) pair of a TREC file already parsed; report it.

    :param start: the line to look from.
    :param query: look only at this query's lines from ``start`` on, up to another query's
        (a streamed file's group: what the search keeps stays one query's size).
    """
    seen: dict[tuple[str, str], int] = {}
    with open_text(path) as text:
        for number, line in enumerate(bounded_lines(text, MAX_TREC_LINE), 1):
            parts = line.split()
            if number < start or not parts:
                continue
            if query is not None and parts[0] != query:
                break
            key = (parts[0], parts[2])
            first = seen.setdefault(key, number)
            if first != number:
                raise DatasetFormatError(
                    path,
                    number,
                    f"doc {key[1]!r} listed again for query {key[0]!r} (first on line {first})",
                    "each doc id at most once per query",
                )
    # Counted on the first read but not found on the second: the file changed in between.
    raise RuntimeError(f"{path} changed while it was being read")  # pragma: no cover
