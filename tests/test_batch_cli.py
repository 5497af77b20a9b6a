"""``ef-eval retrieval --batch-size N``, through the installed ``ef-eval`` script: batches of
queries give the same report as one query at a time, and the retriever is asked in batches of
that size."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ef.evaluation import read_beir
from ef.evaluation._io.builtin_datasets import builtin_dataset_path

EF_EVAL = shutil.which("ef-eval", path=str(Path(sys.executable).parent))

# A retriever the command imports from the current directory: the bundled dataset's BM25
# index, logging the size of every call it gets (1 for a one-query call).
LOGGED = textwrap.dedent(
    """
    from ef.source_manager import ingest

    class Logged:
        def __init__(self, corpus):
            self.index = ingest(corpus)

        def _log(self, size):
            with open("calls.log", "a") as log:
                log.write(f"{size}\\n")

        def search(self, query, *, limit=10):
            self._log("one")
            return [h.segment.source_id for h in self.index.search(query, limit=limit)]

        def search_batch(self, queries, *, limit=10):
            self._log(len(queries))
            return [
                [h.segment.source_id for h in hits]
                for hits in self.index.search_batch(queries, limit=limit)
            ]
    """
)
FLAGS = ("--k", "1,5,10", "--format", "json", "--per-query")


def retrieval(folder: Path, *options: str) -> tuple[dict[str, Any], list[str]]:
    """The JSON report of ``ef-eval retrieval`` run in ``folder``, and the calls it made."""
    assert EF_EVAL is not None, "the ef-eval script is not installed: pip install -e ."
    log = folder / "calls.log"
    log.unlink(missing_ok=True)
    result = subprocess.run(
        [
            EF_EVAL,
            "retrieval",
            "builtin:stdlib-docs",
            "--retriever",
            "logged:Logged",
            *FLAGS,
            *options,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=folder,
        env={**os.environ, "EF_EVALUATION_PLUGINS": ""},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), log.read_text().split()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "logged.py").write_text(LOGGED, encoding="utf-8")
    return tmp_path


def test_batched_and_one_query_at_a_time_reports_are_identical(folder: Path) -> None:
    _, queries, qrels = read_beir(builtin_dataset_path("stdlib-docs"))
    judged = len([q for q in queries if any(v > 0 for v in qrels.get(q, {}).values())])
    alone, alone_calls = retrieval(folder, "--batch-size", "1")
    batched, batched_calls = retrieval(folder, "--batch-size", "7")
    assert alone_calls == ["one"] * judged
    # Batches of 7 from the plan; the last holds what is left (a batch of one is a one-query call).
    sizes = [7] * (judged // 7) + ([judged % 7] if judged % 7 else [])
    assert batched_calls == ["one" if size == 1 else str(size) for size in sizes]
    assert batched["metrics"] == alone["metrics"]
    assert batched["per_query"] == alone["per_query"]
    assert batched["failures"] == alone["failures"] == []
    assert batched["n_queries"] == alone["n_queries"] == judged
    # Everything but the timings, the manifest included (batch_size changes no number).
    del batched["latency"], alone["latency"]
    assert batched == alone


def test_without_the_option_the_retriever_is_asked_in_batches_of_32(folder: Path) -> None:
    _, calls = retrieval(folder)
    assert calls[0] == "32"


@pytest.mark.parametrize("value", ["0", "-3", "two"])
def test_a_batch_size_that_is_not_a_positive_integer_is_refused(folder: Path, value: str) -> None:
    assert EF_EVAL is not None
    result = subprocess.run(
        [EF_EVAL, "retrieval", "builtin:stdlib-docs", "--retriever", "bm25", "--batch-size", value],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=folder,
        check=False,
    )
    assert result.returncode == 2
    assert f"--batch-size: expected an integer >= 1, got '{value}'" in result.stderr
    assert not (folder / "calls.log").exists()
