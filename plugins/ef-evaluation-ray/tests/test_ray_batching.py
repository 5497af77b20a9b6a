"""Micro-batching in ``RayRetriever`` on a real two-node Ray cluster (loopback only): the
searches that wait for a busy replica go in one call, each answered and failing on its own,
and a replica killed with a batch in flight loses none of its searches, answers none twice."""

from __future__ import annotations

import functools
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
import ray.cloudpickle

from ef.evaluation import evaluate_retrieval, evaluate_retrieval_async
from ef.source_manager import ingest
from ef_evaluation_ray import RayRetriever
from ef_evaluation_ray._hits import RankedHit

pytestmark = pytest.mark.usefixtures("cluster")

# The actors run the test's retrievers; they cannot import this module, so it travels by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

CORPUS = {f"doc{i:02d}": " ".join(f"w{(i * j) % 17}" for j in range(1, 9)) for i in range(60)}
QUERIES = {f"q{i}": f"w{i % 17} w{(i * 5) % 17}" for i in range(12)}
QRELS = {f"q{i}": {f"doc{(i * 7) % 60:02d}": 1} for i in range(12)}
OPTIONS: dict[str, Any] = {"k_values": (1, 5), "metrics": ("ndcg", "recall")}


def expected(query: str, limit: int) -> list[tuple[str, float]]:
    return [(h.segment.source_id, h.score) for h in ingest(CORPUS).search(query, limit=limit)]


async def search_together(retriever: RayRetriever, queries: list[str]) -> list[Any]:
    """Each query's results or exception, the searches started together."""
    outcomes: list[Any] = [None] * len(queries)

    async def one(position: int, query: str) -> None:
        try:
            outcomes[position] = await retriever.search(query, limit=5)
        except Exception as error:
            outcomes[position] = error

    async with anyio.create_task_group() as group:
        for position, query in enumerate(queries):
            group.start_soon(one, position, query)
    return outcomes


class Picky:
    """An index failing one query with an exception and answering another with results that
    cannot be pickled (a lambda's closure over a lock)."""

    def __init__(self) -> None:
        import threading

        self.index = ingest(CORPUS)
        self.lock = threading.Lock()

    def search(self, query: str, *, limit: int = 10) -> Any:
        if query == "fail":
            raise LookupError("no shard for 'fail'")
        if query == "unpicklable":
            return [self.lock]
        return self.index.search(query, limit=limit, per_document=True)


@pytest.fixture(scope="module")
def picky() -> Any:
    retriever = RayRetriever(Picky, num_cpus=0.5, max_batch=3)
    yield retriever.start()
    retriever.shutdown()


@pytest.mark.anyio
async def test_searches_started_together_go_in_batches_of_at_most_max_batch(
    picky: RayRetriever,
) -> None:
    queries = list(QUERIES.values())[:7]
    before = picky._batches.calls
    found = await search_together(picky, queries)
    assert picky._batches.calls - before == 3  # 3 + 3 + 1
    for query, hits in zip(queries, found, strict=True):
        assert all(type(hit) is RankedHit for hit in hits)  # no segment text on the wire
        assert [(hit.doc_id, hit.score) for hit in hits] == expected(query, 5)


@pytest.mark.anyio
async def test_one_failing_query_fails_alone_in_its_batch(picky: RayRetriever) -> None:
    queries = [QUERIES["q0"], "fail", QUERIES["q1"], "unpicklable", QUERIES["q2"]]
    before = picky._batches.calls
    found = await search_together(picky, queries)
    assert picky._batches.calls - before == 2  # the failures were in batches with others
    assert isinstance(found[1], LookupError) and str(found[1]) == "no shard for 'fail'"
    assert isinstance(found[3], TypeError)
    assert "cannot be sent to the driver" in str(found[3])
    for position in (0, 2, 4):
        assert [(h.doc_id, h.score) for h in found[position]] == expected(queries[position], 5)


@pytest.fixture(scope="module")
def by_default() -> Any:
    retriever = RayRetriever(functools.partial(ingest, CORPUS), num_cpus=0.5)
    yield retriever.start()
    retriever.shutdown()


@pytest.mark.anyio
async def test_by_default_a_call_carries_up_to_32_searches(by_default: RayRetriever) -> None:
    # Ray's side of a call costs the driver about as much CPU as a millisecond's search:
    # calls of up to 32 let 2 replicas on 2 cores answer ~1.7x what one does (bench_ray.py).
    queries = [QUERIES[f"q{i % 12}"] for i in range(70)]
    before = by_default._batches.calls
    found = await search_together(by_default, queries)
    assert by_default.max_batch == 32
    # 32 and 32 sent at once (2 in flight), then 6, on a quiet machine; on a busy one the
    # searches reach the batcher spread out and go in more, smaller calls: never over 32 each
    # (so at least 3 calls), and batched (at least 2 searches a call on average).
    assert 3 <= by_default._batches.calls - before <= len(queries) // 2
    answers = {query: expected(query, 5) for query in set(queries)}
    for query, hits in zip(queries, found, strict=True):
        assert [(hit.doc_id, hit.score) for hit in hits] == answers[query]


