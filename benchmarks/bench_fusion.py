"""Fusion benchmark: ef's ``fuse`` beside ranx's on three runs of the MS MARCO shape.

Three runs of 6,980 queries × 1,000 passages, like a BM25 run and two dense runs of one
collection: run 1 is the MS MARCO shaped workload (:mod:`workloads`); runs 2 and 3 share 70% of
its passages per query, in a locally shuffled order, with their own score scales. By default
each is fused with ``rrf``, ``sum`` under ``min-max`` and ``wsum`` under ``min-max`` (weights
0.5, 0.3, 0.2); ``--methods`` names others, ``--methods all`` every unsupervised method ef and
ranx both have (score-based ones under ``min-max``, rank-based ones on the ranks; ``gmnz`` with
gamma 1.5, ``rbc`` with phi 0.8, the weighted ones with those weights):

- **ef**: ``fuse(runs, method=...)`` on the ``{query_id: {doc_id: score}}`` dicts, end to end
  (checking and ordering the inputs, normalising, fusing, ordering each fused query), as a user
  gets it: with the ``ef-evaluation-speedups`` plugin installed, its C fusion kernel does all of
  it in one call for every method but ``condorcet`` and ``w_condorcet``.
- **ef Python**: the same call with that plugin switched off in-process (so ``fuse`` takes its
  pure-Python path); the same as **ef** when the plugin is not installed.
  ``--skip-plugin-off`` leaves it out.
- **ranx**: ``fuse(ranx_runs, method=..., norm=..., params=...)`` on ``Run`` objects built
  beforehand. Building the three ``Run`` objects is timed in its own column (the first build in
  the process compiles with numba; the table shows a warm build), and so is each method's first
  call, which compiles its numba kernels; numba's on-disk cache goes to a fresh temporary
  directory unless ``--keep-numba-cache``, so that first call is a real compilation.

Calls alternate between the tools, ``gc.collect()`` runs untimed between them, and the workload
is frozen out of the collector. *Agreement* is the largest difference between ef's and ranx's
fused scores over every doc of the first 200 queries (✓ at most 1e-9). The targets: warm ranx ÷
ef at least 3 for the default methods, at least 1 for the others.

    python benchmarks/bench_fusion.py --repeats 2     # ~20 minutes on 2 cores
    python benchmarks/bench_fusion.py --repeats 2 --methods all --queries 1000

"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import random
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import workloads
from bench_scoring import Target, format_target

WEIGHTS = [0.5, 0.3, 0.2]
# method → (ranx's norm: ef's default for the method, parameters): every unsupervised method
# both tools have. Score-based methods fuse min-max normalised scores, rank-based ones the ranks.
ALL_METHODS: dict[str, tuple[str | None, dict[str, Any]]] = {
    "rrf": (None, {}),
    "sum": ("min-max", {}),
    "wsum": ("min-max", {"weights": WEIGHTS}),
    "mnz": ("min-max", {}),
    "anz": ("min-max", {}),
    "max": ("min-max", {}),
    "min": ("min-max", {}),
    "med": ("min-max", {}),
    "gmnz": ("min-max", {"gamma": 1.5}),
    "wmnz": ("min-max", {"weights": WEIGHTS}),
    "mixed": ("min-max", {"weights": WEIGHTS}),
    "isr": (None, {}),
    "log_isr": (None, {}),
    "logn_isr": (None, {"sigma": 0.01}),
    "rbc": (None, {"phi": 0.8}),
    "bordafuse": (None, {}),
    "w_bordafuse": (None, {"weights": WEIGHTS}),
    "condorcet": (None, {}),
    "w_condorcet": (None, {"weights": WEIGHTS}),
}
DEFAULT_METHODS = ("rrf", "sum", "wsum")
METHODS = {name: ALL_METHODS[name] for name in DEFAULT_METHODS}
TOLERANCE = 1e-9
RATIO_TARGET = 3.0
OTHER_RATIO_TARGET = 1.0
CHECKED_QUERIES = 200

Run = dict[str, dict[str, float]]


def three_runs(n_queries: int, depth: int) -> list[Run]:
    """A BM25-like run and two dense-like runs sharing 70% of its passages per query."""
    base = workloads.msmarco_shape(n_queries=n_queries, depth=depth)
    rng = random.Random(workloads.SEED + 7)
    runs: list[Run] = [base.scored(), {}, {}]
    for index, (low, high) in ((1, (0, 1)), (2, (20, 90))):
        for query_id, ranked in base.ranked.items():
            docs = ranked[:]
            for position in rng.sample(range(depth), depth * 3 // 10):
                docs[position] = f"{index}{rng.randrange(10**7)}"
            keys = [position + rng.gauss(0, depth / 6) for position in range(depth)]
            docs = [doc for _, doc in sorted(zip(keys, docs, strict=True))]
            scores = workloads._descending_scores(rng, depth, low, high)
            runs[index][query_id] = dict(zip(docs, scores, strict=True))
    return runs


SPEEDUPS = "speedups"  # the plugin's entry point name


@contextlib.contextmanager
def without_kernel() -> Iterator[None]:
    """The speedups plugin (and so its fusion kernel) switched off, loaded again afterwards."""
    from ef.evaluation._plugins import HOST

    loaded = HOST.manager.get_plugin(SPEEDUPS) is not None
    if loaded:
        HOST.unregister(SPEEDUPS)
    try:
        yield
    finally:
        if loaded:
            HOST.reset()
            HOST.fusion_kernel()  # loads the plugins again, outside the timings


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    started = time.perf_counter()
    out = call()
    return time.perf_counter() - started, out


def largest_difference(ours: Run, theirs: Any, query_ids: list[str]) -> float:
    worst = 0.0
    for query_id in query_ids:
        mine, other = ours[query_id], dict(theirs[query_id])
        if set(mine) != set(other):
            return float("inf")
        worst = max(worst, max((abs(mine[d] - other[d]) for d in mine), default=0.0))
    return worst


def run_benchmark(
    n_queries: int,
    depth: int,
    repeats: int,
    methods: dict[str, tuple[str | None, dict[str, Any]]] | None = None,
    *,
    plugin_off: bool = True,
) -> dict[str, Any]:
    from ef.evaluation import fuse
    from ef.evaluation._plugins import HOST

    kernel = HOST.fusion_kernel() is not None
    runs = three_runs(n_queries, depth)
    gc.collect()
    gc.freeze()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's cast warnings inside ranx's kernels
        from ranx import Run as RanxRun
        from ranx import fuse as ranx_fuse

        build_first, _ = timed(lambda: [RanxRun(run) for run in runs])
        builds = [timed(lambda: [RanxRun(run) for run in runs])[0] for _ in range(repeats)]
        ranx_runs = [RanxRun(run) for run in runs]
        checked = list(runs[0])[:CHECKED_QUERIES]
        rows = []
        for method, (norm, params) in (methods or METHODS).items():
            weights = params.get("weights")
            ef_params = {name: value for name, value in params.items() if name != "weights"}

            def ef_call(
                method: str = method, weights: Any = weights, ef_params: Any = ef_params
            ) -> Run:
                return fuse(runs, method=method, weights=weights, params=ef_params or None)

            def ranx_call(method: str = method, norm: Any = norm, params: Any = params) -> Any:
                return ranx_fuse(ranx_runs, method=method, norm=norm, params=params)

            first, theirs = timed(ranx_call)
            ef_times, python_times, ranx_times = [], [], []
            difference = 0.0
            for _ in range(repeats):
                seconds, ours = timed(ef_call)
                ef_times.append(seconds)
                difference = max(difference, largest_difference(ours, theirs, checked))
                del ours
                if plugin_off:
                    with without_kernel():
                        seconds, ours = timed(ef_call)
                    python_times.append(seconds)
                    difference = max(difference, largest_difference(ours, theirs, checked))
                    del ours
                ranx_times.append(timed(ranx_call)[0])
            del theirs
            print(
                f"{method}: ef {statistics.median(ef_times):.2f} s, "
                f"ranx warm {statistics.median(ranx_times):.2f} s",
                file=sys.stderr,
                flush=True,
            )
            rows.append(
                {
                    "method": method,
                    "norm": norm,
                    "ef": statistics.median(ef_times),
                    "ef_python": statistics.median(python_times) if python_times else None,
                    "ranx_warm": statistics.median(ranx_times),
                    "ranx_first": first,
                    "difference": difference,
                }
            )
    return {
        "queries": n_queries,
        "depth": depth,
        "repeats": repeats,
        "kernel": kernel,
        "ranx_build_first": build_first,
        "ranx_build_warm": statistics.median(builds),
        "rows": rows,
    }


def render(result: dict[str, Any]) -> list[str]:
    kernel = "C kernel (speedups plugin)" if result.get("kernel") else "no kernel installed"
    lines = [
        f"3 runs × {result['queries']:,} queries × {result['depth']:,} docs, "
        f"median of {result['repeats']}; ef: {kernel}",
        "",
        "| method | ef s | ef Python s | ranx warm s | warm ranx ÷ ef | warm ranx ÷ ef Python "
        "| ranx first call (JIT) s | ranx Run build s | agreement |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    build = result["ranx_build_warm"]
    for row in result["rows"]:
        label = row["method"] + (f" ({row['norm']})" if row["norm"] else "")
        ok = "✓" if row["difference"] <= TOLERANCE else "✗"
        python_s = python_ratio = "–"
        if row["ef_python"] is not None:
            python_s = f"{row['ef_python']:.2f}"
            python_ratio = f"{row['ranx_warm'] / row['ef_python']:.1f}×"
        lines.append(
            f"| {label} | {row['ef']:.2f} | {python_s} | {row['ranx_warm']:.2f} | "
            f"{row['ranx_warm'] / row['ef']:.1f}× | {python_ratio} | "
            f"{row['ranx_first']:.2f} | {build:.2f} | {ok} {row['difference']:.1e} |"
        )
    lines += [
        "",
        f"ranx Run build: {build:.2f} s warm (3 runs), {result['ranx_build_first']:.2f} s the "
        "first time (numba compiles)",
    ]
    return lines


def targets(result: dict[str, Any]) -> list[Target]:
    """Warm ranx ÷ ef, per method: at least 3 for the default methods, at least 1 (ef no
    slower than warm ranx) for the others."""
    return [
        (
            f"ranx warm ÷ ef, fuse {row['method']}",
            row["ranx_warm"] / row["ef"],
            RATIO_TARGET if row["method"] in DEFAULT_METHODS else OTHER_RATIO_TARGET,
            False,
        )
        for row in result["rows"]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=6_980)
    parser.add_argument("--depth", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--methods",
        default=",".join(DEFAULT_METHODS),
        help="comma-separated methods, or 'all' for every unsupervised method ranx also has "
        f"({', '.join(ALL_METHODS)}); default: {','.join(DEFAULT_METHODS)}",
    )
    parser.add_argument(
        "--skip-plugin-off",
        action="store_true",
        help="skip the ef Python column (the same call with the speedups plugin switched off)",
    )
    parser.add_argument("--json", help="also write the raw result to this file")
    parser.add_argument(
        "--keep-numba-cache", action="store_true", help="let ranx use numba's on-disk cache"
    )
    args = parser.parse_args()
    names = list(ALL_METHODS) if args.methods == "all" else args.methods.split(",")
    unknown = [name for name in names if name not in ALL_METHODS]
    if unknown:
        parser.error(f"unknown methods {', '.join(unknown)}; known: {', '.join(ALL_METHODS)}")
    methods = {name: ALL_METHODS[name] for name in names}
    with tempfile.TemporaryDirectory() as cache:
        if not args.keep_numba_cache:
            os.environ["NUMBA_CACHE_DIR"] = cache  # before numba is imported
        result = run_benchmark(
            args.queries, args.depth, args.repeats, methods, plugin_off=not args.skip_plugin_off
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=1)
    print("\n".join(render(result)))
    print()
    print("\n".join(map(format_target, targets(result))))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
