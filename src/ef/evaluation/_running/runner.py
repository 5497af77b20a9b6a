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
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import anyio
import anyio.to_thread

from ef.evaluation._exceptions import QueryError
from ef.evaluation._running.batches import (
    BatchForm,
    answered_batch,
    batches,
    failed_outcome,
    split,
)
from ef.evaluation._running.inline import run_queries_inline
from ef.evaluation._running.options import QueryOutcome, RunnerOptions, error_type_name

__all__ = [
    "QueryError",
    "QueryOutcome",
    "RunnerOptions",
    "error_type_name",
    "run_queries_async",
    "run_queries_inline",
]


class _AsyncPacer:
    """Spaces attempt starts ``1 / rate`` apart on the event loop clock, across all workers."""

    def __init__(self, rate: float) -> None:
        self._interval = 1.0 / rate
        self._next_start = -math.inf
        # FIFO-fair, so waiting workers take turns; held while sleeping to serialise the starts.
        self._lock = anyio.Lock()

    async def wait(self, requests: int = 1) -> None:
        """Wait for the turn of ``requests`` starts (a batch counts one per query)."""
        async with self._lock:
            delay = self._next_start - anyio.current_time()
            if delay > 0:
                await anyio.sleep(delay)
            self._next_start = anyio.current_time() + self._interval * requests


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
        batch: BatchForm | None = None,
    ) -> None:
        self._call = call
        self._planned = planned
        self._options = options
        self._on_outcome = on_outcome
        self._is_async = is_async
        self._batch = batch
        self._batch_size = 1 if batch is None else batch.size_for(options.batch_size)
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
            if self._batch_size > 1:
                for batch in batches(self._planned, self._batch_size):
                    await self._settle(batch)
                    if self._stopping:
                        return
                return
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
                results = await self._attempt(self._call, text, 1)
            except Exception as caught:
                error = caught
            else:
                return QueryOutcome(
                    query_id, results, None, time.perf_counter() - started, attempts
                )
            if not options.should_retry(error, attempts):
                latency = time.perf_counter() - started
                return failed_outcome(options, query_id, error, attempts, latency)
            await anyio.sleep(options.backoff_delay(attempts, self._rng))

    async def _settle(self, batch: list[tuple[str, str]]) -> None:
        """Answer every query of ``batch``: in one call, or split until each failure is alone."""
        pending = [batch]
        while pending and not self._stopping:
            unit = pending.pop()
            if len(unit) == 1:
                self._on_outcome(await self._fetch(*unit[0]))
                continue
            outcomes = await self._fetch_batch(unit)
            if outcomes is None:
                first, second = split(unit)
                pending += (second, first)
                continue
            for outcome in outcomes:
                self._on_outcome(outcome)

    async def _fetch_batch(self, unit: list[tuple[str, str]]) -> Iterator[QueryOutcome] | None:
        """The outcomes of one batch call, retried on ``retry_on``; ``None`` when it failed."""
        assert self._batch is not None
        options = self._options
        call, texts = self._batch.call_for(unit), [text for _, text in unit]
        attempts = 0
        started = 0.0
        while True:
            await self._before_attempt(len(unit))
            if attempts == 0:
                started = time.perf_counter()
            attempts += 1
            try:
                results = await self._attempt(call, texts, len(unit))
            except Exception as error:
                if not options.should_retry(error, attempts):
                    return None
                await anyio.sleep(options.backoff_delay(attempts, self._rng))
                continue
            return answered_batch(unit, results, attempts, started, options)

    async def _before_attempt(self, requests: int = 1) -> None:
        # A worker resuming from a finished call runs until its next await even after the run
        # was cancelled (by us or by an outer scope): check first, so no new call ever starts.
        if self._stopping or anyio.current_effective_deadline() <= anyio.current_time():
            await anyio.sleep_forever()
        if self._pacer is not None:
            await self._pacer.wait(requests)

    async def _attempt(self, call: Callable[[Any], Any], argument: Any, queries: int) -> Any:
        timeout = self._options.timeout
        if timeout is None:
            return await self._invoke(call, argument)
        with anyio.move_on_after(timeout * queries):
            return await self._invoke(call, argument)
        raise TimeoutError(
            f"the retriever gave no answer within the {timeout * queries:g} s timeout"
            + (f" ({timeout:g} s for each of {queries} queries)" if queries > 1 else "")
        )

    async def _invoke(self, call: Callable[[Any], Any], argument: Any) -> Any:
        if self._is_async:
            return await call(argument)
        return await self._call_in_thread(call, argument)

    async def _call_in_thread(self, call: Callable[[Any], Any], argument: Any) -> Any:
        # On cancellation (a timeout, raise mode, an outer scope) the thread is abandoned: it
        # runs to completion in the background and its result is dropped. Threads cannot be
        # killed, so a hung sync retriever keeps its thread until it returns.
        # Boxed: trio refuses a coroutine returned from a thread with its own error, while
        # asyncio hands it back; boxed, both hand it back and the caller names the problem.
        (results,) = await anyio.to_thread.run_sync(
            _boxed_call, call, argument, limiter=self._limiter, abandon_on_cancel=True
        )
        return results


def _boxed_call(call: Callable[[Any], Any], argument: Any) -> tuple[Any]:
    return (call(argument),)


async def run_queries_async(
    call: Callable[[str], Any],
    planned: Iterable[tuple[str, str]],
    options: RunnerOptions,
    on_outcome: Callable[[QueryOutcome], object],
    *,
    is_async: bool,
    batch: BatchForm | None = None,
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
    :param batch: the retriever's batch form: workers then take ``options.batch_size`` queries
        at a time (see :mod:`~ef.evaluation._running.batches`); ``None``, or a size of 1, asks
        one query per call.
    :raises QueryError: a query failed in ``on_error="raise"`` mode; ``__cause__`` is the
        original exception.
    :raises TypeError: when the batch form answers anything but one result per query.

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
        call,
        iter(planned),
        options,
        on_outcome,
        is_async=is_async,
        concurrency=concurrency,
        batch=batch,
    )
    await run.run(concurrency)
    if run.fatal is not None:
        error, run.fatal = run.fatal, None
        raise error
