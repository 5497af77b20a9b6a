"""Streaming benchmark: a run file larger than memory, scored one query at a time.

A grouped TREC run file of ``--queries`` × ``--depth`` lines (default 100,000 × 1,000 = 100M
lines, about 4 GB) and its qrels (MS MARCO shaped: about one relevant doc per query) are
generated into a temporary directory (``--dir``; removed at the end unless ``--keep``). Then,
each in a fresh process, with ``evaluate_run``'s default metrics and cutoffs:

- **big file, streamed**: ``evaluate_run(path, qrels)``, with the speedups parser (when the
  ``ef-evaluation-speedups`` plugin is installed) and without it (``EF_EVALUATION_PLUGINS=""``);
- **7M lines** (the first ``--small-queries`` queries of the same shape): streamed as above,
  beside the in-memory path (``read_trec_run`` then ``evaluate_run`` on the dict), again with
  and without the speedups parser, and beside pytrec_eval (``parse_run`` + ``evaluate``, the
  same measures at the same cutoffs) on the same lines.

Each process reports its wall time for parse + score (imports and the qrels read not counted)
and its peak resident set size (``VmHWM``, the whole process, interpreter and imports
included). The 7M-line runs are repeated (``--repeats``, median); the big file is read once
per parser. The streamed and in-memory means must be equal, bit for bit, or it fails.

    python benchmarks/bench_streaming.py                                 # full size
    python benchmarks/bench_streaming.py --queries 2000 --small-queries 500   # a quick look

Targets: peak RSS under 500 MB for the big file; streamed seconds per million lines within 10%
of the in-memory path, with and without the speedups parser.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROTOCOL = "@@bench "
RSS_TARGET_MB = 500.0
RATIO_TARGET = 1.10
# pytrec_eval's names for evaluate_run's default metrics at its default cutoffs (1, 5, 10, 100).
PYTREC_MEASURES = {"ndcg_cut.1,5,10,100", "recall.1,5,10,100", "P.1,5,10,100", "recip_rank"}


def write_files(directory: Path, queries: int, depth: int, small: int) -> dict[str, Path]:
    """The big run, a run of its first ``small`` queries, and the qrels; grouped by query."""
    rng = random.Random(0)
    paths = {name: directory / name for name in ("big.run", "small.run", "qrels.txt")}
    with (
        open(paths["big.run"], "w", encoding="ascii") as big,
        open(paths["small.run"], "w", encoding="ascii") as small_run,
        open(paths["qrels.txt"], "w", encoding="ascii") as qrels,
    ):
        scores = [f"{50 - rank / 25:.4f}" for rank in range(1, depth + 1)]
        for query in range(queries):
            docs = rng.sample(range(8_800_000), depth)
            text = "".join(
                f"q{query} Q0 d{doc} {rank} {score} bm25\n"
                for rank, (doc, score) in enumerate(zip(docs, scores, strict=True), 1)
            )
            big.write(text)
            if query < small:
                small_run.write(text)
            relevant = docs[rng.randrange(depth)] if rng.random() < 0.8 else rng.randrange(10**7)
            qrels.write(f"q{query} 0 d{relevant} 1\n")
    return paths


def worker(mode: str, run_path: str, qrels_path: str) -> None:
    """Parse and score once, then print the seconds, the peak RSS and the means."""
    from ef.evaluation import evaluate_run, read_trec_qrels, read_trec_run
    from ef.evaluation._plugins import HOST

    qrels = read_trec_qrels(qrels_path)
    parser = HOST.trec_run_parser()
    streaming = getattr(parser, "by_query", None) is not None
    started = time.perf_counter()
    if mode == "stream":
        means = dict(evaluate_run(run_path, qrels).metrics)
    elif mode == "memory":
        means = dict(evaluate_run(read_trec_run(run_path), qrels).metrics)
    else:
        import pytrec_eval

        with open(run_path, encoding="utf-8") as lines:
            run = pytrec_eval.parse_run(lines)
        int_qrels = {q: {d: int(g) for d, g in j.items()} for q, j in qrels.items()}
        values = pytrec_eval.RelevanceEvaluator(int_qrels, PYTREC_MEASURES).evaluate(run)
        means = {"queries": float(len(values))}
    seconds = time.perf_counter() - started
    peak_mb = _peak_rss_mb()
    parser_name = "none" if parser is None else ("C, streaming" if streaming else "C")
    answer = {"seconds": seconds, "peak_mb": peak_mb, "means": means, "parser": parser_name}
    print(PROTOCOL + json.dumps(answer), flush=True)


def _peak_rss_mb() -> float:
    """This process's peak resident set size: ``VmHWM``, which, unlike ``ru_maxrss``, does not
    start at the parent's peak after ``fork`` + ``exec``."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # not Linux


