"""The readers' fuzz families on the other run formats: ranx JSON, JSON Lines, Parquet, frames.

As in ``test_readers_fuzz.py`` (whose valid ids, scores and generic mutations this reuses), a
valid run is damaged by one family of mutations at a time, twenty cases a family, from a fixed
seed; a reference reader written here from the rules says what the file holds or which lines
are bad. A case either reads as the reference says, or is refused with a
:class:`DatasetFormatError` naming the file and a line the reference finds bad (for DataFrames,
a ``ValueError`` or ``TypeError`` naming a row the reference finds bad). Never a NaN, an
infinity or a rounded integer; never a bare decoder, overflow or pyarrow error.
"""

from __future__ import annotations

import gzip
import json
import math
import random
import re
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas
import polars
import pyarrow
import pyarrow.parquet
import pytest

from ef.evaluation import DatasetFormatError, read_run, write_run
from ef.evaluation._io import runs as run_files
from ef.evaluation._io.frames import as_run
from test_readers_fuzz import (
    BOM,
    CASES,
    JSON_NOT_FINITE,
    NOT_FINITE,
    ODD_NUMBERS,
    Bad,
    a_score,
    an_id,
    byte_flips,
    cr_bom,
    damaged_gzip,
    insert_at,
    invalid_utf8,
    truncation,
)

MAX_BLANK = 64  # the readers' limit of whitespace in a row, low so that cases reach it
Entry = tuple[str, str, str]  # query id, doc id, the score as written
Table = dict[str, dict[str, Any]]

# --- valid files --------------------------------------------------------------------------------


def valid_entries(rng: random.Random) -> list[Entry]:
    queries = [an_id(rng, q) for q in range(rng.randint(1, 3))]
    docs = [an_id(rng, d) for d in range(rng.randint(1, 5))]
    return [(q, d, a_score(rng)) for q in queries for d in docs]


def quoted(rng: random.Random, text: str) -> str:
    return json.dumps(text, ensure_ascii=rng.random() < 0.5)


def json_document(rng: random.Random, entries: list[Entry]) -> list[str]:
    """ranx's document, one doc a line: ``lines[i]`` is line ``i + 1``."""
    lines = ["{"]
    queries = list(dict.fromkeys(q for q, _, _ in entries))
    for qn, query in enumerate(queries):
        lines.append(f"  {quoted(rng, query)}: {{")
        docs = [(d, s) for q, d, s in entries if q == query]
        lines += [f"    {quoted(rng, d)}: {s}" + ("," if n < len(docs) - 1 else "")
                  for n, (d, s) in enumerate(docs)]  # fmt: skip
        lines.append("  }" + ("," if qn < len(queries) - 1 else ""))
    return [*lines, "}"]


def jsonl_records(rng: random.Random, entries: list[Entry]) -> list[str]:
    return [
        f'{{"query_id": {quoted(rng, q)}, "doc_id": {quoted(rng, d)}, "score": {s}}}'
        for q, d, s in entries
    ]


def score_lines(kind: str, lines: list[str]) -> list[int]:
    """The indexes of the lines that hold a score."""
    if kind == "jsonl":
        return list(range(len(lines)))
    return [i for i, line in enumerate(lines) if line.startswith("    ")]


# --- mutations: each returns the damaged lines, or bytes for the byte-level ones ---------------

Mutation = Callable[[random.Random, list[str], str], "list[str] | bytes"]


