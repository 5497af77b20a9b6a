"""A seeded fuzz test of every reader: damaged files load as the oracle says or fail cleanly.

Valid files of each kind (TREC run, TREC qrels, BEIR corpus, queries and qrels, RAG samples) are
damaged by one family of mutations at a time, twenty cases a family, from a fixed seed. The
oracle is ``pytrec_eval.parse_run`` / ``parse_qrel`` for valid TREC files, and for everything
else a reference reader written here from the rules (strict UTF-8, strict JSON, ASCII decimal
numbers, each id once). A case either loads and equals the oracle, or raises a
:class:`DatasetFormatError` naming the file and a line the oracle finds bad; never NaN, never a
raw decoder or recursion error.
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

import pytest
import pytrec_eval

from ef.evaluation import DatasetFormatError, read_beir, read_trec_qrels, read_trec_run
from ef.evaluation.cli._common import CliError
from ef.evaluation.cli.rag import read_samples

CASES = 20
BOM = b"\xef\xbb\xbf"
DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
INTEGER = re.compile(r"[+-]?[0-9]+")
TSV_HEADER = ["query-id", "corpus-id", "score"]
ID_CHARS = "abxyz019_-.é中"
INVALID_UTF8 = [b"\xff", b"\xc3", b"\xc3(", b"\xed\xa0\x80", b"\xe4\xb8", b"\x80", b"\xf8\x88"]
ODD_NUMBERS = [
    "1_0", "\u0663", "\uff19", "0x10", "1,5", " 1", "+1", "1.", ".5", "-0", "1e5", "1E-2", "01",
    "--1", "1e", ".", "0.5", "٣.5", "1__0", "١٢", "1e+", "0b1",
]  # fmt: skip
NOT_FINITE = ["nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e999", "-1e309", "9" * 400]
JSON_NOT_FINITE = ["NaN", "Infinity", "-Infinity", "1e999", "-1e400"]
Table = dict[str, dict[str, float]]

# --- valid files ------------------------------------------------------------------------------


def an_id(rng: random.Random, index: int) -> str:
    return "".join(rng.choice(ID_CHARS) for _ in range(rng.randint(1, 3))) + f"~{index}"


def a_score(rng: random.Random) -> str:
    value = rng.uniform(-50, 50)
    spell = rng.choice([repr, "{:.3f}".format, "{:.2e}".format, lambda v: str(round(v))])
    return str(spell(value))


def valid_file(kind: str, rng: random.Random) -> bytes:
    queries = [an_id(rng, q) for q in range(rng.randint(1, 3))]
    docs = [an_id(rng, d) for d in range(rng.randint(1, 6))]
    gap = rng.choice([" ", "\t", "  "])
    if kind == "run":
        lines = [gap.join([q, "Q0", d, str(r), a_score(rng), "t"]) for q in queries for r, d in
                 enumerate(docs, 1)]  # fmt: skip
    elif kind == "qrels":
        lines = [gap.join([q, "0", d, str(rng.randint(-1, 3))]) for q in queries for d in docs]
    elif kind == "tsv":
        rows = ["\t".join([q, d, str(rng.randint(0, 2))]) for q in queries for d in docs]
        lines = ["\t".join(TSV_HEADER), *rows]
    elif kind == "corpus":
        lines = [record(rng, {"_id": d, "title": rng.choice(["", "T", None]), "text": "x"})
                 for d in docs]  # fmt: skip
    elif kind == "queries":
        lines = [record(rng, {"_id": q, "text": f"query {q}"}) for q in queries]
    else:
        lines = [
            record(rng, {"user_input": "q?", "response": f"r{n}", "reference": "r",
                         "retrieved_contexts": ["c é", "d"]})
            for n in range(rng.randint(1, 4))
        ]  # fmt: skip
    return "".join(line + "\n" for line in lines).encode()


def record(rng: random.Random, value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=rng.random() < 0.5)


# --- mutations --------------------------------------------------------------------------------

Mutation = Callable[[random.Random, bytes, str], bytes]


def split_lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def pick(rng: random.Random, lines: list[bytes]) -> int:
    """A line to change (not the TSV header, when there is more than it)."""
    usable = [i for i, line in enumerate(lines) if line and not line.startswith(b"query-id")]
    return rng.choice(usable) if usable else 0


def insert_at(rng: random.Random, data: bytes, piece: bytes) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + piece + data[at:]


def value_column(kind: str) -> int:
    return {"run": 4, "qrels": 3}.get(kind, 2)


def replace_value(rng: random.Random, data: bytes, kind: str, word: str) -> bytes:
    """The number of one line replaced by ``word`` (TREC and TSV), or a field added (JSON)."""
    lines = split_lines(data)
    index = pick(rng, lines)
    line = lines[index].decode()
    if kind in ("corpus", "queries", "rag"):
        lines[index] = (line[:-1] + f', "n": {word}}}').encode()
    elif kind == "tsv":
        fields = line.split("\t")
        lines[index] = "\t".join([*fields[:2], word, *fields[3:]]).encode()
    else:
        parts = line.split()
        parts[value_column(kind)] = word
        lines[index] = " ".join(parts).encode()
    return b"\n".join(lines)


def truncation(rng: random.Random, data: bytes, kind: str) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def byte_flips(rng: random.Random, data: bytes, kind: str) -> bytes:
    flipped = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(flipped))
        flipped[at] = rng.choice([flipped[at] ^ (1 << rng.randrange(8)), rng.randrange(256)])
    return bytes(flipped)


def invalid_utf8(rng: random.Random, data: bytes, kind: str) -> bytes:
    return insert_at(rng, data, rng.choice(INVALID_UTF8))


def lone_surrogates(rng: random.Random, data: bytes, kind: str) -> bytes:
    if kind in ("corpus", "queries", "rag"):
        escape = rng.choice([b"\\ud800", b"\\udc80", b"\\uDBFF", b"\\ud83d\\ude00", b"\\ud83d x"])
        lines = split_lines(data)
        index = pick(rng, lines)
        lines[index] = lines[index].replace(b'": "', b'": "' + escape, 1)
        return b"\n".join(lines)
    # Surrogates encoded as UTF-8 (CESU-8) are not UTF-8; an astral character is.
    return insert_at(rng, data, rng.choice([b"\xed\xa0\x80", b"\xed\xbf\xbf", "😀".encode()]))


def cr_bom(rng: random.Random, data: bytes, kind: str) -> bytes:
    choice = rng.randrange(6)
    if choice == 0:
        return data.replace(b"\n", b"\r\n")
    if choice == 1:
        return BOM + data
    if choice == 2:
        return BOM + BOM + data
    if choice == 3:
        lines = split_lines(data)
        index = pick(rng, lines)
        lines[index] = BOM + lines[index]
        return b"\n".join(lines)
    return insert_at(rng, data, rng.choice([b"\r", "\u2028".encode(), "\x85".encode()]))


def column_counts(rng: random.Random, data: bytes, kind: str) -> bytes:
    lines = split_lines(data)
    index = pick(rng, lines)
    if kind in ("corpus", "queries", "rag"):
        lines[index] = rng.choice(
            [b"[1, 2]", b'"x"', b"null", b"{}", b'{"text": "a"}', b'{"_id": 5, "text": "a"}',
             b'{"_id": "z", "text": null}', b'{"_id": "z", "text": "a", "title": 3}']
        )  # fmt: skip
        return b"\n".join(lines)
    separator = b"\t" if kind == "tsv" else b" "
    parts = lines[index].split(separator)
    if rng.random() < 0.5 and len(parts) > 1:
        del parts[rng.randrange(len(parts))]
    else:
        at = rng.randrange(len(parts))
        parts.insert(at, parts[at])
    lines[index] = separator.join(parts)
    return b"\n".join(lines)


def number_syntax(rng: random.Random, data: bytes, kind: str) -> bytes:
    return replace_value(rng, data, kind, rng.choice(ODD_NUMBERS))


def nan_inf(rng: random.Random, data: bytes, kind: str) -> bytes:
    words = JSON_NOT_FINITE if kind in ("corpus", "queries", "rag") else NOT_FINITE
    return replace_value(rng, data, kind, rng.choice(words))


def repeated_ids(rng: random.Random, data: bytes, kind: str) -> bytes:
    lines = split_lines(data)
    index = pick(rng, lines)
    lines.insert(rng.randrange(index + 1, len(lines) + 1), lines[index])
    return b"\n".join(lines)


def deep_json(rng: random.Random, data: bytes, kind: str) -> bytes:
    # Far below or far above the recursion limit, so the outcome does not depend on the stack.
    depth = rng.choice([10, 200, 100_000])
    if kind in ("corpus", "queries", "rag"):
        closing = "]" * depth if rng.random() < 0.7 else ""
        return replace_value(rng, data, kind, "[" * depth + closing)
    lines = split_lines(data)  # an id of brackets is just an id
    index = pick(rng, lines)
    separator = b"\t" if kind == "tsv" else b" "
    lines[index] = b"[" * min(depth, 5000) + separator + lines[index].split(separator, 1)[-1]
    return b"\n".join(lines)


def huge_integers(rng: random.Random, data: bytes, kind: str) -> bytes:
    digits = rng.choice([300, 400, 4300, 5000, 10_000])
    word = rng.choice(["1" + "0" * digits, "0" * digits + "1", "-" + "7" * digits])
    return replace_value(rng, data, kind, word)


def damaged_gzip(rng: random.Random, data: bytes, kind: str) -> bytes:
    packed = gzip.compress(data, mtime=0)
    choice = rng.randrange(3)
    if choice == 0:
        return packed[: rng.randrange(2, len(packed))]
    if choice == 1:
        return packed + bytes(rng.randrange(256) for _ in range(rng.randint(1, 9)))
    flipped = bytearray(packed)
    at = rng.randrange(10, len(flipped))
    flipped[at] ^= 1 << rng.randrange(8)
    return bytes(flipped)


FAMILIES: dict[str, Mutation] = {
    "truncation": truncation,
    "byte flips": byte_flips,
    "invalid utf-8": invalid_utf8,
    "lone surrogates": lone_surrogates,
    "cr/bom": cr_bom,
    "column counts": column_counts,
    "number syntax": number_syntax,
    "nan/inf": nan_inf,
    "repeated ids": repeated_ids,
    "deep json": deep_json,
    "huge integers": huge_integers,
    "damaged gzip": damaged_gzip,
}

# --- the oracle -------------------------------------------------------------------------------


class Bad(Exception):
    """The oracle's verdict on a damaged file: the lines it finds bad (None: any line)."""

    def __init__(self, lines: set[int] | None) -> None:
        super().__init__(lines)
        self.lines = lines


