"""Shared fixtures: both async backends, both TREC run parsers, and a small disk."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from background_checks import BackgroundChecks

# Bytecode is written, whatever PYTHONDONTWRITEBYTECODE says: the project's modules are an
# editable install that pip never compiled, and the run starts about a thousand Python processes
# (ef-eval commands, inner pytest runs, Ray workers, plugin probes) that would otherwise each
# compile what they import again, and each worker rewrite every test module's asserts again.
# The first process to import a module writes its __pycache__ (git ignores it); the rest read it.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# Dense indexes encode with the numpy backend unless the environment says otherwise: what the
# tests check does not depend on the backend (tests/test_dense_backends.py pins the numpy
# backend's embeddings to sentence-transformers' and tests sentence-transformers itself), and
# importing sentence-transformers costs about ten CPU-seconds in every process that does.
os.environ.setdefault("EF_DENSE_BACKEND", "numpy")

# The limits that keep the run finishing: stuck tests fail as themselves (tests/suite_limits.py);
# every process the run starts ends with it (tests/process_groups.py).
pytest_plugins = ("suite_limits", "process_groups")

# Property tests check behaviour, not speed (benchmarks do that): on a shared, loaded machine a
# per-example deadline only adds noise.
settings.register_profile("ef-evaluation", deadline=None)
settings.load_profile("ef-evaluation")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["speedups", "builtin"])
def trec_run_parser(request: pytest.FixtureRequest) -> Iterator[str]:
    """Read TREC run files with the compiled parser of ef-evaluation-speedups, then without it.

    The README's test command installs that plugin; the built-in reader must give the same
    results and the same errors, so every test using this fixture runs once with each.
    """
    from ef.evaluation._plugins import HOST

    HOST.reset()
    if request.param == "speedups":
        assert HOST.manager.has_plugin("speedups"), "ef-evaluation-speedups is not installed"
        assert HOST.trec_run_parser() is not None
        yield "speedups"
        return
    if HOST.manager.has_plugin("speedups"):
        HOST.unregister("speedups")
    try:
        assert HOST.trec_run_parser() is None
        yield "builtin"
    finally:
        HOST.reset()  # the next use loads the installed plugins again


# The whole-tree checks (ruff, mypy) run beside the tests; tests/test_quality.py asserts them.

_QUALITY_MODULE = "test_quality.py"
_CHECKS = pytest.StashKey[BackgroundChecks]()
_OWNER = pytest.StashKey[bool]()
_THREAD_POOL_SIZES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


def pytest_configure(config: pytest.Config) -> None:
    """Give the run its shared checks folder: made by the process pytest was started as, found
    through the environment by its workers (``tests/background_checks.py``)."""
    owner = not hasattr(config, "workerinput")
    if owner and getattr(config.option, "numprocesses", None):
        # Each worker is one process on one core: torch's thread pools, sized to every core by
        # default, would only fight each other and the checks (no test imports numba: ranx's
        # outputs are recorded, tests/oracles/README.md).
        for variable in _THREAD_POOL_SIZES:
            os.environ.setdefault(variable, "1")
    checks = BackgroundChecks.create() if owner else BackgroundChecks.of_run()
    if checks is not None:
        config.stash[_CHECKS] = checks
        config.stash[_OWNER] = owner


# The test files that take longest (tens of seconds each), longest first, as measured in a whole
# run with three workers on an idle 2-core machine. The workers take
# whole files from the front of the queue as they become free (``--dist loadfile`` without
# reordering), so starting with these keeps one long file from running alone at the end.
_LONGEST_FIRST = (
    "test_suite_limits.py",
    "test_ray.py",
    "test_trec_run.py",
    "test_dense_backends.py",
    "test_html_report.py",
    "test_mlflow_server.py",
    "test_packaging.py",
    "test_ray_waits.py",
    "test_guide_examples.py",
    "test_plugin_isolation.py",
    "test_ray_batching.py",
    "test_cli.py",
    "test_compare_page.py",
    "test_docs.py",
    "test_streaming.py",
    "test_html_browser.py",
    "test_html_chart_bundle.py",
    "test_http.py",
    "test_index_integrity.py",
    "test_suite_reaping.py",
)


def _queue_position(item: pytest.Item) -> tuple[bool, int]:
    name = item.path.name
    longest = _LONGEST_FIRST.index(name) if name in _LONGEST_FIRST else len(_LONGEST_FIRST)
    return name == _QUALITY_MODULE, longest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the longest files first and the quality tests last: they wait for checks that run
    while the rest does. The sort is stable: tests keep their order within a file."""
    items.sort(key=_queue_position)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the checks the selected quality tests will ask for, now that the selection is
    known, so they run while the other tests do (once per run, whichever worker is first)."""
    if session.config.option.collectonly or _CHECKS not in session.config.stash:
        return
    selected = []
    for item in session.items:
        callspec = getattr(item, "callspec", None)
        if item.path.name == _QUALITY_MODULE and callspec and "check" in callspec.params:
            selected.append(callspec.params["check"])
    session.config.stash[_CHECKS].start(selected)


def pytest_unconfigure(config: pytest.Config) -> None:
    """End the checks nobody waited for (a run that stopped early) and remove their folder."""
    if config.stash.get(_OWNER, False):
        config.stash[_CHECKS].stop()


@pytest.fixture(scope="session")
def background_checks(request: pytest.FixtureRequest) -> BackgroundChecks:
    """The run's whole-tree checks (see ``tests/background_checks.py``)."""
    return request.config.stash[_CHECKS]


# A small disk for tests of what happens when it is full: a real 1 MiB tmpfs when the tests run
# as root (CI does); where mounting is refused, ENOSPC is injected at the operating system's
# ``write`` once the folder's files would pass 1 MiB.
SMALL_DISK_SIZE = 1 << 20


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on a 1 MiB file system: a real tmpfs, or ENOSPC injected past 1 MiB."""
    folder = tmp_path / "small"
    folder.mkdir()
    mounted = False
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        result = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)],
            capture_output=True,
            check=False,
        )
        mounted = result.returncode == 0
    if not mounted:
        _inject_enospc(folder, monkeypatch)
    try:
        yield folder
    finally:
        if mounted:
            subprocess.run(["umount", str(folder)], check=True)


def _inject_enospc(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail ``os.write`` with ENOSPC once files under ``folder`` would pass 1 MiB together."""
    real_write = os.write

    def write(fd: int, data: bytes | memoryview) -> int:
        try:
            name = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            name = ""
        if name.startswith(str(folder)):
            used = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
            if used + len(data) > SMALL_DISK_SIZE:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
