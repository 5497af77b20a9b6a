"""A seeded fuzz of damaged journals: every case resumes to the uninterrupted report, or is
refused with the file and the line, untouched; no finished query is ever retrieved again.

Families: the journal cut at every byte of its header and first records; one byte replaced at
every position of those (with bytes that break JSON, UTF-8 and lines, and random ones) and at
random positions further on; a corrupt record of each kind inserted at every line.
"""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path

import pytest

from ef.evaluation import (
    DatasetFormatError,
    IncompleteEvaluationWarning,
    evaluate_retrieval,
)
from ef.segments import Segment
from ef.source_manager import SearchHit

N = 8
QRELS = {f"q{i}": {f"d{i}": 1.0, f"d{(i + 2) % N}": 2.0} for i in range(N)}
QUERIES = {f"q{i}": f"text {i}" for i in range(N)}
RUN = {f"q{i}": [f"d{(i * 3 + j) % N}" for j in range(5)] for i in range(N)}
OPTIONS = {"k_values": (1, 5), "retriever_id": "fuzzed"}
NASTY = b'\xff\x80\n\r "\\{}[],:0e-'


class Counting:
    def __init__(self, failing: frozenset[str] = frozenset()) -> None:
        self.calls: list[str] = []
        self.failing = failing

    def __call__(self, query: str, *, limit: int = 10) -> list[SearchHit]:
        query_id = f"q{query.split()[1]}"
        self.calls.append(query_id)
        if query_id in self.failing:
            raise ConnectionResetError("reset")
        scores = [1.0, 0.5, 0.5, 0.25, 0.125]  # a tie, kept in the order given
        hits = zip(RUN[query_id], scores, strict=True)
        return [SearchHit(Segment(doc, ""), score) for doc, score in hits][:limit]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, object]:
    """A journal with a failed query retried later, and the uninterrupted report."""
    path = tmp_path_factory.mktemp("reference") / "journal.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteEvaluationWarning)
        evaluate_retrieval(
            Counting(frozenset({"q3"})), QRELS, QUERIES, journal=path, on_error="record", **OPTIONS
        )
    evaluate_retrieval(Counting(), QRELS, QUERIES, journal=path, **OPTIONS)
    expected = evaluate_retrieval(Counting(), QRELS, QUERIES, **OPTIONS)
    return path.read_bytes(), expected


def finished_in(data: bytes) -> set[str]:
    """The queries whose success record survives whole in ``data`` (the last one may have
    lost its newline); a later failure record of the same query does not undo it."""
    done: set[str] = set()
    for line in data.split(b"\n")[1:]:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and "ranked" in record:
            done.add(record["query_id"])
    return done


def resume(path: Path, data: bytes, expected: object) -> tuple[str, list[str]]:
    """Resume from ``data``: ``("resumed", calls)`` or ``("refused", [])``, checking both."""
    path.write_bytes(data)
    retriever = Counting()
    try:
        report = evaluate_retrieval(retriever, QRELS, QUERIES, journal=path, **OPTIONS)
    except DatasetFormatError as error:
        assert error.path == str(path)
        assert 1 <= error.line <= data.count(b"\n") + 1
        assert str(error).startswith(f"{path}:{error.line}: ")
        assert path.read_bytes() == data  # refused, untouched
        return "refused", []
    assert (report.metrics, report.per_query) == (expected.metrics, expected.per_query)  # type: ignore[attr-defined]
    assert len(retriever.calls) == len(set(retriever.calls))
    # What the journal now holds is whole: a second resume retrieves nothing.
    again = Counting()
    evaluate_retrieval(again, QRELS, QUERIES, journal=path, **OPTIONS)
    assert again.calls == []
    return "resumed", retriever.calls


def _line_ends(data: bytes, count: int) -> int:
    """The offset just past the first ``count`` lines."""
    end = 0
    for _ in range(count):
        end = data.index(b"\n", end) + 1
    return end


