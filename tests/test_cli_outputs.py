"""What ``ef-eval`` writes: never over an input, all at once, no credentials, nothing lost.

Run through :func:`ef.evaluation.cli.main` in this process, or through the installed
``ef-eval`` script where standard streams or warnings are what is checked.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ef.evaluation import (
    DatasetFormatError,
    evaluate_retrieval,
    evaluate_run,
    read_run,
    read_trec_run,
    write_beir,
    write_trec_qrels,
    write_trec_run,
)
from ef.evaluation.cli import main
from ef.evaluation.cli._common import CliError, Table, render_text
from ef.source_manager import ingest

EF_EVAL = shutil.which("ef-eval", path=str(Path(sys.executable).parent))
CORPUS = {
    "d1": "Sort the items of a list in place.",
    "d2": "Open a file and return a stream.",
    "d3": "Return a new sorted list from an iterable.",
    "d4": "Remove a directory tree recursively.",
    "d5": "Sort a list of files by name.",
}
QUERIES = {"q1": "sort a list", "q2": "open a file", "q3": "delete a folder", "q4": "list files"}
QRELS = {"q1": {"d1": 2.0, "d3": 1.0}, "q2": {"d2": 1.0}, "q3": {"d4": 1.0}, "q4": {"d5": 1.0}}
SECRET = "S3CRETPW"


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny"
    write_beir(folder, CORPUS, QUERIES, QRELS)
    return folder


@pytest.fixture
def run_files(tmp_path: Path) -> tuple[Path, Path]:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    write_trec_qrels(qrels, QRELS)
    write_trec_run(run, {"q1": ["d1", "d3"], "q2": ["d5", "d2"], "q3": ["d2"], "q4": ["d5"]})
    return qrels, run


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def script(*argv: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    assert EF_EVAL is not None, "the ef-eval script is not installed: pip install -e ."
    env = {**os.environ, "EF_EVALUATION_PLUGINS": ""}
    return subprocess.run(
        [EF_EVAL, *map(str, argv)], capture_output=True, text=True, cwd=cwd, env=env, timeout=120
    )


# -o is atomic


def test_a_full_disk_keeps_the_old_report_and_names_it(
    capsys: pytest.CaptureFixture[str], small_disk: Path, run_files: tuple[Path, Path]
) -> None:
    report = small_disk / "report.json"
    report.write_text('{"old": "report"}\n')
    _fill(small_disk / "filler")
    code, out, err = cli(capsys, "run", *run_files, "--format", "json", "--per-query", "-o", report)
    assert code == 1 and out == ""
    assert err == f"ef-eval: error: cannot write {report}: No space left on device\n"
    assert report.read_text() == '{"old": "report"}\n'
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "report.json"]


def _fill(path: Path) -> None:
    """Write ``path`` until the disk is full (through ``os.write``, where ENOSPC may be
    injected)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        for chunk in (b"x" * 4096, b"x"):
            try:
                while True:
                    os.write(fd, chunk)
            except OSError as error:
                assert error.errno == errno.ENOSPC
    finally:
        os.close(fd)


def test_output_to_a_fifo_is_streamed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, run_files: tuple[Path, Path]
) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    code, out, _ = cli(capsys, "run", *run_files, "--format", "csv", "-o", fifo)
    reader.join(timeout=60)
    assert code == 0 and out == ""
    assert received[0].startswith("run,ndcg@1,")
    assert fifo.is_fifo()


def test_output_to_dev_stdout_keeps_an_appending_redirection(
    tmp_path: Path, run_files: tuple[Path, Path]
) -> None:
    out = tmp_path / "log.txt"
    out.write_text("earlier\n")
    command = f'"{EF_EVAL}" run "{run_files[0]}" "{run_files[1]}" --format csv -o /dev/stdout'
    subprocess.run(f"{command} >> '{out}'", shell=True, check=True, env=os.environ)
    text = out.read_text()
    assert text.startswith("earlier\nrun,ndcg@1,")


