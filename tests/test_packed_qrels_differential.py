"""Packed qrels against dict qrels over every hostile qrels file the reader tests have.

The files: those of the seeded reader fuzz (``test_readers_fuzz.py``: each of its mutation
families, its twenty cases a family, over TREC qrels and BEIR's qrels TSV, from the same seeds),
the grades and first lines ``test_readers_hostile.py`` pins, and the cases packing once read
otherwise (grades whose sum overflows, a repeated doc before a bad line). For each,
:func:`read_packed_qrels` and :func:`read_trec_qrels` either both read it, to the same
judgements in the same order and the same evaluation of a fixed run (values, means, manifest
and warnings, for nDCG, MAP, P, recall, a table of gains and ERR), or both refuse it with an
error of the same class naming the same file and line.
"""

from __future__ import annotations

import json
import random
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ef.evaluation import DatasetFormatError, evaluate_run, read_packed_qrels, read_trec_qrels
from ef.evaluation._io.lines import MAX_TREC_LINE
from test_readers_fuzz import CASES, FAMILIES, valid_file
from test_readers_hostile import DECIMALS, NOT_DECIMALS, TSV_HEADER

MEASURES = ("ndcg", "map", "P", "recall", "recip_rank", "nDCG(gains={1: 3, 2: 7, 3: 15})@5")
GRADED = ("ERR@5",)  # refuses a grade above 4, naming the query: evaluated on its own
K_VALUES = (1, 3, 5)


def _fuzzed() -> dict[str, bytes]:
    """The qrels files of the reader fuzz, made from its seeds as ``run_family`` makes them."""
    files = {}
    for kind in ("qrels", "tsv"):
        for family, mutate in FAMILIES.items():
            for case in range(CASES):
                rng = random.Random(f"{kind}/{family}/{case}")
                files[f"{kind}/{family}/{case}"] = mutate(rng, valid_file(kind, rng), kind)
    return files


def _pinned() -> dict[str, bytes]:
    """The hostile qrels of ``test_readers_hostile.py``, and what packing read otherwise."""
    files = {}
    for word in NOT_DECIMALS:
        files[f"trec grade {word[:12]!a}"] = f"q1 0 d1 1\nq1 0 d2 {word}\n".encode()
        files[f"tsv score {word[:12]!a}"] = f"{TSV_HEADER}q1\td1\t1\nq1\td2\t{word}\n".encode()
    files["decimals"] = "".join(f"q 0 d{i} {w}\n" for i, w in enumerate(DECIMALS)).encode()
    files["fractional"] = b"q1 0 d1 0.5\nq1 0 d2 2\n"
    firsts = ("q1 d1 1 x y", "q1\td1\t1", "query-id corpus-id score", "q1 0 d1", "q1 0", "q1")
    for first in firsts:
        files[f"first line {first!a}"] = f"\n{first}\nq1 0 d1 1\n".encode()
    files["both forms, tsv"] = (TSV_HEADER + "q1\td 1\t1\nq1\td2\t0.5\r\nq2\td3\t0\n").encode()
    longest = "x" * MAX_TREC_LINE
    for n, line in enumerate([longest, longest + "\r", longest + "x", "é" * 2**19 + "x"]):
        files[f"a long line {n}"] = b"q 0 d 1\n" + line.encode() + b"\n"
    huge = "q1 0 d1 1.7e308\nq1 0 d2 1.7e308\nq2 0 d2 1\n"
    files["grades whose sum overflows"] = huge.encode()
    files["grades whose sum overflows, apart"] = (huge + "q1 0 d3 1.7e308\n").encode()
    files["grades whose sum overflows, tsv"] = (
        TSV_HEADER + "q1\td1\t1.7e308\nq1\td2\t1.7e308\nq2\td2\t1\n"
    ).encode()
    files["judged twice"] = b"q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 2\nq2 0 d1 1\n"
    files["judged twice, apart"] = b"q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 2\n"
    files["judged twice, then a bad grade"] = b"q1 0 d1 1\nq1 0 d1 1\nq2 0 d2 1\nq3 0 d3 x\n"
    files["judged twice, then a bad line"] = b"q1 0 d1 1\nq1 0 d1 1\nq2 0 d2 1\nq3 0\n"
    return files


FILES = {**_fuzzed(), **_pinned()}


def test_every_hostile_qrels_file_is_covered() -> None:
    assert len(FILES) == 2 * len(FAMILIES) * CASES + 2 * len(NOT_DECIMALS) + 20 == 524


def _read(reader: Callable[[Path], Any], path: Path) -> Any:
    try:
        return reader(path)
    except (DatasetFormatError, ValueError, OSError) as error:
        return error


def _run(qrels: dict[str, dict[str, float]], label: str) -> dict[str, dict[str, float]]:
    """A fixed run over the file's queries: its judged docs and an unjudged one, shuffled."""
    rng = random.Random(label)
    run = {}
    for query_id, judged in qrels.items():
        docs = [*judged, "unjudged~doc"]
        run[query_id] = {doc: float(rng.randrange(4)) for doc in docs}
    return run


def _evaluated(run: Any, qrels: Any, metrics: tuple[str, ...]) -> tuple[str, list[str]]:
    """The report (or the error) as text, and the warnings given on the way."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            report = evaluate_run(run, qrels, k_values=K_VALUES, metrics=metrics)
        except ValueError as error:
            outcome = f"{type(error).__qualname__}: {error}"
        else:
            outcome = json.dumps(report.to_dict(), sort_keys=False)
    return outcome, [f"{w.category.__name__}: {w.message}" for w in caught]


@pytest.mark.parametrize("label", FILES, ids=ascii)
def test_packed_qrels_read_and_score_as_the_dicts(label: str, tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_bytes(FILES[label])
    as_dicts, packed = _read(read_trec_qrels, path), _read(read_packed_qrels, path)
    if isinstance(as_dicts, Exception) or isinstance(packed, Exception):
        assert type(packed) is type(as_dicts), f"{label}: {as_dicts!r} but {packed!r}"
        assert str(packed) == str(as_dicts), label
        if isinstance(as_dicts, DatasetFormatError):
            assert (packed.path, packed.line) == (str(path), as_dicts.line), label
        return
    assert list(packed.items()) == list(as_dicts.items()), label  # the same order, too
    run = _run(as_dicts, label)
    for metrics in (MEASURES, GRADED):
        assert _evaluated(run, packed, metrics) == _evaluated(run, as_dicts, metrics), label
