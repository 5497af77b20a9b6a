"""The suite finishes: a stuck test fails as itself and the run goes on (tests/suite_limits.py).

Each test runs an inner pytest in a subprocess, on a test file made here, with the limits this
suite uses (``-p suite_limits``) and short timeouts.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

CONFTEST = """
import anyio
import pytest
import trio  # imported here, not inside the first trio test's time

@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param
"""

STUCK = """
import time

import anyio
import pytest


def test_before():
    assert 1 + 1 == 2


def test_sync_code_waits_forever():
    time.sleep(10**6)


@pytest.mark.anyio
async def test_a_loop_waits_forever(anyio_backend):
    await anyio.sleep_forever()


@pytest.mark.anyio
async def test_a_loop_finishes(anyio_backend):
    await anyio.sleep(0)


def test_after():
    assert "run goes on"
"""


def inner_run(
    folder: Path,
    test_source: str | dict[str, str],
    *options: str,
    env: dict[str, str] | None = None,
    timeout: int = 3,
) -> subprocess.CompletedProcess[str]:
    (folder / "conftest.py").write_text(CONFTEST)
    sources = {"test_inner.py": test_source} if isinstance(test_source, str) else test_source
    for name, source in sources.items():
        (folder / name).write_text(source)
    (folder / "pytest.ini").write_text(
        f"[pytest]\ntimeout = {timeout}\ntimeout_method = signal\nbackstop_slack = 2\n"
        "loop_share = 0.5\nfilterwarnings = error\n"
    )
    environment = {**os.environ, **(env or {}), "PYTHONPATH": str(TESTS)}
    environment.pop("EF_EVALUATION_CHECKS_DIR", None)
    environment.pop("PYTEST_XDIST_WORKER", None)
    # Only the plugins the inner run needs: the installed ones take seconds to load in each of
    # its processes.
    environment["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    plugins = ["-p", "pytest_timeout", "-p", "anyio.pytest_plugin"]
    if "no:xdist" not in options:
        plugins += ["-p", "xdist"]
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *plugins,
            "-p",
            "suite_limits",
            "-p",
            "no:cacheprovider",
            "-rA",
            *options,
            str(folder),
        ],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def outcomes(output: str) -> dict[str, str]:
    """Each test's outcome from pytest's ``-rA`` summary lines."""
    found = {}
    for line in output.splitlines():
        for outcome in ("PASSED", "FAILED", "ERROR"):
            if line.startswith(outcome + " "):
                found[line.split()[1].split("::", 1)[1]] = outcome
    return found


def failure_section(output: str, test: str) -> str:
    """The part of pytest's output that reports ``test``'s failure, up to the next header."""
    match = re.search(rf"_+ {re.escape(test)} _+\n(.*?)(?=\n_{{3,}} |\n={{3,}} )", output, re.S)
    assert match is not None, output
    return match.group(1)


@pytest.mark.timeout(300)
def test_each_stuck_test_fails_as_itself_and_the_others_pass(tmp_path: Path) -> None:
    # A wide gap between the loop's limit (4 s) and the signal (8 s): a loaded machine may slow
    # a test's start by seconds, and the loop's limit must be what ends the async tests.
    result = inner_run(tmp_path, STUCK, "-p", "no:xdist", timeout=8)
    found = outcomes(result.stdout)
    assert found == {
        "test_before": "PASSED",
        "test_sync_code_waits_forever": "FAILED",
        "test_a_loop_waits_forever[asyncio]": "FAILED",
        "test_a_loop_waits_forever[trio]": "FAILED",
        "test_a_loop_finishes[asyncio]": "PASSED",
        "test_a_loop_finishes[trio]": "PASSED",
        "test_after": "PASSED",
    }, result.stdout + result.stderr
    assert result.returncode == 1
    assert "3 failed, 4 passed" in result.stdout
    # The loop's own limit failed the async tests, inside the test, with their tracebacks.
    for backend in ("asyncio", "trio"):
        section = failure_section(result.stdout, f"test_a_loop_waits_forever[{backend}]")
        assert (
            "TimeoutError: test_a_loop_waits_forever ran past 4 s inside its event loop "
            "(50% of its timeout)" in section
        ), section
    assert "await anyio.sleep_forever()" in result.stdout
    # The signal failed the sync test where it waited.
    assert "Failed: Timeout (>8.0s) from pytest-timeout" in result.stdout
    assert "time.sleep(10**6)" in result.stdout


@pytest.mark.timeout(300)
def test_a_worker_no_signal_reaches_is_ended_and_replaced_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    source = """
import signal
import time


def test_first():
    assert True


def test_holds_its_worker_where_no_signal_is_handled():
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(10**6)


def test_last():
    assert True
"""
    result = inner_run(tmp_path, source, "-n", "1", "--max-worker-restart=2")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    # The backstop (2 x 3 s + 2 s) ended the worker with every thread's traceback; pytest-xdist
    # reported the test it was running and a new worker ran the rest.
    assert "Timeout (0:00:08)!" in output
    assert "test_holds_its_worker_where_no_signal_is_handled" in output
    assert "replacing crashed worker" in output
    assert "1 failed, 2 passed" in result.stdout


@pytest.mark.timeout(300)
# The limit counts from the run's start: with workers, it must leave them time to start and
# collect on a loaded machine (beside 4 CPU hogs, 5 s once ended a run before any test ran).
@pytest.mark.parametrize(
    ("processes", "limit"),
    [(("-p", "no:xdist"), 5), (("-n", "1"), 20)],
    ids=["alone", "xdist"],
)
def test_the_whole_run_ends_with_its_summary_and_says_why_on_its_last_line(
    tmp_path: Path, processes: tuple[str, ...], limit: int
) -> None:
    source = """