# an output equal to an input


def test_an_output_that_is_an_input_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, run_files: tuple[Path, Path]
) -> None:
    qrels, run = run_files
    link = tmp_path / "link.txt"
    link.symlink_to(run)
    before = run.read_bytes()
    for target in (run, link, tmp_path / "." / "run.txt"):
        code, out, err = cli(capsys, "run", qrels, run, "-o", target)
        assert code == 2 and out == ""
        assert err == (
            f"ef-eval: error: --output {target} would replace the input {run}; "
            "write to another file\n"
        )
    assert run.read_bytes() == before


def test_compare_and_rag_refuse_to_replace_their_inputs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, run_files: tuple[Path, Path]
) -> None:
    qrels, run = run_files
    second = tmp_path / "second.txt"
    write_trec_run(second, {"q1": ["d3", "d1"], "q2": ["d2"], "q3": ["d1"], "q4": ["d5"]})
    code, _, err = cli(
        capsys, "compare", qrels, run, second, "--baseline", "run.txt", "--permutations", "10",
        "--resamples", "10", "-o", second,
    )  # fmt: skip
    assert code == 2 and "--output" in err and f"would replace the input {second}" in err
    samples = tmp_path / "samples.jsonl"
    samples.write_text('{"user_input": "q", "response": "a", "retrieved_contexts": []}\n')
    code, _, err = cli(capsys, "rag", samples, "-o", samples)
    assert code == 2 and f"would replace the input {samples}" in err
    assert samples.read_text().startswith('{"user_input"')


def test_fuse_refuses_to_replace_its_own_input(
    tmp_path: Path, run_files: tuple[Path, Path]
) -> None:
    qrels, run = run_files
    other = tmp_path / "other.txt"
    write_trec_run(other, {"q1": ["d3", "d1"]})
    before = run.read_bytes(), qrels.read_bytes()
    for argv, clash in (
        (["-o", run], run),
        (["-o", tmp_path / "." / "other.txt"], other),
        (["--optimize", "--qrels", qrels, "-o", qrels], qrels),
    ):
        result = script("fuse", run, other, *argv)
        assert result.returncode == 2 and result.stdout == ""
        assert f"would replace the input {clash}; write to another file" in result.stderr
    assert (run.read_bytes(), qrels.read_bytes()) == before


def test_html_pages_may_not_replace_an_input_either(
    tmp_path: Path, run_files: tuple[Path, Path]
) -> None:
    qrels, run = run_files
    page_named_qrels = tmp_path / "qrels.html"
    page_named_qrels.write_bytes(qrels.read_bytes())
    second = tmp_path / "second.txt"
    write_trec_run(second, {"q1": ["d3", "d1"]})
    samples = tmp_path / "samples.html"
    samples.write_text('{"user_input": "q", "response": "a", "retrieved_contexts": []}\n')
    compare = ["compare", page_named_qrels, run, second, "--baseline", "run.txt"]
    for argv, clash in (
        (["run", page_named_qrels, run, "--html", page_named_qrels], page_named_qrels),
        ([*compare, "--html", page_named_qrels], page_named_qrels),
        (["rag", samples, "--html", samples], samples),
        (["run", qrels, run, "--html", tmp_path / "p.html", "-o", tmp_path / "p.html"], None),
    ):
        result = script(*argv)
        assert result.returncode == 2 and result.stdout == "", result.stderr
        if clash is None:
            assert "--output and --html name the same file" in result.stderr
        else:
            assert f"--html {clash} would replace the input {clash}" in result.stderr
    assert page_named_qrels.read_bytes() == qrels.read_bytes()
    assert samples.read_text().startswith('{"user_input"')


def test_a_library_writer_refuses_to_replace_its_input(tmp_path: Path) -> None:
    from ef.evaluation import journal_to_trec_run

    journal = tmp_path / "journal.jsonl"
    evaluate_retrieval(lambda query, limit: ["d1"], QRELS, QUERIES, journal=journal)
    before = journal.read_bytes()
    with pytest.raises(ValueError, match=r"would replace the input .*journal\.jsonl"):
        journal_to_trec_run(journal, tmp_path / "." / "journal.jsonl")
    assert journal.read_bytes() == before