def decoded_lines(data: bytes) -> list[str | None]:
    """The file's lines, line ends dropped; None for a line that is not UTF-8."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error):
            raise Bad(None) from None
    data = data.removeprefix(BOM)
    raw = data.split(b"\n")
    if raw[-1] == b"":
        raw.pop()
    lines: list[str | None] = []
    for line in raw:
        try:
            lines.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            lines.append(None)
    return lines


def blank(text: str) -> bool:
    return not text or text.isspace()


def number(text: str) -> float | None:
    if DECIMAL.fullmatch(text) is None or not math.isfinite(float(text)):
        return None
    return float(text)


def check_trec(lines: list[str | None], columns: int, value: int) -> None:
    """Raise Bad with every bad line of a TREC file: undecodable, columns, number, repeated."""
    bad, seen = set(), set()
    for n, text in enumerate(lines, 1):
        if text is None:
            bad.add(n)
            continue
        parts = text.split()
        if not parts:
            continue
        if len(parts) != columns or number(parts[value]) is None or (parts[0], parts[2]) in seen:
            bad.add(n)
        if len(parts) >= 3:
            seen.add((parts[0], parts[2]))
    if bad:
        raise Bad(bad)


def oracle_run(lines: list[str | None]) -> Table:
    check_trec(lines, 6, 4)
    return pytrec_eval.parse_run(text for text in lines if text is not None and text.split())


def oracle_qrels(lines: list[str | None]) -> Table:
    undecodable = {n for n, text in enumerate(lines, 1) if text is None}
    first = next((n for n, text in enumerate(lines, 1) if text is None or not blank(text)), None)
    if first is None:
        return {}
    text = lines[first - 1]
    if text is None:
        raise Bad(undecodable)
    if text.rstrip("\r").split("\t") == TSV_HEADER:
        return oracle_tsv(lines, first)
    if len(text.split()) != 4:
        raise Bad(undecodable | {first})
    check_trec(lines, 4, 3)
    kept = [text for text in lines if text is not None and text.split()]
    # pytrec_eval reads grades with int(), which has a digit limit.
    if all(INTEGER.fullmatch(grade := text.split()[3]) and len(grade) < 100 for text in kept):
        return pytrec_eval.parse_qrel(kept)
    # Fractional grades: pytrec_eval refuses them; SEMANTICS keeps them, as floats.
    table: Table = {}
    for text in kept:
        qid, _, doc, grade = text.split()
        table.setdefault(qid, {})[doc] = float(grade)
    return table


def oracle_tsv(lines: list[str | None], header: int) -> Table:
    table: Table = {}
    bad = set()
    for n, text in enumerate(lines, 1):
        if text is None:
            bad.add(n)
        elif n > header and not blank(text):
            fields = text.rstrip("\r").split("\t")
            if (
                len(fields) != 3
                or number(fields[2]) is None
                or fields[1] in table.get(fields[0], {})
            ):
                bad.add(n)
            else:
                table.setdefault(fields[0], {})[fields[1]] = float(fields[2])
    if bad:
        raise Bad(bad)
    return table


def strict_json(text: str) -> Any:
    def refuse(name: str) -> None:
        raise ValueError(name)

    value = json.loads(text, parse_constant=refuse)
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # a lone surrogate fails here
    return value


def json_records(lines: list[str | None]) -> list[tuple[int, Any]]:
    """Each non-blank line's strict JSON value; Bad for lines that are none."""
    bad, records = set(), []
    for n, text in enumerate(lines, 1):
        if text is None:
            bad.add(n)
        elif not blank(text):
            try:
                records.append((n, strict_json(text)))
            except (ValueError, RecursionError, UnicodeEncodeError):
                bad.add(n)
    if bad:
        raise Bad(bad)
    return records