def joined(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def replace_score(rng: random.Random, lines: list[str], kind: str, word: str) -> list[str]:
    index = rng.choice(score_lines(kind, lines))
    if kind == "jsonl":
        lines[index] = re.sub(r'"score": [^,}]*', lambda _: f'"score": {word}', lines[index])
    else:
        key, _, rest = lines[index].rpartition(": ")
        lines[index] = f"{key}: {word}" + ("," if rest.endswith(",") else "")
    return lines


def number_syntax(rng: random.Random, lines: list[str], kind: str) -> list[str]:
    return replace_score(rng, lines, kind, rng.choice(ODD_NUMBERS))


def nan_inf(rng: random.Random, lines: list[str], kind: str) -> list[str]:
    return replace_score(rng, lines, kind, rng.choice(JSON_NOT_FINITE + NOT_FINITE))


def huge_integers(rng: random.Random, lines: list[str], kind: str) -> list[str]:
    digits = rng.choice([300, 308, 309, 400, 4300, 5000])
    word = rng.choice(["1" + "0" * digits, "-" + "7" * digits, "9" * digits + ".5"])
    return replace_score(rng, lines, kind, word)


def wrong_types(rng: random.Random, lines: list[str], kind: str) -> list[str]:
    if kind == "json" and rng.random() < 0.3:  # a query that maps to no object
        index = rng.choice([i for i, line in enumerate(lines) if line.endswith(": {")])
        lines[index] = lines[index][: -len("{")] + rng.choice(["[", '"x", "y": {'])
        return lines
    words = ['"0.5"', "true", "false", "null", "[1]", "{}", '{"a": 1}']
    return replace_score(rng, lines, kind, rng.choice(words))


def repeated_keys(rng: random.Random, lines: list[str], kind: str) -> list[str]:
    index = rng.choice(score_lines(kind, lines))
    if kind == "jsonl":
        if rng.random() < 0.5:  # the record's "score" (or an id) twice
            key = rng.choice(["score", "query_id", "doc_id"])
            value = "1.5" if key == "score" else '"z"'
            lines[index] = lines[index][:-1] + f', "{key}": {value}}}'
        else:  # the (query, doc) pair again
            lines.insert(rng.randrange(index + 1, len(lines) + 1), lines[index])
        return lines
    if rng.random() < 0.5:  # a doc again, within its query
        line = lines[index].removesuffix(",") + ","
        lines[index] = lines[index].removesuffix(",") + ","
        lines.insert(index, line)
        return lines
    starts = [i for i, line in enumerate(lines) if line.endswith(": {")]  # a query again
    start = rng.choice(starts)
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("  }"))
    block = lines[start : end + 1]
    block[-1] = "  },"
    last = len(lines) - 2  # the last query's closing line
    lines[last] = "  },"
    return [*lines[: last + 1], *block[:-1], "  }", "}"]


def lone_surrogates(rng: random.Random, lines: list[str], kind: str) -> list[str]:
    index = rng.choice(score_lines(kind, lines))
    escape = rng.choice(["\\ud800", "\\udc80", "\\uDBFF", "\\ud83d\\ude00", "\\ud83d x"])
    lines[index] = lines[index].replace('"', '"' + escape, 1)
    return lines


def deep_json(rng: random.Random, lines: list[str], kind: str) -> list[str]:
    depth = rng.choice([10, 200, 100_000])
    closing = "]" * depth if rng.random() < 0.7 else ""
    return replace_score(rng, lines, kind, "[" * depth + closing)


