"""Resumable journals: skip finished queries, retry failed ones, survive a SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from ef.evaluation import (
    IncompleteEvaluationWarning,
    JournalMismatchError,
    evaluate_retrieval,
    evaluate_run,
    journal_to_trec_run,
    read_trec_run,
)
from ef.segments import Segment
from ef.source_manager import SearchHit

N = 30
QRELS = {f"q{i}": {f"d{i}": 1.0, f"d{(i + 3) % N}": 2.0} for i in range(N)}
QUERIES = {f"q{i}": f"text {i}" for i in range(N)}
RUN = {f"q{i}": [f"d{(i * 7 + j) % N}" for j in range(12)] for i in range(N)}


class Counting:
    """A retriever that counts its calls per query and can fail chosen queries."""

    def __init__(self, failing=()):
        self.calls: dict[str, int] = {}
        self.failing = set(failing)

    def __call__(self, query, *, limit=10):
        query_id = f"q{query.split()[1]}"
        self.calls[query_id] = self.calls.get(query_id, 0) + 1
        if query_id in self.failing:
            raise ConnectionResetError("reset")
        return [SearchHit(Segment(d, ""), 1.0 / (r + 1)) for r, d in enumerate(RUN[query_id])][
            :limit
        ]


def test_rerun_skips_finished_queries_and_retries_failed_ones(tmp_path):
    journal = tmp_path / "run.jsonl"
    first = Counting(failing={"q3", "q7"})
    with pytest.warns(IncompleteEvaluationWarning):
        report = evaluate_retrieval(first, QRELS, QUERIES, journal=journal, on_error="record")
    assert len(report.failures) == 2
    second = Counting()
    resumed = evaluate_retrieval(second, QRELS, QUERIES, journal=journal)
    assert second.calls == {"q3": 1, "q7": 1}
    assert resumed.manifest["journal"]["resumed"] == N - 2
    uninterrupted = evaluate_retrieval(Counting(), QRELS, QUERIES)
    assert resumed.metrics == uninterrupted.metrics
    assert resumed.per_query == uninterrupted.per_query


def test_a_journal_is_rescored_with_other_cutoffs_without_retrieving(tmp_path):
    journal = tmp_path / "run.jsonl"
    evaluate_retrieval(Counting(), QRELS, QUERIES, k_values=(1, 10), journal=journal)
    silent = Counting()
    rescored = evaluate_retrieval(
        silent, QRELS, QUERIES, k_values=(3, 5), metrics=("recall",), journal=journal
    )
    assert silent.calls == {}
    expected = evaluate_run(
        {q: r[:10] for q, r in RUN.items()}, QRELS, k_values=(3, 5), metrics=("recall",)
    )
    assert rescored.per_query == expected.per_query
    with pytest.raises(ValueError, match="limit=10, too short to score cutoff 100"):
        evaluate_retrieval(silent, QRELS, QUERIES, k_values=(100,), journal=journal)


def test_a_journal_of_another_evaluation_is_refused(tmp_path):
    journal = tmp_path / "run.jsonl"
    evaluate_retrieval(Counting(), QRELS, QUERIES, journal=journal)
    with pytest.raises(JournalMismatchError, match="written for another evaluation"):
        evaluate_retrieval(Counting(), QRELS, QUERIES | {"q1": "changed"}, journal=journal)
    with pytest.raises(JournalMismatchError):
        evaluate_retrieval(Counting(), QRELS, QUERIES, journal=journal, retriever_id="other")
    with pytest.raises(JournalMismatchError):
        evaluate_retrieval(Counting(), QRELS, QUERIES, journal=journal, limit=50)


def test_a_record_cut_mid_line_is_dropped_and_retried(tmp_path):
    journal = tmp_path / "run.jsonl"
    evaluate_retrieval(Counting(), QRELS, QUERIES, journal=journal)
    lines = journal.read_text().splitlines(keepends=True)
    last = json.loads(lines[-1])["query_id"]
    journal.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    again = Counting()
    report = evaluate_retrieval(again, QRELS, QUERIES, journal=journal)
    assert again.calls == {last: 1}
    assert report.n_queries == N
    assert all(json.loads(line) for line in journal.read_text().splitlines())


def test_journal_to_trec_run_reproduces_the_evaluated_rankings(tmp_path):
    journal = tmp_path / "run.jsonl"
    report = evaluate_retrieval(Counting(), QRELS, QUERIES, journal=journal, limit=12)
    assert journal_to_trec_run(journal, tmp_path / "run.trec") == N
    run = read_trec_run(tmp_path / "run.trec")
    assert evaluate_run(run, QRELS).per_query == report.per_query


CHILD = textwrap.dedent(
    """
    import sys, time
    from ef.evaluation import evaluate_retrieval
    N = {n}
    qrels = {{f"q{{i}}": {{f"d{{i}}": 1.0}} for i in range(N)}}
    queries = {{f"q{{i}}": f"q{{i}}" for i in range(N)}}
    counter = open(sys.argv[2], "a")

    def retriever(query):
        counter.write(query + "\\n")
        counter.flush()
        time.sleep(0.05)
        return [f"d{{int(query[1:]) % 3}}", query.replace("q", "d")]

    report = evaluate_retrieval(retriever, qrels, queries, journal=sys.argv[1],
                                retriever_id="child")
    print(report.metrics["ndcg@10"])
    """
)


def test_an_evaluation_killed_mid_run_resumes_without_redoing_work(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(n=40))
    journal, counter = tmp_path / "journal.jsonl", tmp_path / "requests.txt"
    child = subprocess.Popen([sys.executable, str(script), str(journal), str(counter)])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if journal.exists() and len(journal.read_text().splitlines()) > 10:
            break
        time.sleep(0.02)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    finished = {
        json.loads(line)["query_id"]
        for line in journal.read_text().splitlines()[1:]
        if line.endswith("}")
    }
    assert 10 <= len(finished) < 40
    before = counter.read_text().split()
    rerun = subprocess.run(
        [sys.executable, str(script), str(journal), str(counter)],
        capture_output=True,
        text=True,
        check=True,
    )
    requested_again = counter.read_text().split()[len(before) :]
    assert not set(requested_again) & {f"q{q[1:]}" for q in finished}
    assert len(requested_again) == 40 - len(finished)
    fresh = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "fresh.jsonl"), str(tmp_path / "c2")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert rerun.stdout == fresh.stdout


HTTP_CHILD = textwrap.dedent(
    """
    import json, sys
    from ef.evaluation import HttpRetriever, evaluate_retrieval

    url, journal, inputs = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
    report = evaluate_retrieval(
        HttpRetriever(url, results="hits", score_field="score"),
        inputs["qrels"], inputs["queries"], journal=journal, max_concurrency=4,
    )
    print(json.dumps({"metrics": report.metrics, "per_query": report.per_query}))
    """
)


def test_an_http_evaluation_killed_mid_run_never_requests_finished_queries_again(tmp_path):
    from http_fixtures import Dataset, running_server

    dataset = Dataset(60, seed=7)
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps({"qrels": dataset.qrels, "queries": dataset.queries}))
    script = tmp_path / "child.py"
    script.write_text(HTTP_CHILD)
    journal = tmp_path / "journal.jsonl"
    with running_server(tmp_path, rankings=dataset.rankings, latency=0.05) as server:
        command = [sys.executable, str(script), server.url(), str(journal), str(inputs)]
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and child.poll() is None:
            if journal.exists() and len(journal.read_text().splitlines()) > 20:
                break
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        lines = journal.read_text().splitlines()[1:]
        finished = {json.loads(line)["query_id"] for line in lines if line.endswith("}")}
        assert 20 <= len(finished) < 60
        before = server.stats()["requests"]
        rerun = subprocess.run(command, capture_output=True, text=True, check=True)
        after = server.stats()["requests"]
    texts = {dataset.queries[q] for q in finished}
    assert all(after[text] == before[text] for text in texts)
    assert sum(after.values()) - sum(before.values()) == 60 - len(finished)
    resumed = json.loads(rerun.stdout)
    uninterrupted = evaluate_run(
        dataset.run(dataset.queries, 100), dataset.qrels, k_values=(1, 5, 10, 100)
    )
    assert resumed["per_query"] == uninterrupted.per_query
    assert resumed["metrics"] == uninterrupted.metrics
