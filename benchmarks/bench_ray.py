"""Ray benchmark: the built-in BM25 index over a generated 100k-document corpus, searched
through ``RayRetriever`` with 1 and 2 replicas, beside the in-process index.

The corpus (100,000 documents of 20–80 words drawn from a Zipf-shaped 30,000-word vocabulary)
and 400 queries of 2–5 words are generated from a fixed seed; the index is built once with
``ingest(..., index_dir=...)`` in a cache directory outside the repository (``--cache-dir``,
default ``$EF_BENCH_CACHE`` or ``<tmp>/ef-evaluation-bench``) and every replica loads it with
``load_index``. Ray starts locally (``ray.init``, bound to 127.0.0.1, one CPU per replica).

- **throughput**: ``evaluate_retrieval`` over the 400 queries with ``max_concurrency = 4 ×
  replicas``; median of ``--repeats`` timed runs after a warm-up run, queries per second, and
  the ratio of 2 replicas to 1 (the target: at least 1.6× on 2 cores).
- **overhead**: one query at a time (``max_concurrency=1``, one replica) against the in-process
  index called directly: the median per-query time of each and their difference — what a
  search pays for the trip through Ray (submitting the task, pickling the hits, the reply);
  and the per-query time of actor calls of 4 searches, as micro-batching sends them.

    python benchmarks/bench_ray.py --repeats 3     # ~3-5 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

DOCUMENTS = 100_000
VOCABULARY = 30_000
QUERIES = 400


def _words(rng: random.Random, count: int) -> list[str]:
    # Zipf-like: word i drawn with weight 1 / (i + 1), as in natural text.
    weights = [1.0 / (rank + 1) for rank in range(VOCABULARY)]
    return [f"w{index}" for index in rng.choices(range(VOCABULARY), weights, k=count)]


def workload(seed: int = 27) -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, int]]]:
    """The corpus, the queries and one judged document per query."""
    rng = random.Random(seed)
    lengths = [rng.randint(20, 80) for _ in range(DOCUMENTS)]
    words = iter(_words(rng, sum(lengths)))
    corpus = {
        f"doc{i}": " ".join(next(words) for _ in range(length)) for i, length in enumerate(lengths)
    }
    queries = {f"q{i}": " ".join(_words(rng, rng.randint(2, 5))) for i in range(QUERIES)}
    qrels = {f"q{i}": {f"doc{rng.randrange(DOCUMENTS)}": 1} for i in range(QUERIES)}
    return corpus, queries, qrels


def _timed_evaluation(retriever: Any, queries: Any, qrels: Any, concurrency: int) -> float:
    from ef.evaluation import evaluate_retrieval

    started = time.perf_counter()
    evaluate_retrieval(
        retriever, qrels, queries, k_values=(10,), metrics=("ndcg",), max_concurrency=concurrency
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    default_cache = os.environ.get("EF_BENCH_CACHE") or Path(tempfile.gettempdir()) / (
        "ef-evaluation-bench"
    )
    parser.add_argument("--cache-dir", type=Path, default=Path(default_cache))
    arguments = parser.parse_args()

    # Loopback only: without this, ray.init turns 127.0.0.1 into the machine's address.
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    from ef.source_manager import ingest, load_index
    from ef_evaluation_ray import RayRetriever

    corpus, queries, qrels = workload()
    folder = arguments.cache_dir / "bm25-100k"
    started = time.perf_counter()
    index = ingest(corpus, index_dir=folder)
    print(
        f"index: {len(corpus):,} documents, {(index.loaded_from and 'loaded') or 'built'} "
        f"in {time.perf_counter() - started:.1f} s ({folder})"
    )
    del corpus

    texts = list(queries.values())
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        logging_level="warning",
        log_to_driver=False,
    )
    factory = functools.partial(load_index, folder)
    throughput: dict[int, float] = {}
    in_process: list[float] = []
    through_ray: list[float] = []
    load = os.getloadavg()[0]
    for replicas in (1, 2):
        retriever = RayRetriever(factory, replicas=replicas, num_cpus=1).start()
        concurrency = 4 * replicas
        _timed_evaluation(retriever, queries, qrels, concurrency)  # warm-up
        times = [
            _timed_evaluation(retriever, queries, qrels, concurrency)
            for _ in range(arguments.repeats)
        ]
        throughput[replicas] = len(queries) / statistics.median(times)
        print(
            f"{replicas} replica(s), max_concurrency={concurrency}: "
            f"{throughput[replicas]:.0f} queries/s (runs: "
            + ", ".join(f"{t:.2f} s" for t in times)
            + ")"
        )
        if replicas == 1:
            replica = retriever._actors()[0]
            for text in texts[:50]:  # warm both paths up
                index.search(text, limit=10, per_document=True)
                ray.get(replica.search.remote(text, 10))
            for text in texts[:200]:  # interleaved, so that both see the same load
                tick = time.perf_counter()
                index.search(text, limit=10, per_document=True)
                tock = time.perf_counter()
                ray.get(replica.search.remote(text, 10))
                in_process.append(tock - tick)
                through_ray.append(time.perf_counter() - tock)
            batched, beside = [], []
            for start in range(0, 200, 4):  # the calls micro-batching makes, 4 searches each
                chunk = texts[start : start + 4]
                tick = time.perf_counter()
                for text in chunk:
                    index.search(text, limit=10, per_document=True)
                tock = time.perf_counter()
                ray.get(replica.search_batch.remote([(text, 10) for text in chunk]))
                beside.append((tock - tick) / 4)
                batched.append((time.perf_counter() - tock) / 4)
            single = [
                _timed_evaluation(retriever, dict(list(queries.items())[:100]), qrels, 1) / 100
                for _ in range(arguments.repeats)
            ]
        retriever.shutdown()
    ray.shutdown()

    local = statistics.median(in_process) * 1e3
    remote = statistics.median(through_ray) * 1e3
    runner = statistics.median(single) * 1e3
    in_batches = statistics.median(batched) * 1e3
    in_batches_local = statistics.median(beside) * 1e3
    ratio = throughput[2] / throughput[1]
    print()
    print(f"load average (1 min) at the start and the end: {load:.1f}, {os.getloadavg()[0]:.1f}")
    print("| measure | value |")
    print("|---|---|")
    print(f"| throughput, 1 replica (max_concurrency=4) | {throughput[1]:.0f} q/s |")
    print(f"| throughput, 2 replicas (max_concurrency=8) | {throughput[2]:.0f} q/s |")
    print(f"| ratio 2 ÷ 1 (target ≥ 1.6) | {ratio:.2f}× {'✓' if ratio >= 1.6 else '✗'} |")
    print(f"| per query, in-process `index.search` | {local:.2f} ms |")
    print(f"| per query, one actor call through Ray | {remote:.2f} ms |")
    print(
        f"| per query, in actor calls of 4 searches | {in_batches:.2f} ms "
        f"(in-process beside it: {in_batches_local:.2f} ms) |"
    )
    print(f"| per query, `evaluate_retrieval` through Ray, one at a time | {runner:.2f} ms |")
    print(f"| overhead of the trip through Ray | {remote - local:.2f} ms |")


if __name__ == "__main__":
    main()