def test_batched_evaluation_equals_the_in_process_one_and_one_per_call_too() -> None:
    local = evaluate_retrieval(ingest(CORPUS), QRELS, QUERIES, **OPTIONS)
    for max_batch, calls in ((4, 3), (1, 12)):
        retriever = RayRetriever(
            functools.partial(ingest, CORPUS), num_cpus=0.5, max_batch=max_batch
        ).start()
        try:
            report = evaluate_retrieval(retriever, QRELS, QUERIES, max_concurrency=12, **OPTIONS)
        finally:
            retriever.shutdown()
        assert report.metrics == local.metrics
        assert report.per_query == local.per_query
        assert report.manifest["retriever_info"]["max_batch"] == max_batch
        assert report.manifest["retriever_info"]["calls"] == calls


class Stalling:
    """An index whose first replica to be asked anything stalls on every search (until its
    process is killed); each search is logged with the pid of the replica asked."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)
        self.index = ingest(CORPUS)
        self.retriever_id = self.index.retriever_id

    def search(self, query: str, *, limit: int = 10) -> Any:
        try:
            with open(self.folder / "victim", "x") as claim:
                claim.write(str(os.getpid()))
        except FileExistsError:
            pass
        doomed = (self.folder / "victim").read_text() == str(os.getpid())
        with open(self.folder / "asked.log", "a") as log:
            log.write(f"{'victim' if doomed else 'live'}\t{query}\n")
        if doomed:
            (self.folder / "blocked").touch()
            while True:
                time.sleep(0.05)  # until the test kills this process
        return self.index.search(query, limit=limit, per_document=True)


@pytest.mark.anyio
async def test_a_replica_killed_with_a_batch_in_flight_loses_none_of_it(tmp_path: Path) -> None:
    local = evaluate_retrieval(ingest(CORPUS), QRELS, QUERIES, **OPTIONS)
    retriever = RayRetriever(
        functools.partial(Stalling, str(tmp_path)), replicas=2, num_cpus=0.5
    ).start()

    async def kill_the_replica_once_it_stalls() -> None:
        while not (tmp_path / "blocked").exists():  # noqa: ASYNC110 - written by another process
            await anyio.sleep(0.02)
        os.kill(int((tmp_path / "victim").read_text()), signal.SIGKILL)

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(kill_the_replica_once_it_stalls)
            report = await evaluate_retrieval_async(
                retriever, QRELS, QUERIES, max_concurrency=8, **OPTIONS
            )
    finally:
        retriever.shutdown()
    lines = [line.split("\t") for line in (tmp_path / "asked.log").read_text().splitlines()]
    assert [where for where, _ in lines].count("victim") == 1  # it stalled on its first search
    answered = sorted(query for where, query in lines if where == "live")
    assert answered == sorted(QUERIES.values())  # each answered once, none lost
    # The stalled search had others in its batch: every one of them went to the other replica.
    assert report.manifest["retriever_info"]["resubmitted"] >= 2
    assert report.failures == ()
    assert report.metrics == local.metrics


class Gate:
    """An index that logs each query it is asked and, for queries starting with ``hold``, waits
    until the test writes the file ``go``."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)
        self.index = ingest(CORPUS)

    def search(self, query: str, *, limit: int = 10) -> Any:
        with open(self.folder / "asked.log", "a") as log:
            log.write(f"{query}\n")
        while query.startswith("hold") and not (self.folder / "go").exists():
            time.sleep(0.02)
        return self.index.search(query, limit=limit, per_document=True)


@pytest.mark.anyio
async def test_a_search_cancelled_while_it_waits_is_never_sent(tmp_path: Path) -> None:
    # One search per call and one replica: two calls in flight, the other searches wait.
    retriever = RayRetriever(
        functools.partial(Gate, str(tmp_path)), num_cpus=0.5, max_batch=1
    ).start()
    log = tmp_path / "asked.log"
    found: dict[str, Any] = {}
    scope = anyio.CancelScope()
    cancelled = anyio.Event()

    async def one(query: str) -> None:
        found[query] = await retriever.search(query, limit=5)

    async def cancelled_one() -> None:
        with scope:
            await one("w3 cancelled")
        cancelled.set()

    async def waiting(count: int) -> None:
        while len(retriever._batches._waiting[0]) != count:  # noqa: ASYNC110 - polled state
            await anyio.sleep(0.01)

    try:
        async with anyio.create_task_group() as group:
            for query in ("hold w1", "hold w2"):
                group.start_soon(one, query)
            while not log.exists():  # noqa: ASYNC110 - written by another process
                await anyio.sleep(0.02)
            group.start_soon(cancelled_one)  # (the event loop may start tasks in any order)
            await waiting(1)
            group.start_soon(one, "w4 after")
            await waiting(2)
            scope.cancel()
            await cancelled.wait()
            (tmp_path / "go").touch()
    finally:
        retriever.shutdown()
    asked = log.read_text().splitlines()
    assert sorted(asked[:2]) == ["hold w1", "hold w2"]
    assert asked[2:] == ["w4 after"]
    assert sorted(found) == ["hold w1", "hold w2", "w4 after"]
    assert [(hit.doc_id, hit.score) for hit in found["w4 after"]] == expected("w4 after", 5)
