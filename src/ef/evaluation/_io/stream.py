"""A TREC run file read one query at a time, for runs larger than memory.

A run file grouped by query (each query's lines together, as trec_eval and every retrieval
toolkit write them) can be scored query by query: read a query's lines, hand over its
``{doc_id: score}``, drop it. Memory then holds one query's ranking, never the file. A file
that is not grouped (a query id seen again after another query) cannot be read this way without
scoring a query twice on part of its lines, so it is refused, naming both lines of that query.

Lines are read exactly as :func:`~ef.evaluation._io.trec.read_trec_run_with` reads them, with the
same errors: a query's scores are the same dict, in the same order, with the same floats.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

from ef.evaluation._exceptions import DatasetFormatError, EvaluationError, PluginWarning
from ef.evaluation._io.files import READ_ERRORS, PathArg, open_binary, open_text
from ef.evaluation._io.lines import MAX_TREC_LINE, bounded_lines, check_length
from ef.evaluation._io.qrels import RUN, line_error, raise_duplicate

__all__ = [
    "GROUPED",
    "ByQuery",
    "QueryLines",
    "QueryScores",
    "StreamDeclined",
    "plugin_queries",
    "streaming_form",
    "trec_groups",
    "trec_queries",
]

QueryScores = tuple[str, dict[str, float]]
"""One query of a run file: ``(query_id, {doc_id: score})``, docs in file order."""

GROUPED = "a run grouped by query: all lines of a query together, as trec_eval writes them"

# Lines longer than this many characters may be longer than MAX_TREC_LINE bytes.
_QUICK_LENGTH = MAX_TREC_LINE // 4


class StreamDeclined(EvaluationError):
    """A plugin's streaming parser gave up on the file: the built-in reader reads it again.

    Internal: it never leaves :func:`~ef.evaluation.evaluate_run`.
    """


def trec_queries(path: PathArg) -> Iterator[QueryScores]:
    """The queries of the grouped TREC run file ``path``, one at a time, in file order.

    :param path: a file that can be read again (see
        :func:`~ef.evaluation._io.files.rereadable`): error messages read it a second time.
    :raises DatasetFormatError: naming the file and line, for every line
        :func:`~ef.evaluation._io.trec.read_trec_run_with` refuses, a doc listed twice for a query
        (both lines named) and a query seen again after another one (both lines named).
    """
    seen: dict[str, int] = {}  # query id -> its first line, for the message
    for qid, scores, start, lines, blank in trec_groups(path):
        first = seen.get(qid)
        if first is not None:
            _raise_regrouped(path, start, qid, first)
        seen[qid] = start
        _check_group(path, qid, scores, start, lines, blank)
        yield qid, scores


QueryLines = tuple[str, dict[str, float], int, int, int]
"""One run of consecutive lines of a query: ``(query_id, {doc_id: score}, first line, lines,
blank lines)``; the lines counted run from the first line to the next query's first."""


def trec_groups(path: PathArg) -> Iterator[QueryLines]:
    """Each run of consecutive lines of one query in the TREC run file ``path``, in file order.

    The one loop over a run file's lines, for the streamed and the in-memory reader alike: a
    doc listed twice keeps its last score, and a query may come back after another (the
    callers decide what either means).

    :raises DatasetFormatError: naming the file and line, for a line that is not
        ``query-id Q0 doc-id rank score tag`` with an ASCII decimal, finite score.
    """
    current_qid: str | None = None
    current: dict[str, float] = {}
    start = number = blank = start_blank = 0
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
            if qid != current_qid:  # run files are grouped by query: one check per query
                if current_qid is not None:
                    yield current_qid, current, start, number - start, blank - start_blank
                current_qid, current, start, start_blank = qid, {}, number, blank
            current[doc] = value
    if current_qid is not None:
        yield current_qid, current, start, number + 1 - start, blank - start_blank


def _check_group(
    path: PathArg, qid: str, scores: dict[str, float], start: int, lines: int, blank: int
) -> None:
    """Refuse a query whose lines name a doc twice (fewer docs than non-blank lines)."""
    if lines - blank != len(scores):
        raise_duplicate(path, start=start, query=qid)


def _raise_regrouped(path: PathArg, number: int, qid: str, first: int) -> None:
    raise DatasetFormatError(
        path,
        number,
        f"query {qid!r} appears again after other queries (its first line is line {first}); "
        "a run file given by path is scored one query at a time",
        GROUPED,
    )


ByQuery = Callable[[Any], Iterator[QueryScores]]
"""A plugin's streaming form of its TREC run parser: ``by_query(stream)``."""


def plugin_queries(path: PathArg, by_query: ByQuery) -> Iterator[QueryScores]:
    """The queries of ``path`` as a plugin's streaming parser reads them.

    :raises StreamDeclined: when the parser refuses a line (any line the built-in reader would
        refuse, a query seen again, a doc listed twice), the bytes do not decode, or the parser
        itself breaks (with a :class:`PluginWarning`): the built-in reader then reads the file,
        and reports the error, so messages never depend on the parser.
    """
    try:
        with open_binary(path) as stream:
            yield from by_query(stream)
    except (ValueError, *READ_ERRORS):
        raise StreamDeclined from None
    except OSError:
        raise
    except Exception as error:  # a broken parser costs speed, never a result
        warnings.warn(
            f"the streaming TREC run parser from a plugin raised {type(error).__name__}: "
            f"{error}; the file is read by the built-in reader instead",
            PluginWarning,
            stacklevel=2,
        )
        raise StreamDeclined from None


def streaming_form(parser: Any) -> ByQuery | None:
    """The streaming form of a plugin's TREC run parser: its ``by_query`` attribute, if any.

    A parser of the first form (a plain ``parser(stream) -> (table, lines, blank)``) has none,
    and a run file is then streamed by the built-in reader.
    """
    by_query = getattr(parser, "by_query", None)
    return by_query if callable(by_query) else None
