"""The test suite beside CPU-bound work: it must finish with every test passed, only slower.

Starts ``--hogs`` processes that spin a core each (``while True: pass``), runs the suite
(``python -m pytest`` from the repository root, in the environment this script runs in), then
ends the hogs by their pids, whatever the suite did. Prints the suite's closing lines (and keeps
its whole output with ``--log FILE``), its wall time and the machine's load average::

    .venv/bin/python benchmarks/suite_under_load.py            # 4 hogs beside the whole suite
    .venv/bin/python benchmarks/suite_under_load.py --hogs 0   # the same run, quiet machine
    .venv/bin/python benchmarks/suite_under_load.py -- tests/test_runner.py   # part of it

Not part of the suite or of ``.ci/run``: it measures the suite, on a machine given to it.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--hogs", type=int, default=4, help="busy processes beside the suite")
    parser.add_argument(
        "--log", type=Path, help="also keep the suite's whole output (stdout, then stderr) here"
    )
    parser.add_argument("pytest_args", nargs="*", help="after --: arguments for pytest")
    options = parser.parse_args()
    if options.hogs < 0:
        parser.error(f"--hogs must be 0 or more, not {options.hogs}")
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(options.hogs)
    ]
    started = time.monotonic()
    try:
        suite = subprocess.run(
            [sys.executable, "-m", "pytest", *options.pytest_args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        for hog in hogs:
            os.kill(hog.pid, signal.SIGKILL)
            hog.wait()
    wall = time.monotonic() - started
    if options.log is not None:
        options.log.write_text(suite.stdout + suite.stderr, encoding="utf-8")
    closing = [line for line in suite.stdout.splitlines() if line.strip()][-20:]
    print("\n".join(closing))
    print(
        f"\nsuite beside {options.hogs} busy processes: exit {suite.returncode}, "
        f"{wall / 60:.1f} min wall; load average now {os.getloadavg()[0]:.1f}"
    )
    return suite.returncode


if __name__ == "__main__":
    sys.exit(main())