def test_retrieval_refuses_clashing_outputs_before_retrieving(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dataset: Path
) -> None:
    journal = tmp_path / "journal.jsonl"
    cases = [
        (["-o", dataset / "corpus.jsonl"], f"--output {dataset / 'corpus.jsonl'} would replace"),
        (["--save-run", dataset / "queries.jsonl"], "--save-run"),
        (["--save-run", journal, "--journal", journal], "--save-run and --journal name the same"),
        (["-o", tmp_path / "r.txt", "--save-run", tmp_path / "r.txt"], "--output and --save-run"),
        (["--journal", dataset / "qrels.tsv"], "--journal"),
    ]
    for argv, message in cases:
        code, out, err = cli(capsys, "retrieval", dataset, "--retriever", "bm25", *argv)
        assert code == 2 and out == "", err
        assert message in err
    assert not journal.exists()
    assert sorted(p.name for p in dataset.iterdir()) == [
        "corpus.jsonl",
        "qrels.tsv",
        "queries.jsonl",
    ]


# --save-run


def test_save_run_keeps_the_bm25_scores(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dataset: Path
) -> None:
    run_file = tmp_path / "bm25.run"
    code, out, _ = cli(
        capsys, "retrieval", dataset, "--retriever", "bm25", "--save-run", run_file,
        "--format", "json", "--limit", "10",
    )  # fmt: skip
    assert code == 0
    index = ingest(CORPUS)
    for line in run_file.read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        hits = {h.segment.source_id: h.score for h in index.search(QUERIES[qid], limit=10)}
        assert float(score) == hits[doc]  # the retriever's own score, not n - rank
    # Read back in trec_eval's order, the saved run is exactly the evaluated ranking.
    report = json.loads(out)
    # (A query BM25 found nothing for has no line in the file: it scores 0 there too.)
    saved = evaluate_run(read_trec_run(run_file), QRELS, missing_queries="zero")
    assert saved.per_query == report["per_query"]


@pytest.mark.parametrize("name", ["bm25.jsonl", "bm25.json.gz", "bm25.parquet"])
def test_save_run_is_written_in_the_format_its_name_says(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dataset: Path, name: str
) -> None:
    if name.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    trec, other = tmp_path / "bm25.run", tmp_path / name
    for path in (trec, other):
        code, _, err = cli(
            capsys, "retrieval", dataset, "--retriever", "bm25", "--save-run", path,
            "--limit", "10", "--html", tmp_path / "page.html",
        )  # fmt: skip
        assert code == 0, err
    assert read_run(other) == read_trec_run(trec)
    with pytest.raises(DatasetFormatError):
        read_run(other, format="trec")  # no TREC text under another name


def test_the_built_in_index_returns_ties_in_trec_eval_order() -> None:
    index = ingest({"a": "red apple", "c": "red apple", "b": "red apple", "z": "green"})
    hits = index.search("red apple")
    assert [hit.segment.source_id for hit in hits] == ["c", "b", "a"]
    assert len({hit.score for hit in hits}) == 1


def test_save_run_into_a_missing_folder_is_refused_before_retrieving(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dataset: Path
) -> None:
    target = tmp_path / "no-such-folder" / "run.txt"
    code, out, err = cli(capsys, "retrieval", dataset, "--retriever", "bm25", "--save-run", target)
    assert code == 1 and out == ""
    assert err == (
        f"ef-eval: error: cannot write {target}: the folder {target.parent} does not exist\n"
    )


