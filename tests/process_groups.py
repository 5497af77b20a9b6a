"""Every process the suite starts ends with its run, whatever ends the run.

The process pytest was started as (the pytest-xdist controller, or the only process with
``-n 0``) owns the run. At configure it makes a folder the run shares, names it in
``EF_EVALUATION_RUN_DIR`` for the workers it starts, and tags the run: every process started
after that (the workers, the services they start, anything those start) inherits
``EF_EVALUATION_TEST_RUN_ID``, which holds the run's id (after the ids of any runs around it).

A fixture starts a service process through :func:`start_service`. The service runs under a
small supervisor (this file, run as a script) that leads a session of its own, is the child
subreaper of everything the service starts, and records its process group in the run's folder.
The supervisor ends the service and every process it started (SIGTERM, then SIGKILL after
:data:`GRACE` seconds) when

- the process it is anchored to ends: the process that started it (a worker killed by SIGKILL
  leaves no server) or, for a service the whole run shares, the run's owner;
- it is sent SIGTERM (the owner's reaping does this);
- the service itself ends (its leftover children go with it).

The service's own process gets ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: it dies with its
supervisor, should the supervisor be killed outright.

The owner reaps the run at its end (``pytest_unconfigure``, or ``atexit``), on SIGTERM, and
before the suite's limit ends it outright (``tests/suite_limits.py``): every recorded process
group, then every process carrying the run's tag, SIGTERM then SIGKILL. pytest-xdist's workers
are tagged too: one still running then is ended with the rest.

A service the whole run shares (the MLflow tracking server, the Ray cluster) is started once
per run by :func:`shared_service`: the first process to ask starts it under a lock in the
run's folder and records its address there; the others read the address. It is anchored to
the owner, so it outlives the worker that started it, and ends with the run.

Loaded by ``tests/conftest.py`` (``pytest_plugins``) and by the conftests of the plugins whose
tests start services; an inner pytest run loads it with ``-p process_groups``. Those conftests
import it before pytest may load it as a plugin, and it asserts nothing: PYTEST_DONT_REWRITE.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

FOLDER_VARIABLE = "EF_EVALUATION_RUN_DIR"
"""The environment variable naming the run's shared folder (set by the owner)."""

TAG_VARIABLE = "EF_EVALUATION_TEST_RUN_ID"
"""The environment variable every process of the run carries: the run's id, after the ids of
the runs around it (comma-separated), so that an outer run's reaping ends an inner run's
leftovers too."""

GRACE = 5.0
"""Seconds between SIGTERM and SIGKILL when a service or the run is ended."""

READY_WITHIN = 240.0
"""Seconds a shared service may take to start (on a loaded 2-core machine)."""

RAY_NODE: dict[str, Any] = {
    "node_ip_address": "127.0.0.1",
    "object_store_memory": 80 * 1024**2,
}
"""The arguments of each node of the run's Ray cluster (``ray.cluster_utils``)."""
RAY_HEAD: dict[str, Any] = {
    **RAY_NODE,
    "num_cpus": 2,
    "include_dashboard": False,
    # No test autoscales or reads the cluster's logs, and a worker starts with its first task:
    # daemons that would only cost CPU for the whole run are not started.
    "no_monitor": True,
    "include_log_monitor": False,
    "_system_config": {"prestart_worker_first_driver": False},
}
"""The arguments of the head node of a test cluster: the run's, and a module's own."""

RAY_ENVIRONMENT = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_worker_niceness": "0",
}
"""Ray's settings in the tests (read when Ray is imported): no usage statistics, loopback kept
as loopback, workers at the tests' own priority (see the Ray plugin's ``tests/conftest.py``)."""

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_POLL = 0.05


# Processes, read from /proc


def _stat(pid: int) -> tuple[str, int, int, int] | None:
    """``(state, parent pid, process group, start time)`` of a process, or ``None``."""
    try:
        text = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = text[text.rindex(b")") + 2 :].split()
    return fields[0].decode(), int(fields[1]), int(fields[2]), int(fields[19])


