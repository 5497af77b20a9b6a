"""A suite killed with SIGKILL in the middle and started again asks no finished query twice
(every call counted) and gives the report a suite run in one go gives; its progress says
what was resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from suite_fixtures import beir_folder

CHILD = textwrap.dedent(
    """
    import json, sys, time
    from ef.evaluation import evaluate_suite
    from ef.source_manager import ingest
    from suite_fixtures import CosineRetriever, numbers

    journal_dir, counter_path, results_dir, *datasets = sys.argv[1:]
    counter = open(counter_path, "a")

    def counting(name, make):
        def factory(corpus):
            inner = make(corpus)
            def retriever(query, limit=10):
                counter.write(f"{name}\\t{query}\\n")
                counter.flush()
                time.sleep(0.02)
                return inner(query, limit=limit) if name == "cosine" else inner.search(
                    query, limit=limit, per_document=True)
            return retriever
        return factory

    report = evaluate_suite(
        {"bm25": counting("bm25", lambda corpus: ingest(corpus, embedder="bm25")),
         "cosine": counting("cosine", CosineRetriever)},
        datasets, k_values=(1, 10), metrics=("ndcg", "recall"), baseline="bm25",
        tests=("t-test",), journal_dir=journal_dir or None, results_dir=results_dir,
        progress=True)
    print(json.dumps(numbers(report)))
    """
)


def _finished(journal_dir):
    """(system, query id) of every query a journal holds as finished."""
    done = set()
    for path in journal_dir.rglob("*.jsonl"):
        for line in path.read_text().splitlines()[1:]:
            if line.endswith("}"):
                done.add((path.stem, json.loads(line)["query_id"]))
    return done


def test_a_suite_killed_mid_run_resumes_asking_nothing_twice(tmp_path):
    folders = [str(beir_folder(tmp_path, name, seed)) for name, seed in (("alpha", 1), ("beta", 2))]
    queries = {}
    for folder in folders:
        for line in (Path(folder) / "queries.jsonl").read_text().splitlines():
            record = json.loads(line)
            queries[record["text"]] = record["_id"]
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "PYTHONPATH": os.path.dirname(__file__), "EF_PROGRESS_INTERVAL": "3600"}
    journals, counter = tmp_path / "journals", tmp_path / "asked.tsv"
    command = [sys.executable, str(script), str(journals), str(counter), str(tmp_path / "r")]
    child = subprocess.Popen([*command, *folders], env=env, stdout=subprocess.DEVNULL)
    total = 2 * 24 * 2
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        if counter.exists() and len(counter.read_text().splitlines()) >= 60:
            break
        time.sleep(0.02)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    finished = _finished(journals)
    assert 30 <= len(finished) < total  # killed in the middle: cells done and a cell half done
    before = len(counter.read_text().splitlines())
    rerun = subprocess.run(
        [*command, *folders], env=env, capture_output=True, text=True, check=True
    )
    asked_again = [
        (system, queries[text])
        for system, text in (line.split("\t") for line in counter.read_text().splitlines()[before:])
    ]
    assert not set(asked_again) & finished
    assert len(asked_again) == len(set(asked_again)) == total - len(finished)
    assert "resumed: " in rerun.stderr
    assert "resumed from the journal" in rerun.stderr
    assert "dataset 2/2 beta" in rerun.stderr
    fresh = subprocess.run(
        [sys.executable, str(script), "", str(tmp_path / "c2"), str(tmp_path / "r2"), *folders],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(rerun.stdout) == json.loads(fresh.stdout)
    assert len((tmp_path / "c2").read_text().splitlines()) == total
