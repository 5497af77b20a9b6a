"""A run file given by path is scored one query at a time, with the in-memory path's numbers.

Each report is compared whole (values, means, manifest) with the report of the same run read
into memory, bit for bit; a file that is not grouped by query is refused, never scored wrong.
"""

from __future__ import annotations

import gc
import gzip
import math
import os
import random
import tempfile
import threading
import tracemalloc
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ef.evaluation import (
    DatasetFormatError,
    MissingQueriesError,
    MissingQueriesWarning,
    PluginWarning,
    RelevanceLevelWarning,
    evaluate_run,
    hookimpl,
    read_trec_run,
    write_trec_run,
)
from ef.evaluation._io.stream import trec_queries
from ef.evaluation._plugins import HOST
from ef.evaluation.cli import main
from ef.evaluation.testing import registered_plugin

METRICS = ("ndcg", "map", "recall", "precision", "mrr", "P", "recip_rank", "bpref", "ndcg_cut")

doc_ids = st.sampled_from([f"d{i}" for i in range(12)])
query_ids = st.sampled_from([f"q{i}" for i in range(8)])
grades = st.sampled_from([0.0, 1.0, 2.0, -1.0])
# Coarse scores make ties, which trec_eval's order breaks by doc id.
run_scores = st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5, -2.0, 1e-3])
runs = st.dictionaries(query_ids, st.dictionaries(doc_ids, run_scores, max_size=10), max_size=8)
qrels_sets = st.dictionaries(
    query_ids, st.dictionaries(doc_ids, grades, min_size=1, max_size=6), min_size=1, max_size=8
)
options_sets = st.fixed_dictionaries(
    {},
    optional={
        "relevance_level": st.sampled_from([1, 2]),
        "judged_only": st.booleans(),
        "ignore_identical_ids": st.booleans(),
        "missing_queries": st.sampled_from(["zero", "warn", "error"]),
    },
)


def _evaluate(run: Any, qrels: Any, **options: Any) -> Any:
    with warnings.catch_warnings(record=True) as caught:  # both paths must warn alike
        warnings.simplefilter("always", RelevanceLevelWarning)
        try:
            result = evaluate_run(run, qrels, k_values=(1, 3, 10), metrics=METRICS, **options)
        except (MissingQueriesError, MissingQueriesWarning) as problem:
            # Judged queries the run lacks: both paths must say so (each naming the run its way).
            result = (type(problem).__name__, str(problem).replace(str(run), "the run"))
        except ValueError as error:  # no scorable query: both paths must say so
            result = str(error)
    return result, [str(warning.message) for warning in caught]


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run=runs, qrels=qrels_sets, options=options_sets, style=st.sampled_from(["plain", "crlf"]))
def test_a_streamed_run_file_scores_bit_for_bit_as_the_run_in_memory(
    trec_run_parser, run, qrels, options, style
):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "run.txt.gz" if style == "crlf" else "run.txt")
        write_trec_run(path, run)
        if style == "crlf":  # a byte-order mark, CRLF ends and blank lines, gzipped
            text = gzip.decompress(path.read_bytes()).decode()
            text = "\ufeff" + text.replace("\n", "\r\n\n")
            path.write_bytes(gzip.compress(text.encode()))
        in_memory = _evaluate(read_trec_run(path), qrels, **options)
        assert _evaluate(path, qrels, **options) == in_memory
        assert _evaluate(str(path), qrels, **options) == in_memory


def test_the_means_are_summed_in_qrels_order_whatever_the_file_order(tmp_path):
    rng = random.Random(7)
    run = {f"q{i}": {f"d{j}": rng.random() for j in range(20)} for i in range(50)}
    qrels = {f"q{i}": {f"d{j}": 1.0 for j in range(0, 20, 3)} for i in reversed(range(60))}
    path = tmp_path / "run.txt"
    write_trec_run(path, run)
    streamed = evaluate_run(path, qrels, metrics=METRICS, missing_queries="zero")
    assert streamed == evaluate_run(run, qrels, metrics=METRICS, missing_queries="zero")
    assert list(streamed.per_query) == [q for q in qrels if q in streamed.per_query]
    assert streamed.manifest["run"] == {
        "queries": 50,
        "judged_queries": 60,
        "judged_queries_in_run": 50,
        "missing_queries": "zero",
    }


