"""Progress while indexing (and evaluating): a callback, a bar on a terminal, plain lines to
standard error elsewhere — checked in a real subprocess whose output is a pipe."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ef._progress import ProgressDisplay
from ef.source_manager import IndexProgress, ingest

CORPUS = {f"d{i}": f"document {i} about topic {i % 7}" for i in range(50)}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_come_every_interval_with_rate_and_time_left() -> None:
    clock, out = Clock(), io.StringIO()
    display = ProgressDisplay("encoding", unit="documents", stream=out, interval=10, clock=clock)
    for done in range(1, 100):
        clock.now += 0.5  # two documents a second
        display.update(done, 200)
    display.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "encoding: 20/200 documents (10%), 2.0 documents/s, 1m30s left"
    assert len(lines) == 5  # at 10, 20, 30 and 40 s, then the closing line
    assert lines[-1] == "encoding: 99/200 documents in 50s (2.0 documents/s)"


def test_quick_work_prints_nothing_and_a_bar_draws_on_a_terminal() -> None:
    out = io.StringIO()
    with ProgressDisplay("indexing", stream=out, interval=10) as display:
        display.update(5, 5)
    assert out.getvalue() == ""
    terminal = io.StringIO()
    with ProgressDisplay("indexing", unit="segments", stream=terminal, terminal=True) as bar:
        bar.update(3, 4)
    assert "indexing" in terminal.getvalue() and "3/4" in terminal.getvalue()


def test_the_interval_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EF_PROGRESS_INTERVAL", "0")
    out = io.StringIO()
    with ProgressDisplay("x", stream=out) as display:
        display.update(1, 2)
    assert out.getvalue().startswith("x: 1/2 items (50%)")
    monkeypatch.setenv("EF_PROGRESS_INTERVAL", "soon")
    with pytest.raises(ValueError, match="EF_PROGRESS_INTERVAL must be a number of seconds"):
        ProgressDisplay("x", stream=out)


def test_a_callback_sees_every_stage_to_its_end() -> None:
    events: list[IndexProgress] = []
    ingest(CORPUS, progress=events.append)
    assert [e.stage for e in events] == ["tokenizing", "tokenizing", "indexing", "indexing"]
    assert [(e.done, e.total, e.unit) for e in events[-2:]] == [
        (0, 50, "segments"),
        (50, 50, "segments"),
    ]
    assert all(e.elapsed >= 0 for e in events)
    with pytest.raises(TypeError, match="progress must be True, False, None or a callable"):
        ingest(CORPUS, progress="yes")  # type: ignore[arg-type]


def test_encoding_reports_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    events: list[IndexProgress] = []
    ingest(CORPUS, embedder="st:all-MiniLM-L6-v2", batch_size=4, progress=events.append)
    done = [e.done for e in events if e.stage == "encoding"]
    assert done == [*range(0, 50, 4), 50]  # a report after every batch


def run_python(code: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", **env}
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(Path(__file__).resolve().parents[1] / "src"), environment.get("PYTHONPATH", "")]
    )
    return subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,  # stdout and stderr are pipes, not terminals
        text=True,
        timeout=100,
        env=environment,
        check=False,
    )


def test_progress_lines_reach_stderr_when_it_is_not_a_terminal(tmp_path: Path) -> None:
    result = run_python(
        """
        from ef.source_manager import ingest
        corpus = {f"d{i}": f"text {i}" for i in range(100)}
        index = ingest(corpus, embedder="st:all-MiniLM-L6-v2", batch_size=8, progress=True)
        print(len(index))
        """,
        tmp_path,
        EF_PROGRESS_INTERVAL="0",
        # The progress lines are the encoder's, whichever backend: the numpy one spares the
        # process torch's import (sentence-transformers' own progress is checked above).
        EF_DENSE_BACKEND="numpy",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "100\n"
    lines = result.stderr.splitlines()
    prefix = "encoding 100 segments with st:all-MiniLM-L6-v2: "
    assert lines[0] == prefix + "0/100 segments (0%), 0.0 segments/s"
    assert any(line.startswith(prefix + "32/100 segments (32%), ") for line in lines)
    assert " left" in lines[1]
    assert lines[-1].startswith(prefix + "100/100 segments in ")
    assert "\x1b" not in result.stderr  # plain text, no terminal codes


def test_no_progress_asked_means_silence(tmp_path: Path) -> None:
    result = run_python(
        """
        from ef.source_manager import ingest
        ingest({f"d{i}": f"text {i}" for i in range(30)})
        """,
        tmp_path,
        EF_PROGRESS_INTERVAL="0",
    )
    assert result.returncode == 0 and result.stderr == ""


def test_evaluation_progress_lines_reach_stderr(tmp_path: Path) -> None:
    result = run_python(
        """
        from ef.evaluation import evaluate_retrieval
        from ef.source_manager import ingest
        corpus = {f"d{i}": f"topic{i} text" for i in range(20)}
        queries = {f"q{i}": f"topic{i}" for i in range(20)}
        qrels = {f"q{i}": {f"d{i}": 1} for i in range(20)}
        report = evaluate_retrieval(ingest(corpus), qrels, queries, k_values=(10,), progress=True)
        print(report.metrics["ndcg@10"])
        """,
        tmp_path,
        EF_PROGRESS_INTERVAL="0",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "1.0\n"
    lines = result.stderr.splitlines()
    assert lines[0].startswith("queries: 1/20 queries (5%), ")
    assert lines[0].endswith(", ndcg@10 1.0000")
    assert lines[-1].startswith("queries: 20/20 queries in ")


def test_the_cli_prints_progress_lines_and_reuses_its_index_dir(tmp_path: Path) -> None:
    command = """
        import sys
        from ef._ef_eval import main
        sys.exit(main())
        """
    argv = ["retrieval", "builtin:stdlib-docs", "--retriever", "bm25", "--k", "10"]
    argv += ["--index-dir", str(tmp_path / "index"), "--format", "json"]
    script = tmp_path / "cli.py"
    script.write_text(textwrap.dedent(command))
    environment = {**os.environ, "EF_PROGRESS_INTERVAL": "0"}
    environment["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "src")

    def cli(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(script), *argv, *extra],
            capture_output=True,
            text=True,
            timeout=100,
            env=environment,
            check=False,
        )

    first = cli()
    assert first.returncode == 0, first.stderr
    stages = [line.split(":")[0] for line in first.stderr.splitlines()]
    assert "tokenizing 1,098 segments with bm25" in stages
    assert "queries" in stages
    assert (tmp_path / "index" / "manifest.json").is_file()
    second = cli()
    assert second.returncode == 0, second.stderr
    assert not any(line.startswith("tokenizing") for line in second.stderr.splitlines())
    same = ("metrics", "per_query", "n_queries")
    reports = [json.loads(result.stdout) for result in (first, second)]
    assert [{key: r[key] for key in same} for r in reports] == [
        {key: reports[0][key] for key in same}
    ] * 2  # the same numbers from the saved index
    quiet = cli("--no-progress")
    assert quiet.returncode == 0 and quiet.stderr == ""
