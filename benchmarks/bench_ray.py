"""Ray benchmark: the built-in BM25 index over a generated 100k-document corpus, searched
through ``RayRetriever`` with 1 and 2 replicas, beside the in-process index.

The corpus (100,000 documents of 20–80 words drawn from a Zipf-shaped 30,000-word vocabulary)
and 2,000 queries of 8–12 words (``--query-words``; with 2–5 a search costs about as much
as a call through Ray) are generated from a fixed seed; the index is built once with
``ingest(..., index_dir=...)`` in a cache directory outside the repository (``--cache-dir``,
default ``$EF_BENCH_CACHE`` or ``<tmp>/ef-evaluation-bench``) and every replica loads it with
``load_index``. Ray starts locally (``ray.init``, bound to 127.0.0.1, one CPU per replica).

- **throughput**: ``evaluate_retrieval`` over the queries with ``max_concurrency =
  --per-replica × replicas`` (default 32; the target asks for at least 4), 1 replica then 2,
  ``--repeats`` times over, each on freshly started replicas, timed after a warm-up run:
  queries per second, and the ratio of 2 replicas to 1 in each such pair and their median
  (the target: at least 1.6× on 2 cores). Pairs rather than all the 1-replica runs first: on
  a shared machine the load moves from one minute to the next more than the ratio does.
- **the machine's ceiling**: the same searches in 1 and 2 plain processes (no Ray, no runner)
  started together, before Ray starts: on a shared machine the second core is not always free,
  and no way of spreading the searches scales better than this.
- **CPU per query**: during the timed runs, the CPU time (``/proc``, Linux) of the driver, of
  each replica and of the processes Ray started (raylet, GCS, monitors, idle workers), divided
  by the queries answered — who pays for a query, whatever the load; and the calls per query
  (micro-batching sends several searches in one call).
- **overhead**: one query at a time (``max_concurrency=1``, one replica) against the in-process
  index called directly: the median per-query time of each and their difference — what a
  search pays for the trip through Ray (submitting the task, pickling the hits, the reply),
  with the in-process mean beside it (a few queries take several times the median: the mean
  is what a replica spends per query);
  and the per-query time of actor calls of 4 searches, as micro-batching sends them.

    python benchmarks/bench_ray.py --repeats 3     # ~1.5 minutes on 2 cores (+45 s for the index)
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

DOCUMENTS = 100_000
VOCABULARY = 30_000
QUERIES = 2_000


def _words(rng: random.Random, count: int) -> list[str]:
    # Zipf-like: word i drawn with weight 1 / (i + 1), as in natural text.
    weights = [1.0 / (rank + 1) for rank in range(VOCABULARY)]
    return [f"w{index}" for index in rng.choices(range(VOCABULARY), weights, k=count)]


def workload(
    seed: int = 27, queries_count: int = QUERIES, query_words: tuple[int, int] = (8, 12)
) -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, int]]]:
    """The corpus (the same whatever ``queries_count`` and ``query_words``), the queries of
    ``query_words[0]``–``query_words[1]`` words and one judged document per query."""
    rng = random.Random(seed)
    lengths = [rng.randint(20, 80) for _ in range(DOCUMENTS)]
    words = iter(_words(rng, sum(lengths)))
    corpus = {
        f"doc{i}": " ".join(next(words) for _ in range(length)) for i, length in enumerate(lengths)
    }
    least, most = query_words
    queries = {
        f"q{i}": " ".join(_words(rng, rng.randint(least, most))) for i in range(queries_count)
    }
    qrels = {f"q{i}": {f"doc{rng.randrange(DOCUMENTS)}": 1} for i in range(queries_count)}
    return corpus, queries, qrels


def _actor_pid(actor: Any) -> int:
    return os.getpid()


def _search_all(index: Any, texts: list[str], start: Any, elapsed: Any) -> None:
    start.wait()
    tick = time.perf_counter()
    for _ in range(2):
        for text in texts:
            index.search(text, limit=10, per_document=True)
    elapsed.put(time.perf_counter() - tick)


def bare_throughput(index: Any, texts: list[str], processes: int) -> float:
    """Queries per second of ``processes`` plain processes (forked, no Ray), each searching
    every query twice on the in-process index, started together: what the machine gives
    CPU-bound searches at this moment, the ceiling of any way of spreading them."""
    import multiprocessing

    context = multiprocessing.get_context("fork")  # before Ray starts: the index is shared
    start, elapsed = context.Barrier(processes + 1), context.Queue()
    workers = [
        context.Process(target=_search_all, args=(index, texts, start, elapsed))
        for _ in range(processes)
    ]
    for worker in workers:
        worker.start()
    start.wait()
    slowest = max(elapsed.get() for _ in workers)
    for worker in workers:
        worker.join()
    return processes * 2 * len(texts) / slowest


def _timed_evaluation(retriever: Any, queries: Any, qrels: Any, concurrency: int) -> float:
    from ef.evaluation import evaluate_retrieval

    started = time.perf_counter()
    evaluate_retrieval(
        retriever, qrels, queries, k_values=(10,), metrics=("ndcg",), max_concurrency=concurrency
    )
    return time.perf_counter() - started


def overhead(retriever: Any, index: Any, texts: list[str]) -> dict[str, float]:
    """Medians, in ms per search: one search at a time through a replica (``ray``) beside the
    same search in-process (``local``, with its ``local_mean``); then actor calls of 4
    searches as micro-batching sends them (``batched``) beside the same 4 in-process
    (``beside``)."""
    import ray

    replica = retriever._actors()[0]
    in_process, through_ray, batched, beside = [], [], [], []
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
    for start in range(0, 200, 4):
        chunk = texts[start : start + 4]
        tick = time.perf_counter()
        for text in chunk:
            index.search(text, limit=10, per_document=True)
        tock = time.perf_counter()
        calls = [(start + offset, text, 10) for offset, text in enumerate(chunk)]  # keyed
        ray.get(replica.search_batch.remote(calls))
        beside.append((tock - tick) / 4)
        batched.append((time.perf_counter() - tock) / 4)
    return {
        "local": statistics.median(in_process) * 1e3,
        "local_mean": statistics.fmean(in_process) * 1e3,
        "ray": statistics.median(through_ray) * 1e3,
        "batched": statistics.median(batched) * 1e3,
        "beside": statistics.median(beside) * 1e3,
    }


def _positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected an int >= 1, got {text!r}")
    return number


def _word_range(text: str) -> tuple[int, int]:
    """``MIN-MAX`` words per query, e.g. ``8-12``."""
    least, _, most = text.partition("-")
    try:
        bounds = int(least), int(most or least)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected MIN-MAX words, e.g. 8-12, got {text!r}"
        ) from None
    if not 1 <= bounds[0] <= bounds[1]:
        raise argparse.ArgumentTypeError(f"expected 1 <= MIN <= MAX, got {text!r}")
    return bounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=_positive, default=3)
    parser.add_argument(
        "--queries",
        type=_positive,
        default=QUERIES,
        help=f"queries per timed evaluation (default {QUERIES}); more make each run longer than "
        "its fixed costs and the machine's hiccups",
    )
    parser.add_argument(
        "--per-replica",
        type=_positive,
        default=32,
        help="the runner's max_concurrency per replica (default 32: calls of about 16 searches; "
        "the target asks for at least 4)",
    )
    parser.add_argument(
        "--query-words",
        type=_word_range,
        default=(8, 12),
        help="words per query, MIN-MAX (default 8-12; 2-5 makes a search cost about 1 ms, as "
        "much as a call through Ray)",
    )
    default_cache = os.environ.get("EF_BENCH_CACHE") or Path(tempfile.gettempdir()) / (
        "ef-evaluation-bench"
    )
    parser.add_argument("--cache-dir", type=Path, default=Path(default_cache))
    arguments = parser.parse_args()

    # Loopback only: without this, ray.init turns 127.0.0.1 into the machine's address.
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import _cpu_accounting as accounting
    import ray

    from ef.source_manager import ingest, load_index
    from ef_evaluation_ray import RayRetriever

    corpus, queries, qrels = workload(
        queries_count=arguments.queries, query_words=arguments.query_words
    )
    folder = arguments.cache_dir / "bm25-100k"
    started = time.perf_counter()
    index = ingest(corpus, index_dir=folder)
    print(
        f"index: {len(corpus):,} documents, {(index.loaded_from and 'loaded') or 'built'} "
        f"in {time.perf_counter() - started:.1f} s ({folder})"
    )
    del corpus

    texts = list(queries.values())
    for text in texts[:50]:
        index.search(text, limit=10, per_document=True)
    measured: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(arguments.repeats):  # interleaved, so that both see the same load
        for processes in (1, 2):
            measured[processes].append(bare_throughput(index, texts, processes))
    bare = {processes: statistics.median(values) for processes, values in measured.items()}
    print(
        f"plain processes, no Ray: 1 → {bare[1]:.0f} q/s, 2 → {bare[2]:.0f} q/s "
        f"({bare[2] / bare[1]:.2f}×)"
    )
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        logging_level=logging.WARNING,
        log_to_driver=False,
    )
    factory = functools.partial(load_index, folder)
    times: dict[int, list[float]] = {1: [], 2: []}
    spent: dict[int, dict[str, float]] = {1: {}, 2: {}}
    sent: dict[int, int] = {1: 0, 2: 0}
    costs: dict[str, float] = {}
    single: list[float] = []
    load = os.getloadavg()[0]
    for repeat in range(arguments.repeats):
        # 1 replica, then 2, then 1 again...: each pair of runs sees the same minute's load
        # (a shared machine's load moves more from one minute to the next than the ratio).
        for replicas in (1, 2):
            retriever = RayRetriever(factory, replicas=replicas, num_cpus=1).start()
            concurrency = arguments.per_replica * replicas
            _timed_evaluation(retriever, queries, qrels, concurrency)  # warm-up
            pids = ray.get([actor.__ray_call__.remote(_actor_pid) for actor in retriever._actors()])
            meter = accounting.Meter({pid: f"replica {i + 1}" for i, pid in enumerate(pids)})
            before = retriever._batches.calls
            meter.start()
            times[replicas].append(_timed_evaluation(retriever, queries, qrels, concurrency))
            meter.stop()
            for name, seconds in meter.spent.items():
                spent[replicas][name] = spent[replicas].get(name, 0.0) + seconds
            sent[replicas] += retriever._batches.calls - before
            print(
                f"run {repeat + 1}, {replicas} replica(s), max_concurrency={concurrency}: "
                f"{len(queries) / times[replicas][-1]:.0f} queries/s"
            )
            if replicas == 1 and repeat == 0:
                costs = overhead(retriever, index, list(queries.values()))
                single.extend(
                    _timed_evaluation(retriever, dict(list(queries.items())[:100]), qrels, 1) / 100
                    for _ in range(arguments.repeats)
                )
            retriever.shutdown()
    ray.shutdown()

    answered = len(queries) * arguments.repeats
    for table in spent.values():
        for name in table:
            table[name] /= answered
    calls = {replicas: count / answered for replicas, count in sent.items()}
    throughput = {replicas: len(queries) / statistics.median(t) for replicas, t in times.items()}
    ratios = [one / two for one, two in zip(times[1], times[2], strict=True)]
    local, remote = costs["local"], costs["ray"]
    runner = statistics.median(single) * 1e3
    ratio = statistics.median(ratios)
    print()
    print(f"load average (1 min) at the start and the end: {load:.1f}, {os.getloadavg()[0]:.1f}")
    per = arguments.per_replica
    print("| measure | value |")
    print("|---|---|")
    print(f"| throughput, 1 replica (max_concurrency={per}) | {throughput[1]:.0f} q/s |")
    print(f"| throughput, 2 replicas (max_concurrency={2 * per}) | {throughput[2]:.0f} q/s |")
    print(
        f"| ratio 2 ÷ 1, median of the {len(ratios)} pairs (target ≥ 1.6) | {ratio:.2f}× "
        f"{'✓' if ratio >= 1.6 else '✗'} (pairs: {', '.join(f'{r:.2f}' for r in ratios)}) |"
    )
    print(f"| ratio of the median throughputs | {throughput[2] / throughput[1]:.2f}× |")
    bare_ratio = bare[2] / bare[1]
    print(f"| plain processes, no Ray: 1, 2 | {bare[1]:.0f} q/s, {bare[2]:.0f} q/s |")
    print(f"| ratio of plain processes (the machine's ceiling) | {bare_ratio:.2f}× |")
    print(f"| per query, in-process `index.search` (median) | {local:.2f} ms |")
    print(f"| per query, in-process `index.search` (mean) | {costs['local_mean']:.2f} ms |")
    print(f"| per query, one actor call through Ray | {remote:.2f} ms |")
    print(
        f"| per query, in actor calls of 4 searches | {costs['batched']:.2f} ms "
        f"(in-process beside it: {costs['beside']:.2f} ms) |"
    )
    print(f"| per query, `evaluate_retrieval` through Ray, one at a time | {runner:.2f} ms |")
    print(f"| overhead of the trip through Ray | {remote - local:.2f} ms |")
    if not accounting.available():
        return
    print()
    print("CPU per query during the timed runs (ms), by process:")
    print("| process | 1 replica | 2 replicas |")
    print("|---|---|---|")
    names = sorted({name for table in spent.values() for name in table})
    names.sort(key=lambda name: -sum(table.get(name, 0.0) for table in spent.values()))
    for name in names:
        cells = " | ".join(f"{spent[n].get(name, 0.0) * 1e3:.2f}" for n in (1, 2))
        print(f"| {name} | {cells} |")
    totals = " | ".join(f"{sum(spent[n].values()) * 1e3:.2f}" for n in (1, 2))
    print(f"| **all** | {totals} |")
    print(f"| calls per query | {calls[1]:.2f} | {calls[2]:.2f} |")
    # One replica answers at most one query per its CPU per query; two cores at most two per
    # all the CPU a query costs with two replicas: the ratio two free cores would give.
    ceiling = 2 * spent[1]["replica 1"] / sum(spent[2].values())
    print(f"ratio from CPU per query, were both cores free: {ceiling:.2f}×")


if __name__ == "__main__":
    main()
