"""The whole-tree checks (ruff, mypy strict), run as subprocesses beside the test session.

mypy alone takes one to two minutes of CPU. ``tests/conftest.py`` starts the checks a session
selects as soon as collection ends, at a lower priority, so they use a core the tests leave
idle; ``tests/test_quality.py`` runs last and asserts their results.

The suite runs in several worker processes (pytest-xdist), each collecting every test, so the
checks live in a folder the whole run shares: the process that owns the run (the one pytest
was started as) makes the folder and names it in an environment variable its workers inherit;
the first process to claim a check starts it; any process waits for a check's result file; the
owner ends whatever still runs when the run ends. A check's output goes to a file there, so
nothing it prints lands in pytest's report.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINTED = ("src", "tests", "plugins", "benchmarks")
MYPY_CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "ef-evaluation"
    / "mypy"
    / hashlib.sha256(str(ROOT).encode()).hexdigest()[:16]
)
"""mypy's cache lives in the user's cache (``ef-evaluation/mypy`` there), in a folder of its own
per checkout (keyed by the checkout's path): two clones checked at once never share one, and a
checkout that ran the suite before checks again only what changed (mypy tells a cached module by
its source's hash when the file's time differs)."""
CHECKS: dict[str, tuple[str, ...]] = {
    "ruff-check": ("ruff", "check", *LINTED),
    "ruff-format": ("ruff", "format", "--check", *LINTED),
    "mypy-strict": ("mypy", "--cache-dir", str(MYPY_CACHE)),
}
"""Each check's name and its command, run as ``python -m COMMAND`` from the repository root."""

FOLDER_VARIABLE = "EF_EVALUATION_CHECKS_DIR"
"""The environment variable naming the run's shared checks folder."""

_NICENESS = 10
"""How much lower than the tests' the checks' CPU priority is, where the system has priorities."""

_POLL_SECONDS = 0.2


class BackgroundChecks:
    """The checks of one test run, shared by its processes through a folder.

    :param folder: the run's checks folder.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def create(cls) -> BackgroundChecks:
        """Make the run's folder and name it for the worker processes started later."""
        folder = Path(tempfile.mkdtemp(prefix="ef-evaluation-checks-"))
        os.environ[FOLDER_VARIABLE] = str(folder)
        return cls(folder)

    @classmethod
    def of_run(cls) -> BackgroundChecks | None:
        """The checks of the run this process belongs to, if its owner made a folder."""
        folder = os.environ.get(FOLDER_VARIABLE)
        return cls(Path(folder)) if folder else None

    def start(self, names: Iterable[str]) -> None:
        """Start the named checks no process of the run has claimed yet.

        :param names: keys of :data:`CHECKS`.
        """
        for name in names:
            try:
                claim = os.open(self.folder / f"{name}.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                continue
            # Spawned, not a Popen: the check outlives the worker that starts it, and no
            # process object is left to warn that it still runs.
            pid = os.posix_spawn(
                sys.executable,
                [sys.executable, __file__, name, str(self.folder)],
                os.environ,
                file_actions=[
                    (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                    (os.POSIX_SPAWN_DUP2, 1, 2),
                ],
                setsid=True,
            )
            os.write(claim, str(pid).encode())
            os.close(claim)
            niceness = min(os.getpriority(os.PRIO_PROCESS, 0) + _NICENESS, 19)
            os.setpriority(os.PRIO_PROCESS, pid, niceness)

    def result(self, name: str, timeout: float) -> tuple[int, str]:
        """Wait for the named check to end; its exit status and everything it printed.

        :param timeout: seconds to wait at most.
        :raises LookupError: if no process of the run started the check.
        :raises TimeoutError: if it is still running after ``timeout`` seconds.
        """
        if not (self.folder / f"{name}.claim").exists():
            raise LookupError(f"the check {name!r} was not started when collection ended")
        status = self.folder / f"{name}.status"
        deadline = time.monotonic() + timeout
        while not status.exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"the check {name!r} still runs after {timeout} s")
            time.sleep(_POLL_SECONDS)
        output = (self.folder / f"{name}.out").read_bytes().decode(errors="replace")
        return int(status.read_text()), output

    def stop(self) -> None:
        """End every check still running and remove the folder (the run's owner does this)."""
        for claim in self.folder.glob("*.claim"):
            pid = claim.read_text()
            if pid and not claim.with_suffix(".status").exists():
                try:
                    os.killpg(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        shutil.rmtree(self.folder, ignore_errors=True)


def _run(name: str, folder: Path) -> None:
    """Run one check, its output to ``NAME.out``, then its exit status to ``NAME.status``.

    The status file appears whole (written aside, then renamed): a waiting process never reads
    half of it.
    """
    with (folder / f"{name}.out").open("wb") as output:
        returncode = subprocess.call(
            [sys.executable, "-m", *CHECKS[name]],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    aside = folder / f"{name}.status.part"
    aside.write_text(str(returncode))
    aside.replace(folder / f"{name}.status")


if __name__ == "__main__":
    _run(sys.argv[1], Path(sys.argv[2]))
