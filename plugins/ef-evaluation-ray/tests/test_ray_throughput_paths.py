"""The paths micro-batching takes to cut the CPU a search costs the driver, on a real two-node
Ray cluster (loopback only): a call's answer reaches its searches from one callback, which
skips a search cancelled meanwhile and sends the next call at once, and a call coming back
after its event loop has closed is dropped without an error."""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
import ray.cloudpickle

from ef.source_manager import ingest
from ef_evaluation_ray import RankedHit, RayRetriever

pytestmark = pytest.mark.usefixtures("cluster")

# The actors run the test's retrievers; they cannot import this module, so it travels by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

CORPUS = {f"doc{i:02d}": " ".join(f"w{(i * j) % 13}" for j in range(1, 7)) for i in range(40)}


def expected(query: str) -> list[RankedHit]:
    return [RankedHit(h.segment.source_id, h.score) for h in ingest(CORPUS).search(query, limit=5)]


class Gate:
    """An index that logs each query it is asked (and each it answered) and, for queries
    starting with ``hold``, waits until the test writes the file ``go``."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)
        self.index = ingest(CORPUS)

    def search(self, query: str, *, limit: int = 10) -> Any:
        with open(self.folder / "asked.log", "a") as log:
            log.write(f"{query}\n")
        while query.startswith("hold") and not (self.folder / "go").exists():
            time.sleep(0.02)
        hits = self.index.search(query, limit=limit, per_document=True)
        with open(self.folder / "answered.log", "a") as log:
            log.write(f"{query}\n")
        return hits


def gate(folder: Path, **options: Any) -> RayRetriever:
    """One replica answering one call at a time: two calls in flight, 2 searches each."""
    return RayRetriever(
        functools.partial(Gate, str(folder)), num_cpus=0.5, max_batch=2, **options
    ).start()


async def until(condition: Any, *, within: float = 30.0) -> None:
    """Wait for ``condition``; fail after ``within`` seconds rather than hang."""
    deadline = time.monotonic() + within
    while not condition():  # state written by another process or task
        if time.monotonic() > deadline:
            pytest.fail(f"not reached within {within} s: {condition}")
        await anyio.sleep(0.02)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def held(folder: Path) -> bool:
    """Whether the replica is on a query it holds (a call is in flight, the next queued)."""
    return any(query.startswith("hold") for query in lines(folder / "asked.log"))


# asyncio only: it runs tasks started together in the order they were started, which decides
# which searches share a call; trio runs them in a random order (and its path, a worker thread
# per search, is the one test_ray_batching.py covers).
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_a_search_cancelled_in_flight_leaves_its_batch_answered_and_frees_the_room(
    tmp_path: Path, anyio_backend: str
) -> None:
    retriever = gate(tmp_path)
    found: dict[str, Any] = {}
    scope = anyio.CancelScope()
    cancelled = anyio.Event()

    async def one(query: str) -> None:
        found[query] = await retriever.search(query, limit=5)

    async def cancelled_one(query: str) -> None:
        with scope:
            await one(query)
        cancelled.set()

    try:
        async with anyio.create_task_group() as group:
            # Started together: two calls of two (the room is 2), in the order the tasks ran.
            group.start_soon(one, "hold w1")
            group.start_soon(cancelled_one, "hold w2")
            group.start_soon(one, "w3 x")
            group.start_soon(one, "w4 y")
            await until(lambda: held(tmp_path))
            assert retriever._batches.calls == 2
            scope.cancel()  # its batch-mate still waits for the same call
            await cancelled.wait()
            group.start_soon(one, "w5 z")  # no room: waits for a call to come back
            await until(lambda: len(retriever._batches._waiting[0]) == 1)
            (tmp_path / "go").touch()
    finally:
        retriever.shutdown()
    assert sorted(found) == ["hold w1", "w3 x", "w4 y", "w5 z"]
    for query, hits in found.items():
        assert hits == expected(query)
    assert retriever._batches.calls == 3  # w5 went alone, once the first call came back
    assert retriever._batches._out == [0]  # every call's room given back, none twice
    # The cancelled search waited in the replica behind its batch-mate: abandoned there, it was
    # never asked; nothing was sent twice.
    assert sorted(lines(tmp_path / "answered.log")) == sorted(found)
    assert "hold w2" not in lines(tmp_path / "asked.log")


def test_a_call_coming_back_after_its_event_loop_closed_is_dropped_quietly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    retriever = gate(tmp_path)

    async def abandoned() -> None:
        with anyio.move_on_after(0.3):  # a timeout: the run ends with the call in flight
            await retriever.search("hold w1", limit=5)

    async def later(query: str) -> Any:
        return await retriever.search(query, limit=5)

    try:
        with caplog.at_level(logging.ERROR):
            asyncio.run(abandoned())  # the loop the call would answer is closed now
            (tmp_path / "go").touch()
            assert asyncio.run(later("w2 x")) == expected("w2 x")
    finally:
        retriever.shutdown()
    # Abandoned by its timeout, the first search gave its place to the second.
    assert lines(tmp_path / "asked.log") == ["hold w1", "w2 x"]
    assert "w2 x" in lines(tmp_path / "answered.log")
    assert [record.getMessage() for record in caplog.records] == []
