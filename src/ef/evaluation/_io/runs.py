"""Run files in every format ef reads and writes: TREC, ranx's JSON, JSON Lines and Parquet.

The format comes from the file name (after a ``.gz``) unless it is named: ``.json`` is ranx's
``{query_id: {doc_id: score}}``, ``.jsonl`` (or ``.ndjson``) one ``{"query_id", "doc_id",
"score"}`` object per line, ``.parquet`` a table with ranx's columns ``q_id, doc_id, score``
(any column name :mod:`~ef.evaluation._io.frames` knows is read), anything else a TREC run.
TREC, JSON and JSON Lines may be gzip-compressed (read whatever the name, written when the name
ends in ``.gz``); Parquet compresses itself and needs pyarrow (extra ``dataframes``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from ef.evaluation._exceptions import DatasetFormatError
from ef.evaluation._io.atomic import replaced_atomically, write_text_atomically
from ef.evaluation._io.files import PathArg, rereadable
from ef.evaluation._io.frames import ACCEPTED_RUN, as_run, run_from_frame
from ef.evaluation._io.json_runs import read_json_run, read_jsonl_run
from ef.evaluation._io.lines import MAX_BLANK_RUN, MAX_JSON_DOCUMENT
from ef.evaluation._io.trec import RunParser, read_trec_run_with, write_trec_run
from ef.evaluation._json import lone_surrogate
from ef.evaluation._scoring.order import as_ranking, rank_query

__all__ = ["RUN_FORMATS", "RunFormat", "read_run_with", "run_format", "scored_rows", "write_run"]

RunFormat = Literal["trec", "json", "jsonl", "parquet"]
RUN_FORMATS: tuple[RunFormat, ...] = ("trec", "json", "jsonl", "parquet")
"""The run formats, as ``--run-format`` and ``format=`` name them."""

_SUFFIXES: dict[str, RunFormat] = {
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
}


def run_format(path: PathArg, format: str | None = None) -> RunFormat:
    """The format of the run file ``path``: ``format`` if given, else from its name.

    :raises ValueError: for a ``format`` that is not one of :data:`RUN_FORMATS`.

    >>> run_format("bm25.jsonl.gz"), run_format("bm25.parquet"), run_format("bm25.txt")
    ('jsonl', 'parquet', 'trec')
    >>> run_format("bm25.txt", "json")
    'json'
    """
    if format is not None:
        for known in RUN_FORMATS:
            if format == known:
                return known
        raise ValueError(f"unknown run format {format!r}; expected one of {', '.join(RUN_FORMATS)}")
    name = os.fspath(path).lower()
    if name.endswith(".gz"):
        name = name[: -len(".gz")]
    return _SUFFIXES.get(os.path.splitext(name)[1], "trec")


def read_run_with(
    path: PathArg,
    format: str | None = None,
    parser: RunParser | None = None,
    *,
    max_bytes: int = MAX_JSON_DOCUMENT,
    max_blank: int = MAX_BLANK_RUN,
) -> dict[str, Any]:
    """Read a run file of any format into ``{query_id: {doc_id: score}}`` with ``parser``: what
    the public ``read_run`` does with the plugin host's parser.

    :param parser: a plugin's faster TREC run parser, for TREC files.
    :param max_bytes: the most characters of decompressed text a ``.json`` document may hold.
    :param max_blank: the most whitespace characters in a row in JSON and JSON Lines files.
    """
    kind = run_format(path, format)
    if kind == "trec":
        return read_trec_run_with(path, parser)
    if kind == "parquet":
        return _read_parquet(path)
    with rereadable(path) as source:
        if kind == "json":
            return read_json_run(source, max_bytes, max_blank)
        return read_jsonl_run(source, max_blank)


def _read_parquet(path: PathArg) -> dict[str, Any]:
    import pyarrow.parquet as parquet  # type: ignore[import-untyped, import-not-found, unused-ignore]

    try:
        # Pages written with checksums (as write_run writes them) are checked against them, so
        # a flipped byte is an error instead of a changed score.
        table = parquet.read_table(path, page_checksum_verification=True)
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except Exception as error:  # pyarrow's own errors: no Parquet file, or a damaged one
        problem, expected = _parquet_problem(path, error)
        raise DatasetFormatError(path, 1, problem, expected) from None
    try:
        return run_from_frame(table, f"run file {os.fspath(path)}")
    except (TypeError, ValueError) as error:
        raise DatasetFormatError(path, 1, str(error), ACCEPTED_RUN) from None


def _parquet_problem(path: PathArg, error: Exception) -> tuple[str, str]:
    """What is wrong with a Parquet file pyarrow cannot read, and what was expected: no
    Parquet at all, or damaged data in a row group and column (a flipped byte in a page)."""
    import pyarrow.parquet as parquet  # type: ignore[import-untyped, import-not-found, unused-ignore]

    try:
        file = parquet.ParquetFile(path, page_checksum_verification=True)
    except Exception:
        return f"not a Parquet file ({_one_line(error)})", ACCEPTED_RUN
    first_row = 0
    for group in range(file.num_row_groups):
        rows = file.metadata.row_group(group).num_rows
        for column in file.schema_arrow.names:
            try:
                file.read_row_group(group, columns=[column])
            except Exception as damage:
                where = f"row group {group} (rows {first_row}-{first_row + rows - 1})"
                problem = f"damaged data in {where}, column {column!r} ({_one_line(damage)})"
                return problem, _UNDAMAGED
        first_row += rows
    return f"damaged Parquet data ({_one_line(error)})", _UNDAMAGED


_UNDAMAGED = "a complete, undamaged Parquet file"


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())


def scored_rows(run: Mapping[str, Any]) -> Iterator[tuple[str, list[str], list[float]]]:
    """Each query of ``run`` as ``(query_id, doc ids, scores)`` in trec_eval's order.

    A ranking without scores gets ``n, n-1, …, 1``, as :func:`write_trec_run` writes it.
    """
    for query_id, result in run.items():
        if isinstance(result, Mapping):
            ranked = rank_query(query_id, result)
            yield query_id, ranked, [float(result[doc]) for doc in ranked]
        else:
            ranked = list(dict.fromkeys(as_ranking(query_id, result)))
            yield query_id, ranked, [float(n) for n in range(len(ranked), 0, -1)]


def write_run(path: PathArg, run: object, *, format: str | None = None, tag: str = "ef") -> None:
    """Write a run file in any format :func:`read_run_with` reads, chosen the same way.

    ``run`` is a mapping (``{query_id: [ranked doc ids]}`` or ``{query_id: {doc_id: score}}``)
    or a DataFrame or Table. Each query is written in trec_eval's order (score descending, ties
    by doc id descending); a ranking without scores gets ``n, n-1, …, 1``, as in
    :func:`write_trec_run`. TREC files take ``tag`` as their last column; Parquet is written
    with ranx's columns ``q_id, doc_id, score``. The file is replaced only once fully written; a
    TREC, JSON or JSON Lines name ending in ``.gz`` is gzip-compressed.

    :param path: the file to write; its directory must exist.
    :param run: the run.
    :param format: ``"trec"``, ``"json"``, ``"jsonl"`` or ``"parquet"``, or ``None`` (from the
        name).
    :param tag: the run name of a TREC file's last column.
    :raises TypeError: for a run that is neither a mapping nor a DataFrame.
    :raises ValueError: for an unknown ``format``, a score that is not finite, or an id that
        could not be read back.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "run.json")
    ...     write_run(path, {'q1': ['d3', 'd1']})
    ...     print(path.read_text(), end="")
    {"q1": {"d3": 2.0, "d1": 1.0}}
    """
    kind = run_format(path, format)
    table = as_run(run)
    if kind == "trec":
        write_trec_run(path, table, tag=tag)
    elif kind == "parquet":
        _write_parquet(path, table)
    else:
        with write_text_atomically(path) as out:
            written = 0
            for query_id, ranked, scores in scored_rows(table):
                _check_ids(query_id, ranked)
                if kind == "json":
                    out.write(",\n" if written else "{")
                    pairs = zip(ranked, scores, strict=True)
                    inner = ", ".join(f"{json.dumps(doc)}: {score!r}" for doc, score in pairs)
                    out.write(f"{json.dumps(query_id)}: {{{inner}}}")
                else:
                    out.writelines(
                        json.dumps({"query_id": query_id, "doc_id": doc, "score": score}) + "\n"
                        for doc, score in zip(ranked, scores, strict=True)
                    )
                written += 1
            if kind == "json":
                out.write("}\n" if written else "{}\n")


def _check_ids(query_id: str, ranked: list[str]) -> None:
    """Refuse an id UTF-8 cannot encode (a lone surrogate): it could not be read back. (Scores
    were checked where the run came in, by :func:`~ef.evaluation._io.frames.as_run`.)"""
    for text in (query_id, *ranked):
        if lone_surrogate(text) is not None:
            raise ValueError(
                f"query {query_id!r}: id {text!r} holds a lone surrogate; expected text UTF-8 "
                "can encode"
            )


def _write_parquet(path: PathArg, run: Mapping[str, Any]) -> None:
    import pyarrow as arrow  # type: ignore[import-untyped, import-not-found, unused-ignore]
    import pyarrow.parquet as parquet  # type: ignore[import-untyped, import-not-found, unused-ignore]

    columns: dict[str, list[Any]] = {"q_id": [], "doc_id": [], "score": []}
    for query_id, ranked, scores in scored_rows(run):
        _check_ids(query_id, ranked)
        columns["q_id"].extend([query_id] * len(ranked))
        columns["doc_id"].extend(ranked)
        columns["score"].extend(scores)
    schema = arrow.schema(
        [("q_id", arrow.string()), ("doc_id", arrow.string()), ("score", arrow.float64())]
    )
    table = arrow.table(columns, schema=schema)
    with replaced_atomically(path) as temporary:
        parquet.write_table(table, temporary, write_page_checksum=True)