def test_a_journal_cut_at_every_byte_resumes_without_losing_a_finished_query(
    reference: tuple[bytes, object], tmp_path: Path
) -> None:
    data, expected = reference
    path = tmp_path / "journal.jsonl"
    for cut in range(_line_ends(data, 4) + 1):
        outcome, calls = resume(path, data[:cut], expected)
        assert outcome == "resumed", cut  # a cut is never a reason to refuse
        assert sorted(calls) == sorted(set(QRELS) - finished_in(data[:cut])), cut


def _check_flip(path: Path, data: bytes, position: int, value: int, expected: object) -> str:
    flipped = data[:position] + bytes([value]) + data[position + 1 :]
    outcome, calls = resume(path, flipped, expected)
    if outcome == "resumed":
        # Only the query of the damaged line may be retrieved again.
        start = data.rfind(b"\n", 0, position) + 1
        end = data.find(b"\n", position)
        line = data[start : end if end >= 0 else len(data)]
        owner = set() if start == 0 else {json.loads(line)["query_id"]}
        assert set(calls) <= owner | (set(QRELS) - finished_in(data)), position
    return outcome


def test_one_byte_replaced_anywhere_resumes_or_is_refused_with_its_line(
    reference: tuple[bytes, object], tmp_path: Path
) -> None:
    data, expected = reference
    path = tmp_path / "journal.jsonl"
    chance = random.Random(20240617)
    positions = [(p, chance.choice(NASTY)) for p in range(_line_ends(data, 4))]
    positions += [(chance.randrange(len(data)), chance.randrange(256)) for _ in range(300)]
    outcomes = {"resumed": 0, "refused": 0}
    for position, value in positions:
        if data[position] == value:
            continue
        outcomes[_check_flip(path, data, position, value, expected)] += 1
    assert outcomes["refused"] > 100 and outcomes["resumed"] > 5  # both paths were exercised


CORRUPT = [
    b'{"query_id":"q1","ranked":["d\xff"]}',
    b'["q1", ["d1"]]',
    b'"q1"',
    b"null",
    b"42",
    b'{"query_id":"q1","ranked":[{"id":"d1"}]}',
    b'{"query_id":"q1","ranked":["d1"],"retrieved":"10"}',
    b'{"query_id":"q1","ranked":' + b"[" * 50_000 + b"]" * 50_000 + b"}",
    b'{"query_id":"q1","ranked":[],"retrieved":' + b"9" * 5000 + b"}",
    b'{"query_id":"q1","ranked":["d1","d1"]}',
    b'{"query_id":"q1","ranked":["d1"],"latency":NaN}',
    b'{"query_id":"q1","ranked":["d1"],"latency":-Infinity}',
    b'{"query_id":"q1","ranked":["d1"],"latency":"fast"}',
    b'{"query_id":"q1","ranked":["d1"],"scores":[1e999]}',
    b'{"query_id":"q1","ranked":["d1"],"attempts":0}',
    b'{"query_id":"q1","ranked":["\\ud800"]}',
    b'{"query_id":"q1","failure":"timeout"}',
    b'{"query_id":"q1","ranked":["d1"],"crc":7}',
    b'{"query_id":"q1"',
]


@pytest.mark.parametrize("record", CORRUPT, ids=range(len(CORRUPT)))
def test_a_corrupt_record_at_any_line_is_refused_with_that_line(
    reference: tuple[bytes, object], tmp_path: Path, record: bytes
) -> None:
    data, expected = reference
    path = tmp_path / "journal.jsonl"
    lines = data.splitlines(keepends=True)
    for at in range(1, len(lines)):
        damaged = b"".join([*lines[:at], record + b"\n", *lines[at:]])
        path.write_bytes(damaged)
        with pytest.raises(DatasetFormatError) as caught:
            evaluate_retrieval(Counting(), QRELS, QUERIES, journal=path, **OPTIONS)
        assert (caught.value.path, caught.value.line) == (str(path), at + 1)
        assert path.read_bytes() == damaged
    # As the last line, without its newline, a damaged record is a cut one: left out.
    outcome, _ = resume(path, data + record, expected)
    assert outcome == "resumed"
