"""Run files read with a plugin's help: :func:`read_trec_run` and :func:`read_run`.

Entry points: each asks the process's plugin host for a faster TREC run parser (hook
``ef_evaluation_trec_run_parser``) and hands it to the readers of :mod:`ef.evaluation._io`.
"""

from __future__ import annotations

from typing import Any

from ef.evaluation._io import runs as _runs
from ef.evaluation._io import trec as _trec
from ef.evaluation._io.files import PathArg
from ef.evaluation._io.lines import MAX_JSON_DOCUMENT
from ef.evaluation._plugins import HOST

__all__ = ["read_run", "read_trec_run"]


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
    return _trec.read_trec_run_with(path, HOST.trec_run_parser())


def read_run(
    path: PathArg, *, format: str | None = None, max_bytes: int = MAX_JSON_DOCUMENT
) -> dict[str, Any]:
    """Read a run file of any format into ``{query_id: {doc_id: score}}``.

    The format is ``format`` if given, else told from the file name (after a ``.gz``):

    - ``.json``: ranx's run format, one JSON object ``{query_id: {doc_id: score}}``;
    - ``.jsonl`` or ``.ndjson``: one ``{"query_id": ..., "doc_id": ..., "score": ...}`` object
      per line (a doc listed twice for a query is refused, naming both lines);
    - ``.parquet``: a table with ranx's columns ``q_id, doc_id, score``, or any column names
      a DataFrame may use (see :doc:`/dataframes`); needs pyarrow (extra ``dataframes``);
    - anything else: a TREC run file, read by :func:`read_trec_run` (a plugin's faster parser
      included).

    TREC, JSON and JSON Lines files may be gzip-compressed, whatever their name. Scores must be
    finite numbers (a JSON number such as ``1e400`` that overflows a float is refused, as in a
    TREC file); a key given twice in a JSON object (a doc, a query, a record's ``"score"``) is
    refused, not overwritten. A ``.json`` document is read whole: it may hold at most
    ``max_bytes`` characters once decompressed, and no JSON or JSON Lines file more than 1 MiB
    of whitespace or blank lines in a row (a small gzip file could otherwise unpack to
    gigabytes of nothing). A Parquet file's pages are checked against their checksums when it
    has them (:func:`write_run` writes them); damaged data is an error naming the row group and
    the column. The queries keep their file order, the docs too (unsorted).

    :param path: the run file.
    :param format: ``"trec"``, ``"json"``, ``"jsonl"`` or ``"parquet"``, or ``None``.
    :param max_bytes: the largest ``.json`` document read, in characters of decompressed text
        (1 GiB); raise it for a larger run, or write the run as JSON Lines or TREC, which are
        streamed.
    :returns: the scores, ``{query_id: {doc_id: score}}``.
    :raises FileNotFoundError: if ``path`` does not exist.
    :raises ValueError: for an unknown ``format``.
    :raises DatasetFormatError: naming the file and line, for anything the format refuses.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "run.jsonl")
    ...     _ = path.write_text('{"query_id": "q1", "doc_id": "d1", "score": 2.5}\\n')
    ...     print(read_run(path))
    {'q1': {'d1': 2.5}}
    """
    return _runs.read_run_with(path, format, HOST.trec_run_parser(), max_bytes=max_bytes)
