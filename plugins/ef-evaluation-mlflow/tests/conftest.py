"""A real MLflow tracking server on 127.0.0.1 for the whole run, and small inputs to log.

The server is MLflow's own (``mlflow server``, from the full ``mlflow`` distribution of the
plugin's test extra) with a SQLite backend store and its artifacts served through it (the
client uploads and downloads them over HTTP, as against a remote server). It is the run's: the
first worker that needs it starts it, as a service of the run (``tests/process_groups.py``: a
session of its own, with the workers it starts, ended with the run), and the other workers use
it too. Each test module logs to experiments of its own names. Telemetry is off in the tests and
in the server: the tests may talk to 127.0.0.1 only. The server runs without its job runner
(``MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false``): the GenAI jobs it runs (scorers, prompt
optimization) are no part of what the plugin logs or reads, and its consumer processes, each
importing MLflow and polling, took more CPU than the rest of the server.
"""

from __future__ import annotations

import functools
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import process_groups

os.environ["MLFLOW_DISABLE_TELEMETRY"] = "true"
os.environ["DO_NOT_TRACK"] = "true"
os.environ["MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"] = "false"

READY_WITHIN = 240.0  # seconds: the first start creates the SQLite schema (migrations)
POLL = 0.1  # seconds between two health checks while the server starts
SERVER_ENVIRONMENT = {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
QRELS = (
    "q1 0 d1 1\nq1 0 d2 2\nq1 0 d5 1\nq2 0 d3 1\nq2 0 d4 1\nq3 0 d1 2\nq3 0 d6 1\n"
    "q4 0 d2 1\nq4 0 d7 1\nq5 0 d8 1\n"
)
RUNS = {
    "bm25.txt": (
        "q1 Q0 d2 1 9.0 bm25\nq1 Q0 d9 2 8.0 bm25\nq1 Q0 d1 3 7.0 bm25\n"
        "q2 Q0 d3 1 5.0 bm25\nq2 Q0 d1 2 4.0 bm25\nq3 Q0 d6 1 3.0 bm25\n"
        "q4 Q0 d9 1 2.0 bm25\nq4 Q0 d7 2 1.0 bm25\nq5 Q0 d1 1 1.0 bm25\n"
    ),
    "dense.txt": (
        "q1 Q0 d1 1 0.9 dense\nq1 Q0 d2 2 0.8 dense\nq1 Q0 d5 3 0.7 dense\n"
        "q2 Q0 d4 1 0.6 dense\nq2 Q0 d3 2 0.5 dense\nq3 Q0 d1 1 0.4 dense\n"
        "q4 Q0 d2 1 0.3 dense\nq5 Q0 d8 1 0.2 dense\nq5 Q0 d2 2 0.1 dense\n"
    ),
}


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ready(uri: str, process: subprocess.Popen[Any], log: Path) -> None:
    deadline = time.monotonic() + READY_WITHIN
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"mlflow server exited with {process.returncode}:\n{log.read_text()}"
            )
        try:
            with urllib.request.urlopen(f"{uri}/health", timeout=5) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(POLL)
    raise RuntimeError(f"mlflow server not ready in {READY_WITHIN:g} s:\n{log.read_text()[-3000:]}")


def pytest_configure(config: pytest.Config) -> None:
    # Run alone, this folder's tests still get the run's reaping (tests/process_groups.py).
    config.pluginmanager.import_plugin("process_groups")


def _start_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[str, subprocess.Popen[Any]]:
    folder = tmp_path_factory.mktemp("mlflow-server")
    port = free_port()
    log = folder / "server.log"
    command = [
        str(Path(sys.executable).with_name("mlflow")),
        "server",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--backend-store-uri",
        f"sqlite:///{folder / 'mlflow.db'}",
        "--artifacts-destination",
        str(folder / "artifacts"),
        "--workers",
        "1",
    ]
    with open(log, "wb") as output:
        process = process_groups.start_service(
            command,
            shared=True,
            env={**os.environ, **SERVER_ENVIRONMENT},
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=folder,
        )
    uri = f"http://127.0.0.1:{port}"
    try:
        _ready(uri, process, log)
    except BaseException:
        process_groups.stop_service(process)
        raise
    return uri, process


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The tracking URI of the run's ``mlflow server`` on 127.0.0.1."""
    return process_groups.shared_service(
        "mlflow-server", functools.partial(_start_server, tmp_path_factory)
    )


@pytest.fixture
def closed_server() -> str:
    """The URI of a port on 127.0.0.1 nothing listens on."""
    return f"http://127.0.0.1:{free_port()}"


@pytest.fixture
def silent_server() -> Iterator[str]:
    """The URI of a loopback listener whose connections are accepted (by the kernel's backlog)
    and never read or answered."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


def _download(client: Any, run_id: str, path: str, folder: str | os.PathLike[str]) -> str:
    """``client.download_artifacts(run_id, path, folder)``, asked up to three times.

    On a loaded machine a download of a folder the server lists can fail once (MLflow then says
    only that the path may be wrong): the listing is checked first, so a run that really lacks
    the artifacts still fails at once, naming them.
    """
    parent = path.rpartition("/")[0]
    listed = [item.path for item in client.list_artifacts(run_id, parent or None)]
    assert path in listed, f"run {run_id} has no artifact {path!r} (it has {listed})"
    for attempt in range(3):
        try:
            return str(client.download_artifacts(run_id, path, str(folder)))
        except Exception:
            if attempt == 2:
                raise
            time.sleep(1.0 + attempt)
    raise AssertionError("unreachable")


@pytest.fixture
def download() -> Callable[[Any, str, str, str | os.PathLike[str]], str]:
    """:func:`_download`: a run's artifacts into a folder, robust to a loaded machine."""
    return _download


@pytest.fixture
def tracking(mlflow_server: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The server's URI as ``MLFLOW_TRACKING_URI``, for this test only."""
    monkeypatch.setenv("MLFLOW_TRACKING_URI", mlflow_server)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    monkeypatch.delenv("EF_EVALUATION_MLFLOW_TIMEOUT", raising=False)
    return mlflow_server


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    """A qrels file and two TREC runs of it, by file name."""
    files = {"qrels.txt": QRELS, **RUNS}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return {name: tmp_path / name for name in files}
