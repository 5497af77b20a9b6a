"""The streaming form of the C parser hands over each query as the built-in streaming reader does.

The oracle is ef.evaluation's own per-query reader
(``ef.evaluation.extending.reference_trec_queries``). Generated grouped files
mix ASCII and Unicode whitespace, non-ASCII ids, blank lines, CRLF and byte-order marks, and are
parsed with tiny chunk sizes, so a query's lines are cut at every place; the queries are
compared in order and float by float. A file the built-in reader refuses (a bad line, a query
seen again, a doc listed twice) is refused by the streaming form too, with a ValueError.
"""

from __future__ import annotations

import io
import random
import struct
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from ef.evaluation import DatasetFormatError, MissingQueriesWarning, evaluate_run, write_trec_run
from ef.evaluation.extending import reference_trec_queries
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ef_evaluation_speedups
from ef_evaluation_speedups import parse_trec_run, parse_trec_run_by_query

CHUNK_SIZES = (1, 2, 3, 7, 64, ef_evaluation_speedups.CHUNK_SIZE)
SPACES = [" ", "\t", "  ", "\xa0", "\u3000"]
IDS = st.text("abcé中0123456789_-.", min_size=1, max_size=4)
SCORES = st.sampled_from(["1", "-0.5", "2.675", "1e22", "0.1", "3.", ".25", "1" + "0" * 30])

Queries = list[tuple[str, dict[str, float]]]


@pytest.fixture(scope="module", autouse=True)
def plugin(speedups_loaded: None) -> None:
    """Every test here runs with the plugin loaded (conftest.py)."""


@st.composite
def grouped_files(draw: st.DrawFn) -> bytes:
    """A run grouped by query, in all the spellings the readers accept."""
    query_ids = draw(st.lists(IDS, unique=True, max_size=5))
    lines = []
    for query_id in query_ids:
        for doc in draw(st.lists(IDS, unique=True, min_size=1, max_size=5)):
            space = draw(st.sampled_from(SPACES))
            columns = [query_id, "Q0", doc, "1", draw(SCORES), "tag"]
            lines.append(space.join(columns) + draw(st.sampled_from(["\n", "\r\n"])))
            if draw(st.integers(0, 5)) == 0:
                lines.append(draw(st.sampled_from(["\n", "  \n", "\u3000\r\n"])))
    text = "".join(lines)
    if draw(st.booleans()) and text.endswith("\n"):
        text = text[:-1]  # no line end at the end of the file
    bom = "\ufeff" if draw(st.booleans()) else ""
    return (bom + text).encode()


def built_in(data: bytes, tmp_path: Path) -> Queries:
    path = tmp_path / "run.txt"
    path.write_bytes(data)
    return list(reference_trec_queries(path))


def streamed(data: bytes, chunk_size: int) -> Queries:
    return list(parse_trec_run_by_query(io.BytesIO(data), chunk_size=chunk_size))


def same_floats(left: Queries, right: Queries) -> bool:
    """Equal queries, in order, docs in order, every float bit for bit."""
    pack = struct.Struct("<d").pack
    return [(q, [(d, pack(s)) for d, s in docs.items()]) for q, docs in left] == [
        (q, [(d, pack(s)) for d, s in docs.items()]) for q, docs in right
    ]


@settings(max_examples=120, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=grouped_files(), chunk_size=st.sampled_from(CHUNK_SIZES))
def test_each_query_is_the_built_in_readers_in_every_chunking(tmp_path, data, chunk_size):
    assert same_floats(streamed(data, chunk_size), built_in(data, tmp_path))


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
@pytest.mark.parametrize(
    "text",
    [
        "q1 Q0 a 1 1 x\nq2 Q0 a 1 1 x\nq1 Q0 b 1 1 x\n",  # q1 again, maybe in one chunk
        "q1 Q0 a 1 1 x\nq1 Q0 a 2 0 x\n",  # a doc twice
        "q1 Q0 a 1 1 x\nq2 Q0 b 1 1 x\n\nq2 Q0 b 2 0 x\n",  # a doc twice in the last query
        "q1 Q0 a 1 1 x\nq1 Q0 b 1 inf x\n",  # a bad line
        "q1 Q0 a 1 1 x\nq2 Q0 a 1 1 x\nq2 Q0 b 1 1 x\nq1\xa0Q0 c 1 1 x\n",  # q1 again, Unicode
    ],
)
def test_what_the_built_in_reader_refuses_is_a_value_error(tmp_path, chunk_size, text):
    with pytest.raises(DatasetFormatError):
        built_in(text.encode(), tmp_path)
    with pytest.raises(ValueError):
        streamed(text.encode(), chunk_size)