def oracle_beir(lines: list[str | None], join_title: bool) -> dict[str, str]:
    bad, table = set(), {}
    try:
        records = json_records(lines)
    except Bad as verdict:
        bad, records = set(verdict.lines or ()), []
    for n, value in records:
        title = value.get("title") if isinstance(value, dict) else None
        if (
            not isinstance(value, dict)
            or type(value.get("_id")) is not str
            or type(value.get("text")) is not str
            or (join_title and title is not None and type(title) is not str)
            or value["_id"] in table
        ):
            bad.add(n)
            continue
        text = value["text"]
        if join_title and title:
            text = f"{title} {text}" if text else title
        table[value["_id"]] = text
    if bad:
        raise Bad(bad)
    return table


def oracle_rag(lines: list[str | None]) -> list[tuple[int, Any]]:
    records = json_records(lines)
    bad = {n for n, value in records if not isinstance(value, dict)}
    if bad:
        raise Bad(bad)
    return records


# --- the readers, each beside its oracle --------------------------------------------------------

BEIR_FILES = {"corpus": "corpus.jsonl", "queries": "queries.jsonl", "tsv": "qrels.tsv"}


def read_with(kind: str, folder: Path, data: bytes) -> tuple[Path, Callable[[], Any]]:
    """The file to write ``data`` to, and how the reader under test reads it."""
    if kind == "run":
        return folder / "run.txt", lambda: read_trec_run(folder / "run.txt")
    if kind == "qrels":
        return folder / "qrels.txt", lambda: read_trec_qrels(folder / "qrels.txt")
    if kind == "rag":
        return folder / "samples.jsonl", lambda: read_samples(str(folder / "samples.jsonl"))
    for name, file in BEIR_FILES.items():
        (folder / file).write_bytes(valid_file(name, random.Random(0)))
    position = list(BEIR_FILES).index(kind)
    return folder / BEIR_FILES[kind], lambda: read_beir(folder)[position]


