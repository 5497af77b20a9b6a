"""Readers under hostile input: pipes and FIFOs, odd numbers, huge or deep lines, qrels forms.

Each test pins a case found by feeding the readers what a hostile (or merely unlucky) user
would: the input is real (a bash process substitution through the installed ``ef-eval``
script, an ``os.pipe`` handed to :func:`ef.evaluation.cli.main`, a named FIFO fed by a writer
thread), and the outcome is either the right table or a :class:`DatasetFormatError` naming the
user's path and the line.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ef.evaluation import (
    ComparisonReport,
    DatasetFormatError,
    RagEvalReport,
    RetrievalEvalReport,
    read_beir,
    read_trec_qrels,
    read_trec_run,
    write_beir,
    write_trec_qrels,
    write_trec_run,
)
from ef.evaluation._io.lines import MAX_JSONL_LINE, MAX_TREC_LINE
from ef.evaluation.cli import main
from ef.evaluation.cli.rag import read_samples

EF_EVAL = shutil.which("ef-eval", path=str(Path(sys.executable).parent))
TSV_HEADER = "query-id\tcorpus-id\tscore\n"


def assert_points_at(error: DatasetFormatError, path: object, line: int) -> None:
    assert error.path == os.fspath(path)  # type: ignore[arg-type]
    assert error.line == line
    assert str(error).startswith(f"{os.fspath(path)}:{line}: ")  # type: ignore[arg-type]


class Feeder:
    """Writes bytes into a FIFO or a pipe from a thread, as another process would."""

    def __init__(self, target: Path | int, data: bytes) -> None:
        self.error: BaseException | None = None

        def write() -> None:
            try:
                with open(target, "wb") as out:
                    out.write(data)
            except BrokenPipeError:  # the reader stopped early, which a reader may do
                pass
            except BaseException as error:  # pragma: no cover - reported by finish()
                self.error = error

        self.thread = threading.Thread(target=write, daemon=True)
        self.thread.start()

    def finish(self) -> None:
        self.thread.join(timeout=10)
        assert not self.thread.is_alive(), "the writer is still blocked: the input was not read"
        assert self.error is None


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Any]:
    """``fifo(name, data)``: a named FIFO that a writer thread fills once."""
    feeders: list[Feeder] = []

    def make(name: str, data: bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)
        feeders.append(Feeder(path, data))
        return path

    yield make
    for feeder in feeders:
        feeder.finish()


@pytest.fixture
def spool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder temporary copies go to, empty at the start."""
    folder = tmp_path / "spool"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


# --- 1. piped input is read once --------------------------------------------------------------

PIPED_RUNS = {
    "bad score": (b"q1 Q0 d1 1 2 t\nq2 Q0 d2 1 x t\n", "score 'x' is not a number"),
    "repeated doc": (b"q1 Q0 d1 1 2 t\nq1 Q0 d1 1 3 t\n", "doc 'd1' listed again"),
    "invalid utf-8": (b"q1 Q0 d1 1 2 t\nq2 Q0 d\xff 1 3 t\n", "invalid UTF-8"),
}


@pytest.mark.parametrize("plugins", [None, ""], ids=["speedups", "builtin"])
@pytest.mark.parametrize("case", PIPED_RUNS, ids=PIPED_RUNS.keys())
def test_a_bad_run_from_a_process_substitution_is_an_error_at_its_line(
    tmp_path: Path, plugins: str | None, case: str
) -> None:
    """``ef-eval run qrels <(...)``: once an empty run scored 0 (speedups), once an error
    without a line or 'changed while it was being read' (built-in)."""
    assert EF_EVAL is not None, "the ef-eval script is not installed: pip install -e ."
    data, problem = PIPED_RUNS[case]
    write_trec_qrels(tmp_path / "qrels.txt", {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}})
    (tmp_path / "data").write_bytes(data)
    environment = dict(os.environ)
    if plugins is not None:
        environment["EF_EVALUATION_PLUGINS"] = plugins
    result = subprocess.run(
        ["bash", "-c", '"$0" run "$1" <(cat "$2")', EF_EVAL, "qrels.txt", "data"],
        cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout == ""
    assert re.fullmatch(r"ef-eval: error: /dev/fd/\d+:2: .*\n", result.stderr), result.stderr
    assert problem in result.stderr


def test_a_good_run_from_an_os_pipe_scores_as_the_file_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], trec_run_parser: str
) -> None:
    qrels = write_qrels(tmp_path)
    run = {"q1": {"d1": 2.0, "d9": 1.0}, "q2": {"d9": 3.0, "d2": 1.0}}
    write_trec_run(tmp_path / "run.txt", run)
    assert main(["run", str(qrels), str(tmp_path / "run.txt"), "--format", "json"]) == 0
    from_file = json.loads(capsys.readouterr().out)["run.txt"]
    read, write = os.pipe()
    feeder = Feeder(write, (tmp_path / "run.txt").read_bytes())
    try:
        assert main(["run", str(qrels), f"/dev/fd/{read}", "--format", "json"]) == 0
    finally:
        os.close(read)
    feeder.finish()
    (from_pipe,) = json.loads(capsys.readouterr().out).values()
    assert from_pipe["metrics"] == from_file["metrics"]
    # Not an empty run: q1's doc is first, q2's second.
    assert from_pipe["metrics"]["ndcg@10"] == pytest.approx((1 + 1 / math.log2(3)) / 2)


