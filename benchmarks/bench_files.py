"""File benchmark: read a 7M-line TREC run file and score it, end to end, with peak memory.

The MS MARCO shaped workload (6,980 queries × 1,000 docs = 6,980,000 run lines, about 350 MB)
is written once as ``run.txt`` + ``qrels.txt`` into a cache directory outside the repository
(``--cache-dir``, default ``$EF_BENCH_CACHE`` or ``<tmp>/ef-evaluation-bench``) and reused.
Each tool reads both files through its own public reader and scores the common metric set:

- **ef**: ``read_trec_qrels`` + ``read_trec_run`` + ``evaluate_run``, with the run parser of
  the ``ef-evaluation-speedups`` plugin when it is installed (the row names the parser used).
- **ef-builtin**: the same calls with no plugin loaded (``EF_EVALUATION_PLUGINS=""``), so the
  run file is read by ef's built-in pure-Python reader.
- **pytrec_eval**: ``parse_qrel`` + ``parse_run`` + ``RelevanceEvaluator(...).evaluate`` (MRR@10
  read off ``recip_rank`` as in :mod:`bench_scoring`), then the means.
- **ranx**: ``Qrels.from_file`` + ``Run.from_file`` + ``evaluate``.

Every tool runs in a fresh worker process of its own, started once: it imports the tool and
makes one warm-up call on a one-query file (for ranx, numba's compilation), then waits. The
parent then asks the workers in turn, interleaved, for the timed read + score, several times;
the table shows medians. **Peak memory** is each worker's peak resident set size
(``VmHWM`` in ``/proc/self/status``, the high-water mark of ``ru_maxrss``, read by the
worker itself) after its first timed run — the whole process, interpreter and imports included
— and, beside it, that peak minus the worker's peak before the run (its imports and warm-up).

    python benchmarks/bench_files.py --repeats 3
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import workloads
from bench_scoring import (
    COMMON,
    EF_CUTOFFS,
    EF_METRICS,
    TOLERANCE,
    Target,
    format_target,
    pytrec_eval_call,
)

TOOLS = ("ef", "ef-builtin", "pytrec_eval", "ranx")
ENVIRONMENT = {"ef-builtin": {"EF_EVALUATION_PLUGINS": ""}}
PROTOCOL = "@@bench "  # marks the worker's answers among anything else it prints

Means = dict[str, float]


def ef_files(run_path: str, qrels_path: str) -> Means:
    from ef.evaluation import evaluate_run, read_trec_qrels, read_trec_run

    qrels = read_trec_qrels(qrels_path)
    run = read_trec_run(run_path)
    report = evaluate_run(run, qrels, k_values=EF_CUTOFFS, metrics=EF_METRICS)
    return {key: report.metrics[key] for key in COMMON}


def pytrec_eval_files(run_path: str, qrels_path: str) -> Means:
    import pytrec_eval

    with open(qrels_path, encoding="utf-8") as lines:
        qrels = pytrec_eval.parse_qrel(lines)
    with open(run_path, encoding="utf-8") as lines:
        run = pytrec_eval.parse_run(lines)
    return pytrec_eval_call(run, qrels)


def ranx_files(run_path: str, qrels_path: str) -> Means:
    import ranx

    qrels = ranx.Qrels.from_file(qrels_path, kind="trec")
    run = ranx.Run.from_file(run_path, kind="trec")
    means = ranx.evaluate(qrels, run, list(COMMON))
    return {key: float(value) for key, value in means.items()}


CALLS: dict[str, Callable[[str, str], Means]] = {
    "ef": ef_files,
    "ef-builtin": ef_files,
    "pytrec_eval": pytrec_eval_files,
    "ranx": ranx_files,
}


def peak_rss_mib() -> float:
    """This process's peak resident set size so far, in MiB.

    On Linux ``VmHWM`` from ``/proc/self/status``: ``ru_maxrss`` would do on its own, except
    that Linux carries it over ``fork`` + ``exec``, so a worker would start at its parent's peak.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024  # bytes there, KiB here


def worker(tool: str, run_path: str, qrels_path: str, tiny_run: str, tiny_qrels: str) -> None:
    """Warm up, then answer every ``go`` on stdin with one timed read + score."""
    call = CALLS[tool]
    call(tiny_run, tiny_qrels)
    gc.collect()
    answer({"ready": True, "baseline_mib": peak_rss_mib(), "parser": run_parser(tool)})
    for command in sys.stdin:
        if command.strip() != "go":
            break
        gc.collect()
        start = time.perf_counter()
        means = call(run_path, qrels_path)
        seconds = time.perf_counter() - start
        answer({"seconds": seconds, "means": means, "peak_mib": peak_rss_mib()})


def run_parser(tool: str) -> str | None:
    """Which TREC run parser ef's ``read_trec_run`` uses in this worker (None: built-in)."""
    if not tool.startswith("ef"):
        return None
    from ef.evaluation._plugins import HOST

    parser = HOST.trec_run_parser()
    return None if parser is None else f"{parser.__module__}.{parser.__qualname__}"


def answer(message: Mapping[str, Any]) -> None:
    print(PROTOCOL + json.dumps(message), flush=True)