def measure(mode: str, plugins: bool, run: Path, qrels: Path) -> dict[str, Any]:
    env = dict(os.environ)
    if not plugins:
        env["EF_EVALUATION_PLUGINS"] = ""
    command = [sys.executable, str(Path(__file__)), "--worker", mode, str(run), str(qrels)]
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    answer: dict[str, Any] = json.loads(
        next(line for line in out.splitlines() if line.startswith(PROTOCOL))[len(PROTOCOL) :]
    )
    which = "plugins" if plugins else "built-in"
    print(
        f"  {mode:<11} {which:<8} {run.name}: {answer['seconds']:.1f} s, "
        f"{answer['peak_mb']:.0f} MB",
        file=sys.stderr,
        flush=True,
    )
    return answer


def count_lines(path: Path) -> int:
    with open(path, "rb") as lines:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: lines.read(1 << 24), b""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=1_000)
    parser.add_argument("--small-queries", type=int, default=7_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None, help="where to write the files")
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    parser.add_argument(
        "--worker", nargs=3, metavar=("MODE", "RUN", "QRELS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    directory = Path(tempfile.mkdtemp(prefix="ef-bench-streaming-", dir=args.dir))
    try:
        started = time.perf_counter()
        paths = write_files(directory, args.queries, args.depth, args.small_queries)
        generated = time.perf_counter() - started
        big_lines, small_lines = count_lines(paths["big.run"]), count_lines(paths["small.run"])
        size_gb = paths["big.run"].stat().st_size / 1e9
        print(f"generated {big_lines:,} lines ({size_gb:.2f} GB) in {generated:.0f} s", flush=True)
        report(paths, big_lines, small_lines, args.repeats)
    finally:
        if args.keep:
            print(f"files kept in {directory}")
        else:
            shutil.rmtree(directory)


def report(paths: dict[str, Path], big_lines: int, small_lines: int, repeats: int) -> None:
    rows: list[tuple[str, int, dict[str, Any], float]] = []
    small_runs: dict[tuple[str, bool], list[dict[str, Any]]] = {}
    for _ in range(repeats):  # interleaved, so a busy moment of the machine hits every row
        for mode, plugins in (
            ("stream", True),
            ("memory", True),
            ("stream", False),
            ("memory", False),
            ("pytrec_eval", True),
        ):
            answer = measure(mode, plugins, paths["small.run"], paths["qrels.txt"])
            small_runs.setdefault((mode, plugins), []).append(answer)
    for (mode, plugins), answers in small_runs.items():
        seconds = statistics.median(a["seconds"] for a in answers)
        rows.append((_label(mode, plugins, answers[0]), small_lines, answers[0], seconds))
    for plugins in (True, False):
        if small_runs["stream", plugins][0]["means"] != small_runs["memory", plugins][0]["means"]:
            raise SystemExit("the streamed means differ from the in-memory means")
    big = {
        plugins: measure("stream", plugins, paths["big.run"], paths["qrels.txt"])
        for plugins in (True, False)
    }
    for plugins, answer in big.items():
        rows.append((_label("stream", plugins, answer), big_lines, answer, answer["seconds"]))
    print()
    print("| path | lines | parse + score s | s per M lines | peak RSS MB |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, lines, answer, seconds in rows:
        print(
            f"| {label} | {lines:,} | {seconds:.1f} | {seconds / lines * 1e6:.2f} | "
            f"{answer['peak_mb']:.0f} |"
        )
    print()
    for plugins in (True, False):
        per_line = {
            mode: statistics.median(a["seconds"] for a in small_runs[mode, plugins]) / small_lines
            for mode in ("stream", "memory")
        }
        ratio = per_line["stream"] / per_line["memory"]
        which = "with the speedups parser" if plugins else "built-in reader"
        mark = "✓" if ratio <= RATIO_TARGET else "✗"
        print(
            f"- streamed / in-memory seconds per line, {which}: {ratio:.2f} "
            f"(target ≤ {RATIO_TARGET}) {mark}"
        )
    for plugins, answer in big.items():
        which = "with the speedups parser" if plugins else "built-in reader"
        mark = "✓" if answer["peak_mb"] < RSS_TARGET_MB else "✗"
        print(
            f"- peak RSS, {big_lines:,} lines streamed, {which}: {answer['peak_mb']:.0f} MB "
            f"(target < {RSS_TARGET_MB:g}) {mark}"
        )


def _label(mode: str, plugins: bool, answer: dict[str, Any]) -> str:
    if mode == "pytrec_eval":
        return "pytrec_eval (parse_run + evaluate)"
    parser = f"parser: {answer['parser']}" if plugins else "built-in reader"
    what = "ef streamed (path)" if mode == "stream" else "ef in memory (read_trec_run + dict)"
    return f"{what}, {parser}"


if __name__ == "__main__":
    main()