def oracle(kind: str, data: bytes) -> Any:
    lines = decoded_lines(data)
    if kind == "run":
        return oracle_run(lines)
    if kind in ("qrels", "tsv"):
        return oracle_qrels(lines)
    if kind == "rag":
        return oracle_rag(lines)
    return oracle_beir(lines, join_title=kind == "corpus")


def snapshot(value: Any, *, bits: bool) -> Any:
    """Tables in order, float by float (bit for bit if asked); other values as they are."""
    if isinstance(value, dict) and all(isinstance(v, dict) for v in value.values()):
        exact: Callable[[Any], Any] = (lambda s: struct.pack("<d", s)) if bits else float
        return [(q, [(d, exact(s)) for d, s in v.items()]) for q, v in value.items()]
    return value


def check_case(kind: str, folder: Path, data: bytes, label: str) -> str:
    """Read one damaged file; compare with the oracle. Returns what happened, for the tally."""
    path, read = read_with(kind, folder, data)
    path.write_bytes(data)
    try:
        expected = oracle(kind, data)
    except Bad as verdict:
        expected = verdict
    try:
        got = read()
    except DatasetFormatError as error:
        assert isinstance(expected, Bad), f"{label}: refused a file the oracle reads: {error}"
        assert error.path == str(path), label
        assert str(error).startswith(f"{path}:{error.line}: "), label
        if expected.lines is not None:
            assert error.line in expected.lines, f"{label}: {error} (bad: {expected.lines})"
        else:
            assert error.line >= 1, label
        return "refused"
    except CliError as error:  # ef-eval rag: a file without any sample
        assert kind == "rag" and expected == [], f"{label}: {error}"
        return "empty"
    assert not isinstance(expected, Bad), f"{label}: read a file with bad lines {expected.lines}"
    # pytrec_eval reads a grade "-0" as the int 0, where ef reads -0.0: equal, not identical.
    assert snapshot(got, bits=kind == "run") == snapshot(expected, bits=kind == "run"), label
    if kind in ("run", "qrels", "tsv"):
        assert all(math.isfinite(v) for scores in got.values() for v in scores.values())
    return "read"