class Worker:
    """A tool's worker process, driven line by line."""

    def __init__(self, tool: str, files: tuple[Path, Path], tiny: tuple[Path, Path]) -> None:
        self.tool = tool
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker", tool, *map(str, (*files, *tiny))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # numba's type-safety warnings
            text=True,
            env={**os.environ, **ENVIRONMENT.get(tool, {})},
        )
        ready = self.receive()
        self.baseline_mib = ready["baseline_mib"]
        self.parser: str | None = ready["parser"]

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith(PROTOCOL):
                message: dict[str, Any] = json.loads(line[len(PROTOCOL) :])
                return message
        raise RuntimeError(f"the {self.tool} worker exited (code {self.process.wait()})")

    def go(self) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()
        return self.receive()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def default_cache_dir() -> Path:
    configured = os.environ.get("EF_BENCH_CACHE")
    base = Path(configured) if configured else Path(tempfile.gettempdir()) / "ef-evaluation-bench"
    return base / f"msmarco-shape-{workloads.SEED}-v{workloads.FILES_VERSION}"


def prepare_files(cache_dir: Path) -> tuple[tuple[Path, Path], tuple[Path, Path], float]:
    """The big files (written once) and a one-query pair for warm-ups; seconds spent writing."""
    started = time.perf_counter()
    if not ((cache_dir / "run.txt").exists() and (cache_dir / "qrels.txt").exists()):
        workloads.write_trec_files(workloads.msmarco_shape(), cache_dir)
    tiny = workloads.msmarco_shape(n_queries=1, depth=10, seed=1)
    files = workloads.write_trec_files(tiny, cache_dir / "tiny")
    big = (cache_dir / "run.txt", cache_dir / "qrels.txt")
    return big, files, time.perf_counter() - started


def run_benchmark(cache_dir: Path, repeats: int) -> dict[str, Any]:
    big, tiny, setup = prepare_files(cache_dir)
    with big[0].open("rb") as run_file:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: run_file.read(1 << 24), b""))
    workers = {tool: Worker(tool, big, tiny) for tool in TOOLS}
    results: dict[str, list[dict[str, Any]]] = {tool: [] for tool in TOOLS}
    try:
        for repeat in range(repeats):
            shift = repeat % len(TOOLS)
            for tool in TOOLS[shift:] + TOOLS[:shift]:
                results[tool].append(workers[tool].go())
    finally:
        for each in workers.values():
            each.close()
    reference = results["ef"][0]["means"]
    rows = []
    for tool in TOOLS:
        times = [result["seconds"] for result in results[tool]]
        means = results[tool][0]["means"]
        peak = results[tool][0]["peak_mib"]
        rows.append(
            {
                "tool": tool,
                "median": statistics.median(times),
                "min": min(times),
                "samples": times,
                "means": means,
                "max_abs_diff": max(abs(means[key] - reference[key]) for key in means),
                "peak_mib": peak,
                "baseline_mib": workers[tool].baseline_mib,
                "parser": workers[tool].parser,
            }
        )
    return {
        "file": str(big[0]),
        "bytes": big[0].stat().st_size,
        "lines": lines,
        "repeats": repeats,
        "setup_seconds": setup,
        "rows": rows,
    }


def render(result: Mapping[str, Any]) -> list[str]:
    rows = {row["tool"]: row for row in result["rows"]}
    ef = rows["ef"]
    lines = [
        f"### TREC run file, read + score: {result['lines']:,} lines "
        f"({result['bytes'] / 2**20:,.0f} MiB) — median of {result['repeats']}, "
        "each tool in its own process",
        "",
        "| tool | median s | min s | × ef | peak RSS MiB | of which the run "
        "| agreement (max abs diff) | run parser |",
        "|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for row in result["rows"]:
        ok = "✓" if row["max_abs_diff"] <= TOLERANCE else "✗"
        lines.append(
            f"| {row['tool']} | {row['median']:.2f} | {row['min']:.2f} "
            f"| {row['median'] / ef['median']:.1f}× | {row['peak_mib']:,.0f} "
            f"| {row['peak_mib'] - row['baseline_mib']:,.0f} "
            f"| {ok} {row['max_abs_diff']:.1e} | {row.get('parser') or '—'} |"
        )
    lines.append("")
    lines.append(
        "Peak RSS: the worker's `VmHWM` after its first timed run (whole process); "
        "'of which the run': minus its peak after imports and warm-up."
    )
    return lines


def targets(result: Mapping[str, Any]) -> list[Target]:
    rows = {row["tool"]: row for row in result["rows"]}
    ef, pytrec = rows["ef"], rows["pytrec_eval"]
    return [
        ("pytrec_eval ÷ ef, run file read + score", pytrec["median"] / ef["median"], 2.0, False),
        ("ef ÷ pytrec_eval, peak RSS", ef["peak_mib"] / pytrec["peak_mib"], 1.0, True),
    ]


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(*sys.argv[2:7])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--json", help="also write the raw result to this file")
    args = parser.parse_args()
    result = run_benchmark(args.cache_dir or default_cache_dir(), args.repeats)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=1)
    print("\n".join(render(result)))
    print()
    print("\n".join(map(format_target, targets(result))))


if __name__ == "__main__":
    main()
