"""TREC run and qrels files: reading, writing, and trec_eval's ranking order.

A run line is ``query-id Q0 doc-id rank score tag``; a qrels line is
``query-id iteration doc-id grade``. Columns are separated by any whitespace. trec_eval orders a
query's documents by score, highest first, ties broken by doc id in *descending* byte order, and
ignores the rank column: :func:`rank_by_score` reproduces that order, so metrics computed here
over :func:`rankings_from_run` agree with trec_eval's on the same file.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence, Sized
from itertools import islice
from operator import gt

from ef.evaluation._atomic import TextSink
from ef.evaluation._formats import (
    READ_ERRORS,
    PathArg,
    format_number,
    open_binary,
    open_text,
    rereadable,
    write_text_atomically,
)
from ef.evaluation._lines import MAX_TREC_LINE, bounded_lines, check_length
from ef.evaluation._qrels import RUN, check_no_repeats, line_error, read_qrels
from ef.evaluation._types import Qrels, Run

__all__ = [
    "rank_by_score",
    "rankings_from_run",
    "read_trec_qrels",
    "read_trec_run",
    "write_trec_qrels",
    "write_trec_run",
]

# Lines longer than this many characters may be longer than MAX_TREC_LINE bytes.
_QUICK_LENGTH = MAX_TREC_LINE // 4


def read_trec_run(path: PathArg) -> dict[str, dict[str, float]]:
    """Read a TREC run file into ``{query_id: {doc_id: score}}``.

    Each non-blank line is ``query-id Q0 doc-id rank score tag``, columns separated by any
    whitespace. As in trec_eval, only the query id, doc id and score matter: the ``Q0``, rank and
    tag columns are ignored, so the order of a query's documents comes from their scores alone
    (see :func:`rankings_from_run`). The scores are returned as read, in file order, unsorted.
    A score is an ASCII decimal number (``12``, ``-0.5``, ``1.5e-3``); ``inf``, ``nan``,
    underscores (``1_0``) and non-ASCII digits are refused, although :func:`float` reads them,
    because trec_eval reads them otherwise. The file may be gzip-compressed, carry a UTF-8
    byte-order mark and use CRLF line ends; it is streamed, so memory holds the result, not the
    file, and a line longer than 1 MiB is refused. A pipe or FIFO (``<(zcat run.gz)``) is
    copied once to a temporary file, removed afterwards. A plugin may provide a faster parser
    (hook ``ef_evaluation_trec_run_parser``; the ``ef-evaluation-speedups`` distribution parses
    in C) with exactly the same result and errors.

    :param path: the run file.
    :returns: the scores, ``{query_id: {doc_id: score}}``.
    :raises FileNotFoundError: if ``path`` does not exist.
    :raises DatasetFormatError: naming the file and line, for a line without exactly six
        columns, a score that is not a finite ASCII decimal number, a doc id listed twice for
        one query (both lines named), a line longer than 1 MiB, or bytes that are not UTF-8.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "run.txt")
    ...     _ = path.write_text("q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 0.5 bm25\\n")
    ...     print(read_trec_run(path))
    {'q1': {'d1': 2.5, 'd2': 0.5}}
    """
    with rereadable(path) as source:
        parsed = _read_with_plugin(source)
        return _read_run(source) if parsed is None else parsed


def _read_run(path: PathArg) -> dict[str, dict[str, float]]:
    """The built-in reader of :func:`read_trec_run`, for a file that can be read again."""
    table: dict[str, dict[str, float]] = {}
    current_qid: str | None = None
    current: dict[str, float] = {}
    number = blank = 0
    to_float = float  # a local name: the hot loop runs once per line of multi-million-line files
    with open_text(path) as text:
        for number, line in enumerate(bounded_lines(text, MAX_TREC_LINE), 1):
            if len(line) > _QUICK_LENGTH:
                check_length(path, number, line, MAX_TREC_LINE)
            try:
                qid, _, doc, _, score, _ = line.split()
                value = to_float(score)
            except ValueError:
                if line.isspace():
                    blank += 1
                    continue
                raise line_error(path, number, line, RUN) from None
            # float() also reads inf, nan, underscores and non-ASCII digits: none is a number.
            if value - value or "_" in score or not score.isascii():
                raise line_error(path, number, line, RUN)
            if qid != current_qid:  # run files are grouped by query: one lookup per query
                known = table.get(qid)
                current = table[qid] = {} if known is None else known
                current_qid = qid
            current[doc] = value
    check_no_repeats(path, number - blank, table)
    return table


def _read_with_plugin(path: PathArg) -> dict[str, dict[str, float]] | None:
    """The run read by a plugin's parser (hook ``ef_evaluation_trec_run_parser``), if any.

    None when no plugin provides a parser, or when the parser declines the file: then the
    built-in reader reads it, and reports any bad line itself. ``path`` can be read again.
    """
    from ef.evaluation._plugins import HOST, PluginWarning

    parser = HOST.trec_run_parser()
    if parser is None:
        return None
    try:
        with open_binary(path) as stream:
            table, lines, blank = parser(stream)
    except (ValueError, *READ_ERRORS):
        return None  # a line the parser does not accept, or bytes that do not decode
    except OSError:
        raise  # the file itself cannot be read: the built-in reader would fail the same way
    except Exception as error:  # a broken parser costs speed, never a result
        warnings.warn(
            f"the TREC run parser from a plugin raised {type(error).__name__}: {error}; "
            "the file is read by the built-in reader instead",
            PluginWarning,
            stacklevel=3,
        )
        return None
    check_no_repeats(path, lines - blank, table)
    return table


def read_trec_qrels(path: PathArg) -> dict[str, dict[str, float]]:
    """Read a qrels file into ``{query_id: {doc_id: grade}}``: TREC qrels, or BEIR's TSV.

    TREC qrels lines are ``query-id iteration doc-id grade``, columns separated by any
    whitespace; the iteration column is ignored, as trec_eval does. A file whose first
    non-blank line is the tab-separated header ``query-id corpus-id score`` is BEIR's qrels TSV
    instead (as in ``qrels/test.tsv``); any other first line is refused, naming both forms.
    Grades are read as floats (``1`` becomes ``1.0``); ``0`` and negative grades mean judged
    non-relevant. A grade is an ASCII decimal number, as in :func:`read_trec_run`; fractional
    grades are kept. Gzip, a UTF-8 byte-order mark and CRLF line ends are accepted, a pipe is
    copied once, and the file is streamed; a line longer than 1 MiB is refused.

    :param path: the qrels file.
    :returns: the judgements, ``{query_id: {doc_id: grade}}``.
    :raises FileNotFoundError: if ``path`` does not exist.
    :raises DatasetFormatError: naming the file and line, for a first line of neither form, a
        line without the form's columns, a grade that is not a finite ASCII decimal number, a
        (query, doc) pair judged twice (both lines named), a line longer than 1 MiB, or bytes
        that are not UTF-8.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "qrels.txt")
    ...     _ = path.write_text("q1 0 d1 2\\nq1 0 d7 0\\n")
    ...     print(read_trec_qrels(path))
    ...     _ = path.write_text("query-id\\tcorpus-id\\tscore\\nq1\\td1\\t1\\n")
    ...     print(read_trec_qrels(path))
    {'q1': {'d1': 2.0, 'd7': 0.0}}
    {'q1': {'d1': 1.0}}
    """
    return read_qrels(path)


def rank_by_score(scores: Mapping[str, float]) -> list[str]:
    """Order scored doc ids as trec_eval does: score descending, ties by doc id descending.

    trec_eval breaks ties with ``strcmp`` on the doc ids, reversed: byte-wise order on their
    UTF-8 encoding, which is the order Python uses for ``str`` (by code point). Scores already in
    that order (the usual case for a run file) are detected in one pass and not re-sorted.

    :param scores: ``{doc_id: score}``.
    :returns: the doc ids, best first.
    :raises ValueError: if a score is NaN, which has no place in an order.

    >>> rank_by_score({'d1': 0.5, 'd2': 0.9, 'd3': 0.5})
    ['d2', 'd3', 'd1']
    """
    values = list(scores.values())
    if all(map(gt, values, islice(values, 1, None))):
        return list(scores)
    if any(map(math.isnan, values)):
        doc_id = next(doc for doc, score in scores.items() if math.isnan(score))
        raise ValueError(f"score of {doc_id!r} is NaN; expected a number")
    ids = list(scores)
    # Tuples compare score first, then doc id: in order iff each pair is strictly above the next.
    pairs = zip(values, ids, strict=True)
    if all(map(gt, pairs, zip(islice(values, 1, None), islice(ids, 1, None), strict=True))):
        return ids
    # Two stable sorts: doc id descending, then score descending keeps that order among ties.
    ids.sort(reverse=True)
    ids.sort(key=scores.__getitem__, reverse=True)
    return ids


def rankings_from_run(run: Run) -> dict[str, list[str]]:
    """Turn a run into ranked doc ids per query.

    A scored query (``{doc_id: score}``) is ordered by :func:`rank_by_score`, the order trec_eval
    evaluates. A query that is already a ranking (a list of doc ids) is passed through untouched:
    a list is returned as the same object, another sequence is copied into a list.

    :param run: ``{query_id: [ranked doc ids]}`` or ``{query_id: {doc_id: score}}``; the two
        forms may be mixed.
    :returns: ``{query_id: [doc ids, best first]}``.
    :raises TypeError: if a query's value is a bare string rather than a list of ids.
    :raises ValueError: if a score is NaN.

    >>> rankings_from_run({'q1': {'a': 1.0, 'b': 1.0, 'c': 2.0}, 'q2': ['x', 'y']})
    {'q1': ['c', 'b', 'a'], 'q2': ['x', 'y']}
    """
    rankings: dict[str, list[str]] = {}
    for qid, result in run.items():
        if isinstance(result, Mapping):
            rankings[qid] = _rank(qid, result)
        elif isinstance(result, list):
            rankings[qid] = result
        else:
            rankings[qid] = list(_ranking(qid, result))
    return rankings


def _rank(qid: str, scores: Mapping[str, float]) -> list[str]:
    """:func:`rank_by_score`, with the query named in its error."""
    try:
        return rank_by_score(scores)
    except ValueError as exc:
        raise ValueError(f"query {qid!r}: {exc}") from None


def _ranking(qid: str, result: Sequence[str]) -> Sequence[str]:
    """Refuse a bare string, which is a sequence of one-letter ids, not a ranking."""
    if isinstance(result, str):
        raise TypeError(f"query {qid!r}: got a string; expected a list of doc ids or a dict")
    return result


def write_trec_run(path: PathArg, run: Run, *, tag: str = "ef") -> None:
    """Write a run as a TREC run file, one ``query-id Q0 doc-id rank score tag`` line per doc.

    A scored query (``{doc_id: score}``) is written in trec_eval's order (:func:`rank_by_score`)
    with its own scores and ranks ``1..n``. A ranking without scores (a list of doc ids) gets
    strictly decreasing scores ``n, n-1, …, 1``, so trec_eval, which orders by score, reads back
    exactly the given order; a doc id repeated in a ranking keeps its first place only (trec_eval
    refuses duplicates). A query with nothing retrieved writes no line. The file is replaced only
    once fully written (a FIFO or a standard stream is written directly; see
    :func:`~ef.evaluation._atomic.write_text_atomically`); a name ending in ``.gz`` is
    gzip-compressed.

    :param path: the file to write; its directory must exist.
    :param run: ``{query_id: [ranked doc ids]}`` or ``{query_id: {doc_id: score}}``.
    :param tag: the run name for the last column.
    :raises ValueError: for an id or tag that is empty, contains whitespace (it would split
        into more columns) or a lone surrogate, or a score that is not finite.
    :raises TypeError: if a query's value is a bare string rather than a list of ids.
    :raises OSError: naming ``path`` when it cannot be written; an existing file is then kept.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "run.txt")
    ...     write_trec_run(path, {'q1': ['d3', 'd1']})
    ...     print(path.read_text(), end="")
    q1 Q0 d3 1 2 ef
    q1 Q0 d1 2 1 ef
    """
    _check_token(tag, "run tag")
    with write_text_atomically(path) as out:
        _keep_leading_bom(out, run)
        for qid, result in run.items():
            _check_token(qid, "query id")
            if isinstance(result, Mapping):
                ranked = _rank(qid, result)
                scores = [_format_number(result[doc], f"score of {doc!r}", qid) for doc in ranked]
            else:
                ranked = list(dict.fromkeys(_ranking(qid, result)))
                scores = [str(score) for score in range(len(ranked), 0, -1)]
            for doc in ranked:
                _check_token(doc, "doc id", qid)
            out.write(
                "".join(
                    f"{qid} Q0 {doc} {rank} {score} {tag}\n"
                    for rank, (doc, score) in enumerate(zip(ranked, scores, strict=True), 1)
                )
            )


def write_trec_qrels(path: PathArg, qrels: Qrels) -> None:
    """Write relevance judgements as a TREC qrels file, one ``query-id 0 doc-id grade`` line each.

    Whole-number grades are written without a decimal point (``1.0`` as ``1``), the form
    trec_eval and pytrec_eval expect; other grades keep their exact ``repr``, so
    :func:`read_trec_qrels` reads back the same floats. Queries and docs keep their mapping
    order. The file is replaced only once fully written; a name ending in ``.gz`` is
    gzip-compressed.

    :param path: the file to write; its directory must exist.
    :param qrels: ``{query_id: {doc_id: grade}}``.
    :raises ValueError: for an id that is empty or contains whitespace or a lone surrogate, or a
        grade that is not finite.
    :raises OSError: naming ``path`` when it cannot be written; an existing file is then kept.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "qrels.txt")
    ...     write_trec_qrels(path, {'q1': {'d1': 1.0, 'd2': 0.5}})
    ...     print(path.read_text(), end="")
    q1 0 d1 1
    q1 0 d2 0.5
    """
    with write_text_atomically(path) as out:
        _keep_leading_bom(out, qrels)
        for qid, judgements in qrels.items():
            _check_token(qid, "query id")
            for doc, grade in judgements.items():
                _check_token(doc, "doc id", qid)
                out.write(f"{qid} 0 {doc} {_format_number(grade, f'grade of {doc!r}', qid)}\n")


def _keep_leading_bom(out: TextSink, table: Mapping[str, Sized]) -> None:
    """Write a byte-order mark if the file's first line will start with U+FEFF: the readers
    drop one at the start of a file, so the query id's own U+FEFF comes back."""
    first = next((qid for qid, lines in table.items() if len(lines)), "")
    if isinstance(first, str) and first.startswith("\ufeff"):
        out.write("\ufeff")


def _check_token(value: str, what: str, qid: str | None = None) -> None:
    """Refuse a value that would not come back as exactly one whitespace-separated column, or
    that UTF-8 cannot encode (a lone surrogate)."""
    where = f"query {qid!r}: " if qid is not None else ""
    if value.split() != [value]:
        raise ValueError(
            f"{where}{what} {value!r} cannot be written to a TREC file; "
            "expected a non-empty id without whitespace"
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            f"{where}{what} {value!r} holds a lone surrogate; expected text UTF-8 can encode"
        ) from None


def _format_number(number: float, what: str, qid: str) -> str:
    """Format a score or grade for writing, refusing what could not be read back."""
    if not math.isfinite(number):
        raise ValueError(f"query {qid!r}: {what} is {number}; expected a finite number")
    return format_number(number)
