"""Run files of every format, read and written: :func:`read_run` and :func:`write_run`."""

from __future__ import annotations

from typing import Any

from ef.evaluation._io import runs as _runs
from ef.evaluation._io.files import PathArg
from ef.evaluation._io.lines import MAX_JSON_DOCUMENT
from ef.evaluation._io.runs import write_run
from ef.evaluation._plugins import HOST

__all__ = ["read_run", "write_run"]


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
    return _runs.read_run(path, format, HOST.trec_run_parser(), max_bytes=max_bytes)
