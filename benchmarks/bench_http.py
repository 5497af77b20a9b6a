"""HTTP benchmark: HttpRetriever through the runner beside a bare aiohttp client, same server.

The fault-injecting search server (``tests/http_server.py``) runs in its own process on
127.0.0.1 and answers every request after a fixed latency. For each number of requests in flight
``C``, the same requests are sent by

- **HttpRetriever**: ``await evaluate_retrieval_async(HttpRetriever(...), ...,
  max_concurrency=C)`` — the whole evaluation: runner, HTTP client, JSON, doc-id mapping,
  scoring;
- **bare aiohttp**: ``C`` asyncio tasks sharing one ``aiohttp.ClientSession`` that post the same
  JSON and decode the same answer, nothing else.

Runs are interleaved in pairs, alternating which side goes first; each side's median rate is
reported with the median of the paired ratios HttpRetriever / bare (target >= 0.80 at 64 and
256 in flight). Both read the doc ids only (no scores). HttpRetriever on trio (httpcore) is
measured after; ``--httpx`` adds a bare httpx client on asyncio, the client the choice was
measured against.

Run it from the repository root::

    python benchmarks/bench_http.py                      # 3,000 requests, 20 ms, 5 pairs
    python benchmarks/bench_http.py --requests 1000 --repeats 1 --httpx
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import aiohttp
import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from ef.evaluation._http.retriever import HttpRetriever
from ef.evaluation._running.evaluate import evaluate_retrieval_async
from http_fixtures import running_server

LATENCY = 0.020
REQUESTS = 3_000
CONCURRENCY = (16, 64, 256)
TARGET_RATIO = 0.80
LIMIT = 10


class Workload:
    """``n`` distinct queries, each with a ranking on the server and one relevant document."""

    def __init__(self, n: int) -> None:
        self.queries = {f"q{i}": f"benchmark query {i}" for i in range(n)}
        self.qrels = {f"q{i}": {f"d{i % 97}": 1.0} for i in range(n)}
        self.rankings = {
            text: [(f"d{(i + j) % 97}", float(LIMIT + 5 - j)) for j in range(LIMIT + 5)]
            for i, text in enumerate(self.queries.values())
        }


async def bare_aiohttp(url: str, workload: Workload, concurrency: int) -> float:
    """Requests per second of ``concurrency`` tasks posting through one aiohttp session."""
    texts = iter(workload.queries.values())
    done = 0

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal done
        for text in texts:
            async with session.post(url, json={"query": text, "limit": LIMIT}) as response:
                response.raise_for_status()
                answer = await response.json()
            if not isinstance([hit["id"] for hit in answer["hits"]], list):
                raise RuntimeError("unexpected answer")
            done += 1

    start = time.perf_counter()
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
    elapsed = time.perf_counter() - start
    return _rate(done, len(workload.queries), elapsed)


async def bare_httpx(url: str, workload: Workload, concurrency: int) -> float:
    """The same with one ``httpx.AsyncClient`` (default pool limits raised to ``concurrency``)."""
    import httpx

    texts = iter(workload.queries.values())
    done = 0

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal done
        for text in texts:
            response = await client.post(url, json={"query": text, "limit": LIMIT})
            response.raise_for_status()
            [hit["id"] for hit in response.json()["hits"]]
            done += 1

    start = time.perf_counter()
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(limits=limits, timeout=None) as client:
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
    elapsed = time.perf_counter() - start
    return _rate(done, len(workload.queries), elapsed)


async def through_retriever(url: str, workload: Workload, concurrency: int) -> float:
    """Requests per second of a whole evaluation with HttpRetriever at ``concurrency``."""
    start = time.perf_counter()
    async with HttpRetriever(url, results="hits") as retriever:
        report = await evaluate_retrieval_async(
            retriever,
            workload.qrels,
            workload.queries,
            k_values=(LIMIT,),
            max_concurrency=concurrency,
        )
    elapsed = time.perf_counter() - start
    return _rate(report.n_queries, len(workload.queries), elapsed)


def _rate(done: int, expected: int, elapsed: float) -> float:
    if done != expected:
        raise RuntimeError(f"{done} of {expected} requests answered")
    return done / elapsed


Client = Callable[[str, Workload, int], Coroutine[Any, Any, float]]


def measure(client: Client, backend: str, url: str, workload: Workload, concurrency: int) -> float:
    return anyio.run(client, url, workload, concurrency, backend=backend)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=REQUESTS)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--latency", type=float, default=LATENCY)
    parser.add_argument("--concurrency", type=int, nargs="+", default=list(CONCURRENCY))
    parser.add_argument("--trio-repeats", type=int, default=1)
    parser.add_argument("--httpx", action="store_true", help="add a bare httpx client on asyncio")
    arguments = parser.parse_args()
    workload = Workload(arguments.requests)

    with (
        tempfile.TemporaryDirectory() as directory,
        running_server(
            Path(directory), rankings=workload.rankings, latency=arguments.latency
        ) as server,
    ):
        url = server.url("/search")
        # Warm-up: imports, plugin loading, first connections.
        for backend in ("asyncio", "trio"):
            measure(through_retriever, backend, url, Workload(200), 16)
        measure(bare_aiohttp, "asyncio", url, Workload(200), 16)
        print(
            f"{arguments.requests:,} requests, server latency {arguments.latency * 1000:g} ms, "
            f"medians of {arguments.repeats} interleaved runs; ratio = median of the paired "
            f"ratios, target >= {TARGET_RATIO:.2f} at 64 and 256 in flight"
        )
        print()
        header = (
            f"| {'in flight':>9} | {'bare aiohttp req/s':>18} | {'HttpRetriever req/s':>19} "
            f"| {'ratio':>5} |"
        )
        if arguments.httpx:
            header += f" {'bare httpx req/s':>16} |"
        header += f" {'HttpRetriever trio req/s':>24} |"
        print(header)
        print("|" + "|".join("-" * (len(cell) + 0) for cell in header.split("|")[1:-1]) + "|")
        for concurrency in arguments.concurrency:
            bare: list[float] = []
            ours: list[float] = []
            for repeat in range(arguments.repeats):
                # Alternate which side goes first, so a drift in the machine's load hits both.
                sides = [(bare, bare_aiohttp), (ours, through_retriever)]
                for rates, client in sides if repeat % 2 == 0 else sides[::-1]:
                    rates.append(measure(client, "asyncio", url, workload, concurrency))
            # The median of the paired ratios: each pair ran back to back, under the same load.
            ratio = statistics.median(o / b for o, b in zip(ours, bare, strict=True))
            row = (
                f"| {concurrency:>9} | {statistics.median(bare):>18,.0f} | "
                f"{statistics.median(ours):>19,.0f} | {ratio:>5.2f} |"
            )
            if arguments.httpx:
                rate = measure(bare_httpx, "asyncio", url, workload, concurrency)
                row += f" {rate:>16,.0f} |"
            trio = [
                measure(through_retriever, "trio", url, workload, concurrency)
                for _ in range(arguments.trio_repeats)
            ]
            row += f" {statistics.median(trio):>24,.0f} |"
            print(row, flush=True)


if __name__ == "__main__":
    main()
