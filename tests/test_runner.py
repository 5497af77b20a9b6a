"""The runner: bounded concurrency, timeouts, retries, rate limit and failure modes.

Every async behaviour runs on asyncio and trio. Timing assertions use generous tolerances: the
point is to catch a missing limit or a missed cancellation, not to benchmark the machine.
"""

from __future__ import annotations

import asyncio
import itertools
import pickle
import random
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ef.evaluation._running.inline as inline_module
import ef.evaluation._running.runner as runner_module
from ef.evaluation._exceptions import QueryError
from ef.evaluation._report.reports import QueryFailure
from ef.evaluation._running.runner import (
    QueryOutcome,
    RunnerOptions,
    error_type_name,
    run_queries_async,
    run_queries_inline,
)

FAST_BACKOFF: dict[str, Any] = {"backoff_base": 0.0005, "backoff_max": 0.001}


@pytest.fixture(scope="module", params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def plan(n: int) -> list[tuple[str, str]]:
    """``n`` planned queries; the text is derived from the id so a retriever knows its query."""
    return [(f"q{i}", f"text-q{i}") for i in range(n)]


class Probe:
    """Records what a retriever double saw: starts, calls per text, calls in flight, cancels."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.starts: list[tuple[str, float]] = []
        self.calls: Counter[str] = Counter()
        self.in_flight = 0
        self.peak = 0
        self.cancelled = 0
        self.threads: set[int] = set()

    def enter(self, text: str, now: float) -> int:
        with self.lock:
            self.starts.append((text, now))
            self.calls[text] += 1
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            self.threads.add(threading.get_ident())
            return self.calls[text]

    def leave(self) -> None:
        with self.lock:
            self.in_flight -= 1


class AsyncRetriever:
    """An async retriever double: fails its first ``fail_times[text]`` calls at once (raising
    ``error``), then answers after ``latency`` seconds; a text in ``hang`` never answers.
    """

    def __init__(
        self,
        latency: float = 0.0,
        fail_times: dict[str, int] | None = None,
        error: type[BaseException] = OSError,
        hang: frozenset[str] = frozenset(),
    ) -> None:
        self.probe = Probe()
        self.latency = latency
        self.fail_times = fail_times or {}
        self.error = error
        self.hang = hang

    async def __call__(self, text: str) -> str:
        attempt = self.probe.enter(text, anyio.current_time())
        try:
            if attempt <= self.fail_times.get(text, 0):
                raise self.error(f"{text} failed on attempt {attempt}")
            if text in self.hang:
                await anyio.sleep_forever()
            await anyio.sleep(self.latency)
            return text
        except anyio.get_cancelled_exc_class():
            self.probe.cancelled += 1
            raise
        finally:
            self.probe.leave()


class SyncRetriever:
    """The sync twin of :class:`AsyncRetriever`; a hung text blocks until ``release`` is set."""

    def __init__(
        self,
        latency: float = 0.0,
        fail_times: dict[str, int] | None = None,
        error: type[BaseException] = OSError,
        hang: frozenset[str] = frozenset(),
    ) -> None:
        self.probe = Probe()
        self.latency = latency
        self.fail_times = fail_times or {}
        self.error = error
        self.hang = hang
        self.release = threading.Event()
        self.finished = threading.Semaphore(0)

    def __call__(self, text: str) -> str:
        attempt = self.probe.enter(text, time.monotonic())
        try:
            if attempt <= self.fail_times.get(text, 0):
                raise self.error(f"{text} failed on attempt {attempt}")
            if text in self.hang:
                self.release.wait(10)
            time.sleep(self.latency)
            return text
        finally:
            self.probe.leave()
            self.finished.release()


async def run(
    retriever: AsyncRetriever | SyncRetriever, planned: list[tuple[str, str]], **options: Any
) -> list[QueryOutcome]:
    outcomes: list[QueryOutcome] = []
    is_async = isinstance(retriever, AsyncRetriever)
    await run_queries_async(
        retriever, planned, RunnerOptions(**options), outcomes.append, is_async=is_async
    )
    return outcomes


async def drain_threads(retriever: SyncRetriever, expected: int) -> None:
    """Let abandoned threads finish while the loop still runs, so none outlives the test."""
    retriever.release.set()

    def wait_for_all() -> None:
        for _ in range(expected):
            assert retriever.finished.acquire(timeout=5), "a retriever thread never finished"

    await anyio.to_thread.run_sync(wait_for_all)


def by_id(outcomes: list[QueryOutcome]) -> dict[str, QueryOutcome]:
    ids = [outcome.query_id for outcome in outcomes]
    assert len(ids) == len(set(ids)), f"an outcome arrived twice: {sorted(ids)}"
    return {outcome.query_id: outcome for outcome in outcomes}


# -- options ----------------------------------------------------------------------------------


def test_options_resolve_default_concurrency_by_kind_of_call() -> None:
    assert RunnerOptions().concurrency_for(is_async=True) == 16
    assert RunnerOptions().concurrency_for(is_async=False) == 1
    assert RunnerOptions(max_concurrency=7).concurrency_for(is_async=False) == 7


def test_options_accept_a_single_retry_class() -> None:
    assert RunnerOptions(retry_on=ValueError).retry_on == (ValueError,)
    assert RunnerOptions(retry_on=[KeyError, OSError]).retry_on == (KeyError, OSError)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_concurrency", 0),
        ("max_concurrency", 2.5),
        ("max_concurrency", True),
        ("timeout", 0),
        ("timeout", -1.0),
        ("timeout", float("nan")),
        ("timeout", float("inf")),
        ("timeout", "5"),
        ("retries", -1),
        ("retries", 1.0),
        ("retry_on", (KeyboardInterrupt,)),
        ("retry_on", (BaseException,)),
        ("retry_on", ("OSError",)),
        ("retry_on", (int,)),
        ("on_error", "ignore"),
        ("rate_limit", 0),
        ("rate_limit", float("inf")),
        ("backoff_base", -0.1),
        ("backoff_max", float("nan")),
        ("rng", 42),
    ],
)
def test_options_reject_bad_values_naming_the_field(field: str, value: Any) -> None:
    with pytest.raises(ValueError, match=field):
        RunnerOptions(**{field: value})


@settings(max_examples=200)
@given(
    retry=st.integers(1, 400),
    base=st.floats(0, 5),
    cap=st.floats(0, 100),
    seed=st.integers(0, 2**32),
)
def test_backoff_is_full_jitter_capped_exponential(
    retry: int, base: float, cap: float, seed: int
) -> None:
    options = RunnerOptions(backoff_base=base, backoff_max=cap)
    delay = options.backoff_delay(retry, random.Random(seed))
    bound = min(cap, base * 2.0 ** (retry - 1))
    assert delay == random.Random(seed).uniform(0.0, bound)
    assert 0.0 <= delay <= bound


def test_error_type_name_is_bare_for_builtins_and_qualified_otherwise() -> None:
    class TransientError(Exception):
        pass

    assert error_type_name(TimeoutError()) == "TimeoutError"
    qualified = f"{TransientError.__module__}.{TransientError.__qualname__}"
    assert error_type_name(TransientError()) == qualified


def test_query_error_names_the_query_and_survives_pickling() -> None:
    error = QueryError(QueryFailure("q9", "OSError", "connection reset", 1))
    assert error.query_id == "q9"
    assert (
        str(error) == "retrieval failed for query 'q9' after 1 attempt: OSError: connection reset"
    )
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.failure, str(copy)) == (error.failure, str(error))


# -- concurrency ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_async_calls_in_flight_reach_but_never_exceed_max_concurrency() -> None:
    retriever = AsyncRetriever(latency=0.01)
    outcomes = await run(retriever, plan(40), max_concurrency=5)
    assert retriever.probe.peak == 5
    assert sorted(by_id(outcomes)) == sorted(query_id for query_id, _ in plan(40))


@pytest.mark.anyio
async def test_async_default_concurrency_is_sixteen() -> None:
    retriever = AsyncRetriever(latency=0.01)
    await run(retriever, plan(40))
    assert retriever.probe.peak == 16


@pytest.mark.anyio
async def test_a_fixed_pool_pulls_lazily_from_one_iterator() -> None:
    pulled = 0
    concurrency = 4
    baseline = len(anyio.get_running_tasks())
    tasks_seen: list[int] = []
    pending: list[int] = []
    outcomes: list[QueryOutcome] = []

    def planned() -> Iterator[tuple[str, str]]:
        nonlocal pulled
        for query_id, text in plan(60):
            pulled += 1
            yield query_id, text

    async def retrieve(text: str) -> str:
        tasks_seen.append(len(anyio.get_running_tasks()))
        pending.append(pulled - len(outcomes))
        await anyio.sleep(0.002)
        return text

    options = RunnerOptions(max_concurrency=concurrency)
    await run_queries_async(retrieve, planned(), options, outcomes.append, is_async=True)
    assert len(outcomes) == pulled == 60
    assert max(tasks_seen) <= baseline + concurrency
    assert max(pending) <= concurrency


def meeting_retriever(probe: Probe, parties: int) -> Any:
    """A sync retriever whose calls wait until ``parties`` of them are running together."""
    barrier = threading.Barrier(parties, timeout=5)

    def retrieve(text: str) -> str:
        probe.enter(text, time.monotonic())
        try:
            barrier.wait()
            return text
        finally:
            probe.leave()

    return retrieve


@pytest.mark.anyio
@pytest.mark.parametrize("concurrency", [4, 50])
async def test_sync_calls_run_in_worker_threads_bounded_by_max_concurrency(
    concurrency: int,
) -> None:
    # 50 is above anyio's default thread limit (40): the run must use a limiter of its own.
    probe = Probe()
    outcomes: list[QueryOutcome] = []
    options = RunnerOptions(max_concurrency=concurrency)
    retrieve = meeting_retriever(probe, concurrency)
    await run_queries_async(
        retrieve, plan(3 * concurrency), options, outcomes.append, is_async=False
    )
    assert probe.peak == concurrency
    assert threading.get_ident() not in probe.threads
    assert {o.query_id: o.results for o in outcomes} == dict(plan(3 * concurrency))


@pytest.mark.anyio
async def test_sync_calls_default_to_one_at_a_time() -> None:
    retriever = SyncRetriever(latency=0.005)
    await run(retriever, plan(6))
    assert retriever.probe.peak == 1


@pytest.mark.anyio
async def test_outcomes_carry_results_latency_and_attempts() -> None:
    retriever = AsyncRetriever(latency=0.02)
    outcome = (await run(retriever, plan(1)))[0]
    assert (outcome.query_id, outcome.results, outcome.failure, outcome.attempts) == (
        "q0",
        "text-q0",
        None,
        1,
    )
    assert 0.015 <= outcome.latency < 1.0


# -- every query once, retries ------------------------------------------------------------------

fail_plans = st.lists(st.integers(0, 3), min_size=0, max_size=12)


def check_outcomes(
    outcomes: list[QueryOutcome], fail_times: list[int], retries: int, calls: Counter[str]
) -> None:
    outcome_of = by_id(outcomes)
    assert sorted(outcome_of) == sorted(f"q{i}" for i in range(len(fail_times)))
    for i, failures in enumerate(fail_times):
        outcome = outcome_of[f"q{i}"]
        expected_attempts = min(failures, retries) + 1
        assert outcome.attempts == expected_attempts == calls[f"text-q{i}"]
        if failures <= retries:
            assert (outcome.results, outcome.failure) == (f"text-q{i}", None)
        else:
            message = f"text-q{i} failed on attempt {expected_attempts}"
            assert outcome.results is None
            assert outcome.failure == QueryFailure(f"q{i}", "OSError", message, expected_attempts)


@pytest.mark.anyio
@settings(max_examples=25, deadline=None)
@given(fail_times=fail_plans, retries=st.integers(0, 3), concurrency=st.integers(1, 5))
async def test_every_query_yields_one_outcome_with_exact_attempts_async(
    fail_times: list[int], retries: int, concurrency: int
) -> None:
    fails = {f"text-q{i}": n for i, n in enumerate(fail_times)}
    retriever = AsyncRetriever(fail_times=fails)
    outcomes = await run(
        retriever,
        plan(len(fail_times)),
        max_concurrency=concurrency,
        retries=retries,
        on_error="record",
        **FAST_BACKOFF,
    )
    check_outcomes(outcomes, fail_times, retries, retriever.probe.calls)


@pytest.mark.anyio
@settings(max_examples=10, deadline=None)
@given(fail_times=fail_plans, retries=st.integers(0, 3), concurrency=st.integers(1, 5))
async def test_every_query_yields_one_outcome_with_exact_attempts_in_threads(
    fail_times: list[int], retries: int, concurrency: int
) -> None:
    fails = {f"text-q{i}": n for i, n in enumerate(fail_times)}
    retriever = SyncRetriever(fail_times=fails)
    outcomes = await run(
        retriever,
        plan(len(fail_times)),
        max_concurrency=concurrency,
        retries=retries,
        on_error="record",
        **FAST_BACKOFF,
    )
    check_outcomes(outcomes, fail_times, retries, retriever.probe.calls)


@settings(max_examples=50, deadline=None)
@given(fail_times=fail_plans, retries=st.integers(0, 3))
def test_every_query_yields_one_outcome_with_exact_attempts_inline(
    fail_times: list[int], retries: int
) -> None:
    fails = {f"text-q{i}": n for i, n in enumerate(fail_times)}
    retriever = SyncRetriever(fail_times=fails)
    outcomes: list[QueryOutcome] = []
    options = RunnerOptions(retries=retries, on_error="record", **FAST_BACKOFF)
    run_queries_inline(retriever, plan(len(fail_times)), options, outcomes.append)
    assert [o.query_id for o in outcomes] == [q for q, _ in plan(len(fail_times))]
    check_outcomes(outcomes, fail_times, retries, retriever.probe.calls)


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["async", "thread"])
async def test_errors_outside_retry_on_fail_at_once(kind: str) -> None:
    error_fails = {"text-q0": 5}
    retriever: AsyncRetriever | SyncRetriever = (
        AsyncRetriever(fail_times=error_fails, error=ValueError)
        if kind == "async"
        else SyncRetriever(fail_times=error_fails, error=ValueError)
    )
    outcomes = await run(retriever, plan(1), retries=4, on_error="record", **FAST_BACKOFF)
    assert outcomes[0].attempts == 1 == retriever.probe.calls["text-q0"]
    assert outcomes[0].failure is not None
    assert outcomes[0].failure.error_type == "ValueError"


@pytest.mark.anyio
async def test_retry_on_chooses_what_is_retried() -> None:
    retriever = AsyncRetriever(fail_times={"text-q0": 2}, error=KeyError)
    options = {"retries": 3, "retry_on": (KeyError,), "on_error": "record", **FAST_BACKOFF}
    outcomes = await run(retriever, plan(1), **options)
    assert (outcomes[0].attempts, outcomes[0].results) == (3, "text-q0")


class CeilingRandom(random.Random):
    """A random source whose jitter always picks the longest backoff allowed."""

    def uniform(self, a: float, b: float) -> float:
        return b


@pytest.mark.anyio
async def test_backoff_sleeps_between_attempts_and_counts_in_latency() -> None:
    retriever = AsyncRetriever(fail_times={"text-q0": 2})
    options = {"retries": 2, "backoff_base": 0.05, "rng": CeilingRandom()}
    outcome = (await run(retriever, plan(1), **options))[0]
    first, second, third = (start for _, start in retriever.probe.starts)
    assert second - first >= 0.045
    assert third - second >= 0.095
    assert outcome.attempts == 3
    assert outcome.latency >= 0.14


def test_inline_backoff_uses_the_injected_random_source() -> None:
    retriever = SyncRetriever(fail_times={"text-q0": 1})
    outcomes: list[QueryOutcome] = []
    options = RunnerOptions(retries=1, backoff_base=0.05, rng=CeilingRandom())
    run_queries_inline(retriever, plan(1), options, outcomes.append)
    first, second = (start for _, start in retriever.probe.starts)
    assert second - first >= 0.045
    assert outcomes[0].latency >= 0.045


# -- timeouts ---------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_an_async_call_that_hangs_times_out_on_every_attempt() -> None:
    retriever = AsyncRetriever(hang=frozenset({"text-q1"}))
    # q1 waits forever: only the timeout of each attempt ends it.
    outcomes = await run(
        retriever, plan(3), timeout=0.05, retries=2, on_error="record", **FAST_BACKOFF
    )
    failure = by_id(outcomes)["q1"].failure
    assert failure is not None
    assert (failure.error_type, failure.attempts) == ("TimeoutError", 3)
    assert "0.05 s timeout" in failure.message
    assert retriever.probe.cancelled == 3
    assert [by_id(outcomes)[q].results for q in ("q0", "q2")] == ["text-q0", "text-q2"]


@pytest.mark.anyio
async def test_a_timed_out_attempt_is_retried() -> None:
    slow_once = AsyncRetriever()
    original = slow_once.__call__

    async def first_attempt_hangs(text: str) -> str:
        if slow_once.probe.calls[text] == 0:
            slow_once.probe.calls[text] += 1
            await anyio.sleep_forever()
        return await original(text)

    outcomes: list[QueryOutcome] = []
    options = RunnerOptions(timeout=0.05, retries=1, **FAST_BACKOFF)
    await run_queries_async(first_attempt_hangs, plan(1), options, outcomes.append, is_async=True)
    assert (outcomes[0].results, outcomes[0].attempts) == ("text-q0", 2)


@pytest.mark.anyio
async def test_a_sync_call_that_hangs_is_abandoned_after_the_timeout() -> None:
    retriever = SyncRetriever(hang=frozenset({"text-q0"}))
    outcomes = await run(retriever, plan(2), timeout=0.1, max_concurrency=2, on_error="record")
    # The run came back while q0's thread still hangs: it was abandoned, not waited for.
    still_running = retriever.probe.in_flight
    await drain_threads(retriever, expected=2)
    assert still_running == 1
    failure = by_id(outcomes)["q0"].failure
    assert failure is not None
    assert (failure.error_type, failure.attempts) == ("TimeoutError", 1)
    assert by_id(outcomes)["q1"].results == "text-q1"


# -- rate limit -------------------------------------------------------------------------------


class Releases:
    """The pacer's release times: each attempt's turn as the pacer computed it.

    A start the machine delays comes after its release, and shortens the gap to the next start:
    the rate limit is a promise about releases, and a start never comes before its own."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.times: list[float] = []
        # The loop's clock minus time.monotonic (trio's clock has an offset; asyncio's none).
        self.offsets: list[float] = []
        releases, offsets = self.times, self.offsets

        class AsyncPacer(runner_module._AsyncPacer):
            async def wait(self, requests: int = 1) -> None:
                await super().wait(requests)
                releases.append(self._next_start - self._interval * requests)
                offsets.append(anyio.current_time() - time.monotonic())

        class InlineRun(inline_module._InlineRun):
            def _pace(self, requests: int) -> None:
                super()._pace(requests)
                releases.append(self._next_start - self._interval * requests)
                offsets.append(0.0)

        monkeypatch.setattr(runner_module, "_AsyncPacer", AsyncPacer)
        monkeypatch.setattr(inline_module, "_InlineRun", InlineRun)

    def check(self, starts: list[float], rate: float, *, monotonic: bool = False) -> None:
        """Every release at least ``1 / rate`` after the one before, and the ``i``-th start
        (in time order) no earlier than the ``i``-th release; ``monotonic`` when the starts
        were read from time.monotonic rather than the loop's clock (threads)."""
        assert len(self.times) == len(starts)
        gaps = [later - earlier for earlier, later in itertools.pairwise(self.times)]
        assert min(gaps) >= (1 - 1e-9) / rate
        releases = self.times
        if monotonic:  # the two clocks were read one after the other: a microsecond apart
            paired = zip(self.times, self.offsets, strict=True)
            releases = [t - offset - 1e-3 for t, offset in paired]
        pairs = zip(sorted(starts), releases, strict=True)
        assert all(start >= release for start, release in pairs), (sorted(starts), releases)


@pytest.mark.anyio
async def test_rate_limit_spaces_every_attempt_across_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rate = 50.0
    releases = Releases(monkeypatch)
    retriever = AsyncRetriever(fail_times={"text-q0": 1, "text-q3": 1})
    await run(retriever, plan(8), rate_limit=rate, max_concurrency=4, retries=1, backoff_base=0)
    starts = [start for _, start in retriever.probe.starts]
    assert len(starts) == 10  # 8 queries, 2 retried: every attempt is paced, by one pacer
    releases.check(starts, rate)


@pytest.mark.anyio
async def test_rate_limit_applies_to_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    rate = 40.0
    releases = Releases(monkeypatch)
    retriever = SyncRetriever()
    await run(retriever, plan(8), rate_limit=rate, max_concurrency=4)
    starts = [start for _, start in retriever.probe.starts]
    assert len(starts) == 8
    releases.check(starts, rate, monotonic=True)


def test_rate_limit_applies_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    rate = 50.0
    releases = Releases(monkeypatch)
    retriever = SyncRetriever()
    run_queries_inline(retriever, plan(6), RunnerOptions(rate_limit=rate), lambda _: None)
    starts = [start for _, start in retriever.probe.starts]
    assert len(starts) == 6
    releases.check(starts, rate)


# -- failures: raise and record ---------------------------------------------------------------


@pytest.mark.anyio
async def test_raise_mode_cancels_the_rest_and_raises_query_error() -> None:
    retriever = AsyncRetriever(latency=0.02, fail_times={"text-q5": 1}, error=ValueError)
    outcomes: list[QueryOutcome] = []
    options = RunnerOptions(max_concurrency=4)
    with pytest.raises(QueryError) as raised:
        await run_queries_async(retriever, plan(50), options, outcomes.append, is_async=True)
    error = raised.value
    assert error.query_id == "q5"
    assert "'q5'" in str(error)
    assert isinstance(error.__cause__, ValueError)
    assert str(error.__cause__) == "text-q5 failed on attempt 1"
    started = [text for text, _ in retriever.probe.starts]
    assert started[-1] == "text-q5"  # no call started after the failure
    assert retriever.probe.cancelled >= 1  # calls under way were cancelled...
    assert retriever.probe.in_flight == 0  # ...and none is left running
    assert len(outcomes) + retriever.probe.cancelled + 1 == len(started)


@pytest.mark.anyio
async def test_raise_mode_with_threads_raises_query_error_and_starts_nothing_more() -> None:
    retriever = SyncRetriever(latency=0.1, fail_times={"text-q2": 1})
    with pytest.raises(QueryError) as raised:
        await run(retriever, plan(40), max_concurrency=3)
    assert raised.value.query_id == "q2"
    assert isinstance(raised.value.__cause__, OSError)
    # q0 and q1 were handed to threads before q2 failed: each either never began or runs on
    # abandoned, but no worker takes another query.
    await anyio.sleep(0.05)
    started = len(retriever.probe.starts)
    await drain_threads(retriever, expected=started)
    await anyio.sleep(0.05)
    texts = [text for text, _ in retriever.probe.starts]
    assert len(texts) == started
    assert "text-q2" in texts
    assert set(texts) <= {"text-q0", "text-q1", "text-q2"}


@pytest.mark.anyio
async def test_record_mode_keeps_going_after_failures() -> None:
    retriever = AsyncRetriever(fail_times={"text-q1": 9, "text-q4": 9}, error=RuntimeError)
    outcomes = await run(retriever, plan(6), max_concurrency=2, on_error="record")
    failed = {q for q, o in by_id(outcomes).items() if o.failure is not None}
    assert failed == {"q1", "q4"}
    assert len(outcomes) == 6


def test_inline_raise_mode_raises_query_error_chained_to_the_cause() -> None:
    retriever = SyncRetriever(fail_times={"text-q1": 1}, error=KeyError)
    outcomes: list[QueryOutcome] = []
    with pytest.raises(QueryError, match="'q1'") as raised:
        run_queries_inline(retriever, plan(4), RunnerOptions(), outcomes.append)
    assert isinstance(raised.value.__cause__, KeyError)
    assert [o.query_id for o in outcomes] == ["q0"]
    assert len(retriever.probe.starts) == 2


@pytest.mark.anyio
async def test_an_error_in_on_outcome_stops_the_run_and_propagates_bare() -> None:
    retriever = AsyncRetriever(latency=0.01)
    seen: list[str] = []

    def on_outcome(outcome: QueryOutcome) -> None:
        seen.append(outcome.query_id)
        if len(seen) == 3:
            raise ZeroDivisionError("scoring failed")

    with pytest.raises(ZeroDivisionError, match="scoring failed"):
        await run_queries_async(
            retriever, plan(30), RunnerOptions(max_concurrency=3), on_outcome, is_async=True
        )
    assert retriever.probe.in_flight == 0
    assert len(retriever.probe.starts) < 30


@pytest.mark.anyio
async def test_an_error_in_the_planned_iterator_propagates_bare() -> None:
    def planned() -> Iterator[tuple[str, str]]:
        yield from plan(3)
        raise LookupError("bad query file")

    with pytest.raises(LookupError, match="bad query file"):
        await run_queries_async(
            AsyncRetriever(), planned(), RunnerOptions(), lambda _: None, is_async=True
        )


# -- cancellation -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_outer_cancellation_stops_promptly_and_leaves_no_task_behind() -> None:
    retriever = AsyncRetriever(latency=0.02, hang=frozenset({"text-q3", "text-q7"}))
    baseline = len(anyio.get_running_tasks())
    outcomes: list[QueryOutcome] = []
    armed_at: list[float] = []
    with anyio.move_on_after(30) as scope:

        async def retrieve(text: str) -> str:
            # Cancel once the pool is busy, whatever the machine's load did to the start-up.
            if len(retriever.probe.starts) == 20 and not armed_at:
                armed_at.append(time.monotonic())
                scope.deadline = anyio.current_time() + 0.05
            return await retriever(text)

        options = RunnerOptions(max_concurrency=8)
        await run_queries_async(retrieve, plan(10_000), options, outcomes.append, is_async=True)
    assert scope.cancelled_caught
    assert armed_at
    assert retriever.probe.in_flight == 0
    assert max(start for _, start in retriever.probe.starts) < scope.deadline + 0.01
    assert retriever.probe.cancelled >= 2  # at least the two hung calls
    assert len(outcomes) + retriever.probe.cancelled == len(retriever.probe.starts)
    assert len(anyio.get_running_tasks()) == baseline


@pytest.mark.anyio
async def test_outer_cancellation_abandons_hung_threads() -> None:
    retriever = SyncRetriever(hang=frozenset({"text-q0", "text-q1"}))
    with anyio.move_on_after(0.1) as scope:
        await run(retriever, plan(2), max_concurrency=2)
    # Cancelled while both threads still hang: they were abandoned, not waited for.
    still_running = retriever.probe.in_flight
    await drain_threads(retriever, expected=2)
    assert scope.cancelled_caught
    assert still_running == 2


@pytest.mark.anyio
async def test_keyboard_interrupt_is_never_retried_recorded_or_wrapped() -> None:
    retriever = AsyncRetriever(latency=0.01, fail_times={"text-q2": 1}, error=KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt):
        await run(retriever, plan(20), max_concurrency=4, retries=3, on_error="record")
    assert retriever.probe.calls["text-q2"] == 1
    assert retriever.probe.in_flight == 0


def test_keyboard_interrupt_inline_is_never_retried_or_recorded() -> None:
    retriever = SyncRetriever(fail_times={"text-q0": 1}, error=KeyboardInterrupt)
    outcomes: list[QueryOutcome] = []
    options = RunnerOptions(retries=3, on_error="record")
    with pytest.raises(KeyboardInterrupt):
        run_queries_inline(retriever, plan(2), options, outcomes.append)
    assert (retriever.probe.calls["text-q0"], outcomes) == (1, [])


# -- inline -----------------------------------------------------------------------------------


def test_inline_runs_in_the_callers_thread_without_an_event_loop() -> None:
    threads: set[int] = set()

    def retrieve(text: str) -> str:
        threads.add(threading.get_ident())
        with pytest.raises(RuntimeError):
            asyncio.get_running_loop()
        return text

    outcomes: list[QueryOutcome] = []
    run_queries_inline(retrieve, plan(5), RunnerOptions(max_concurrency=1), outcomes.append)
    assert threads == {threading.get_ident()}
    assert [(o.query_id, o.results) for o in outcomes] == plan(5)


@pytest.mark.parametrize(
    ("options", "message"),
    [({"timeout": 1.0}, "timeout"), ({"max_concurrency": 2}, "max_concurrency")],
)
def test_inline_refuses_timeouts_and_concurrency(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run_queries_inline(str.upper, plan(1), RunnerOptions(**options), lambda _: None)
