"""The runner: call a retriever once per query with bounded concurrency, timeouts and retries.

This module is pure concurrency. It knows nothing of metrics or document ids: it takes a callable
``call(text) -> results`` (already adapted, ``limit`` already bound), an iterable of planned
``(query_id, text)`` pairs and a callback, and hands the callback one :class:`QueryOutcome` per
query as soon as that query is done, in the event loop's thread.

Two drivers share one set of rules (:class:`RunnerOptions`):

- :func:`run_queries_async` — a fixed pool of ``max_concurrency`` workers in one anyio task group
  pulls from a single shared iterator, so the runner's overhead does not grow with the number of
  queries. Async callables are awaited; sync callables run in worker threads under the run's own
  :class:`anyio.CapacityLimiter`. It runs on asyncio and trio alike.
- :func:`run_queries_inline` — a plain loop in the caller's thread with no event loop at all, for
  sync retrievers that must stay on their thread (sqlite, thread-affine indexes).

Failures: an exception that is an instance of ``retry_on`` is retried after a full-jitter
exponential backoff, up to ``retries`` times; any other exception fails the query at once. With
``on_error="raise"`` the first failed query stops the run and :class:`QueryError` is raised,
chained to the original exception; with ``on_error="record"`` the failure travels to the callback
as a :class:`~ef.evaluation.QueryFailure` and the run goes on. Cancellation,
``KeyboardInterrupt`` and ``SystemExit`` are never caught, retried or recorded.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any

import anyio
import anyio.to_thread

from ef.evaluation._exceptions import QueryError
from ef.evaluation._running.options import (
    QueryOutcome,
    RunnerOptions,
    error_type_name,
    query_failure,
)

__all__ = [
    "QueryError",
    "QueryOutcome",
    "RunnerOptions",
    "error_type_name",
    "run_queries_async",
    "run_queries_inline",
]


def _failed(
    options: RunnerOptions, query_id: str, error: Exception, attempts: int, started: float
) -> QueryOutcome:
    """The outcome of a query that failed for good, or :class:`QueryError` in raise mode."""
    failure = query_failure(query_id, error, attempts)
    if options.on_error == "raise":
        raise QueryError(failure) from error
    return QueryOutcome(query_id, None, failure, time.perf_counter() - started, attempts)


class _AsyncPacer:
    """Spaces attempt starts ``1 / rate`` apart on the event loop clock, across all workers."""

    def __init__(self, rate: float) -> None:
        self._interval = 1.0 / rate
        self._next_start = -math.inf
        # FIFO-fair, so waiting workers take turns; held while sleeping to serialise the starts.
        self._lock = anyio.Lock()

    async def wait(self) -> None:
        async with self._lock:
            delay = self._next_start - anyio.current_time()
            if delay > 0:
                await anyio.sleep(delay)
            self._next_start = anyio.current_time() + self._interval


class _AsyncRun:
    """The state of one :func:`run_queries_async` call, shared by its workers."""

    def __init__(
        self,
        call: Callable[[str], Any],
        planned: Iterator[tuple[str, str]],
        options: RunnerOptions,
        on_outcome: Callable[[QueryOutcome], object],
        *,
        is_async: bool,
        concurrency: int,
    ) -> None:
        self._call = call
        self._planned = planned
        self._options = options
        self._on_outcome = on_outcome
        self._invoke: Callable[[str], Awaitable[Any]] = call if is_async else self._call_in_thread
        # Our own limiter: the default one (40 threads) would cap max_concurrency silently.
        self._limiter = None if is_async else anyio.CapacityLimiter(concurrency)
        self._pacer = _AsyncPacer(options.rate_limit) if options.rate_limit else None
        self._rng = options.rng or random.Random()
        self._scope: anyio.CancelScope | None = None
        self._stopping = False
        self.fatal: BaseException | None = None

    async def run(self, concurrency: int) -> None:
        async with anyio.create_task_group() as group:
            self._scope = group.cancel_scope
            for _ in range(concurrency):
                group.start_soon(self._worker)

    def _stop(self, error: BaseException) -> None:
        if self.fatal is None:
            self.fatal = error
        self._stopping = True
        if self._scope is not None:
            self._scope.cancel()

    async def _worker(self) -> None:
        try:
            for query_id, text in self._planned:
                self._on_outcome(await self._fetch(query_id, text))
                if self._stopping:
                    return
        except anyio.get_cancelled_exc_class():
            raise
        except BaseException as error:
            # A QueryError in raise mode, or an error from ``planned`` or ``on_outcome``: carried
            # out of the task group by hand so the caller sees it bare, not wrapped in an
            # ExceptionGroup; run_queries_async re-raises it once every worker has stopped.
            self._stop(error)

    async def _fetch(self, query_id: str, text: str) -> QueryOutcome:
        options = self._options
        attempts = 0
        started = 0.0
        while True:
            await self._before_attempt()
            if attempts == 0:
                started = time.perf_counter()
            attempts += 1
            try:
                results = await self._attempt(text)
            except Exception as caught:
                error = caught
            else:
                return QueryOutcome(
                    query_id, results, None, time.perf_counter() - started, attempts
                )
            if not options.should_retry(error, attempts):
                return _failed(options, query_id, error, attempts, started)
            await anyio.sleep(options.backoff_delay(attempts, self._rng))

    async def _before_attempt(self) -> None:
        # A worker resuming from a finished call runs until its next await even after the run
        # was cancelled (by us or by an outer scope): check first, so no new call ever starts.
        if self._stopping or anyio.current_effective_deadline() <= anyio.current_time():
            await anyio.sleep_forever()
        if self._pacer is not None:
            await self._pacer.wait()

    async def _attempt(self, text: str) -> Any:
        timeout = self._options.timeout
        if timeout is None:
            return await self._invoke(text)
        with anyio.move_on_after(timeout):
            return await self._invoke(text)
        raise TimeoutError(f"the retriever gave no answer within the {timeout:g} s timeout")

    async def _call_in_thread(self, text: str) -> Any:
        # On cancellation (a timeout, raise mode, an outer scope) the thread is abandoned: it
        # runs to completion in the background and its result is dropped. Threads cannot be
        # killed, so a hung sync retriever keeps its thread until it returns.
        # Boxed: trio refuses a coroutine returned from a thread with its own error, while
        # asyncio hands it back; boxed, both hand it back and the caller names the problem.
        (results,) = await anyio.to_thread.run_sync(
            self._boxed_call, text, limiter=self._limiter, abandon_on_cancel=True
        )
        return results

    def _boxed_call(self, text: str) -> tuple[Any]:
        return (self._call(text),)


async def run_queries_async(
    call: Callable[[str], Any],
    planned: Iterable[tuple[str, str]],
    options: RunnerOptions,
    on_outcome: Callable[[QueryOutcome], object],
    *,
    is_async: bool,
) -> None:
    """Run ``call`` for every planned query with a fixed pool of workers; report each outcome.

    ``options.concurrency_for(is_async)`` workers share one iterator over ``planned`` (consumed
    lazily), so memory and scheduling cost stay flat however many queries there are. Each worker
    calls ``call(text)`` — awaited when ``is_async``, otherwise run in a worker thread — and hands
    the :class:`QueryOutcome` to ``on_outcome`` in the event loop's thread as soon as the query is
    done, successes and recorded failures alike, exactly once per query.

    A sync ``call`` that times out or is cancelled is *abandoned*, not killed: its thread runs on
    in the background and whatever it returns is dropped.

    On the first failed query in ``on_error="raise"`` mode, and on any exception from
    ``planned`` or ``on_outcome``, the other workers are cancelled, no further call starts, and
    the error is raised bare (never an ExceptionGroup). Cancelling the caller (an outer
    :func:`anyio.move_on_after`, ``KeyboardInterrupt``) stops every worker promptly.

    :param call: the adapted retriever, ``call(text) -> results`` (or an awaitable of them).
    :param planned: ``(query_id, text)`` pairs, in any iterable.
    :param options: the concurrency, timeout, retry, rate and failure rules.
    :param on_outcome: called once per finished query, from the event loop's thread.
    :param is_async: whether ``call`` returns an awaitable.
    :raises QueryError: a query failed in ``on_error="raise"`` mode; ``__cause__`` is the
        original exception.

    >>> import anyio
    >>> async def search(text):
    ...     await anyio.sleep(0.01)
    ...     return text.upper()
    >>> outcomes = []
    >>> async def main():
    ...     planned = [("q1", "hello"), ("q2", "world")]
    ...     await run_queries_async(search, planned, RunnerOptions(), outcomes.append,
    ...                             is_async=True)
    >>> anyio.run(main)
    >>> sorted((outcome.query_id, outcome.results) for outcome in outcomes)
    [('q1', 'HELLO'), ('q2', 'WORLD')]
    """
    concurrency = options.concurrency_for(is_async=is_async)
    run = _AsyncRun(
        call, iter(planned), options, on_outcome, is_async=is_async, concurrency=concurrency
    )
    await run.run(concurrency)
    if run.fatal is not None:
        error, run.fatal = run.fatal, None
        raise error


def run_queries_inline(
    call: Callable[[str], Any],
    planned: Iterable[tuple[str, str]],
    options: RunnerOptions,
    on_outcome: Callable[[QueryOutcome], object],
) -> None:
    """Run a sync ``call`` for every planned query, one at a time, in the caller's thread.

    No event loop and no thread is involved, so retrievers bound to their thread keep working.
    Retries, backoff (:func:`time.sleep`), the rate limit and ``on_error`` behave as in
    :func:`run_queries_async`; a call cannot be interrupted here, so ``options.timeout`` must be
    ``None`` and ``max_concurrency`` ``None`` or 1.

    :param call: the adapted sync retriever, ``call(text) -> results``.
    :param planned: ``(query_id, text)`` pairs, in any iterable.
    :param options: the retry, rate and failure rules.
    :param on_outcome: called once per finished query.
    :raises ValueError: if ``options`` asks for a timeout or for concurrency above 1.
    :raises QueryError: a query failed in ``on_error="raise"`` mode; ``__cause__`` is the
        original exception.

    >>> outcomes = []
    >>> run_queries_inline(str.upper, [("q1", "hello")], RunnerOptions(), outcomes.append)
    >>> outcomes[0].query_id, outcomes[0].results, outcomes[0].attempts
    ('q1', 'HELLO', 1)
    """
    if options.timeout is not None:
        raise ValueError(
            f"timeout={options.timeout!r} needs worker threads: a call in the caller's own "
            "thread cannot be interrupted; use run_queries_async for timeouts"
        )
    if options.concurrency_for(is_async=False) != 1:
        raise ValueError(
            f"max_concurrency={options.max_concurrency!r}: inline runs take one query at a "
            "time; use run_queries_async for concurrency"
        )
    rng = options.rng or random.Random()
    interval = 1.0 / options.rate_limit if options.rate_limit else 0.0
    next_start = -math.inf
    for query_id, text in planned:
        attempts = 0
        started = 0.0
        while True:
            if interval:
                delay = next_start - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                next_start = time.monotonic() + interval
            if attempts == 0:
                started = time.perf_counter()
            attempts += 1
            try:
                results = call(text)
            except Exception as caught:
                error = caught
            else:
                on_outcome(
                    QueryOutcome(query_id, results, None, time.perf_counter() - started, attempts)
                )
                break
            if not options.should_retry(error, attempts):
                on_outcome(_failed(options, query_id, error, attempts, started))
                break
            time.sleep(options.backoff_delay(attempts, rng))