def test_a_query_seen_again_after_another_is_refused_naming_both_lines(trec_run_parser, tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 2 x\nq1 Q0 d2 2 1 x\nq2 Q0 d1 1 1 x\n\nq1 Q0 d3 3 0 x\n")
    with pytest.raises(DatasetFormatError) as caught:
        evaluate_run(path, {"q1": {"d1": 1.0}})
    assert caught.value.line == 5
    assert "query 'q1' appears again after other queries (its first line is line 1)" in str(
        caught.value
    )
    assert read_trec_run(path)["q1"] == {"d1": 2.0, "d2": 1.0, "d3": 0.0}  # in memory: accepted


def test_a_doc_listed_twice_in_a_query_is_refused_naming_both_lines(trec_run_parser, tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("q0 Q0 d1 1 2 x\nq1 Q0 d1 1 2 x\n\nq1 Q0 d2 2 1 x\nq1 Q0 d1 3 0 x\n")
    with pytest.raises(DatasetFormatError, match=r"run.txt:5: doc 'd1' listed again for query "):
        evaluate_run(path, {"q1": {"d1": 1.0}})
    with pytest.raises(DatasetFormatError, match=r"\(first on line 2\)"):
        list(trec_queries(path))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("q2 Q0 d1 1 inf x", r"run.txt:2: score 'inf' is not finite"),
        ("q2 Q0 d1 1 2", r"run.txt:2: found 5 columns"),
        ("q2 Q0 d1 1 1_0 x", r"run.txt:2: score '1_0' is not a plain ASCII decimal"),
    ],
)
def test_a_bad_line_is_named_as_the_in_memory_reader_names_it(
    trec_run_parser, tmp_path, line, message
):
    path = tmp_path / "run.txt"
    path.write_text(f"q1 Q0 d1 1 1 x\n{line}\n")
    with pytest.raises(DatasetFormatError, match=message):
        evaluate_run(path, {"q1": {"d1": 1.0}})
    with pytest.raises(DatasetFormatError, match=message):
        read_trec_run(path)


def test_a_run_from_a_fifo_is_streamed(tmp_path):
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    text = "".join(f"q{q} Q0 d{d} {d} {10 - d} x\n" for q in range(3) for d in range(5))

    def write() -> None:
        with open(fifo, "w") as out:
            out.write(text)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        report = evaluate_run(fifo, {"q1": {"d0": 1.0}}, k_values=(1,), metrics=("ndcg",))
    finally:
        writer.join(timeout=30)
    assert report.per_query == {"q1": {"ndcg@1": 1.0}}


def test_memory_does_not_grow_with_the_file(no_installed_parser, tmp_path):
    """Streamed, a file 4 times longer peaks at about the same memory, one query's; read whole,
    even the short one needs several times more. (The C parser's bound, about one chunk, is
    tested with the plugin.)"""

    def write(name: str, queries: int) -> Path:
        path = tmp_path / name
        with open(path, "w") as out:
            for query in range(queries):
                out.writelines(f"q{query} Q0 d{d} {d} {1000 - d} x\n" for d in range(100))
        return path

    short, long = write("short.run", 300), write("long.run", 1200)
    qrels = {f"q{query}": {"d3": 1.0} for query in range(0, 300, 30)}

    def peak(run: Any) -> int:
        gc.collect()
        tracemalloc.start()
        try:
            evaluate_run(run(), qrels, k_values=(10,), metrics=("ndcg",))
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    streamed_short, streamed_long = peak(lambda: short), peak(lambda: long)
    in_memory = peak(lambda: read_trec_run(short))
    assert streamed_long < streamed_short * 1.25 + (256 << 10), (streamed_short, streamed_long)
    assert streamed_long * 3 < in_memory, (streamed_long, in_memory)


# A plugin's streaming parser, and what happens when it steps aside


def _by_query(stream: Any) -> Iterator[tuple[str, dict[str, float]]]:
    """A plain streaming parser, as a plugin would offer it (it trusts its input)."""
    current: str | None = None
    scores: dict[str, float] = {}
    for raw in stream:
        parts = raw.decode().split()
        if not parts:
            continue
        if parts[0] != current:
            if current is not None:
                yield current, scores
            current, scores = parts[0], {}
        scores[parts[2]] = float(parts[4])
    if current is not None:
        yield current, scores


class StreamingParser:
    def __init__(self, by_query: Any) -> None:
        self.calls = 0
        self.streamed = 0
        outer = self

        def parser(stream: Any) -> Any:
            outer.calls += 1
            raise AssertionError("a streamed run file never asks for the whole table")

        def by_query_counted(stream: Any) -> Any:
            outer.streamed += 1
            return by_query(stream)

        parser.by_query = by_query_counted  # type: ignore[attr-defined]
        self.parser = parser

    @hookimpl
    def ef_evaluation_trec_run_parser(self) -> Any:
        return self.parser


@pytest.fixture
def no_installed_parser() -> Iterator[None]:
    HOST.reset()
    if HOST.manager.has_plugin("speedups"):
        HOST.unregister("speedups")
    try:
        yield
    finally:
        HOST.reset()


