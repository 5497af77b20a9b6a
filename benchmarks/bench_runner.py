"""Runner benchmark: wall time against the ideal N·L/C, and the runner's peak memory.

A retriever with a fixed latency ``L`` answering ``N`` queries with ``C`` calls in flight can at
best finish in ``N·L/C`` seconds; the ratio of the measured wall time to that ideal is the
runner's overhead. Peak memory is measured with :mod:`tracemalloc` over a lazily generated query
plan and a callback that keeps nothing, so it shows what the runner itself holds: it must not grow
with ``N``.

Run it from the repository root::

    python benchmarks/bench_runner.py               # the defaults below, a few minutes at most
    python benchmarks/bench_runner.py --repeats 3 --backends asyncio
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import anyio

from ef.evaluation._running.runner import QueryOutcome, RunnerOptions, run_queries_async

LATENCY = 0.020
CONCURRENCY = 200
TIMING_QUERIES = 10_000
MEMORY_QUERIES = (10_000, 100_000)
TARGET_RATIO = 1.10
FLOOR = "bare anyio tasks (floor)"


def planned(n: int) -> Iterator[tuple[str, str]]:
    return ((f"q{i}", f"query text {i}") for i in range(n))


async def async_retriever(text: str) -> list[str]:
    await anyio.sleep(LATENCY)
    return [text]


def sync_retriever(text: str) -> list[str]:
    time.sleep(LATENCY)
    return [text]


class Counter:
    """An ``on_outcome`` that keeps nothing but a count (and fails loudly on a failure)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, outcome: QueryOutcome) -> None:
        if outcome.failure is not None:
            raise RuntimeError(f"unexpected failure: {outcome.failure}")
        self.count += 1


def run_once(
    backend: str, n: int, options: RunnerOptions, *, is_async: bool, trace_memory: bool
) -> tuple[float, int]:
    """One run of ``n`` queries: ``(wall seconds, peak traced bytes above the start)``."""
    call: Callable[[str], Any] = async_retriever if is_async else sync_retriever

    async def main() -> tuple[float, int]:
        counter = Counter()
        if trace_memory:
            tracemalloc.start()
            baseline = tracemalloc.get_traced_memory()[0]
        start = time.perf_counter()
        await run_queries_async(call, planned(n), options, counter, is_async=is_async)
        elapsed = time.perf_counter() - start
        peak = 0
        if trace_memory:
            peak = tracemalloc.get_traced_memory()[1] - baseline
            tracemalloc.stop()
        if counter.count != n:
            raise RuntimeError(f"{counter.count} outcomes for {n} queries")
        return elapsed, peak

    return anyio.run(main, backend=backend)


def floor_once(backend: str) -> float:
    """The same sleeps in ``C`` bare anyio tasks, no runner: what the event loop alone costs."""

    async def worker() -> None:
        for _ in range(TIMING_QUERIES // CONCURRENCY):
            await anyio.sleep(LATENCY)

    async def main() -> float:
        start = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(CONCURRENCY):
                group.start_soon(worker)
        return time.perf_counter() - start

    return anyio.run(main, backend=backend)


def wall_time(backend: str, options: RunnerOptions, is_async: bool) -> float:
    return run_once(backend, TIMING_QUERIES, options, is_async=is_async, trace_memory=False)[0]


def timing_table(backends: list[str], repeats: int) -> list[str]:
    ideal = TIMING_QUERIES * LATENCY / CONCURRENCY
    runner_cases: list[tuple[str, RunnerOptions, bool]] = [
        ("async retriever", RunnerOptions(max_concurrency=CONCURRENCY), True),
        (
            "async + timeout, retries",
            RunnerOptions(max_concurrency=CONCURRENCY, timeout=5.0, retries=2),
            True,
        ),
        ("sync retriever, threads", RunnerOptions(max_concurrency=CONCURRENCY), False),
    ]
    cases: list[tuple[str, str, Callable[[], float]]] = []
    for backend in backends:
        cases.append((backend, FLOOR, partial(floor_once, backend)))
        for name, options, is_async in runner_cases:
            cases.append((backend, name, partial(wall_time, backend, options, is_async)))
    # Round-robin, so a change in the machine's load touches every case alike.
    times: dict[tuple[str, str], list[float]] = {(b, name): [] for b, name, _ in cases}
    for _ in range(repeats):
        for backend, name, measure in cases:
            times[backend, name].append(measure())
    lines = [
        f"Wall time: N={TIMING_QUERIES:,}, L={LATENCY * 1000:g} ms, C={CONCURRENCY}, "
        f"ideal N·L/C = {ideal:.3f} s, median of {repeats} (target ratio <= {TARGET_RATIO})",
        "",
        f"| {'backend':<8} | {'case':<26} | {'median s':>8} | {'min s':>6} | {'ratio':>6} "
        f"| {'vs floor':>8} |",
        f"|{'-' * 10}|{'-' * 28}|{'-' * 10}|{'-' * 8}|{'-' * 8}|{'-' * 10}|",
    ]
    for backend, name, _ in cases:
        median = statistics.median(times[backend, name])
        floor = statistics.median(times[backend, FLOOR])
        lines.append(
            f"| {backend:<8} | {name:<26} | {median:>8.3f} | {min(times[backend, name]):>6.3f} "
            f"| {median / ideal:>6.3f} | {median / floor:>8.3f} |"
        )
    return lines


def memory_table(backends: list[str]) -> list[str]:
    options = RunnerOptions(max_concurrency=CONCURRENCY)
    lines = [
        f"Peak memory (tracemalloc) of the runner, async retriever, C={CONCURRENCY}, "
        "lazy plan, callback keeps nothing",
        "",
        f"| {'backend':<8} | {'N':>8} | {'peak KiB':>9} | {'bytes/query':>11} | {'wall s':>7} |",
        f"|{'-' * 10}|{'-' * 10}|{'-' * 11}|{'-' * 13}|{'-' * 9}|",
    ]
    for backend in backends:
        for n in MEMORY_QUERIES:
            elapsed, peak = run_once(backend, n, options, is_async=True, trace_memory=True)
            lines.append(
                f"| {backend:<8} | {n:>8,} | {peak / 1024:>9.1f} | {peak / n:>11.2f} "
                f"| {elapsed:>7.2f} |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timing runs per case")
    parser.add_argument(
        "--backends", nargs="+", default=["asyncio", "trio"], choices=["asyncio", "trio"]
    )
    parser.add_argument("--skip-memory", action="store_true", help="only the timing table")
    args = parser.parse_args()
    for line in timing_table(args.backends, args.repeats):
        print(line, flush=True)
    if not args.skip_memory:
        print()
        for line in memory_table(args.backends):
            print(line, flush=True)


if __name__ == "__main__":
    main()
