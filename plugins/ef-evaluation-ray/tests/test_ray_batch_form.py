"""Replicas answer a call through the retriever's batch form, as an in-process evaluation asks a
batch, on a real two-node Ray cluster (loopback only): one ``search_batch`` per call, the report
of the in-process evaluation, and a failing query fails alone, with its own error."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any

import pytest
import ray.cloudpickle

from ef.evaluation import IncompleteEvaluationWarning, evaluate_retrieval
from ef.source_manager import ingest
from ef_evaluation_ray import RayRetriever

pytestmark = pytest.mark.usefixtures("cluster")

# The actors run the test's retrievers; they cannot import this module, so it travels by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

CORPUS = {f"doc{i:02d}": " ".join(f"w{(i * j) % 17}" for j in range(1, 9)) for i in range(60)}
QUERIES = {f"q{i}": f"w{i % 17} w{(i * 5) % 17}" for i in range(12)}
QRELS = {f"q{i}": {f"doc{(i * 7) % 60:02d}": 1} for i in range(12)}
OPTIONS: dict[str, Any] = {"k_values": (1, 5), "metrics": ("ndcg", "recall")}


class Batched:
    """The BM25 index, logging each call: ``one`` with its query, or ``batch`` with its size.
    The query ``fail`` fails, alone or in a batch."""

    def __init__(self, folder: str) -> None:
        self.log = Path(folder) / "calls.log"
        self.index = ingest(CORPUS)

    def _note(self, line: str) -> None:
        with open(self.log, "a") as log:
            log.write(line + "\n")

    def search(self, query: str, *, limit: int = 10) -> Any:
        self._note(f"one {query}")
        if query == "fail":
            raise LookupError("no shard for 'fail'")
        return self.index.search(query, limit=limit, per_document=True)

    def search_batch(self, queries: list[str], *, limit: int = 10) -> Any:
        self._note(f"batch {len(queries)}")
        if "fail" in queries:
            raise LookupError("a batch holding 'fail'")
        return self.index.search_batch(queries, limit=limit, per_document=True)


def calls(folder: Path) -> list[str]:
    return (folder / "calls.log").read_text().splitlines()


def test_each_call_is_one_search_batch_and_the_report_is_the_in_process_one(
    tmp_path: Path,
) -> None:
    local = evaluate_retrieval(ingest(CORPUS), QRELS, QUERIES, **OPTIONS)
    retriever = RayRetriever(
        functools.partial(Batched, str(tmp_path)), num_cpus=0.5, max_batch=4
    ).start()
    try:
        report = evaluate_retrieval(retriever, QRELS, QUERIES, max_concurrency=12, **OPTIONS)
    finally:
        retriever.shutdown()
    assert report.manifest["retriever_info"]["calls"] == 3
    assert calls(tmp_path) == ["batch 4"] * 3  # no search asked alone
    assert report.metrics == local.metrics
    assert report.per_query == local.per_query


def test_a_failing_query_in_a_batch_fails_alone_with_its_own_error(tmp_path: Path) -> None:
    queries = {**QUERIES, "q5": "fail"}
    scored = {q: t for q, t in queries.items() if q != "q5"}
    local = evaluate_retrieval(ingest(CORPUS), QRELS, scored, **OPTIONS)
    retriever = RayRetriever(
        functools.partial(Batched, str(tmp_path)), num_cpus=0.5, max_batch=4
    ).start()
    try:
        with pytest.warns(IncompleteEvaluationWarning, match="1 of 12 queries failed"):
            report = evaluate_retrieval(
                retriever, QRELS, queries, max_concurrency=12, on_error="record", **OPTIONS
            )
    finally:
        retriever.shutdown()
    [failure] = report.failures
    assert (failure.query_id, failure.error_type) == ("q5", "LookupError")
    assert failure.message == "no shard for 'fail'"
    assert report.per_query == local.per_query
    asked = calls(tmp_path)
    # The batch holding it failed, and each of its four searches was asked alone, once.
    assert asked.count("batch 4") == 3
    alone = [line.removeprefix("one ") for line in asked if line.startswith("one ")]
    assert "fail" in alone and len(alone) == len(set(alone)) == 4