def test_the_hooks_parser_carries_its_streaming_form(tmp_path, monkeypatch):
    assert parse_trec_run.by_query is parse_trec_run_by_query  # type: ignore[attr-defined]
    # evaluate_run given a path reads it with the plugin (its feeding loop runs).
    fed, feed = [], ef_evaluation_speedups._fed
    monkeypatch.setattr(ef_evaluation_speedups, "_fed", lambda *args: fed.append(1) or feed(*args))
    path = tmp_path / "run.txt"
    write_trec_run(path, {"q1": {"d1": 2.0, "d2": 1.0}})
    assert (
        evaluate_run(path, {"q1": {"d2": 1.0}}).metrics
        == evaluate_run({"q1": {"d1": 2.0, "d2": 1.0}}, {"q1": {"d2": 1.0}}).metrics
    )
    assert fed


def test_memory_holds_about_one_chunk_and_one_query():
    class Lines:
        """A run of 400 queries of 500 lines, made as it is read."""

        def __init__(self) -> None:
            self.pieces = self._pieces()
            self.pending = b""

        def _pieces(self) -> Iterator[bytes]:
            for query in range(400):
                yield "".join(f"q{query} Q0 d{d} {d} {d / 7} x\n" for d in range(500)).encode()

        def read(self, size: int) -> bytes:
            while len(self.pending) < size:
                piece = next(self.pieces, b"")
                if not piece:
                    break
                self.pending += piece
            data, self.pending = self.pending[:size], self.pending[size:]
            return data

    largest = count = 0
    tracemalloc.start()
    try:
        for _, scores in parse_trec_run_by_query(Lines(), chunk_size=1 << 16):
            largest = max(largest, len(scores))
            count += 1
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (count, largest) == (400, 500)
    assert peak < 2 << 20, peak  # the whole table would take more than 20 MiB


def test_evaluate_run_streams_with_it_and_names_the_line_the_same(tmp_path):
    rng = random.Random(3)
    run = {f"q{i}": {f"d{j}": rng.choice([0.5, 1.0, 2.0]) for j in range(30)} for i in range(40)}
    qrels = {f"q{i}": {f"d{j}": 1.0 for j in range(0, 30, 4)} for i in range(45)}
    path = tmp_path / "run.txt"
    write_trec_run(path, run)
    # Five judged queries are not in the run: both paths warn alike and score them 0.
    with pytest.warns(MissingQueriesWarning, match="5 of 45 judged queries are not in"):
        from_file = evaluate_run(path, qrels)
    with pytest.warns(MissingQueriesWarning, match="5 of 45 judged queries are not in the run"):
        assert from_file == evaluate_run(run, qrels)
    with path.open("a") as out:
        out.write("q0 Q0 d99 1 1 x\n")
    with pytest.raises(DatasetFormatError, match=r"run.txt:1201: query 'q0' appears again"):
        evaluate_run(path, qrels)


def test_no_warning_for_a_file_it_refuses(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 a 1 1 x\nq1 Q0 a 1 1 x\n")
    with pytest.raises(DatasetFormatError, match=r"run.txt:2: doc 'a' listed again"):
        evaluate_run(path, {"q1": {"a": 1.0}})
    # Refusing is no fault of the parser: no PluginWarning (pytest turns warnings to errors).