def test_a_plugins_streaming_parser_is_used_with_the_same_numbers(no_installed_parser, tmp_path):
    run = {f"q{i}": {f"d{j}": float(j % 4) for j in range(9)} for i in range(5)}
    qrels = {f"q{i}": {"d3": 1.0, "d5": 2.0} for i in range(6)}
    path = tmp_path / "run.txt"
    write_trec_run(path, run)
    plugin = StreamingParser(_by_query)
    with registered_plugin(plugin):
        with pytest.warns(MissingQueriesWarning, match="1 of 6 judged queries are not in"):
            streamed = evaluate_run(path, qrels, metrics=METRICS)
    with pytest.warns(MissingQueriesWarning, match="1 of 6 judged queries are not in the run"):
        assert streamed == evaluate_run(run, qrels, metrics=METRICS)
    assert (plugin.streamed, plugin.calls) == (1, 0)


def test_a_streaming_parser_that_refuses_a_line_leaves_the_message_to_the_built_in_reader(
    no_installed_parser, tmp_path
):
    def refusing(stream: Any) -> Iterator[tuple[str, dict[str, float]]]:
        yield "q1", {"d1": 1.0}
        raise ValueError("line 2")

    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 1 x\nq2 Q0 d1 1 1 x\nq1 Q0 d2 1 1 x\n")
    with registered_plugin(StreamingParser(refusing)):
        with pytest.raises(DatasetFormatError, match=r"run.txt:3: query 'q1' appears again"):
            evaluate_run(path, {"q1": {"d1": 1.0}})


def test_a_broken_streaming_parser_costs_speed_never_a_result(no_installed_parser, tmp_path):
    def broken(stream: Any) -> Iterator[tuple[str, dict[str, float]]]:
        yield "q1", {"d9": 5.0}  # a wrong value, then a crash: the whole file is read again
        raise RuntimeError("bug")

    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 1 x\nq2 Q0 d1 1 1 x\n")
    with registered_plugin(StreamingParser(broken)):
        with pytest.warns(PluginWarning, match=r"streaming TREC run parser .* RuntimeError: bug"):
            report = evaluate_run(path, {"q1": {"d1": 1.0}}, k_values=(1,), metrics=("ndcg",))
    assert report.per_query == {"q1": {"ndcg@1": 1.0}}


def test_a_parser_of_the_first_form_is_not_used_to_stream(no_installed_parser, tmp_path):
    calls = []

    class FirstForm:
        @hookimpl
        def ef_evaluation_trec_run_parser(self) -> Any:
            return lambda stream: calls.append(stream) or ({}, 0, 0)

    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 1 x\n")
    with registered_plugin(FirstForm()):
        report = evaluate_run(path, {"q1": {"d1": 1.0}}, k_values=(1,), metrics=("ndcg",))
    assert report.metrics == {"ndcg@1": 1.0} and calls == []


def test_the_cli_refuses_a_run_file_not_grouped_by_query(tmp_path, capsys):
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 1 x\nq2 Q0 d1 1 1 x\nq1 Q0 d2 2 0 x\n")
    assert main(["run", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")]) == 1
    error = capsys.readouterr().err
    assert "run.txt:3: query 'q1' appears again after other queries (its first line is line 1)" in (
        error.replace("\n", " ")
    )


def test_per_query_values_share_their_float_objects(tmp_path: Path) -> None:
    """A query's values take a dict and, shared across queries, the floats they hold."""
    from ef.evaluation import evaluate_run

    run = tmp_path / "run.txt"
    run.write_text("".join(f"q{i} Q0 d{i} 1 1.0 x\nq{i} Q0 e{i} 2 0.5 x\n" for i in range(50)))
    qrels = {f"q{i}": {f"d{i}": 1.0} for i in range(50)}
    report = evaluate_run(run, qrels, metrics=["ndcg", "precision"], k_values=(1, 10))
    first, last = report.per_query["q0"], report.per_query["q49"]
    expected = {"ndcg@1": 1.0, "ndcg@10": 1.0, "precision@1": 1.0, "precision@10": 0.1}
    assert first == last == expected
    assert report.metrics == pytest.approx(expected)  # summed one query at a time
    assert all(first[key] is last[key] for key in first)


def test_a_negative_zero_is_kept_as_it_is() -> None:
    from ef.evaluation._running.driver import plan_queries
    from ef.evaluation._running.options import ScoringOptions
    from ef.evaluation._scoring.score_sheet import ScoreSheet

    plan = plan_queries({"q": {"d": 1.0}}, None, ScoringOptions(), HOST)
    sheet = ScoreSheet(plan, parameters={})
    shared = sheet._shared({"a": 0.0, "b": -0.0, "c": 0.0})
    assert [math.copysign(1.0, value) for value in shared.values()] == [1.0, -1.0, 1.0]