def test_invalid_utf8_in_piped_qrels_names_the_line_through_main(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_trec_run(tmp_path / "run.txt", {"q1": ["d1"]})
    read, write = os.pipe()
    feeder = Feeder(write, b"q1 0 d1 1\nq1 0 d\xe9 1\n")
    try:
        code = main(["run", f"/dev/fd/{read}", str(tmp_path / "run.txt")])
    finally:
        os.close(read)
    feeder.finish()
    assert code == 1
    assert capsys.readouterr().err == (
        f"ef-eval: error: /dev/fd/{read}:2: invalid UTF-8 (invalid continuation byte); "
        "expected UTF-8 text\n"
    )


@pytest.mark.parametrize(
    ("data", "line", "problem"),
    [
        (b"q1 Q0 d1 1 2 t\nq2 Q0 d2 1 x t\n", 2, "score 'x' is not a number"),
        (b"q1 Q0 d1 1 2 t\nq1 Q0 d1 1 3 t\n", 2, "doc 'd1' listed again for query 'q1'"),
        (b"q1 Q0 d1 1 2 t\n\xc3(\n", 2, "invalid UTF-8"),
    ],
)
def test_a_fifo_is_read_once_and_its_errors_name_it(
    fifo: Any, spool: Path, trec_run_parser: str, data: bytes, line: int, problem: str
) -> None:
    """A named FIFO once hung: the fallback re-opened it after the C parser drained it."""
    path = fifo("run.fifo", data)
    with pytest.raises(DatasetFormatError) as caught:
        read_trec_run(path)
    assert_points_at(caught.value, path, line)
    assert caught.value.problem.startswith(problem)
    assert list(spool.iterdir()) == []  # the temporary copy is gone


def test_a_fifo_gives_the_table_of_the_same_file(
    fifo: Any, tmp_path: Path, trec_run_parser: str
) -> None:
    data = b"\xef\xbb\xbfq1 Q0 d1 1 2.5 t\r\nq1 Q0 d2 2 -1e-3 t\n\nq2 Q0 d1 1 7 t"
    (tmp_path / "run.txt").write_bytes(data)
    assert read_trec_run(fifo("run.fifo", data)) == read_trec_run(tmp_path / "run.txt")


def test_every_reader_reads_a_fifo_again_for_its_errors(fifo: Any, tmp_path: Path) -> None:
    qrels = fifo("qrels.fifo", b"q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 0\n")
    with pytest.raises(DatasetFormatError) as caught:
        read_trec_qrels(qrels)
    assert_points_at(caught.value, qrels, 3)
    assert caught.value.problem == "doc 'd1' listed again for query 'q1' (first on line 1)"

    samples = fifo("samples.fifo", b'{"response": "a"}\n\n{"response": "\xff"}\n')
    with pytest.raises(DatasetFormatError) as caught:
        read_samples(str(samples))
    assert_points_at(caught.value, samples, 3)


def test_beir_files_may_be_fifos_or_pipes(fifo: Any, tmp_path: Path) -> None:
    root = tmp_path / "beir"
    fifo("beir/corpus.jsonl", b'{"_id": "d1", "text": "one"}\n')
    fifo("beir/queries.jsonl", b'{"_id": "q1", "text": "q"}\n')
    read, write = os.pipe()
    qrels = Feeder(write, TSV_HEADER.encode() + b"q1\td1\t1\nq2\td1\t1\nq1\td1\t0\n")
    try:
        with pytest.raises(DatasetFormatError) as caught:
            read_beir(root, qrels=f"/dev/fd/{read}")
    finally:
        os.close(read)
    qrels.finish()
    assert_points_at(caught.value, f"/dev/fd/{read}", 4)
    assert caught.value.problem == "doc 'd1' judged again for query 'q1' (first on line 2)"


def test_beir_qrels_from_a_pipe_are_read(tmp_path: Path) -> None:
    write_beir(tmp_path, {"d1": "one"}, {"q1": "q"}, {"q1": {"d1": 2.0}})
    read, write = os.pipe()
    feeder = Feeder(write, b"q1 0 d1 1\n")
    try:
        assert read_beir(tmp_path, qrels=f"/dev/fd/{read}")[2] == {"q1": {"d1": 1.0}}
    finally:
        os.close(read)
    feeder.finish()


def test_the_temporary_copy_is_never_named(fifo: Any, spool: Path) -> None:
    path = fifo("run.fifo", b"q1 Q0 d1 1 2 t\n\xff\n")
    with pytest.raises(DatasetFormatError) as caught:
        read_trec_run(path)
    assert str(spool) not in str(caught.value)
    assert caught.value.__cause__ is None or str(spool) not in str(caught.value.__cause__)
    assert list(spool.iterdir()) == []


# --- 4. numbers: ASCII decimals only ----------------------------------------------------------

# float() reads every one of these; trec_eval reads "1_0" as 1 and "٣" as 0.
NOT_DECIMALS = {
    "1_0": "is not a plain ASCII decimal number",
    "\u0663": "is not a plain ASCII decimal number",
    "\uff19": "is not a plain ASCII decimal number",
    "1_000.5": "is not a plain ASCII decimal number",
    "0x10": "is not a number",
    "1,5": "is not a number",
    "inf": "is not finite",
    "-Infinity": "is not finite",
    "nan": "is not finite",
    "1e999": "overflows to infinity",
    "-1e999": "overflows to infinity",
    "9" * 400: "overflows to infinity",
}
DECIMALS = ["+1", "1.", ".5", "-0", "1E+2", "007", "-2.5e-3", "0." + "0" * 30 + "1"]


def write_qrels(folder: Path) -> Path:
    write_trec_qrels(folder / "qrels.txt", {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}})
    return folder / "qrels.txt"