def _tags(pid: int) -> list[str]:
    """The run ids in a process's ``EF_EVALUATION_TEST_RUN_ID`` (as it was started)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return []
    prefix = TAG_VARIABLE.encode() + b"="
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return entry[len(prefix) :].decode(errors="replace").split(",")
    return []


def _live_pids() -> Iterator[int]:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            yield int(entry)


def tagged(run_id: str) -> list[int]:
    """The live processes carrying ``run_id`` in their ``EF_EVALUATION_TEST_RUN_ID``."""
    found = []
    for pid in _live_pids():
        stat = _stat(pid)
        if pid != os.getpid() and stat is not None and stat[0] != "Z" and run_id in _tags(pid):
            found.append(pid)
    return found


def alive(pid: int) -> bool:
    """Whether a process runs (exists, and has not ended as a zombie)."""
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def _signal(pids: Sequence[int], groups: Sequence[int], sent: signal.Signals) -> None:
    for group in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, sent)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sent)


# The run


class Run:
    """One test run's shared folder, owner and id.

    :param folder: the run's folder.
    :param owner: the process id of the run's owner.
    :param run_id: the run's id, in the tag of its processes.
    """

    def __init__(self, folder: Path, owner: int, run_id: str) -> None:
        self.folder = folder
        self.owner = owner
        self.run_id = run_id
        self._ended = False

    @classmethod
    def create(cls) -> Run:
        """Make a run owned by this process: its folder, its id, and its tag in this process's
        environment (what every process started from now on inherits)."""
        _remove_folders_of_ended_runs()
        folder = Path(tempfile.mkdtemp(prefix="ef-evaluation-run-"))
        (folder / "groups").mkdir()
        run_id = uuid.uuid4().hex[:16]
        record = folder / "run.json.part"
        record.write_text(json.dumps({"owner": os.getpid(), "id": run_id}))
        record.replace(folder / "run.json")
        os.environ[FOLDER_VARIABLE] = str(folder)
        around = os.environ.get(TAG_VARIABLE)
        os.environ[TAG_VARIABLE] = f"{around},{run_id}" if around else run_id
        return cls(folder, os.getpid(), run_id)

    @classmethod
    def of_run(cls) -> Run | None:
        """The run of the owner that started this process (a pytest-xdist worker), if any."""
        folder = os.environ.get(FOLDER_VARIABLE)
        if not folder:
            return None
        try:
            record = json.loads((Path(folder) / "run.json").read_text())
        except (OSError, ValueError):
            return None
        if record["owner"] != os.getppid():  # a folder inherited from some other run
            return None
        return cls(Path(folder), int(record["owner"]), str(record["id"]))

    @property
    def owned(self) -> bool:
        return self.owner == os.getpid()

    def register(self, group: int) -> None:
        """Record a process group the run started (its leader's id, and its start time)."""
        stat = _stat(group)
        (self.folder / "groups" / str(group)).write_text(str(stat[3] if stat else 0))

    def _recorded_groups(self) -> list[int]:
        """The recorded groups that still have a live process of the run."""
        recorded = {}
        for entry in (self.folder / "groups").glob("*"):
            with contextlib.suppress(OSError, ValueError):
                recorded[int(entry.name)] = int(entry.read_text() or 0)
        live = set()
        for pid in _live_pids():
            stat = _stat(pid)
            if stat is None or stat[0] == "Z" or stat[2] not in recorded:
                continue
            leader = pid == stat[2] and stat[3] == recorded[stat[2]]
            if leader or self.run_id in _tags(pid):  # never a reused process group id
                live.add(stat[2])
        return sorted(live)

    def remaining(self) -> tuple[list[int], list[int]]:
        """The run's recorded process groups still alive, and its tagged processes."""
        if not self.folder.exists():
            return [], tagged(self.run_id)
        return self._recorded_groups(), tagged(self.run_id)

    def reap(self, grace: float = GRACE + 3.0) -> None:
        """End every recorded group and every tagged process: SIGTERM, then SIGKILL.

        :param grace: seconds before SIGKILL: by default longer than a supervisor's own grace,
            so that a supervisor has ended and collected its service's processes by then (none
            is left a zombie for init to collect).
        """
        for sent in (signal.SIGTERM, signal.SIGKILL):
            groups, pids = self.remaining()
            if not groups and not pids:
                return
            _signal(pids, groups, sent)
            deadline = time.monotonic() + (grace if sent == signal.SIGTERM else 2.0)
            while time.monotonic() < deadline and any(self.remaining()):
                time.sleep(_POLL)

    def end(self) -> None:
        """Reap the run and remove its folder (the owner does this once, at its end)."""
        if self._ended or not self.owned:
            return
        self._ended = True
        try:
            self.reap()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def _remove_folders_of_ended_runs() -> None:
    """Remove the folders of runs whose owner ended outright (SIGKILL) without removing them."""
    for folder in Path(tempfile.gettempdir()).glob("ef-evaluation-run-*"):
        try:
            owner = int(json.loads((folder / "run.json").read_text())["owner"])
        except (OSError, ValueError, KeyError):
            continue
        if not alive(owner):
            shutil.rmtree(folder, ignore_errors=True)


def _reap_children() -> None:
    """Collect the supervisor's children that ended (its own, and the orphans it inherits)."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


_RUN: list[Run] = []


def current() -> Run:
    """This process's run: its owner's, or (no owner of this suite started it) its own."""
    if not _RUN:
        run = Run.of_run()
        if run is None:
            run = Run.create()
            atexit.register(run.end)
        _RUN.append(run)
    return _RUN[0]


def end_run() -> None:
    """Reap the run now if this process owns it (before the process ends outright)."""
    if _RUN and _RUN[0].owned:
        _RUN[0].end()


# pytest's side


def pytest_configure(config: pytest.Config) -> None:
    """The owner makes the run (and reaps it on SIGTERM and at exit); a worker finds it."""
    if _RUN:
        return
    if hasattr(config, "workerinput"):
        run = Run.of_run()
        if run is not None:
            _RUN.append(run)
        return
    run = Run.create()
    _RUN.append(run)
    atexit.register(run.end)
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):

        def on_sigterm(signum: int, frame: FrameType | None) -> None:
            run.end()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

        signal.signal(signal.SIGTERM, on_sigterm)


def pytest_unconfigure(config: pytest.Config) -> None:
    """The owner ends whatever the run left running, once its workers are done."""
    end_run()


# Services


def start_service(
    argv: Sequence[str],
    *,
    shared: bool = False,
    env: Mapping[str, str] | None = None,
    **popen: Any,
) -> subprocess.Popen[Any]:
    """Start ``argv`` as a service of the run: in a session of its own, under a supervisor
    that ends it (and everything it starts) with the process it is anchored to, its process
    group recorded for the owner to reap.

    :param shared: anchor it to the run's owner rather than to this process (a service the
        run's workers share; see :func:`shared_service`).
    :param env: its environment (this process's when ``None``); the run's tag is added.
    :param popen: more arguments of :class:`subprocess.Popen` (``stdout``, ``cwd``…).
    :returns: the supervisor's process: it ends with the service, with the service's exit
        status, and its id is the service's process group.
    """
    run = current()
    environment = dict(os.environ if env is None else env)
    tags = [tag for tag in environment.get(TAG_VARIABLE, "").split(",") if tag]
    if run.run_id not in tags:
        environment[TAG_VARIABLE] = ",".join([*tags, run.run_id])
    anchor = run.owner if shared else os.getpid()
    command = [sys.executable, str(Path(__file__).resolve()), "supervise", str(anchor), "--", *argv]
    process = Service(command, env=environment, start_new_session=True, **popen)
    run.register(process.pid)
    return process


class Service(subprocess.Popen[Any]):
    """A service's supervisor process. It ends with its anchor or its run, not with this
    object: collected while it runs (a shared service outlives the worker that started it),
    the object neither warns nor waits for it."""

    def __del__(self) -> None:
        pass


def stop_service(process: subprocess.Popen[Any], grace: float = GRACE) -> None:
    """End a service started by :func:`start_service`: its group SIGTERM, then SIGKILL."""
    for sent in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sent)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace)


class ServiceError(RuntimeError):
    """A shared service that did not start (told once to each process that asks)."""


def shared_service(name: str, start: Callable[[], tuple[str, subprocess.Popen[Any]]]) -> str:
    """The address of the run's service ``name``, started by the first process that asks.

    :param start: starts the service with :func:`start_service` (``shared=True``) and waits
        until it is ready; returns its address and its process. Called at most once a run,
        under a lock in the run's folder, unless the service it started has ended since.
    :raises ServiceError: when the service did not start, in this or another process of the
        run (the error of the first attempt, named, not a second wait).
    """
    run = current()
    record = run.folder / f"{name}.json"
    with open(run.folder / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if record.exists():
                known = json.loads(record.read_text())
                if "error" in known:
                    raise ServiceError(
                        f"the run's {name} did not start (in process {known['by']}): "
                        f"{known['error']}"
                    )
                if alive(int(known["pid"])):
                    return str(known["address"])
            try:
                address, process = start()
            except Exception as error:
                first = str(error).strip().splitlines()
                failed = {"by": os.getpid(), "error": f"{type(error).__name__}: {first[0]}"}
                record.write_text(json.dumps(failed))
                raise
            aside = record.with_suffix(".part")
            aside.write_text(json.dumps({"address": address, "pid": process.pid}))
            aside.replace(record)
            return address
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def wait_for_file(path: Path, process: subprocess.Popen[Any], log: Path, within: float) -> str:
    """The text of ``path`` once a service wrote it; fails if the service ends first.

    :raises RuntimeError: when the service ended, or ``within`` seconds passed, with the
        end of its log.
    """
    deadline = time.monotonic() + within
    while not path.exists():
        if process.poll() is not None:
            raise RuntimeError(f"the service exited with {process.returncode}:\n{_tail(log)}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the service was not ready in {within:g} s:\n{_tail(log)}")
        time.sleep(0.2)
    return path.read_text()


def _tail(log: Path) -> str:
    try:
        return log.read_text(errors="replace")[-3000:]
    except OSError:
        return "(no log)"


def ray_cluster() -> str:
    """The address of the run's Ray cluster: a head and a worker node on 127.0.0.1, two CPUs
    each (the Ray plugin's tests and ``tests/test_suite_ray.py`` share it)."""

    def start() -> tuple[str, subprocess.Popen[Any]]:
        folder = current().folder
        address = folder / "ray-cluster.address"
        log = folder / "ray-cluster.log"
        with open(log, "wb") as output:
            process = start_service(
                [sys.executable, str(Path(__file__).resolve()), "ray-cluster", str(address)],
                shared=True,
                env={**os.environ, **RAY_ENVIRONMENT},
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                cwd=folder,
            )
        try:
            return wait_for_file(address, process, log, READY_WITHIN), process
        except BaseException:
            stop_service(process)
            raise

    return shared_service("ray-cluster", start)


# The scripts: the supervisor, and the Ray cluster's service


class _Ending(Exception):
    """Raised in the supervisor by the signals that end it."""


def _on_end(signum: int, frame: FrameType | None) -> None:
    raise _Ending


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _die_with(parent: int) -> None:
    """In the service's process before it runs: die with the supervisor."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the signal was asked for
        os._exit(1)


def _descendants(me: int) -> list[int]:
    """Every live process of this process group or below this process, but this one."""
    parents: dict[int, int] = {}
    group = os.getpgrp()
    found = set()
    for pid in _live_pids():
        stat = _stat(pid)
        if stat is None or stat[0] == "Z":
            continue
        parents[pid] = stat[1]
        if stat[2] == group:
            found.add(pid)
    for pid in parents:
        ancestor = parents.get(pid)
        while ancestor is not None and ancestor > 1:
            if ancestor == me:
                found.add(pid)
                break
            ancestor = parents.get(ancestor)
    found.discard(me)
    return sorted(found)


def _end_all(me: int, grace: float) -> None:
    """SIGTERM to every descendant and group member, then SIGKILL after ``grace`` seconds."""
    for sent in (signal.SIGTERM, signal.SIGKILL):
        _signal(_descendants(me), [], sent)
        deadline = time.monotonic() + (grace if sent == signal.SIGTERM else 2.0)
        while time.monotonic() < deadline:
            _reap_children()
            if not _descendants(me):
                return
            time.sleep(_POLL)


def supervise(anchor: int, argv: Sequence[str], grace: float = GRACE) -> int:
    """Run ``argv`` until it ends, the process ``anchor`` ends, or this process is told to end;
    then end everything it started. Its exit status is the service's, or 143 if it was ended.
    """
    me = os.getpid()
    for ending in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(ending, _on_end)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # what the service starts and leaves is ended here too
    status = 143
    try:
        watch = os.pidfd_open(anchor)
    except ProcessLookupError:
        return status
    try:
        child = subprocess.Popen(list(argv), preexec_fn=lambda: _die_with(me))
        while True:
            ready, _, _ = select.select([watch], [], [], 0.2)
            if ready:
                break  # the anchor ended
            ended = _collect(child.pid)
            if ended is not None:
                status = ended
                break
    except _Ending:
        pass
    for ending in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(ending, signal.SIG_IGN)
    _end_all(me, grace)
    return status


def _collect(child: int) -> int | None:
    """Collect every ended child (the subreaper inherits orphans); the service's status if it
    is among them."""
    status = None
    with contextlib.suppress(ChildProcessError):
        while True:
            pid, code = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            if pid == child:
                status = os.waitstatus_to_exitcode(code)
    return status


def serve_ray_cluster(address_file: Path) -> None:
    """Start the run's Ray cluster, write its address, and keep it until told to end."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args=dict(RAY_HEAD),
    )
    try:
        cluster.add_node(**RAY_NODE, num_cpus=2)
        cluster.wait_for_nodes()
        aside = address_file.with_suffix(".part")
        aside.write_text(str(cluster.address))
        aside.replace(address_file)
        for ending in (signal.SIGTERM, signal.SIGINT):
            signal.signal(ending, _on_end)
        while True:
            signal.pause()
    except _Ending:
        pass
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    if sys.argv[1] == "supervise":
        sys.exit(supervise(int(sys.argv[2]), sys.argv[4:]))
    if sys.argv[1] == "ray-cluster":
        serve_ray_cluster(Path(sys.argv[2]))
