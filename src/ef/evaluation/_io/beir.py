"""BEIR datasets on disk: ``corpus.jsonl``, ``queries.jsonl`` and a qrels file."""

from __future__ import annotations

import errno
import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path

from ef.evaluation._exceptions import DatasetFormatError
from ef.evaluation._io.atomic import TextSink, write_files_atomically
from ef.evaluation._io.builtin_datasets import resolve_builtin
from ef.evaluation._io.files import PathArg, find_line, format_number, open_text, rereadable
from ef.evaluation._io.lines import MAX_JSONL_LINE, bounded_lines, check_length, load_json_line
from ef.evaluation._io.qrels import TSV_HEADER as _QRELS_HEADER
from ef.evaluation._io.qrels import read_qrels
from ef.evaluation._json import JsonProblem, json_type, loads_strict, lone_surrogate
from ef.evaluation._types import Corpus, Qrels, Queries

__all__ = ["read_beir", "write_beir"]

_DEFAULT_QRELS_PATHS = ("qrels.tsv", "qrels/test.tsv", "qrels/dev.tsv", "qrels/train.tsv")
"""Where :func:`read_beir` looks for the qrels, in order, when none is named."""

_JSONL_RECORD = 'one JSON object per line, such as {"_id": "d1", "text": "..."}'
# Characters that would break a line or a column of the qrels TSV.
_TSV_BREAKERS = ("\t", "\n", "\r")
# Lines longer than this many characters may be longer than MAX_JSONL_LINE bytes.
_QUICK_LENGTH = MAX_JSONL_LINE // 4


def read_beir(
    directory: PathArg, *, qrels: PathArg | None = None
) -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, float]]]:
    """Load a BEIR-format dataset from disk into the in-memory evaluation triple.

    Reads ``corpus.jsonl`` (records ``{"_id", "title", "text"}``), ``queries.jsonl`` (records
    ``{"_id", "text"}``) and a ``qrels`` TSV (``query-id``, ``corpus-id``, ``score`` columns). The
    corpus text is the record's ``title`` and ``text`` joined — the BEIR convention.

    Precisely: the title and text are joined by one space when both are non-empty, otherwise the
    non-empty one is used (a missing or null ``title`` counts as empty); other fields are
    ignored. ``_id`` and ``text`` must be strings. Each line is strict JSON: ``NaN``, integers
    of more than 4300 digits, nesting too deep to decode and strings holding a lone UTF-16
    surrogate are refused, and so is a line longer than 64 MiB. The qrels file is either BEIR's
    TSV, which starts with the tab-separated header ``query-id corpus-id score``, or headerless
    TREC qrels lines ``query-id iteration doc-id grade`` (whitespace-separated); the first line
    decides, file by file, as :func:`read_trec_qrels` does. Grades are read as floats (``1``
    becomes ``1.0``), from ASCII decimal numbers only. Each file may also be gzip-compressed,
    as ``corpus.jsonl.gz`` and so on when the plain name is absent, or under any name (gzip is
    recognised by its magic bytes); a UTF-8 byte-order mark and CRLF line ends are accepted, and
    blank lines skipped. Files are streamed line by line, so memory holds the dataset, not the
    files; a file that is a pipe or FIFO is copied once to a temporary file.

    :param directory: the dataset directory.
    :param qrels: the qrels file, relative to ``directory``. ``None`` tries
        ``_DEFAULT_QRELS_PATHS`` in order (``qrels.tsv``, ``qrels/test.tsv``,
        ``qrels/dev.tsv``, ``qrels/train.tsv``).
    :returns: a ``(corpus, queries, qrels)`` triple — ``corpus`` and ``queries`` are
        ``{id: text}`` dicts, ``qrels`` is ``{query_id: {doc_id: relevance}}``. Feed it straight
        to :func:`evaluate_retrieval` (after indexing ``corpus`` with ``ingest()``).
    :raises FileNotFoundError: if ``corpus.jsonl``, ``queries.jsonl`` or the qrels file is
        missing; the message lists every name tried. All three are located before any is read.
    :raises DatasetFormatError: naming the file and line, for JSON that is malformed or not
        strict, a line too long, a record that is not an object, a missing or non-string
        ``_id`` or ``text``, an id repeated within a file or a (query, doc) pair judged twice
        (both lines named), a qrels file of neither form, a
        qrels line with the wrong number of columns, or a grade that is not a finite ASCII
        decimal number.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     root = pathlib.Path(tmp)
    ...     _ = (root / "corpus.jsonl").write_text(
    ...         '{"_id": "d1", "title": "Paris", "text": "Capital of France."}\\n')
    ...     _ = (root / "queries.jsonl").write_text('{"_id": "q1", "text": "french capital"}\\n')
    ...     _ = (root / "qrels.tsv").write_text("query-id\\tcorpus-id\\tscore\\nq1\\td1\\t1\\n")
    ...     corpus, queries, qrels = read_beir(root)
    >>> corpus
    {'d1': 'Paris Capital of France.'}
    >>> queries, qrels
    ({'q1': 'french capital'}, {'q1': {'d1': 1.0}})
    """
    root = Path(resolve_builtin(directory))
    if not root.is_dir():
        raise FileNotFoundError(errno.ENOENT, "no BEIR dataset directory", str(root))
    corpus_path = _locate(root, ("corpus.jsonl",), "corpus")
    queries_path = _locate(root, ("queries.jsonl",), "queries")
    qrels_path = _locate(root, _DEFAULT_QRELS_PATHS if qrels is None else (qrels,), "qrels")
    return (
        _read_records(corpus_path, join_title=True),
        _read_records(queries_path, join_title=False),
        read_qrels(qrels_path),
    )


