"""Tests of ``ef-eval retrieval DATASET --retriever SPEC``."""

from __future__ import annotations

import io
import json
import pathlib
import re
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from rich.console import Console

from ef.evaluation import (
    IncompleteEvaluationWarning,
    MissingQueriesWarning,
    Progress,
    evaluate_retrieval,
    evaluate_run,
    read_beir,
    read_trec_run,
    write_beir,
)
from ef.evaluation._io.builtin_datasets import builtin_dataset_path
from ef.evaluation._running.driver import queries_shown as progress_bar
from ef.evaluation.cli import demo, retrieval
from ef.evaluation.cli._common import EXIT_USAGE, ArgumentParser, CliError
from ef.source_manager import ingest

CORPUS = {
    "d1": "Sort the items of a list in place.",
    "d2": "Open a file and return a stream.",
    "d3": "Return a new sorted list from an iterable.",
    "d4": "Remove a directory tree recursively.",
}
QUERIES = {"q1": "sort a list", "q2": "open a file", "q3": "delete a folder"}
QRELS = {"q1": {"d1": 2.0, "d3": 1.0}, "q2": {"d2": 1.0}, "q3": {"d4": 1.0, "d2": 0.0}}


@pytest.fixture
def dataset(tmp_path: pathlib.Path) -> str:
    folder = tmp_path / "tiny"
    write_beir(folder, CORPUS, QUERIES, QRELS)
    return str(folder)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Parse ``ef-eval retrieval ARGV`` with the subcommand's own parser and run it."""
    parser = ArgumentParser(prog="ef-eval")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=ArgumentParser)
    retrieval.add_parser(subparsers)
    args = parser.parse_args(["retrieval", *argv])
    code = args.handler(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_bm25_on_the_bundled_dataset_matches_the_library(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        capsys, "builtin:stdlib-docs", "--retriever", "bm25", "--k", "1,10", "--format", "json"
    )
    assert code == 0
    assert err == ""  # not a terminal: no progress bar, no spinner
    corpus, queries, qrels = read_beir(builtin_dataset_path("stdlib-docs"))
    # The index is asked for documents: the library and the command rank the same ten.
    expected = evaluate_retrieval(ingest(corpus), qrels, queries, k_values=(1, 10))
    assert json.loads(out)["metrics"] == expected.metrics
    assert 0 < expected.metrics["ndcg@10"] < 1


def test_the_table_names_the_retriever_and_the_dataset(
    capsys: pytest.CaptureFixture[str], dataset: str
) -> None:
    code, out, _ = run(capsys, dataset, "--retriever", "bm25", "--k", "1", "--metrics", "ndcg")
    assert code == 0
    assert out.startswith("bm25 on tiny: 4 documents, 3 queries\n")
    assert "ndcg@1" in out


def test_save_run_writes_the_evaluated_rankings(
    capsys: pytest.CaptureFixture[str], dataset: str, tmp_path: pathlib.Path
) -> None:
    run_file = tmp_path / "bm25.run"
    code, out, _ = run(
        capsys, dataset, "--retriever", "bm25", "--save-run", str(run_file), "--format", "json"
    )
    assert code == 0
    report = json.loads(out)
    # BM25 finds nothing for q3: the file has no line for it, and scoring it again says so.
    with pytest.warns(MissingQueriesWarning, match="1 of 3 judged queries are not in the run"):
        rescored = evaluate_run(read_trec_run(run_file), QRELS)
    assert rescored.metrics == pytest.approx(report["metrics"])
    assert all(line.split()[5] == "bm25" for line in run_file.read_text().splitlines())


def test_a_journal_resumes_and_feeds_the_run_file(
    capsys: pytest.CaptureFixture[str], dataset: str, tmp_path: pathlib.Path
) -> None:
    journal = tmp_path / "journal.jsonl"
    argv = [dataset, "--retriever", "bm25", "--journal", str(journal), "--format", "json"]
    first = json.loads(run(capsys, *argv)[1])
    second = json.loads(run(capsys, *argv, "--save-run", str(tmp_path / "run.txt"))[1])
    assert journal.is_file()
    assert second["metrics"] == first["metrics"]
    with pytest.warns(MissingQueriesWarning, match="1 of 3 judged queries are not in the run"):
        rescored = evaluate_run(read_trec_run(tmp_path / "run.txt"), QRELS)
    assert rescored.metrics == pytest.approx(first["metrics"])


# module:attr


@pytest.fixture
def user_module(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A module in the current directory, as a user's own retriever code would be."""
    name = f"my_retrievers_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(
        "ANSWERS = {'sort a list': ['d3', 'd1'], 'open a file': ['d2'],\n"
        "           'delete a folder': ['d1', 'd4']}\n"
        "\n"
        "def function(query, *, limit=10):\n"
        "    return ANSWERS[query][:limit]\n"
        "\n"
        "class Index:\n"
        "    def __init__(self, corpus):\n"
        "        self.ids = sorted(corpus)\n"
        "    def search(self, query, *, limit=10):\n"
        "        return ANSWERS[query][:limit]\n"
        "\n"
        "def flaky(query):\n"
        "    if query == 'open a file':\n"
        "        raise OSError('search service down')\n"
        "    return ANSWERS[query]\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    yield name
    sys.modules.pop(name, None)


def _answers(query: str, *, limit: int = 10) -> list[str]:
    return {"sort a list": ["d3", "d1"], "open a file": ["d2"], "delete a folder": ["d1", "d4"]}[
        query
    ][:limit]


@pytest.mark.parametrize("attr", ["function", "Index"])
def test_module_attr_is_imported_from_the_current_directory(
    capsys: pytest.CaptureFixture[str], dataset: str, user_module: str, attr: str
) -> None:
    code, out, _ = run(capsys, dataset, "--retriever", f"{user_module}:{attr}", "--format", "json")
    assert code == 0
    expected = evaluate_retrieval(_answers, QRELS, QUERIES)
    assert json.loads(out)["metrics"] == expected.metrics


def test_a_class_is_instantiated_with_the_corpus(user_module: str) -> None:
    index = retrieval.resolve_retriever(f"{user_module}:Index", CORPUS)
    assert index.ids == sorted(CORPUS)


def test_failures_are_recorded_with_on_error_record(
    capsys: pytest.CaptureFixture[str], dataset: str, user_module: str
) -> None:
    with pytest.warns(IncompleteEvaluationWarning):
        code, out, _ = run(
            capsys,
            dataset,
            "--retriever",
            f"{user_module}:flaky",
            "--on-error",
            "record",
            "--retries",
            "1",
            "--format",
            "json",
        )
    assert code == 0
    failures = json.loads(out)["failures"]
    assert [(f["query_id"], f["attempts"]) for f in failures] == [("q2", 2)]


def test_on_error_raise_stops_at_the_failed_query(
    capsys: pytest.CaptureFixture[str], dataset: str, user_module: str
) -> None:
    with pytest.raises(Exception, match="q2") as caught:
        run(capsys, dataset, "--retriever", f"{user_module}:flaky")
    assert "search service down" in repr(caught.value.__cause__)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("tfidf", "unknown retriever 'tfidf'; expected one of: bm25; st:MODEL"),
        ("ftp://example.org", "unknown retriever 'ftp://example.org'"),
        ("no_such_module_here:search", "cannot import 'no_such_module_here'"),
        ("ef.evaluation:no_such_thing", "'ef.evaluation' has no attribute 'no_such_thing'"),
    ],
)
def test_a_bad_retriever_is_refused(spec: str, message: str) -> None:
    with pytest.raises(CliError, match=message):
        retrieval.resolve_retriever(spec, CORPUS)


