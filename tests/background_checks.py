"""The whole-tree checks (ruff, mypy strict), run as subprocesses beside the test session.

mypy alone takes one to two minutes of CPU. ``tests/conftest.py`` starts the checks a session
selects as soon as collection ends, at a lower priority, so they use a core the tests leave
idle; ``tests/test_quality.py`` runs last and asserts their results. Their output goes to
temporary files, so nothing they print lands in pytest's report.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]
LINTED = ("src", "tests", "plugins", "benchmarks")
CHECKS: dict[str, tuple[str, ...]] = {
    "ruff-check": ("ruff", "check", *LINTED),
    "ruff-format": ("ruff", "format", "--check", *LINTED),
    "mypy-strict": ("mypy",),
}
"""Each check's name and its command, run as ``python -m COMMAND`` from the repository root."""

_NICENESS = 10
"""How much lower than the tests' the checks' CPU priority is, where the system has priorities."""


class BackgroundCheck:
    """One check running in a subprocess, its output collected in a temporary file.

    :param name: a key of :data:`CHECKS`.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._output: IO[bytes] = tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            [sys.executable, "-m", *CHECKS[name]],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=self._output,
            stderr=subprocess.STDOUT,
        )
        if hasattr(os, "setpriority"):
            niceness = min(os.getpriority(os.PRIO_PROCESS, 0) + _NICENESS, 19)
            os.setpriority(os.PRIO_PROCESS, self._process.pid, niceness)

    def result(self, timeout: float) -> tuple[int, str]:
        """Wait for the check to end; its exit status and everything it printed.

        :param timeout: seconds to wait at most.
        :raises subprocess.TimeoutExpired: if it is still running then.
        """
        returncode = self._process.wait(timeout)
        self._output.seek(0)
        return returncode, self._output.read().decode(errors="replace")

    def stop(self) -> None:
        """End the check if it still runs (the session stopped early) and drop its output."""
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self._output.close()


class BackgroundChecks:
    """The checks of one session, started once each."""

    def __init__(self) -> None:
        self._running: dict[str, BackgroundCheck] = {}

    def start(self, names: Iterable[str]) -> None:
        """Start the named checks that are not running yet.

        :param names: keys of :data:`CHECKS`.
        """
        for name in names:
            if name not in self._running:
                self._running[name] = BackgroundCheck(name)

    def result(self, name: str, timeout: float) -> tuple[int, str]:
        """The named check's exit status and output, once it has ended.

        :raises LookupError: if the check was not started.
        """
        if name not in self._running:
            raise LookupError(f"the check {name!r} was not started when collection ended")
        return self._running[name].result(timeout)

    def stop(self) -> None:
        """End every check still running."""
        for check in self._running.values():
            check.stop()
        self._running.clear()