def blank_runs(rng: random.Random, lines: list[str], kind: str) -> bytes:
    size = rng.choice([MAX_BLANK // 2, MAX_BLANK - 1, MAX_BLANK + 1, 3 * MAX_BLANK, 5000])
    if kind == "jsonl":
        piece = "".join(rng.choice(["\n", "  \n", "\t\n", "\r\n"]) for _ in range(size // 2))
    else:
        piece = "".join(rng.choice(" \t\r\n") for _ in range(size))
    data = joined(lines)
    where = rng.choice([i for i, byte in enumerate(data) if byte == ord("\n")]) + 1
    return insert_at(random.Random(where), data[:where], piece.encode()) + data[where:]


def bytes_of(mutation: Callable[[random.Random, bytes, str], bytes]) -> Mutation:
    """A mutation of ``test_readers_fuzz`` (of bytes), on these files."""
    return lambda rng, lines, kind: mutation(rng, joined(lines), "rag")


FAMILIES: dict[str, Mutation] = {
    "truncation": bytes_of(truncation),
    "byte flips": bytes_of(byte_flips),
    "invalid utf-8": bytes_of(invalid_utf8),
    "cr/bom": bytes_of(cr_bom),
    "damaged gzip": bytes_of(damaged_gzip),
    "lone surrogates": lone_surrogates,
    "number syntax": number_syntax,
    "nan/inf": nan_inf,
    "huge integers": huge_integers,
    "wrong types": wrong_types,
    "repeated keys": repeated_keys,
    "deep json": deep_json,
    "blank runs": blank_runs,
}
ALWAYS_BAD = {"invalid utf-8", "damaged gzip", "nan/inf", "wrong types", "repeated keys"}

# --- the reference reader -----------------------------------------------------------------------


def text_of(data: bytes) -> str:
    """The file's text; Bad with the lines that are not UTF-8 (None: a damaged gzip stream)."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error):
            raise Bad(None) from None
    data = data.removeprefix(BOM)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        bad = set()
        for n, line in enumerate(data.split(b"\n"), 1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                bad.add(n)
        raise Bad(bad) from None


def line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise ValueError(literal)
    return value


def refuse(name: str) -> None:
    raise ValueError(name)


def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({key for key, _ in pairs}) != len(pairs):
        raise ValueError("a key twice")
    return dict(pairs)


def strict(text: str) -> Any:
    """The value of ``text`` by the rules: strict JSON, unique keys, finite numbers."""
    value = json.loads(
        text, object_pairs_hook=unique, parse_constant=refuse, parse_float=finite, parse_int=finite
    )
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # a lone surrogate fails here
    return value


def oracle_json(data: bytes, hint: set[int] | None) -> Table:
    """ranx's document by the rules. ``hint``: the lines where the mutation put a wrong value
    (the first line it changed, or the next), when it changed lines."""
    text = text_of(data)
    blank = {line_of(text, m.start()) for m in re.finditer(r"[ \t\r\n]+", text)
             if len(m.group()) > MAX_BLANK}  # fmt: skip
    if blank:
        raise Bad(blank)
    try:
        json.loads(text, parse_constant=lambda name: 0.0)  # syntax alone
    except json.JSONDecodeError as error:
        raise Bad({error.lineno}) from None
    except (ValueError, RecursionError):
        raise Bad(hint) from None
    try:
        run = strict(text)
    except (ValueError, RecursionError, UnicodeEncodeError):
        raise Bad(hint) from None
    ok = isinstance(run, dict) and all(
        isinstance(scores, dict) and all(type(s) is float for s in scores.values())
        for scores in run.values()
    )
    if not ok:
        raise Bad(hint)
    return run


def oracle_jsonl(data: bytes) -> Table:
    text = text_of(data)
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])
    bad: set[int] = set()
    run: Table = {}
    blank = start = 0
    for n, line in enumerate(lines, 1):
        if line.isspace():
            start = start if blank else n
            blank += len(line)
            if blank > MAX_BLANK:
                bad.add(start)
            continue
        blank = 0
        try:
            record = strict(line)
        except (ValueError, RecursionError, UnicodeEncodeError):
            bad.add(n)
            continue
        if (
            not isinstance(record, dict)
            or type(record.get("query_id")) is not str
            or type(record.get("doc_id")) is not str
            or type(record.get("score")) is not float
            or record["doc_id"] in run.get(record["query_id"], {})
        ):
            bad.add(n)
            continue
        run.setdefault(record["query_id"], {})[record["doc_id"]] = record["score"]
    if bad:
        raise Bad(bad)
    return run


def bits(run: Any) -> Any:
    """A run in order, each score's type and exact value."""
    return [(q, [(d, type(s), struct.pack("<d", s) if type(s) is float else s)
                 for d, s in v.items()]) for q, v in run.items()]  # fmt: skip


def check_text_case(kind: str, path: Path, data: bytes, hint: set[int] | None, label: str) -> str:
    path.write_bytes(data)
    try:
        expected: Any = oracle_json(data, hint) if kind == "json" else oracle_jsonl(data)
    except Bad as verdict:
        expected = verdict
    try:
        got = run_files.read_run_with(path, max_blank=MAX_BLANK)
    except DatasetFormatError as error:
        assert isinstance(expected, Bad), f"{label}: refused a file the rules read: {error}"
        assert error.path == str(path), label
        assert str(error).startswith(f"{path}:{error.line}: "), label
        if expected.lines is not None:
            assert error.line in expected.lines, f"{label}: {error} (bad: {expected.lines})"
        return "refused"
    assert not isinstance(expected, Bad), f"{label}: read a file with bad lines {expected.lines}"
    assert bits(got) == bits(expected), label
    assert all(math.isfinite(s) for scores in got.values() for s in scores.values()), label
    return "read"


def mutated_lines(before: list[str], after: list[str] | bytes) -> set[int] | None:
    """The first line the mutation changed (1-based) and the next, when it changed lines: a
    doc or query given again is at one of them."""
    if isinstance(after, bytes):
        return None
    first = next(
        (n for n, (a, b) in enumerate(zip(before, after, strict=False), 1) if a != b),
        len(before) + 1,
    )
    return {first, first + 1}


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("kind", ["json", "jsonl"])
def test_json_run_readers(kind: str, family: str, tmp_path: Path) -> None:
    outcomes = []
    for case in range(CASES):
        rng = random.Random(f"{kind}/{family}/{case}")
        entries = valid_entries(rng)
        lines = json_document(rng, entries) if kind == "json" else jsonl_records(rng, entries)
        mutated = FAMILIES[family](rng, list(lines), kind)
        data = mutated if isinstance(mutated, bytes) else joined(mutated)
        if rng.random() < 0.3 and family != "damaged gzip":
            data = gzip.compress(data, mtime=0)
        hint = mutated_lines(lines, mutated)
        path = tmp_path / f"{case}.{kind}"
        label = f"{kind}/{family}/{case}: {data[:300]!r}"
        outcomes.append(check_text_case(kind, path, data, hint, label))
    if family in ALWAYS_BAD:
        assert "read" not in outcomes, outcomes
    elif family not in ("cr/bom", "number syntax", "deep json"):
        assert "refused" in outcomes, outcomes


# --- Parquet and DataFrames ---------------------------------------------------------------------

MISSING = object()


def frame_rows(rng: random.Random) -> tuple[list[str], list[str], list[Any]]:
    entries = valid_entries(rng)
    integers = rng.random() < 0.3
    scores: list[Any] = [
        rng.choice([2**53 + rng.randrange(-3, 4), rng.randrange(-100, 100), 2**62 + 1])
        if integers
        else float(s)
        for _, _, s in entries
    ]
    return [q for q, _, _ in entries], [d for _, d, _ in entries], scores


def frame_mutation(
    rng: random.Random, family: str, columns: dict[str, list[Any]]
) -> tuple[dict[str, list[Any]], set[int] | None]:
    """Damaged columns, and the rows the damage is in (None: the columns are fine)."""
    rows = len(columns["doc_id"])
    row = rng.randrange(rows)
    if family == "not finite":
        scores = [float(s) for s in columns["score"]]
        scores[row] = rng.choice([math.nan, math.inf, -math.inf])
        return {**columns, "score": scores}, {row}
    if family == "missing":
        name = rng.choice(["query_id", "doc_id", "score"])
        values = list(columns[name])
        values[row] = None
        return {**columns, name: values}, {row}
    if family == "repeated rows":
        at = rng.randrange(row + 1, rows + 1)
        return {name: [*v[:at], v[row], *v[at:]] for name, v in columns.items()}, {at}
    return columns, None  # "valid": as generated, integers above 2**53 included


FRAME_FAMILIES = ["valid", "not finite", "missing", "repeated rows"]


def expected_run(columns: dict[str, list[Any]]) -> Table:
    run: Table = {}
    for q, d, s in zip(columns["query_id"], columns["doc_id"], columns["score"], strict=True):
        run.setdefault(q, {})[d] = s
    return run


def made(library: str, columns: dict[str, list[Any]]) -> Any:
    if library == "pandas":
        return pandas.DataFrame(columns)
    if library == "polars":
        return polars.DataFrame(columns, strict=False)
    return pyarrow.table(columns)


@pytest.mark.parametrize("family", FRAME_FAMILIES)
@pytest.mark.parametrize("library", ["pandas", "polars", "pyarrow", "parquet"])
def test_frame_and_parquet_readers(library: str, family: str, tmp_path: Path) -> None:
    outcomes = []
    for case in range(CASES):
        rng = random.Random(f"{library}/{family}/{case}")
        query_ids, doc_ids, scores = frame_rows(rng)
        columns = {"query_id": query_ids, "doc_id": doc_ids, "score": scores}
        columns, bad_rows = frame_mutation(rng, family, columns)
        label = f"{library}/{family}/{case}: {columns}"
        path = tmp_path / f"{case}.parquet"
        try:
            frame = made("pyarrow" if library == "parquet" else library, columns)
            if library == "parquet":
                pyarrow.parquet.write_table(frame, path)
        except (pyarrow.ArrowException, TypeError, ValueError, OverflowError):
            outcomes.append("not made")  # the library itself refuses the columns
            continue
        try:
            got = read_run(path) if library == "parquet" else as_run(frame)
        except (DatasetFormatError, ValueError, TypeError) as error:
            assert bad_rows is not None, f"{label}: refused good rows: {error}"
            if library == "parquet":
                assert isinstance(error, DatasetFormatError), label
                assert error.path == str(path), label
            if "is not numeric" in str(error):  # a column of None alone has no number type
                assert all(score is None for score in columns["score"]), label
            else:
                rows = {int(n) for n in re.findall(r"\brow (\d+)", str(error))}
                assert rows & bad_rows, f"{label}: {error} (bad rows: {bad_rows})"
            outcomes.append("refused")
            continue
        if bad_rows is not None:
            # pandas reads a missing id as NaN in an object column, polars and pyarrow as
            # None: either way it is refused above. A missing score in an integer column
            # makes pandas use floats with NaN: refused too. Nothing else may be read.
            raise AssertionError(f"{label}: read bad rows {bad_rows}: {got}")
        assert bits(got) == bits(expected_run(columns)), label
        outcomes.append("read")
    if family == "valid":
        assert set(outcomes) <= {"read"}, outcomes
    else:
        assert "read" not in outcomes and "refused" in outcomes, outcomes


def test_a_parquet_run_with_flipped_bytes_reads_the_same_or_is_refused(tmp_path: Path) -> None:
    outcomes = []
    for case in range(CASES * 5):
        rng = random.Random(f"parquet flips/{case}")
        run: Table = {}
        for q, d, s in valid_entries(rng):
            run.setdefault(q, {})[d] = float(s)
        path = tmp_path / f"{case}.parquet"
        write_run(path, run)
        path.write_bytes(byte_flips(rng, path.read_bytes(), "run"))
        try:
            got = read_run(path)
        except DatasetFormatError as error:
            assert error.path == str(path)
            outcomes.append("refused")
            continue
        exact = {(q, d, struct.pack("<d", s)) for q, v in got.items() for d, s in v.items()}
        assert exact == {
            (q, d, struct.pack("<d", s)) for q, v in run.items() for d, s in v.items()
        }, f"parquet flips/{case}: a changed run was read"
        outcomes.append("read")
    assert "refused" in outcomes