def test_a_bad_spec_is_a_usage_error(capsys: pytest.CaptureFixture[str], dataset: str) -> None:
    with pytest.raises(CliError) as caught:
        run(capsys, dataset, "--retriever", "tfidf")
    assert caught.value.exit_code == EXIT_USAGE
    with pytest.raises(CliError, match=r"--overlap \(8\) must be smaller") as caught:
        run(capsys, dataset, "--retriever", "bm25", "--segment-size", "8", "--overlap", "8")
    assert caught.value.exit_code == EXIT_USAGE


@pytest.mark.parametrize(
    "argv",
    [["--timeout", "0"], ["--max-concurrency", "0"], ["--retries", "-1"], ["--limit", "x"]],
)
def test_bad_runner_options_are_usage_errors(
    capsys: pytest.CaptureFixture[str], dataset: str, argv: list[str]
) -> None:
    with pytest.raises(CliError) as caught:
        run(capsys, dataset, "--retriever", "bm25", *argv)
    assert caught.value.exit_code == EXIT_USAGE


# a URL


class _SearchHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert self.headers["X-Api-Key"] == "secret"
        results = [{"id": doc} for doc in _answers(body["query"], limit=body["limit"])]
        payload = json.dumps({"results": results}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def search_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SearchHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/search"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def test_a_url_is_queried_over_http(
    capsys: pytest.CaptureFixture[str], dataset: str, search_url: str
) -> None:
    code, out, _ = run(
        capsys,
        dataset,
        "--retriever",
        search_url,
        "--http-header",
        "X-Api-Key: secret",
        "--max-concurrency",
        "2",
        "--timeout",
        "10",
        "--format",
        "json",
    )
    assert code == 0
    assert json.loads(out)["metrics"] == evaluate_retrieval(_answers, QRELS, QUERIES).metrics


# the progress bar


def test_the_progress_bar_shows_rate_failures_and_the_running_metric() -> None:
    stream = io.StringIO()
    console = Console(file=stream, force_terminal=True, width=120, color_system=None)
    with progress_bar(show=True, console=console) as update:
        assert update is not None
        update(Progress(3, 10, 1, 0.5, "ndcg@10", 1.5))
    text = stream.getvalue()
    for part in ("3/10", "2.0 q/s", "1 failed", "ndcg@10 0.5000"):
        assert part in text


def test_no_progress_bar_when_not_shown() -> None:
    with progress_bar(show=False) as update:
        assert update is None


# the demo


def run_demo(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    parser = ArgumentParser(prog="ef-eval")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=ArgumentParser)
    demo.add_parser(subparsers)
    args = parser.parse_args(["demo", *argv])
    assert args.handler(args) == 0
    return capsys.readouterr().out


def test_the_demo_is_bm25_on_the_bundled_dataset(capsys: pytest.CaptureFixture[str]) -> None:
    report = json.loads(run_demo(capsys, "--format", "json"))
    corpus, queries, qrels = read_beir(builtin_dataset_path("stdlib-docs"))
    expected = evaluate_retrieval(
        ingest(corpus, embedder="bm25"), qrels, queries, k_values=demo.DEMO_K_VALUES, limit=30
    )
    assert report["metrics"] == expected.metrics
    assert report["n_queries"] == len(queries)
    table = run_demo(capsys, "--metrics", "ndcg", "--k", "10")
    assert table.startswith("BM25 on builtin:stdlib-docs: 1,098 documents, 40 queries\n")


def test_the_demo_names_the_extra_it_needs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "bm25s", None)
    with pytest.raises(CliError, match=re.escape("pip install 'ef-evaluation[bm25]'")):
        run_demo(capsys)
