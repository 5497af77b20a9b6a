"""The inline runner: a sync retriever asked in the caller's thread, with no event loop.

The same rules as :func:`~ef.evaluation._running.runner.run_queries_async` (retries with
backoff, the rate limit, failures, batches), in a plain loop.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ef.evaluation._running.batches import (
    BatchForm,
    answered_batch,
    batches,
    failed_outcome,
    split,
)
from ef.evaluation._running.options import QueryOutcome, RunnerOptions

__all__ = ["run_queries_inline"]


def run_queries_inline(
    call: Callable[[str], Any],
    planned: Iterable[tuple[str, str]],
    options: RunnerOptions,
    on_outcome: Callable[[QueryOutcome], object],
    *,
    batch: BatchForm | None = None,
) -> None:
    """Run a sync ``call`` for every planned query, one at a time, in the caller's thread.

    No event loop and no thread is involved, so retrievers bound to their thread keep working.
    Retries, backoff (:func:`time.sleep`), the rate limit, ``on_error`` and batches behave as in
    :func:`run_queries_async`; a call cannot be interrupted here, so ``options.timeout`` must be
    ``None`` and ``max_concurrency`` ``None`` or 1.

    :param call: the adapted sync retriever, ``call(text) -> results``.
    :param planned: ``(query_id, text)`` pairs, in any iterable.
    :param options: the retry, rate and failure rules.
    :param on_outcome: called once per finished query.
    :param batch: the retriever's sync batch form, or ``None``.
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
    run = _InlineRun(options)
    size = 1 if batch is None else batch.size_for(options.batch_size)
    if batch is None or size == 1:
        for query_id, text in planned:
            on_outcome(run.fetch(call, query_id, text))
        return
    for first in batches(iter(planned), size):
        pending = [first]
        while pending:
            unit = pending.pop()
            if len(unit) == 1:
                on_outcome(run.fetch(call, *unit[0]))
                continue
            outcomes = run.fetch_batch(batch, unit)
            if outcomes is None:
                head, tail = split(unit)
                pending += (tail, head)
                continue
            for outcome in outcomes:
                on_outcome(outcome)


class _InlineRun:
    """The rules of :func:`run_queries_inline`: pacing, retries with backoff, failures."""

    def __init__(self, options: RunnerOptions) -> None:
        self._options = options
        self._rng = options.rng or random.Random()
        self._interval = 1.0 / options.rate_limit if options.rate_limit else 0.0
        self._next_start = -math.inf

    def _pace(self, requests: int) -> None:
        if self._interval:
            delay = self._next_start - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self._next_start = time.monotonic() + self._interval * requests

    def fetch(self, call: Callable[[str], Any], query_id: str, text: str) -> QueryOutcome:
        options = self._options
        attempts = 0
        started = 0.0
        while True:
            self._pace(1)
            if attempts == 0:
                started = time.perf_counter()
            attempts += 1
            try:
                results = call(text)
            except Exception as caught:
                error = caught
            else:
                return QueryOutcome(
                    query_id, results, None, time.perf_counter() - started, attempts
                )
            if not options.should_retry(error, attempts):
                latency = time.perf_counter() - started
                return failed_outcome(options, query_id, error, attempts, latency)
            time.sleep(options.backoff_delay(attempts, self._rng))

    def fetch_batch(
        self, batch: BatchForm, unit: list[tuple[str, str]]
    ) -> Iterator[QueryOutcome] | None:
        """The outcomes of one batch call, retried on ``retry_on``; ``None`` when it failed."""
        options = self._options
        call, texts = batch.call_for(unit), [text for _, text in unit]
        attempts = 0
        started = 0.0
        while True:
            self._pace(len(unit))
            if attempts == 0:
                started = time.perf_counter()
            attempts += 1
            try:
                results = call(texts)
            except Exception as error:
                if not options.should_retry(error, attempts):
                    return None
                time.sleep(options.backoff_delay(attempts, self._rng))
                continue
            return answered_batch(unit, results, attempts, started, options)