def run_family(kind: str, family: str, tmp_path: Path) -> None:
    outcomes = []
    for case in range(CASES):
        rng = random.Random(f"{kind}/{family}/{case}")
        base = valid_file(kind, rng)
        data = FAMILIES[family](rng, base, kind)
        folder = tmp_path / str(case)
        folder.mkdir()
        outcomes.append(check_case(kind, folder, data, f"{kind}/{family}/{case}: {data[:200]!r}"))
    assert len(outcomes) == CASES
    trec = kind in ("run", "qrels", "tsv")
    if family in ("invalid utf-8", "damaged gzip") or (family == "nan/inf" and trec):
        assert "read" not in outcomes, outcomes  # every case of these is broken
    elif family not in ("cr/bom", "deep json", "huge integers", "number syntax") and (
        (kind, family) != ("rag", "repeated ids")  # samples have no ids
    ):
        assert "refused" in outcomes, outcomes  # the family does reach the error paths


@pytest.mark.parametrize("family", FAMILIES)
def test_run_reader(family: str, tmp_path: Path, trec_run_parser: str) -> None:
    run_family("run", family, tmp_path)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("kind", ["qrels", "corpus", "queries", "tsv", "rag"])
def test_reader(kind: str, family: str, tmp_path: Path) -> None:
    run_family(kind, family, tmp_path)
