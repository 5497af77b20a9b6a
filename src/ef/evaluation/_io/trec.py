"""TREC run and qrels files: reading and writing.

A run line is ``query-id Q0 doc-id rank score tag``; a qrels line is
``query-id iteration doc-id grade``. Columns are separated by any whitespace. Runs are written
in trec_eval's order (:func:`~ef.evaluation._scoring.order.rank_by_score`). Pure: a faster run
parser from a plugin is *given* to :func:`read_trec_run_with` by the public ``read_trec_run``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sized

from ef.evaluation._exceptions import PluginWarning
from ef.evaluation._io.atomic import TextSink, write_text_atomically
from ef.evaluation._io.files import (
    READ_ERRORS,
    PathArg,
    format_number,
    open_binary,
    rereadable,
)
from ef.evaluation._io.frames import as_qrels, as_run
from ef.evaluation._io.qrels import check_no_repeats, read_qrels
from ef.evaluation._io.qrels import read_packed_qrels as read_packed
from ef.evaluation._io.stream import trec_groups
from ef.evaluation._json import lone_surrogate
from ef.evaluation._scoring.order import as_ranking, rank_query
from ef.evaluation._scoring.packed_qrels import PackedQrels
from ef.evaluation._types import Qrels, Run

__all__ = [
    "RunParser",
    "read_packed_qrels",
    "read_trec_qrels",
    "read_trec_run_with",
    "write_trec_qrels",
    "write_trec_run",
]


RunParser = Callable[..., tuple[dict[str, dict[str, float]], int, int]]
"""``parser(stream) -> (table, lines, blank_lines)``, a plugin's faster run parser."""


def read_trec_run_with(
    path: PathArg, parser: RunParser | None = None
) -> dict[str, dict[str, float]]:
    """Read a TREC run file into ``{query_id: {doc_id: score}}`` with ``parser``: what the
    public ``read_trec_run`` does with the plugin host's parser.

    :param path: the run file.
    :param parser: a faster parser to try first (a plugin's); the built-in reader reads the file
        when there is none or when it declines the file.
    """
    with rereadable(path) as source:
        parsed = None if parser is None else _read_with_parser(source, parser)
        return _read_run(source) if parsed is None else parsed


def _read_run(path: PathArg) -> dict[str, dict[str, float]]:
    """The built-in reader of :func:`read_trec_run_with`, for a file that can be read again."""
    table: dict[str, dict[str, float]] = {}
    counted = 0  # non-blank lines, to tell a doc listed twice
    for qid, scores, _, lines, blank in trec_groups(path):
        counted += lines - blank
        known = table.get(qid)
        if known is None:
            table[qid] = scores
        else:  # a query that comes back after another: in memory, its lines join up
            known.update(scores)
    check_no_repeats(path, counted, table)
    return table


def _read_with_parser(path: PathArg, parser: RunParser) -> dict[str, dict[str, float]] | None:
    """The run read by a plugin's parser (hook ``ef_evaluation_trec_run_parser``).

    None when the parser declines the file: then the built-in reader reads it, and reports any
    bad line itself. ``path`` can be read again.
    """
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
            stacklevel=4,  # the public read_trec_run wraps this module's
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
    non-relevant. A grade is an ASCII decimal number, as in :func:`read_trec_run_with`; fractional
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


def read_packed_qrels(path: PathArg) -> PackedQrels:
    """Read a qrels file as :func:`read_trec_qrels` does, into :class:`PackedQrels`: the same
    judgements in the same order, in about half the memory of the dicts when most queries have
    few judgements (a million judged queries: ~170 MB instead of ~340 MB), for evaluating
    against very many queries. ``ef-eval run`` reads its qrels this way unless it draws a page.

    :param path: the qrels file, in either form, as for :func:`read_trec_qrels`.
    :raises FileNotFoundError: if ``path`` does not exist.
    :raises DatasetFormatError: as :func:`read_trec_qrels` raises it.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "qrels.txt")
    ...     _ = path.write_text("q1 0 d1 2\\nq1 0 d7 0\\nq2 0 d1 1\\n")
    ...     qrels = read_packed_qrels(path)
    ...     print(len(qrels), qrels["q1"], dict(qrels) == read_trec_qrels(path))
    2 {'d1': 2.0, 'd7': 0.0} True
    """
    return read_packed(path)


def write_trec_run(path: PathArg, run: Run, *, tag: str = "ef") -> None:
    """Write a run as a TREC run file, one ``query-id Q0 doc-id rank score tag`` line per doc.

    A scored query (``{doc_id: score}``) is written in trec_eval's order (score descending, ties
    by doc id descending) with its own scores and ranks ``1..n``. A ranking without scores (a
    list of doc ids) gets strictly decreasing scores ``n, n-1, …, 1``, so trec_eval, which orders
    by score, reads back exactly the given order; a doc id repeated in a ranking keeps its first
    place only (trec_eval refuses duplicates). A query with nothing retrieved writes no line. The
    file is replaced only once fully written (a FIFO or a standard stream is written directly;
    see :func:`~ef.evaluation.write_text_atomically`); a name ending in ``.gz`` is
    gzip-compressed.

    :param path: the file to write; its directory must exist.
    :param run: ``{query_id: [ranked doc ids]}`` or ``{query_id: {doc_id: score}}``, or a
        pandas or polars DataFrame or pyarrow Table of such rows (see :doc:`/dataframes`).
    :param tag: the run name for the last column.
    :raises ValueError: for an id or tag that is empty, contains whitespace (it would split
        into more columns) or a lone surrogate, or a score that is not finite.
    :raises TypeError: if a query's value is a bare string rather than a list of ids, or the
        run is neither a mapping nor a DataFrame.
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
    run = as_run(run)
    with write_text_atomically(path) as out:
        _keep_leading_bom(out, run)
        for qid, result in run.items():
            _check_token(qid, "query id")
            if isinstance(result, Mapping):
                ranked = rank_query(qid, result)
                scores = [_format_number(result[doc], f"score of {doc!r}", qid) for doc in ranked]
            else:
                ranked = list(dict.fromkeys(as_ranking(qid, result)))
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
    :param qrels: ``{query_id: {doc_id: grade}}``, or a DataFrame or Table of such rows.
    :raises TypeError: for qrels that are neither a mapping of mappings nor a DataFrame.
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
    qrels = as_qrels(qrels)
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
    if lone_surrogate(value) is not None:
        raise ValueError(
            f"{where}{what} {value!r} holds a lone surrogate; expected text UTF-8 can encode"
        )


def _format_number(number: float, what: str, qid: str) -> str:
    """Format a score or grade for writing, refusing what could not be read back."""
    if not math.isfinite(number):
        raise ValueError(f"query {qid!r}: {what} is {number}; expected a finite number")
    return format_number(number)