RETRIEVERS = """
import os, shutil
from pathlib import Path

ANSWERS = {"sort a list": ["d1", "d3"], "open a file": ["d2"], "delete a folder": ["d4"],
           "list files": ["d5", "d1"]}
CALLS = Path(os.environ["CALLS"])

def counted(query):
    with CALLS.open("a") as calls:
        calls.write(query + "\\n")

def removes_the_folder(query, *, limit=10):
    counted(query)
    shutil.rmtree(os.environ["DOOMED"], ignore_errors=True)
    return ANSWERS[query][:limit]

def spaced(query, *, limit=10):
    counted(query)
    return ["d 1" if d == "d1" else d for d in ANSWERS[query]][:limit]

def flaky(query, *, limit=10):
    counted(query)
    if query != "sort a list":
        raise ConnectionError(f"http://alice:S3CRETPW@search/ is down for {query!r}")
    return ANSWERS[query][:limit]
"""


@pytest.fixture
def retrievers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A module of retrievers in the current directory; the file CALLS lists their calls."""
    name = f"h3_retrievers_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(RETRIEVERS)
    calls = tmp_path / "calls.txt"
    monkeypatch.setenv("CALLS", str(calls))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("H3_MODULE", name)
    yield calls
    sys.modules.pop(name, None)


def test_a_run_file_that_cannot_be_written_keeps_the_report_and_the_journal(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    dataset: Path,
    retrievers: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    doomed = tmp_path / "doomed"
    doomed.mkdir()
    monkeypatch.setenv("DOOMED", str(doomed))  # the retriever removes it while retrieving
    target = doomed / "run.txt"
    module = os.environ["H3_MODULE"]
    code, out, err = cli(
        capsys, "retrieval", dataset, "--retriever", f"{module}:removes_the_folder",
        "--save-run", target, "--format", "json",
    )  # fmt: skip
    assert code == 1
    assert json.loads(out)["n_queries"] == 4  # the report was written first
    (line,) = err.splitlines()
    assert line.startswith(
        f"ef-eval: error: the report was written, but not the run file {target}: "
        "No such file or directory; the rankings retrieved so far are kept in "
    )
    assert ".tmp" not in line
    journal = Path(line.split("are kept in ", 1)[1].split(":", 1)[0])
    assert journal.is_file()
    # Resuming from the journal writes the run without retrieving anything again.
    retrieved = retrievers.read_text().splitlines()
    assert len(retrieved) == 4
    good = tmp_path / "run.txt"
    code, _, err = cli(
        capsys, "retrieval", dataset, "--retriever", f"{module}:removes_the_folder",
        "--journal", journal, "--save-run", good, "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    assert retrievers.read_text().splitlines() == retrieved
    assert read_trec_run(good)["q1"] == {"d1": 2.0, "d3": 1.0}
    shutil.rmtree(journal.parent)


def test_a_doc_id_with_a_space_names_the_query_and_keeps_the_journal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dataset: Path, retrievers: Path
) -> None:
    target = tmp_path / "run.txt"
    module = os.environ["H3_MODULE"]
    code, out, err = cli(
        capsys, "retrieval", dataset, "--retriever", f"{module}:spaced", "--save-run", target,
    )  # fmt: skip
    assert code == 1
    assert out.startswith(f"{module}:spaced on tiny: 5 documents, 4 queries")
    assert f"not the run file {target}: query 'q1': doc id 'd 1' cannot be written" in err
    journal = Path(err.split("are kept in ", 1)[1].split(":", 1)[0])
    assert journal.is_file() and not target.exists()
    shutil.rmtree(journal.parent)


def test_an_evaluation_that_stops_keeps_what_it_retrieved(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dataset: Path, retrievers: Path
) -> None:
    module = os.environ["H3_MODULE"]
    argv = ["retrieval", dataset, "--retriever", f"{module}:flaky", "--max-concurrency", "1"]
    code, out, err = cli(capsys, *argv, "--save-run", tmp_path / "run.txt")
    assert code == 1 and out == ""
    assert "q2" in err and "the rankings retrieved so far are kept in " in err
    journal = Path(err.split("are kept in ", 1)[1].split(":", 1)[0])
    assert len(journal.read_text().splitlines()) == 2  # the header and q1
    assert retrievers.read_text().splitlines() == ["sort a list", "open a file"]
    code, _, _ = cli(capsys, *argv, "--journal", journal)
    assert code == 1  # q2 still fails, but q1 is not retrieved again
    assert retrievers.read_text().splitlines()[2:] == ["open a file"]
    shutil.rmtree(journal.parent)


def test_a_temporary_journal_is_removed_once_the_run_is_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, dataset: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    code, _, _ = cli(
        capsys, "retrieval", dataset, "--retriever", "bm25", "--save-run", tmp_path / "run.txt"
    )
    assert code == 0
    assert list((tmp_path / "tmp").iterdir()) == []


# credentials


class _Search(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        answers = {"sort a list": ["d1", "d3"], "open a file": ["d2"]}.get(body["query"], [])
        payload = json.dumps({"results": [{"id": doc} for doc in answers]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def secret_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Search)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://alice:{SECRET}@127.0.0.1:{server.server_address[1]}/search"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.mark.parametrize("output_format", ["table", "json", "markdown", "csv"])
@pytest.mark.parametrize("per_query", [False, True])
def test_url_credentials_never_reach_the_output(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    dataset: Path,
    secret_url: str,
    output_format: str,
    per_query: bool,
) -> None:
    run_file = tmp_path / "run.txt"
    argv = ["retrieval", dataset, "--retriever", secret_url, "--format", output_format]
    argv += ["--save-run", run_file] + (["--per-query"] if per_query else [])
    code, out, err = cli(capsys, *argv)
    assert code == 0, err
    shown = secret_url.replace(SECRET, "***")
    assert output_format == "json" or shown in out
    assert SECRET not in out + err + run_file.read_text()
    tags = {line.split()[5] for line in run_file.read_text().splitlines()}
    assert tags == {shown[:40]}


def test_a_bad_retriever_url_is_shown_without_its_password(
    capsys: pytest.CaptureFixture[str], dataset: Path
) -> None:
    code, _, err = cli(capsys, "retrieval", dataset, "--retriever", f"ftp://bob:{SECRET}@host/")
    assert code == 2
    assert "unknown retriever 'ftp://bob:***@host/'" in err and SECRET not in err


# --on-error record lists the failed queries


def test_failed_queries_are_listed_in_command_line_terms(
    tmp_path: Path, dataset: Path, retrievers: Path
) -> None:
    module = os.environ["H3_MODULE"]
    result = script(
        "retrieval", dataset, "--retriever", f"{module}:flaky", "--on-error", "record",
        "--k", "1", "--metrics", "ndcg", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        "ef-eval: warning: 3 of 4 queries failed and are left out of the means:",
        "  q2: ConnectionError: http://alice:***@search/ is down for 'open a file' (1 attempt)",
        "  q3: ConnectionError: http://alice:***@search/ is down for 'delete a folder' (1 attempt)",
        "  q4: ConnectionError: http://alice:***@search/ is down for 'list files' (1 attempt)",
        '  --format json lists every failure (under "failures")',
    ]
    assert "report.failures" not in result.stderr
    as_json = script(
        "retrieval", dataset, "--retriever", f"{module}:flaky", "--on-error", "record",
        "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert as_json.stderr.splitlines()[-1] == (
        '  the JSON report lists every failure under "failures"'
    )
    failures = json.loads(as_json.stdout)["failures"]
    assert [f["query_id"] for f in failures] == ["q2", "q3", "q4"]
    assert SECRET not in as_json.stdout


def test_only_the_first_failures_are_listed(capsys: pytest.CaptureFixture[str]) -> None:
    import warnings

    from ef.evaluation import IncompleteEvaluationWarning, RetrievalEvalReport
    from ef.evaluation._report.reports import QueryFailure
    from ef.evaluation.cli._retrieval_outputs import warn_failures

    failures = [QueryFailure(f"q{i}", "TimeoutError", "no answer\nat all", 2) for i in range(8)]
    report = RetrievalEvalReport({}, {}, 2, (1,), failures=failures)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_failures(report, output_format="table")
    (warning,) = caught
    assert warning.category is IncompleteEvaluationWarning
    lines = str(warning.message).splitlines()
    assert lines[0] == "8 of 10 queries failed and are left out of the means:"
    assert lines[1] == "  q0: TimeoutError: no answer at all (2 attempts)"
    assert lines[6] == "  … and 3 more"


# strict JSON


def test_json_output_refuses_a_non_finite_value_naming_where() -> None:
    table = Table("t", ["run"], [["a"]])
    with pytest.raises(CliError, match=r'\["metrics"\]\["ndcg@10"\] is nan; JSON has no NaN'):
        render_text(table, {"metrics": {"recall@1": 1.0, "ndcg@10": float("nan")}}, "json")
    with pytest.raises(CliError, match=r'\["latency"\]\[1\] is inf'):
        render_text(table, {"latency": [0.5, float("inf")]}, "json")


def test_a_bad_http_retriever_set_up_is_a_usage_error_that_hides_the_password(capsys):
    from ef.evaluation.cli import main

    code = main(
        [
            "retrieval",
            "builtin:stdlib-docs",
            "--retriever",
            "http://alice:S3CRETPW@127.0.0.1:9/search",
            "--http-header",
            "Authorization: Bearer T0KEN-VALUE",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "--retriever http://alice:***@127.0.0.1:9/search" in err
    assert "S3CRETPW" not in err and "T0KEN-VALUE" not in err


def test_a_password_in_a_retrievers_own_error_never_reaches_the_terminal(tmp_path, capsys):
    from ef.evaluation.cli import main

    module = tmp_path / "leaky_retriever.py"
    module.write_text(
        "def search(query, *, limit=10):\n"
        "    raise RuntimeError('cannot reach https://bob:HUNTER22@db.internal/q')\n"
    )
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        code = main(["retrieval", "builtin:stdlib-docs", "--retriever", "leaky_retriever:search"])
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("leaky_retriever", None)
    err = capsys.readouterr().err
    assert code == 1
    assert "https://bob:***@db.internal/q" in err
    assert "HUNTER22" not in err


# JSON written as it is encoded


def test_json_output_is_written_as_it_is_encoded_and_equals_the_whole_text(
    tmp_path: Path,
) -> None:
    from ef.evaluation.cli._output import json_text, redact, write_json

    data = {"run": {"per_query": {f"q{i}": {"ndcg@10": i / 7} for i in range(20_000)}}}
    assert redact(data) is data  # nothing to hide: not copied
    out = tmp_path / "report.json"
    write_json(str(out), data)
    assert out.read_text(encoding="utf-8") == json_text(data)
    data["run"]["per_query"]["q19999"]["ndcg@10"] = float("nan")
    with pytest.raises(ValueError, match=r'\["q19999"\]\["ndcg@10"\] is nan'):
        write_json(str(out), data)
    assert out.read_text(encoding="utf-8").startswith("{\n")  # the old file is kept
    hidden = redact({"a": ["x", "http://u:pw@h/"]})
    assert hidden == {"a": ["x", "http://u:***@h/"]}


def test_a_nan_is_refused_before_anything_reaches_standard_output() -> None:
    code = (
        "import sys; from ef.evaluation.cli._output import write_json\n"
        "try:\n    write_json('-', {'a': [1.0] * 5000 + [float('inf')]})\n"
        "except ValueError as e:\n    print('refused:', e, file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout == ""
    assert 'refused: cannot write JSON: ["a"][5000] is inf' in result.stderr


def test_the_json_of_a_report_holds_its_values_once(run_files: tuple[Path, Path]) -> None:
    from ef.evaluation.cli._output import report_data

    _, run = run_files
    report = evaluate_run(run, QRELS)
    data = report_data(report)
    assert data["per_query"] is report.per_query  # not a copy
    assert json.loads(json.dumps(data)) == report.to_dict()
    assert list(data) == list(report.to_dict())
