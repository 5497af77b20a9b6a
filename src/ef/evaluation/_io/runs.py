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
from ef.evaluation._io.files import PathArg, find_line, open_text, rereadable
from ef.evaluation._io.frames import ACCEPTED_RUN, as_run, run_from_frame
from ef.evaluation._io.lines import (
    MAX_JSONL_LINE,
    bounded_lines,
    check_length,
    load_json_line,
)
from ef.evaluation._io.trec import RunParser, read_trec_run, write_trec_run
from ef.evaluation._json import JsonProblem, loads_strict, lone_surrogate
from ef.evaluation._scoring.order import as_ranking, rank_query

__all__ = ["RUN_FORMATS", "RunFormat", "read_run", "run_format", "scored_rows", "write_run"]

RunFormat = Literal["trec", "json", "jsonl", "parquet"]
RUN_FORMATS: tuple[RunFormat, ...] = ("trec", "json", "jsonl", "parquet")
"""The run formats, as ``--run-format`` and ``format=`` name them."""

_SUFFIXES: dict[str, RunFormat] = {
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
}
_JSON_EXPECTED = 'a JSON object {"query_id": {"doc_id": score, ...}, ...} (ranx\'s run format)'
_JSONL_EXPECTED = 'a JSON object {"query_id": "...", "doc_id": "...", "score": number}'


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


def read_run(
    path: PathArg, format: str | None = None, parser: RunParser | None = None
) -> dict[str, Any]:
    """Read a run file of any format into ``{query_id: {doc_id: score}}`` (see the public one).

    :param parser: a plugin's faster TREC run parser, for TREC files.
    """
    kind = run_format(path, format)
    if kind == "trec":
        return read_trec_run(path, parser)
    if kind == "parquet":
        return _read_parquet(path)
    with rereadable(path) as source:
        return _read_json(source) if kind == "json" else _read_jsonl(source)


def _read_json(path: PathArg) -> dict[str, dict[str, float]]:
    with open_text(path) as text:
        try:
            document = loads_strict(text.read())
        except JsonProblem as error:
            raise DatasetFormatError(path, 1, str(error), _JSON_EXPECTED) from None
    if not isinstance(document, dict):
        raise DatasetFormatError(path, 1, "the document is no JSON object", _JSON_EXPECTED)
    run: dict[str, dict[str, float]] = {}
    for query_id, scores in document.items():
        if not isinstance(scores, dict):
            problem = f"query {query_id!r} maps to no object"
            raise DatasetFormatError(path, 1, problem, _JSON_EXPECTED)
        inner = run[query_id] = {}
        for doc_id, score in scores.items():
            if isinstance(score, bool) or not isinstance(score, int | float):
                problem = f"query {query_id!r}: score of doc {doc_id!r} is no number"
                raise DatasetFormatError(path, 1, problem, _JSON_EXPECTED)
            inner[doc_id] = float(score)
    return run


def _read_jsonl(path: PathArg) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    with open_text(path) as text:
        for number, line in enumerate(bounded_lines(text, MAX_JSONL_LINE), 1):
            if len(line) > MAX_JSONL_LINE // 4:
                check_length(path, number, line, MAX_JSONL_LINE)
            if line.isspace():
                continue
            query_id, doc_id, score = _jsonl_record(path, number, line)
            inner = run.get(query_id)
            if inner is None:
                inner = run[query_id] = {}
            elif doc_id in inner:
                _raise_repeated_record(path, number, query_id, doc_id)
            inner[doc_id] = score
    return run


def _raise_repeated_record(path: PathArg, number: int, query_id: str, doc_id: str) -> None:
    def same(line: str) -> bool:
        try:
            record = loads_strict(line)
        except JsonProblem:
            return False
        return isinstance(record, dict) and (record.get("query_id"), record.get("doc_id")) == (
            query_id,
            doc_id,
        )

    first = find_line(path, same)
    problem = f"doc {doc_id!r} listed again for query {query_id!r} (first on line {first})"
    raise DatasetFormatError(path, number, problem, "each doc id at most once per query")


def _jsonl_record(path: PathArg, number: int, line: str) -> tuple[str, str, float]:
    record = load_json_line(path, number, line, _JSONL_EXPECTED)
    if not isinstance(record, dict):
        raise DatasetFormatError(path, number, "the line is no JSON object", _JSONL_EXPECTED)
    query_id, doc_id, score = record.get("query_id"), record.get("doc_id"), record.get("score")
    for name, value in (("query_id", query_id), ("doc_id", doc_id)):
        if not isinstance(value, str):
            problem = f"{name} is {'missing' if value is None else 'no string'}"
            raise DatasetFormatError(path, number, problem, _JSONL_EXPECTED)
    if isinstance(score, bool) or not isinstance(score, int | float):
        problem = f"score is {'missing' if score is None else 'no number'}"
        raise DatasetFormatError(path, number, problem, _JSONL_EXPECTED)
    return query_id, doc_id, float(score)  # type: ignore[return-value]


def _read_parquet(path: PathArg) -> dict[str, Any]:
    import pyarrow.parquet as parquet  # type: ignore[import-untyped, import-not-found, unused-ignore]

    try:
        table = parquet.read_table(path)
    except OSError:
        raise
    except Exception as error:  # pyarrow's own errors: a file that is no Parquet
        raise DatasetFormatError(path, 1, f"not a Parquet file ({error})", ACCEPTED_RUN) from None
    try:
        return run_from_frame(table, f"run file {os.fspath(path)}")
    except (TypeError, ValueError) as error:
        raise DatasetFormatError(path, 1, str(error), ACCEPTED_RUN) from None


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


def write_run(path: PathArg, run: object, format: str | None = None, *, tag: str = "ef") -> None:
    """Write ``run`` (a mapping or a DataFrame) to ``path`` in its format (see the public one)."""
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
                _check_row(query_id, ranked, scores)
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


def _check_row(query_id: str, ranked: list[str], scores: list[float]) -> None:
    """Refuse what could not be read back: a score that is not finite, an id UTF-8 cannot
    encode (a lone surrogate)."""
    for text in (query_id, *ranked):
        if lone_surrogate(text) is not None:
            raise ValueError(
                f"query {query_id!r}: id {text!r} holds a lone surrogate; expected text UTF-8 "
                "can encode"
            )
    for doc, score in zip(ranked, scores, strict=True):
        if score - score:
            raise ValueError(
                f"query {query_id!r}: score of {doc!r} is {score}; expected a finite number"
            )


def _write_parquet(path: PathArg, run: Mapping[str, Any]) -> None:
    import pyarrow as arrow  # type: ignore[import-untyped, import-not-found, unused-ignore]
    import pyarrow.parquet as parquet  # type: ignore[import-untyped, import-not-found, unused-ignore]

    columns: dict[str, list[Any]] = {"q_id": [], "doc_id": [], "score": []}
    for query_id, ranked, scores in scored_rows(run):
        _check_row(query_id, ranked, scores)
        columns["q_id"].extend([query_id] * len(ranked))
        columns["doc_id"].extend(ranked)
        columns["score"].extend(scores)
    schema = arrow.schema(
        [("q_id", arrow.string()), ("doc_id", arrow.string()), ("score", arrow.float64())]
    )
    table = arrow.table(columns, schema=schema)
    with replaced_atomically(path) as temporary:
        parquet.write_table(table, temporary)
