"""No silent step: reusing a saved index, resuming from a journal and writing a fused run each
say what they did, in one line on standard error (and in the report's manifest)."""

from __future__ import annotations

import datetime
import json
import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import in_process_cli
from ef.evaluation import read_beir, write_trec_qrels, write_trec_run
from ef.source_manager import ingest

EF_EVAL = shutil.which("ef-eval", path=str(Path(sys.executable).parent))
ENV = {**os.environ, "EF_EVALUATION_PLUGINS": ""}
LOADED = re.compile(
    r"loaded index from (?P<path>.+) \(bm25, (?P<documents>[\d,]+) documents, "
    r"built (?P<built>\d{4}-\d\d-\d\d \d\d:\d\d) UTC\)"
)

RETRIEVERS = """\
import os

def answers(query, *, limit=10):
    if os.environ.get("FAIL") and len(query) % 2:
        raise ConnectionError("the search service is down")
    return ["os.path.exists", "shutil.rmtree", "json.loads"][:limit]
"""


def ef_eval(*args: object, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return in_process_cli.ef_eval(*args, env={**ENV, **env}, cwd=cwd)


def notes(stderr: str, prefix: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(prefix)]


def test_retrieval_says_when_it_reuses_a_saved_index(tmp_path: Path) -> None:
    index = tmp_path / "index"
    args = ["retrieval", "builtin:stdlib-docs", "--retriever", "bm25", "--index-dir", index]
    before = datetime.datetime.now(datetime.UTC).replace(second=0, microsecond=0)
    first = ef_eval(*args, "--format", "json")
    assert first.returncode == 0, first.stderr
    assert notes(first.stderr, "loaded index") == []  # built, not loaded
    assert json.loads(first.stdout)["manifest"]["index"] == {"path": str(index), "reused": False}
    second = ef_eval(*args, "--format", "json")
    assert second.returncode == 0, second.stderr
    (line,) = notes(second.stderr, "loaded index")
    match = LOADED.fullmatch(line)
    assert match is not None, line
    corpus, _, _ = read_beir("builtin:stdlib-docs")
    assert match["path"] == str(index)
    assert int(match["documents"].replace(",", "")) == len(corpus)
    built = datetime.datetime.strptime(match["built"], "%Y-%m-%d %H:%M")
    assert before <= built.replace(tzinfo=datetime.UTC) <= datetime.datetime.now(datetime.UTC)
    assert json.loads(second.stdout)["manifest"]["index"] == {"path": str(index), "reused": True}
    assert json.loads(second.stdout)["metrics"] == json.loads(first.stdout)["metrics"]


def test_ingest_announces_a_reused_index_with_progress_and_logs_it_always(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    corpus = {"a": "red apples and pears", "b": "green pears", "c": "a blue sky"}
    index_dir = tmp_path / "index"
    ingest(corpus, index_dir=index_dir, segment_size=2, overlap=0)
    assert capsys.readouterr().err == ""
    with caplog.at_level(logging.INFO, logger="ef.source_manager"):
        quiet = ingest(corpus, index_dir=index_dir, segment_size=2, overlap=0)
    assert quiet.loaded_from is not None and capsys.readouterr().err == ""
    (record,) = [r.getMessage() for r in caplog.records if r.name == "ef.source_manager"]
    assert record.startswith(f"loaded index from {index_dir} (bm25, 3 documents in 5 segments")
    ingest(corpus, index_dir=index_dir, segment_size=2, overlap=0, progress=True)
    assert capsys.readouterr().err == record + "\n"


def test_a_resumed_evaluation_says_how_many_queries_the_journal_gave(tmp_path: Path) -> None:
    (tmp_path / "fh_retrievers.py").write_text(RETRIEVERS)
    journal = tmp_path / "journal.jsonl"
    args = ["retrieval", "builtin:stdlib-docs", "--retriever", "fh_retrievers:answers"]
    args += ["--journal", journal, "--on-error", "record", "--format", "json"]
    _, queries, qrels = read_beir("builtin:stdlib-docs")
    failing = sum(len(queries[query]) % 2 for query in qrels)
    assert 0 < failing < len(qrels)
    first = ef_eval(*args, cwd=tmp_path, FAIL="1")
    assert first.returncode == 0, first.stderr
    assert notes(first.stderr, "resumed") == []  # a new journal
    second = ef_eval(*args, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    done = len(qrels) - failing
    assert notes(second.stderr, "resumed") == [
        f"resumed: {done} of {len(qrels)} queries from the journal {journal} "
        f"({failing} left to retrieve)"
    ]
    assert json.loads(second.stdout)["manifest"]["journal"]["resumed"] == done
    third = ef_eval(*args, cwd=tmp_path)
    assert notes(third.stderr, "resumed") == [
        f"resumed: {len(qrels)} of {len(qrels)} queries from the journal {journal} "
        "(nothing left to retrieve)"
    ]
    quiet = ef_eval(*args, "--no-progress", cwd=tmp_path)
    assert notes(quiet.stderr, "resumed") == []


def test_fuse_says_what_it_wrote(tmp_path: Path) -> None:
    qrels = {f"{q}": {"d1": 1.0} for q in range(1, 13)}
    write_trec_qrels(tmp_path / "qrels.txt", qrels)
    for name, queries in (("a.run", range(1, 13)), ("b.run", range(1, 10))):
        write_trec_run(tmp_path / name, {str(q): {"d1": 1.0, "d2": 0.5} for q in queries})
    fused = tmp_path / "fused.run"
    result = ef_eval("fuse", tmp_path / "a.run", tmp_path / "b.run", "-o", fused)
    assert result.returncode == 0, result.stderr
    written = {line.split()[0] for line in fused.read_text().splitlines()}
    assert notes(result.stderr, "wrote") == [
        f"wrote {fused}: {len(written)} queries, rrf of 2 runs"
    ]
    assert result.stdout == ""