def _locate(root: Path, names: Iterable[PathArg], what: str) -> Path:
    """The first of ``names`` (or its ``.gz`` twin) that exists under ``root``.

    Anything but a directory counts: a FIFO or ``/dev/fd/63`` is read as a file is.
    """
    tried: list[str] = []
    for name in names:
        for candidate in (Path(name), Path(f"{name}.gz")):
            if (root / candidate).exists() and not (root / candidate).is_dir():
                return root / candidate
            tried.append(str(candidate))
    raise FileNotFoundError(
        errno.ENOENT, f"no {what} file in the BEIR dataset (tried {', '.join(tried)})", str(root)
    )


def _read_records(path: Path, *, join_title: bool) -> dict[str, str]:
    """Read a BEIR JSONL file into ``{_id: text}``, joining the title first if asked."""
    with rereadable(path) as source:
        return _read_record_lines(source, join_title=join_title)


def _read_record_lines(path: PathArg, *, join_title: bool) -> dict[str, str]:
    records: dict[str, str] = {}
    with open_text(path) as lines:
        for number, line in enumerate(bounded_lines(lines, MAX_JSONL_LINE), 1):
            if len(line) > _QUICK_LENGTH:
                check_length(path, number, line, MAX_JSONL_LINE)
            if line.isspace():
                continue
            record = load_json_line(path, number, line, _JSONL_RECORD)
            if type(record) is not dict:
                problem = f"a JSON {json_type(record)} is not a record"
                raise DatasetFormatError(path, number, problem, _JSONL_RECORD)
            record_id = _string_field(path, number, record, "_id", None)
            text = _string_field(path, number, record, "text", record_id)
            if join_title:
                title = record.get("title")
                if title is not None:
                    title = _string_field(path, number, record, "title", record_id)
                if title:
                    text = f"{title} {text}" if text else title
            if record_id in records:
                _raise_duplicate_record(path, number, record_id)
            records[record_id] = text
    return records


def _string_field(
    path: PathArg, number: int, record: dict[str, object], key: str, record_id: str | None
) -> str:
    """``record[key]``, which must be present and a string."""
    value = record.get(key)
    if type(value) is str:
        return value
    owner = "record" if record_id is None else f"record {record_id!r}"
    if key not in record:
        problem = f"{owner} has no {key!r}"
    else:
        problem = f"{key!r} of {owner} is a JSON {json_type(value)}"
    raise DatasetFormatError(path, number, problem, f"a string {key!r}")


def _raise_duplicate_record(path: PathArg, number: int, record_id: str) -> None:
    def has_id(line: str) -> bool:
        try:
            record = loads_strict(line)
        except JsonProblem:
            return False
        return type(record) is dict and record.get("_id") == record_id

    first = find_line(path, has_id)
    raise DatasetFormatError(
        path, number, f"duplicate _id {record_id!r} (first on line {first})", "each _id only once"
    )


