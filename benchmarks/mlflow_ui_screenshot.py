"""The screenshot of the MLflow UI in ``docs/tracking.md``: an ef run, as MLflow shows it.

Starts a local MLflow tracking server (SQLite, on 127.0.0.1, telemetry off) in a folder of its
own, logs the bundled dataset's BM25 evaluation to it with :func:`ef_evaluation_mlflow.log_report`,
and opens the run's page in headless Chromium, every host but 127.0.0.1 blocked (no name resolves,
and any other address goes to a proxy that is not there). Needs the plugin's test extra (the full
``mlflow``) and Debian's ``chromium``::

    .venv/bin/python benchmarks/mlflow_ui_screenshot.py docs/_static/tracking-mlflow-run.png
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait(uri: str, seconds: float = 240.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{uri}/health", timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"the MLflow server at {uri} did not start in {seconds:g} s")


def _log_an_evaluation(uri: str) -> str:
    from ef.evaluation import evaluate_retrieval, read_dataset
    from ef.source_manager import ingest
    from ef_evaluation_mlflow import log_report

    corpus, queries, qrels = read_dataset("builtin:stdlib-docs")
    index = ingest(corpus, embedder="bm25")
    report = evaluate_retrieval(index, qrels, queries, k_values=(1, 5, 10))
    logged = log_report(
        report, experiment="ef-evaluation", run_name="bm25", dataset="builtin:stdlib-docs",
        tracking_uri=uri,
    )  # fmt: skip
    assert logged.url is not None
    return logged.url


def _screenshot(url: str, picture: Path) -> None:
    port = url.split(":")[2].split("/")[0]
    subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1440,1800",
            "--virtual-time-budget=20000",
            # Nothing but the local server: no name resolves, other addresses meet no proxy.
            "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
            "--proxy-server=http://127.0.0.1:9",
            f"--proxy-bypass-list=127.0.0.1:{port}",
            f"--screenshot={picture.resolve()}",
            url,
        ],
        check=True,
        capture_output=True,
        timeout=180,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("picture", type=Path, help="the PNG to write")
    args = parser.parse_args()
    os.environ.update(MLFLOW_DISABLE_TELEMETRY="true", DO_NOT_TRACK="true")
    with tempfile.TemporaryDirectory(prefix="ef-mlflow-ui-") as folder:
        port = _free_port()
        server = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("mlflow")),
                "server",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--backend-store-uri",
                f"sqlite:///{folder}/mlflow.db",
                "--artifacts-destination",
                f"{folder}/artifacts",
                "--workers",
                "1",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            uri = f"http://127.0.0.1:{port}"
            _wait(uri)
            url = _log_an_evaluation(uri)
            _screenshot(url, args.picture)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
    print(f"{args.picture} written ({url})")


if __name__ == "__main__":
    main()