import time

import pytest


def test_before():
    assert True


@pytest.mark.timeout(0)
def test_waits_past_the_runs_limit():
    time.sleep(10**6)


def test_never_started():
    assert True
"""
    env = {"EF_EVALUATION_SUITE_TIMEOUT": str(limit)}
    result = inner_run(tmp_path, source, *processes, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "KeyboardInterrupt" in result.stdout
    assert "1 passed" in result.stdout
    # Said once, after everything else: the summary, the slowest tests, the run's end.
    lines = result.stdout.rstrip("\n").splitlines()
    assert lines[-1] == f"ef-evaluation suite limit: stopped after {limit} s; 1 test never run", (
        output
    )
    assert output.count("suite limit") == 1, output


@pytest.mark.timeout(300)
@pytest.mark.parametrize("processes", [("-p", "no:xdist"), ("-n", "1")], ids=["alone", "xdist"])
def test_a_limit_that_strikes_before_collection_ends_says_so(
    tmp_path: Path, processes: tuple[str, ...]
) -> None:
    # The module's import outlasts the limit: no test was collected, so none can be counted as
    # never run.
    source = """
import time

time.sleep(10**6)


def test_never_collected():
    assert True
"""
    result = inner_run(tmp_path, source, *processes, env={"EF_EVALUATION_SUITE_TIMEOUT": "3"})
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    lines = result.stdout.rstrip("\n").splitlines()
    assert lines[-1] == (
        "ef-evaluation suite limit: stopped after 3 s, before its tests were collected; "
        "0 tests started"
    ), output
    assert output.count("suite limit") == 1, output


CACHED_FIXTURE_ERRORS = """
import pytest


@pytest.fixture(scope="module")
def server():
    raise RuntimeError("the server did not start\\nits log: (empty)")


@pytest.fixture(scope="session")
def cluster():
    raise ValueError("no cluster")


def test_one(server):
    pass


def test_two(server):
    pass


def test_three(server, cluster):
    pass


def test_four(cluster):
    pass


def test_alone():
    pass
"""


def error_section(output: str, test: str) -> str:
    """The part of pytest's output that reports ``test``'s setup error, up to the next header."""
    match = re.search(
        rf"_+ ERROR at setup of {re.escape(test)} _+\n(.*?)(?=\n_{{3,}} |\n={{3,}} )", output, re.S
    )
    assert match is not None, output
    return match.group(1)


def test_a_fixture_that_failed_once_is_one_error_in_full_and_one_line_each_after(
    tmp_path: Path,
) -> None:
    result = inner_run(tmp_path, CACHED_FIXTURE_ERRORS, "-p", "no:xdist")
    assert outcomes(result.stdout) == {
        "test_one": "ERROR",
        "test_two": "ERROR",
        "test_three": "ERROR",
        "test_four": "ERROR",
        "test_alone": "PASSED",
    }, result.stdout
    assert "1 passed, 4 errors" in result.stdout
    # Each fixture's error in full once, where it was raised first.
    assert result.stdout.count('raise RuntimeError("the server did not start') == 1
    assert result.stdout.count('raise ValueError("no cluster")') == 1
    assert "RuntimeError: the server did not start" in error_section(result.stdout, "test_one")
    # (test_three sets up its session-scoped fixture first.)
    assert "ValueError: no cluster" in error_section(result.stdout, "test_three")
    # Then one line naming the test that showed it.
    for test, first, error in (
        ("test_two", "test_one", "RuntimeError: the server did not start"),
        ("test_four", "test_three", "ValueError: no cluster"),
    ):
        assert error_section(result.stdout, test).strip() == (
            f"the same setup error as test_inner.py::{first} (a fixture's, reported in full "
            f"there): {error}"
        )


def test_a_suite_limit_that_is_not_a_number_is_refused(tmp_path: Path) -> None:
    result = inner_run(
        tmp_path,
        "def test_x():\n    pass\n",
        "-p",
        "no:xdist",
        env={"EF_EVALUATION_SUITE_TIMEOUT": "an hour"},
    )
    assert result.returncode == 4
    assert "EF_EVALUATION_SUITE_TIMEOUT='an hour': expected a number of seconds" in (result.stderr)


KILLS_ITS_WORKER = """
import os
import signal


def test_kills_its_worker():
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.timeout(300)
def test_workers_killed_under_loadfile_are_replaced_and_the_run_ends(tmp_path: Path) -> None:
    files = {
        "test_1_kill.py": "def test_before():\n    pass\n"
        + KILLS_ITS_WORKER
        + "\n\ndef test_after():\n    pass\n",
        "test_2_no_kill.py": "def test_one():\n    pass\n\n\ndef test_two():\n    pass\n",
        "test_3_kill.py": KILLS_ITS_WORKER,
    }
    # pytest-xdist 3.8's own loadfile scheduler waits forever here (its issue 784); the run's
    # limit would end the inner run at 90 s with KeyboardInterrupt if the fix did not hold.
    result = inner_run(
        tmp_path,
        files,
        "-n",
        "2",
        "--dist",
        "loadfile",
        "--max-worker-restart=4",
        env={"EF_EVALUATION_SUITE_TIMEOUT": "90"},
    )
    output = result.stdout + result.stderr
    assert "KeyboardInterrupt" not in output
    assert result.returncode == 1, output
    found = outcomes(result.stdout)
    assert found == {
        "test_before": "PASSED",
        "test_kills_its_worker": "FAILED",
        "test_after": "PASSED",
        "test_one": "PASSED",
        "test_two": "PASSED",
    }, output
    # Each test ran once: the one that killed its worker was reported, not run again.
    assert "2 failed, 4 passed" in result.stdout, output
    assert output.count("replacing crashed worker") == 2, output
