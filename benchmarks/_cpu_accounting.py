"""CPU time per process, read from ``/proc`` (Linux): the driver, each Ray actor, and the
processes Ray started for the session (raylet, GCS, monitors, idle workers).

Throughput on a shared machine moves with the load; the CPU each process spends per query does
not, much: it says who pays for a query and what the cores are shared between.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_ROLES = ("raylet", "gcs_server", "log_monitor", "monitor.py", "dashboard", "runtime_env")


def available() -> bool:
    """Whether ``/proc`` tells CPU times (Linux)."""
    return Path(f"/proc/{os.getpid()}/stat").exists()


def _stat(pid: int) -> list[str]:
    # The command name may hold spaces and parentheses: the fields follow the last ")".
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of every thread of ``pid`` so far (0 once it has exited)."""
    try:
        fields = _stat(pid)
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


def descendants(root: int) -> list[int]:
    """Every process below ``root`` (Ray's daemons and workers are below the driver)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                children.setdefault(int(_stat(int(entry))[1]), []).append(int(entry))
            except (OSError, IndexError, ValueError):
                pass  # exited meanwhile
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def role(pid: int, actors: Mapping[int, str]) -> str:
    """What a process is: ``driver``, an actor's name, a Ray daemon, or ``other``."""
    if pid == os.getpid():
        return "driver"
    if pid in actors:
        return actors[pid]
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return "other"
    for name in _ROLES:
        if name in command:
            return name
    return "idle workers" if "default_worker" in command else "other"


class Meter:
    """CPU seconds per role, between :meth:`start` and :meth:`stop`.

    :param actors: actor pid → its name in the table.
    """

    def __init__(self, actors: Mapping[int, str]) -> None:
        self.actors = dict(actors)
        self.spent: dict[str, float] = {}
        self._before: dict[int, float] = {}

    def _pids(self) -> Iterable[int]:
        return {os.getpid(), *descendants(os.getpid()), *self.actors}

    def start(self) -> None:
        self._before = {pid: cpu_seconds(pid) for pid in self._pids()}

    def stop(self) -> None:
        spent: dict[str, float] = {}
        for pid in self._pids():
            name = role(pid, self.actors)
            spent[name] = spent.get(name, 0.0) + cpu_seconds(pid) - self._before.get(pid, 0.0)
        self.spent = spent
