"""evaluate_retrieval_async and the concurrent paths of evaluate_retrieval, on asyncio and trio."""

from __future__ import annotations

import asyncio
import threading
import time

import anyio
import pytest
import trio

from ef.evaluation import (
    IncompleteEvaluationWarning,
    QueryError,
    evaluate_retrieval,
    evaluate_retrieval_async,
    evaluate_run,
)

N = 40
QRELS = {f"q{i}": {f"d{i}": 1.0, f"d{i + 1}": 2.0} for i in range(N)}
QUERIES = {f"q{i}": f"text {i}" for i in range(N)}
RUN = {f"q{i}": [f"d{(i * 7) % N}", f"d{i + 1}", f"d{i}"] for i in range(N)}


def ranking(text):
    return RUN[f"q{text.split()[1]}"]


async def async_retriever(query, *, limit=10):
    await anyio.sleep(0.001)
    return ranking(query)[:limit]


class Flaky:
    """Fails every query whose number is divisible by 5, always with the same error."""

    def __init__(self, delay=0.0):
        self.delay = delay

    async def search(self, query, *, limit=10):
        await anyio.sleep(self.delay)
        number = int(query.split()[1])
        if number % 5 == 0:
            raise ConnectionResetError(f"reset on {number}")
        return ranking(query)[:limit]


@pytest.mark.anyio
async def test_async_entry_point_equals_evaluate_run():
    report = await evaluate_retrieval_async(async_retriever, QRELS, QUERIES, max_concurrency=8)
    expected = evaluate_run(RUN, QRELS)
    assert report.per_query == expected.per_query
    assert report.metrics == expected.metrics
    assert list(report.per_query) == list(QRELS)  # planned order, not completion order
    assert set(report.latency) == set(QRELS)
    assert report.latency_summary["max"] >= report.latency_summary["p50"] > 0


def test_sync_and_async_entry_points_agree_including_failures():
    with pytest.warns(IncompleteEvaluationWarning, match="8 of 40 queries failed"):
        sync = evaluate_retrieval(Flaky(), QRELS, QUERIES, on_error="record", retries=1)
    with pytest.warns(IncompleteEvaluationWarning):
        via_async = anyio.run(
            lambda: evaluate_retrieval_async(Flaky(), QRELS, QUERIES, on_error="record", retries=1)
        )
    assert sync.metrics == via_async.metrics
    assert sync.per_query == via_async.per_query
    assert sync.n_queries == via_async.n_queries == 32
    assert sync.failures == via_async.failures
    failure = sync.failures[0]
    assert (failure.query_id, failure.attempts) == ("q0", 2)
    assert "ConnectionResetError" in failure.error_type
    assert failure.message == "reset on 0"


@pytest.mark.anyio
async def test_every_query_failing_still_gives_a_report():
    async def down(query, *, limit=10):
        raise ConnectionRefusedError("down")

    with pytest.warns(IncompleteEvaluationWarning, match="40 of 40"):
        report = await evaluate_retrieval_async(down, QRELS, QUERIES, on_error="record")
    assert report.metrics == {}
    assert report.n_queries == 0
    assert len(report.failures) == N


@pytest.mark.anyio
async def test_raise_mode_names_the_query_and_chains_the_cause():
    with pytest.raises(QueryError, match="q0") as caught:
        await evaluate_retrieval_async(Flaky(), QRELS, QUERIES, max_concurrency=1)
    assert isinstance(caught.value.__cause__, ConnectionResetError)


def test_sync_retriever_runs_inline_without_an_event_loop():
    caller = threading.get_ident()
    seen = []

    def retriever(query):
        try:
            asyncio.get_running_loop()
            seen.append("loop")
        except RuntimeError:
            seen.append(threading.get_ident())
        return ranking(query)

    evaluate_retrieval(retriever, QRELS, QUERIES)
    assert set(seen) == {caller}


def test_sync_retriever_with_concurrency_runs_in_threads():
    in_flight = peak = 0
    lock = threading.Lock()

    def retriever(query):
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.01)
        with lock:
            in_flight -= 1
        return ranking(query)

    report = evaluate_retrieval(retriever, QRELS, QUERIES, max_concurrency=4)
    assert peak == 4
    assert report.per_query == evaluate_run(RUN, QRELS).per_query


def test_async_retriever_defaults_to_sixteen_in_flight():
    in_flight = peak = 0

    async def retriever(query, *, limit=10):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await anyio.sleep(0.01)
        in_flight -= 1
        return ranking(query)[:limit]

    evaluate_retrieval(retriever, QRELS, QUERIES)
    assert peak == 16


def test_evaluate_retrieval_works_inside_a_running_asyncio_loop():
    async def main():
        return evaluate_retrieval(async_retriever, QRELS, QUERIES)

    assert asyncio.run(main()).metrics == evaluate_run(RUN, QRELS).metrics


def test_evaluate_retrieval_works_inside_a_running_trio_loop():
    async def main():
        return evaluate_retrieval(async_retriever, QRELS, QUERIES)

    assert trio.run(main).metrics == evaluate_run(RUN, QRELS).metrics


@pytest.mark.anyio
async def test_progress_reports_every_query_and_the_running_primary():
    updates = []
    with pytest.warns(IncompleteEvaluationWarning):
        report = await evaluate_retrieval_async(
            Flaky(), QRELS, QUERIES, on_error="record", progress=updates.append
        )
    assert [u.done for u in updates] == list(range(1, N + 1))
    assert all(u.total == N for u in updates)
    assert updates[-1].failed == 8
    assert updates[-1].primary_name == "ndcg@10"
    assert updates[-1].primary == pytest.approx(report.primary)


class Endless:
    """Searches that never end on their own, counting how each ended."""

    def __init__(self):
        self.started = 0
        self.cancelled = 0

    async def search(self, query, *, limit=10):
        self.started += 1
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            self.cancelled += 1
            raise


@pytest.mark.anyio
async def test_outer_cancellation_stops_promptly():
    retriever = Endless()
    with anyio.move_on_after(0.2) as scope:
        await evaluate_retrieval_async(retriever, QRELS, QUERIES, max_concurrency=4)
    # Only the caller's cancellation can end it (a search that went on would hang the test):
    # the four searches in flight were each cancelled, and no other was started.
    assert scope.cancelled_caught
    assert retriever.started == retriever.cancelled == 4


@pytest.mark.anyio
async def test_timeouts_are_recorded_per_attempt():
    async def slow(query, *, limit=10):
        if query == "text 3":
            await anyio.sleep(5)
        return ranking(query)[:limit]

    with pytest.warns(IncompleteEvaluationWarning):
        report = await evaluate_retrieval_async(
            slow, QRELS, QUERIES, timeout=0.05, retries=1, on_error="record"
        )
    assert [(f.query_id, f.attempts) for f in report.failures] == [("q3", 2)]
    assert "TimeoutError" in report.failures[0].error_type
    assert report.manifest["parameters"]["timeout"] == 0.05
