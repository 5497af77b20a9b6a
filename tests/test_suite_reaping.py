"""Every process a run starts ends with the run, however the run ends (tests/process_groups.py).

Each test runs an inner pytest (with pytest-xdist) in a subprocess, on a test file made here,
whose test starts services through ``start_service``; the inner run is then ended the hard way
(its worker killed, its owner sent SIGTERM or SIGINT). Real processes: after the inner run has
exited, no process carrying its run's id (``EF_EVALUATION_TEST_RUN_ID``) may be left.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import process_groups

TESTS = Path(__file__).resolve().parent

HELPERS = '''
import json
import os
import sys
import time
from pathlib import Path

import process_groups

HERE = Path(__file__).parent

# A service that starts a child in a session of its own (as Ray's raylet starts its workers),
# then waits: three processes under each supervisor, one outside its process group.
SERVICE = [
    sys.executable,
    "-c",
    "import subprocess, sys, time; "
    "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], "
    "start_new_session=True); time.sleep(600)",
]


def marked(kind):
    """The live processes started with INNER_SERVICE=kind."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\\0")
                state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            except OSError:
                continue
            if f"INNER_SERVICE={kind}".encode() in environ and state != b"Z":
                found.append(int(entry))
    return found


def start_both():
    """A service of this worker and one the run shares, each with its three processes."""
    for kind, shared in (("private", False), ("shared", True)):
        env = {**os.environ, "INNER_SERVICE": kind}
        process_groups.start_service(SERVICE, shared=shared, env=env)
    deadline = time.monotonic() + 60
    while len(marked("private")) < 3 or len(marked("shared")) < 3:
        assert time.monotonic() < deadline, (marked("private"), marked("shared"))
        time.sleep(0.05)
    record = {"run": process_groups.current().run_id, "worker": os.getpid()}
    (HERE / "started.json").write_text(json.dumps(record))
'''

KILLED_WORKER = """
import os
import signal
import time

from helpers import marked, start_both


def test_1_starts_services_then_its_worker_is_killed():
    start_both()
    os.kill(os.getpid(), signal.SIGKILL)


def test_2_the_dead_workers_own_service_ended_and_the_shared_one_runs_on():
    deadline = time.monotonic() + 15
    while marked("private") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marked("private") == []
    assert len(marked("shared")) == 3
"""

WAITS = """
import time

from helpers import start_both


def test_starts_services_then_waits():
    start_both()
    time.sleep(600)
"""


def inner_run(folder: Path, source: str, *options: str) -> subprocess.Popen[str]:
    """An inner pytest on ``source`` with one pytest-xdist worker, in a session of its own."""
    (folder / "helpers.py").write_text(HELPERS)
    (folder / "test_inner.py").write_text(source)
    (folder / "pytest.ini").write_text("[pytest]\nfilterwarnings = error\n")
    environment = {**os.environ, "PYTHONPATH": f"{TESTS}{os.pathsep}{folder}"}
    for name in ("EF_EVALUATION_CHECKS_DIR", "PYTEST_XDIST_WORKER", "PYTEST_CURRENT_TEST"):
        environment.pop(name, None)
    # Only the plugins the inner run needs: the installed ones take seconds to load in each of
    # its processes.
    environment["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    command = [sys.executable, "-m", "pytest", "-p", "xdist", "-p", "suite_limits"]
    command += ["-p", "process_groups", "-p", "no:cacheprovider", "-rA", "-n", "1"]
    return subprocess.Popen(
        [*command, "--dist", "loadfile", *options, str(folder)],
        cwd=folder,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def wait_for(condition: Callable[[], object], within: float, what: str) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {within:g} s")
        time.sleep(0.1)


def left_over(folder: Path) -> list[int]:
    """The processes still carrying the inner run's id, once it has started its services."""
    return process_groups.tagged(json.loads((folder / "started.json").read_text())["run"])


@pytest.fixture
def ended(tmp_path: Path) -> Iterator[Path]:
    """The inner run's folder; should the test fail, the inner run's processes are ended."""
    yield tmp_path
    if (tmp_path / "started.json").exists():
        for pid in left_over(tmp_path):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.timeout(240)
def test_a_killed_workers_services_end_and_the_runs_shared_ones_at_its_end(ended: Path) -> None:
    inner = inner_run(ended, KILLED_WORKER, "--max-worker-restart=2")
    output, _ = inner.communicate(timeout=200)
    assert inner.returncode == 1, output
    assert "replacing crashed worker" in output, output
    # The worker's own service ended with it; the shared one ran on (the second test saw both).
    assert "PASSED test_inner.py::test_2_the_dead_workers_own" in output, output
    wait_for(lambda: not left_over(ended), 15, "the run's processes ended")


@pytest.mark.timeout(240)
@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_an_owner_told_to_end_ends_every_process_of_its_run(
    ended: Path, sent: signal.Signals
) -> None:
    inner = inner_run(ended, WAITS)
    try:
        wait_for((ended / "started.json").exists, 120, "the inner test started its services")
        worker = json.loads((ended / "started.json").read_text())["worker"]
        assert len(left_over(ended)) == 7  # the worker, and three processes of each service
        os.kill(inner.pid, sent)
        output, _ = inner.communicate(timeout=90)
    finally:
        if inner.poll() is None:
            os.killpg(inner.pid, signal.SIGKILL)
            inner.wait()
    if sent == signal.SIGTERM:
        assert inner.returncode == -signal.SIGTERM, output
    else:
        assert inner.returncode == 2 and "KeyboardInterrupt" in output, output
    wait_for(lambda: not left_over(ended), 15, "the run's processes ended")
    assert not process_groups.alive(worker)


SHARED = """
import os
import sys
import time
from pathlib import Path

import process_groups

HERE = Path(__file__).parent


def start():
    with open(HERE / "starts.log", "a") as log:
        log.write(f"{os.getpid()}\\n")
    time.sleep(1)  # the other worker asks meanwhile, and waits
    command = [sys.executable, "-c", "import time; time.sleep(600)"]
    process = process_groups.start_service(command, shared=True)
    return f"service-{process.pid}", process


def fail():
    raise RuntimeError("the port is taken\\nmore detail")


def test_one_address():
    (HERE / f"address-{os.getpid()}").write_text(process_groups.shared_service("echo", start))
    try:
        process_groups.shared_service("broken", fail)
    except (RuntimeError, process_groups.ServiceError) as error:
        (HERE / f"broken-{os.getpid()}").write_text(f"{type(error).__name__}: {error}")
"""


@pytest.mark.timeout(240)
def test_a_shared_service_is_started_once_a_run_and_a_failed_one_once(tmp_path: Path) -> None:
    for name in ("test_a.py", "test_b.py"):
        (tmp_path / name).write_text(SHARED)
    inner = inner_run(tmp_path, "", "-n", "2")
    output, _ = inner.communicate(timeout=200)
    assert inner.returncode == 0, output
    assert len((tmp_path / "starts.log").read_text().splitlines()) == 1
    addresses = {path.read_text() for path in tmp_path.glob("address-*")}
    assert len(addresses) == 1 and len(list(tmp_path.glob("address-*"))) == 2, output
    broken = sorted(path.read_text() for path in tmp_path.glob("broken-*"))
    first, again = sorted(broken, key=lambda text: text.startswith("ServiceError"))
    assert first == "RuntimeError: the port is taken\nmore detail"
    assert again.startswith("ServiceError: the run's broken did not start (in process ")
    assert again.endswith("): RuntimeError: the port is taken")
