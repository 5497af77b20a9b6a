"""Streamed-run memory benchmark: peak RSS against the number of judged queries.

For each size in ``--queries`` (default 200,000 and 1,000,000 judged queries), a grouped TREC
run of ``--depth`` lines per query (default 10) and its qrels (one relevant document per query)
are generated into a temporary directory (``--dir``; removed at the end unless ``--keep``).
Then, in a fresh process each, the command the finding was measured with is run:

    ef-eval run QRELS RUN --format json -o report.json

which streams the run file query by query and writes every query's values. The peak resident
set size of that process is read from ``ru_maxrss`` (``os.wait4`` on the child), so the
interpreter, the imports, the qrels and the report are all counted; the wall time is shown
beside it. The report written is checked: one entry per judged query.

    python benchmarks/bench_stream_memory.py                       # 200,000 and 1,000,000
    python benchmarks/bench_stream_memory.py --queries 20000       # a quick look

Target: peak RSS under 500 MB at 1,000,000 judged queries × 10 lines.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RSS_TARGET_MB = 500.0


def write_files(directory: Path, queries: int, depth: int) -> tuple[Path, Path]:
    """A grouped run of ``queries`` × ``depth`` lines and qrels with one relevant doc each."""
    rng = random.Random(0)
    run, qrels = directory / f"run-{queries}.txt", directory / f"qrels-{queries}.txt"
    scores = [f"{50 - rank / 25:.4f}" for rank in range(1, depth + 1)]
    with open(run, "w", encoding="ascii") as run_file, open(qrels, "w", encoding="ascii") as q:
        for query in range(queries):
            docs = rng.sample(range(8_800_000), depth)
            run_file.write(
                "".join(
                    f"q{query} Q0 d{doc} {rank} {score} bm25\n"
                    for rank, (doc, score) in enumerate(zip(docs, scores, strict=True), 1)
                )
            )
            relevant = docs[rng.randrange(depth)] if rng.random() < 0.8 else rng.randrange(10**7)
            q.write(f"q{query} 0 d{relevant} 1\n")
    return run, qrels


def measure(run: Path, qrels: Path, output: Path) -> tuple[float, float]:
    """Run ``ef-eval run`` once; its wall seconds and peak RSS in MB (``ru_maxrss``)."""
    command = [
        sys.executable, "-m", "ef.evaluation.cli", "run", str(qrels), str(run),
        "--format", "json", "-o", str(output),
    ]  # fmt: skip
    started = time.perf_counter()
    process = subprocess.Popen(command)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"ef-eval run failed with exit code {process.returncode}")
    return seconds, usage.ru_maxrss / 1024  # kilobytes on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, nargs="+", default=[200_000, 1_000_000])
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--dir", type=Path, default=None, help="where to write the files")
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    args = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="ef-bench-stream-memory-", dir=args.dir))
    rows = []
    try:
        for queries in args.queries:
            run, qrels = write_files(directory, queries, args.depth)
            output = directory / f"report-{queries}.json"
            seconds, peak = measure(run, qrels, output)
            with open(output, encoding="utf-8") as report:
                scored = json.load(report)["run-" + f"{queries}.txt"]["n_queries"]
            if scored != queries:
                raise SystemExit(f"the report scored {scored} queries, not {queries}")
            size = run.stat().st_size / 1e6
            rows.append((queries, queries * args.depth, size, seconds, peak))
            print(f"  {queries:,} queries: {seconds:.1f} s, {peak:.0f} MB", file=sys.stderr)
            run.unlink()
    finally:
        if args.keep:
            print(f"files kept in {directory}")
        else:
            shutil.rmtree(directory)
    print("| judged queries | run lines | run MB | seconds | peak RSS MB |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for queries, lines, size, seconds, peak in rows:
        print(f"| {queries:,} | {lines:,} | {size:.0f} | {seconds:.1f} | {peak:.0f} |")
    worst = max(peak for *_, peak in rows)
    print(f"\ntarget: under {RSS_TARGET_MB:.0f} MB at 1,000,000 queries; worst here {worst:.0f} MB")


if __name__ == "__main__":
    main()