def write_beir(directory: PathArg, corpus: Corpus, queries: Queries, qrels: Qrels) -> None:
    """Write an evaluation triple to disk in BEIR format — the inverse of :func:`read_beir`.

    Creates ``directory`` (and parents) and writes ``corpus.jsonl``, ``queries.jsonl`` and
    ``qrels.tsv``. Use it to snapshot an ``ef`` corpus as a reusable benchmark.

    Each document is written as ``{"_id": id, "title": "", "text": text}`` — the whole text in
    ``text`` and an empty title, so :func:`read_beir` reads back exactly the same strings. The
    qrels TSV starts with the ``query-id corpus-id score`` header; whole-number grades are
    written without a decimal point (``1.0`` as ``1``, as BEIR's own loader expects), others
    exactly. A query whose judgements are empty writes no row, so it does not come back.
    Everything is checked before anything is written, and the three files replace the old ones
    only once all three are complete (see :func:`~ef.evaluation._io.atomic.write_text_atomically`),
    so an error — a full disk included — never leaves a half-written or mixed dataset.

    :param directory: the output directory — created if absent.
    :param corpus: the documents — ``{doc_id: text}``.
    :param queries: the queries — ``{query_id: query_text}``.
    :param qrels: the relevance judgements — ``{query_id: {doc_id: relevance}}``.
    :raises ValueError: for a qrels id holding a tab, newline or carriage return (TSV cannot
        represent it), a grade that is not finite, or an id or text holding a lone surrogate
        (UTF-8 cannot encode it).
    :raises TypeError: for an id or text that is not a string.
    :raises OSError: naming the file that could not be written.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_beir(tmp, {'d1': 'Paris is the capital.'}, {'q1': 'capital?'},
    ...                {'q1': {'d1': 1.0}})
    ...     read_beir(tmp)
    ({'d1': 'Paris is the capital.'}, {'q1': 'capital?'}, {'q1': {'d1': 1.0}})
    """
    _check_texts(corpus, "corpus", "document")
    _check_texts(queries, "queries", "query")
    _check_qrels(qrels)
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    write_files_atomically(
        [
            (root / "corpus.jsonl", lambda out: _write_corpus(out, corpus)),
            (root / "queries.jsonl", lambda out: _write_queries(out, queries)),
            (root / "qrels.tsv", lambda out: _write_qrels(out, qrels)),
        ]
    )


def _write_corpus(out: TextSink, corpus: Corpus) -> None:
    dumps = json.dumps
    for doc_id, text in corpus.items():
        out.write(dumps({"_id": doc_id, "title": "", "text": text}, ensure_ascii=False))
        out.write("\n")


def _write_queries(out: TextSink, queries: Queries) -> None:
    dumps = json.dumps
    for query_id, text in queries.items():
        out.write(dumps({"_id": query_id, "text": text}, ensure_ascii=False))
        out.write("\n")


def _write_qrels(out: TextSink, qrels: Qrels) -> None:
    out.write("\t".join(_QRELS_HEADER) + "\n")
    for query_id, judgements in qrels.items():
        for doc_id, grade in judgements.items():
            out.write(f"{query_id}\t{doc_id}\t{format_number(grade)}\n")


def _check_texts(records: Mapping[str, str], name: str, kind: str) -> None:
    for record_id, text in records.items():
        if type(record_id) is not str:
            raise TypeError(f"{name}: {kind} id {record_id!r} is not a string; expected str ids")
        if type(text) is not str:
            raise TypeError(
                f"{name}: text of {kind} {record_id!r} is {type(text).__name__}; expected str"
            )
        _check_encodable(record_id, f"{name}: {kind} id {record_id!r}")
        _check_encodable(text, f"{name}: text of {kind} {record_id!r}")


def _check_encodable(value: str, what: str) -> None:
    """Refuse a string holding a lone UTF-16 surrogate: UTF-8 cannot write it."""
    code = lone_surrogate(value)
    if code is not None:
        raise ValueError(
            f"{what} holds a lone surrogate (\\u{code:04x}); expected text UTF-8 can encode"
        )


def _check_qrels(qrels: Qrels) -> None:
    for query_id, judgements in qrels.items():
        _check_tsv_id(query_id, "query id")
        for doc_id, grade in judgements.items():
            _check_tsv_id(doc_id, f"query {query_id!r}: doc id")
            if not math.isfinite(grade):
                raise ValueError(
                    f"qrels: grade of doc {doc_id!r} for query {query_id!r} is {grade}; "
                    "expected a finite number"
                )


def _check_tsv_id(value: str, what: str) -> None:
    if type(value) is not str:
        raise TypeError(f"qrels: {what} {value!r} is not a string; expected str ids")
    _check_encodable(value, f"qrels: {what} {value!r}")
    if any(breaker in value for breaker in _TSV_BREAKERS):
        raise ValueError(
            f"qrels: {what} {value!r} cannot be written to a TSV file; "
            "expected no tab, newline or carriage return"
        )