@pytest.mark.parametrize("word", NOT_DECIMALS, ids=ascii)
def test_a_run_score_that_is_no_ascii_decimal_is_refused(
    tmp_path: Path, trec_run_parser: str, word: str
) -> None:
    path = tmp_path / "run.txt"
    path.write_text(f"q1 Q0 d1 1 1 t\nq1 Q0 d2 2 {word} t\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError) as caught:
        read_trec_run(path)
    assert_points_at(caught.value, path, 2)
    assert caught.value.problem == f"score {word!r} {NOT_DECIMALS[word]}"
    assert caught.value.expected.startswith("a finite number in ASCII decimal notation")


@pytest.mark.parametrize("word", NOT_DECIMALS, ids=ascii)
@pytest.mark.parametrize("form", ["trec", "tsv"])
def test_a_grade_that_is_no_ascii_decimal_is_refused(tmp_path: Path, word: str, form: str) -> None:
    path = tmp_path / "qrels.txt"
    if form == "trec":
        path.write_text(f"q1 0 d1 1\nq1 0 d2 {word}\n", encoding="utf-8")
        name, line = "grade", 2
    else:
        path.write_text(f"{TSV_HEADER}q1\td1\t1\nq1\td2\t{word}\n", encoding="utf-8")
        name, line = "score", 3
    for read in (read_trec_qrels, lambda p: beir_with_qrels(tmp_path, p)):
        with pytest.raises(DatasetFormatError) as caught:
            read(path)
        assert_points_at(caught.value, path, line)
        assert caught.value.problem == f"{name} {word!r} {NOT_DECIMALS[word]}"


def beir_with_qrels(folder: Path, qrels: Path) -> dict[str, dict[str, float]]:
    """The qrels ``read_beir`` reads from ``qrels``, in a BEIR folder around it."""
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n')
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    return read_beir(folder, qrels=qrels.relative_to(folder))[2]


def test_every_decimal_spelling_reads_as_float_reads_it(
    tmp_path: Path, trec_run_parser: str
) -> None:
    run = tmp_path / "run.txt"
    run.write_text("".join(f"q Q0 d{i} 1 {w} t\n" for i, w in enumerate(DECIMALS)))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q 0 d{i} {w}\n" for i, w in enumerate(DECIMALS)))
    expected = {"q": {f"d{i}": float(w) for i, w in enumerate(DECIMALS)}}
    assert read_trec_run(run) == expected
    assert read_trec_qrels(qrels) == expected
    assert math.copysign(1.0, read_trec_run(run)["q"]["d3"]) == -1.0  # "-0" stays -0.0


def test_fractional_grades_stay_accepted(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 0.5\nq1 0 d2 2\n")
    assert read_trec_qrels(path) == {"q1": {"d1": 0.5, "d2": 2.0}}


# --- 5. hostile sizes and encodings -----------------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "1" + "0" * 5000
HOSTILE_JSON = {
    "deep nesting": (f'{{"_id": "x", "text": "t", "extra": {DEEP}}}', "JSON nested too deeply"),
    "huge integer": (f'{{"_id": "x", "text": "t", "n": {HUGE}}}', "invalid JSON number"),
    "lone surrogate": ('{"_id": "x", "text": "\\udc80"}', "a string holds a lone UTF-16"),
    "nan": ('{"_id": "x", "text": "t", "score": NaN}', "NaN is not a JSON number"),
    "infinity": ('{"_id": "x", "text": "t", "score": -Infinity}', "-Infinity is not a JSON"),
}


@pytest.mark.parametrize("file", ["corpus.jsonl", "queries.jsonl"])
@pytest.mark.parametrize("case", HOSTILE_JSON, ids=HOSTILE_JSON.keys())
def test_hostile_json_in_beir_files_is_refused_with_file_and_line(
    tmp_path: Path, file: str, case: str
) -> None:
    write_beir(tmp_path, {"d1": "one"}, {"q1": "q"}, {"q1": {"d1": 1.0}})
    line, problem = HOSTILE_JSON[case]
    with (tmp_path / file).open("a", encoding="utf-8") as out:
        out.write(line + "\n")
    with pytest.raises(DatasetFormatError) as caught:
        read_beir(tmp_path)
    assert_points_at(caught.value, tmp_path / file, 2)
    assert caught.value.problem.startswith(problem)


@pytest.mark.parametrize("case", HOSTILE_JSON, ids=HOSTILE_JSON.keys())
def test_hostile_json_in_rag_samples_is_refused_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    path = tmp_path / "samples.jsonl"
    line, problem = HOSTILE_JSON[case]
    path.write_text('{"response": "a", "reference": "a"}\n' + line + "\n", encoding="utf-8")
    assert main(["rag", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ef-eval: error: {path}:2: {problem}"), err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(
    ("content", "refused"),
    [
        ("x" * MAX_TREC_LINE, False),
        ("x" * MAX_TREC_LINE + "\r", False),  # a CRLF end is not counted
        ("x" * (MAX_TREC_LINE + 1), True),
        ("é" * (MAX_TREC_LINE // 2) + "x", True),  # counted in bytes, not characters
    ],
    ids=["at the limit", "at the limit, crlf", "one byte over", "over in bytes"],
)
def test_trec_lines_are_limited_to_one_mebibyte(
    tmp_path: Path, trec_run_parser: str, content: str, refused: bool
) -> None:
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_bytes(b"q Q0 d 1 1 t\n" + content.encode() + b"\n")
    qrels.write_bytes(b"q 0 d 1\n" + content.encode() + b"\n")
    for path, read in ((run, read_trec_run), (qrels, read_trec_qrels)):
        with pytest.raises(DatasetFormatError) as caught:
            read(path)
        assert_points_at(caught.value, path, 2)
        if refused:
            assert caught.value.problem == "the line is longer than 1 MiB"
        else:
            assert caught.value.problem == "found 1 columns"


def test_an_overlong_line_is_refused_without_being_held_whole(
    tmp_path: Path, trec_run_parser: str
) -> None:
    path = tmp_path / "run.txt"
    with path.open("wb") as out:
        out.write(b"q Q0 d 1 1 t\nq Q0 ")
        for _ in range(32):
            out.write(b"d" * MAX_TREC_LINE)
        out.write(b" 1 1 t\n")
    tracemalloc.start()
    try:
        with pytest.raises(DatasetFormatError, match="longer than 1 MiB") as caught:
            read_trec_run(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.line == 2
    assert peak < 12 * MAX_TREC_LINE  # a whole line would be 32 MiB


@pytest.mark.parametrize("reader", ["beir", "rag"])
def test_json_lines_are_limited_to_64_mebibytes(tmp_path: Path, reader: str) -> None:
    write_beir(tmp_path, {"d1": "one"}, {"q1": "q"}, {"q1": {"d1": 1.0}})
    path = tmp_path / "corpus.jsonl"
    with path.open("ab") as out:
        out.write(b'{"_id": "d2", "text": "')
        out.write(b"x" * (MAX_JSONL_LINE - 20))
        out.write(b'"}\n')
    with pytest.raises(DatasetFormatError) as caught:
        read_beir(tmp_path) if reader == "beir" else read_samples(str(path))
    assert_points_at(caught.value, path, 2)
    assert caught.value.problem == "the line is longer than 64 MiB"


def retrieval_report_data() -> dict[str, Any]:
    report = RetrievalEvalReport(
        {"ndcg@10": 0.5}, {"q1": {"ndcg@10": 0.5}}, 1, (10,), latency={"q1": 0.1}
    )
    return report.to_dict()


DAMAGED_REPORTS: dict[str, tuple[bytes, str]] = {
    "invalid utf-8": (b'{"per_query": {"q\xff": {}}}', "not JSON: not UTF-8"),
    "nan": (b'{"metrics": {"ndcg@10": NaN}, "per_query": {}}', "NaN is not a JSON number"),
    "overflow": (
        json.dumps(retrieval_report_data()).replace("0.1", "1e999").encode(),
        "latency['q1'] is inf; expected a finite number",
    ),
    "null": (
        json.dumps({**retrieval_report_data(), "metrics": {"ndcg@10": None}}).encode(),
        "metrics['ndcg@10'] is a JSON null; expected a number",
    ),
    "string number": (
        json.dumps({**retrieval_report_data(), "per_query": {"q1": {"ndcg@10": "0.5"}}}).encode(),
        "per_query['q1']['ndcg@10'] is a JSON string; expected a number",
    ),
    "string count": (
        json.dumps({**retrieval_report_data(), "n_queries": "1"}).encode(),
        "n_queries is a JSON string; expected an integer",
    ),
    "missing field": (json.dumps({"per_query": {}}).encode(), "missing field 'metrics'"),
    "unknown field": (
        json.dumps({**retrieval_report_data(), "extra": 1}).encode(),
        "unknown field 'extra'",
    ),
    "deep": (b'{"per_query": ' + b"[" * 100_000 + b"}", "not JSON: JSON nested too deeply"),
    "huge integer": (b'{"per_query": {}, "n": 1' + b"0" * 5000 + b"}", "invalid JSON number"),
    "syntax": (b'{\n "per_query": {},\n oops}', ":3: not JSON: Expecting property name"),
}


@pytest.mark.parametrize("case", DAMAGED_REPORTS, ids=DAMAGED_REPORTS.keys())
def test_compare_refuses_damaged_report_json_clearly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(retrieval_report_data()))
    bad = tmp_path / "bad.json"
    data, message = DAMAGED_REPORTS[case]
    bad.write_bytes(data)
    assert main(["compare", str(good), str(bad), "--baseline", "good"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"ef-eval: error: {bad}"), err
    assert message in err
    assert len(err.splitlines()) == 1
    assert "Traceback" not in err


def test_reports_rebuilt_from_dicts_accept_no_string_as_a_number() -> None:
    data = retrieval_report_data()
    assert RetrievalEvalReport.from_dict(data) == RetrievalEvalReport.from_dict(data)
    with pytest.raises(TypeError, match=r"metrics\['ndcg@10'\] is a JSON string"):
        RetrievalEvalReport.from_dict({**data, "metrics": {"ndcg@10": "0.5"}})
    with pytest.raises(TypeError, match=r"failures\[0\]\.attempts is a JSON string"):
        failure = {"query_id": "q", "error_type": "E", "message": "m", "attempts": "2"}
        RetrievalEvalReport.from_dict({**data, "failures": [failure]})
    with pytest.raises(TypeError, match=r"metrics\['exact_match'\] is a JSON boolean"):
        RagEvalReport.from_dict({"metrics": {"exact_match": True}, "coverage": {}, "n_samples": 1})
    with pytest.raises(ValueError, match=r"per_sample\[0\]\['token_f1'\] is nan"):
        RagEvalReport.from_dict(
            {"metrics": {}, "coverage": {}, "n_samples": 1, "per_sample": [{"token_f1": math.nan}]}
        )


def test_comparison_reports_check_every_field() -> None:
    from ef.evaluation._compare.compare import compare

    def scored(values: dict[str, float]) -> RetrievalEvalReport:
        per_query = {q: {"ndcg@10": v} for q, v in values.items()}
        return RetrievalEvalReport({}, per_query, len(values), (10,))

    report = compare(
        {"a": scored({"q1": 0.2, "q2": 0.4}), "b": scored({"q1": 0.6, "q2": 0.5})},
        baseline="a",
        tests=("randomization",),
    )
    data = report.to_dict()
    assert ComparisonReport.from_dict(data) == report
    row = {**data["comparisons"][0], "mean": "0.6"}
    with pytest.raises(TypeError, match=r"comparisons\[0\]\.mean is a JSON string"):
        ComparisonReport.from_dict({**data, "comparisons": [row]})
    with pytest.raises(ValueError, match="not a JSON number"):
        ComparisonReport.from_json(report.to_json().replace('"alpha": 0.05', '"alpha": NaN'))


def test_to_json_writes_strict_json_only() -> None:
    # A checked number cannot be NaN in a report (tests/test_report_checks.py); the manifest's
    # free-form JSON can.
    report = RetrievalEvalReport({}, {}, 0, (10,), manifest={"parameters": {"x": math.nan}})
    with pytest.raises(ValueError, match="not JSON compliant"):
        report.to_json()
    with pytest.raises(ValueError, match="not JSON compliant"):
        report.to_json(allow_nan=True)


# --- 6. qrels forms ---------------------------------------------------------------------------


def test_run_scores_against_beirs_own_qrels_tsv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ef-eval run`` once refused ``qrels/test.tsv`` from a BEIR download."""
    judgements = {"q1": {"d1": 1.0, "d2": 2.0}, "q2": {"d3": 1.0}}
    write_beir(tmp_path / "beir", {"d1": "", "d2": "", "d3": ""}, {"q1": "", "q2": ""}, judgements)
    (tmp_path / "beir" / "qrels").mkdir()
    (tmp_path / "beir" / "qrels.tsv").rename(tmp_path / "beir" / "qrels" / "test.tsv")
    write_trec_qrels(tmp_path / "qrels.txt", judgements)
    write_trec_run(tmp_path / "run.txt", {"q1": ["d2", "d9", "d1"], "q2": ["d9", "d3"]})
    outputs = []
    for qrels in (tmp_path / "beir" / "qrels" / "test.tsv", tmp_path / "qrels.txt"):
        assert main(["run", str(qrels), str(tmp_path / "run.txt"), "--format", "json"]) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    assert outputs[0] == outputs[1]
    assert outputs[0]["run.txt"]["n_queries"] == 2


@pytest.mark.parametrize(
    ("first_line", "problem"),
    [
        ("q1 d1 1 x y", "found 5 columns"),
        ("q1\td1\t1", "3 columns but no 'query-id corpus-id score' header"),
        ("query-id corpus-id score", "the 'query-id corpus-id score' header is not tab-separated"),
        ("q1 0 d1", "3 columns but no 'query-id corpus-id score' header"),
        ("q1 0", "found 2 columns"),
        ("q1", "found 1 columns"),
    ],
)
def test_qrels_of_neither_form_are_refused_naming_both(
    tmp_path: Path, first_line: str, problem: str
) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text(f"\n{first_line}\nq1 0 d1 1\n")
    for read in (read_trec_qrels, lambda p: beir_with_qrels(tmp_path, p)):
        with pytest.raises(DatasetFormatError) as caught:
            read(path)
        assert_points_at(caught.value, path, 2)
        assert caught.value.problem == problem
        assert "'query-id<TAB>corpus-id<TAB>score'" in caught.value.expected
        assert "'query-id iteration doc-id grade'" in caught.value.expected


def test_both_qrels_forms_read_the_same_judgements_everywhere(tmp_path: Path) -> None:
    judgements = {"q1": {"d 1": 1.0, "d2": 0.5}, "q2": {"d3": 0.0}}
    tsv = tmp_path / "qrels.tsv"
    tsv.write_text(TSV_HEADER + "q1\td 1\t1\nq1\td2\t0.5\r\nq2\td3\t0\n")
    trec = tmp_path / "qrels.txt"
    trec.write_text("q1 0 d1 1\nq1 0 d2 0.5\nq2 0 d3 0\n")
    assert read_trec_qrels(tsv) == judgements
    assert read_trec_qrels(trec) == {"q1": {"d1": 1.0, "d2": 0.5}, "q2": {"d3": 0.0}}
    assert beir_with_qrels(tmp_path, tsv) == judgements
