"""Start the fault-injecting search server (``http_server.py``) in its own process.

Shared by the HTTP tests and the HTTP benchmark: a generated dataset, and a handle on a running
server with its URL and its counters.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SERVER_SCRIPT = Path(__file__).with_name("http_server.py")


class Dataset:
    """Queries, graded qrels, and the ranking the server returns for each query text."""

    def __init__(self, n_queries: int, *, seed: int = 0, n_docs: int = 200, depth: int = 15):
        rng = random.Random(seed)
        docs = [f"d{i}" for i in range(n_docs)]
        # Every text of one length: the runner orders a window of batches longest text first,
        # so the batches of a batch form stay in plan order, as the tests count on.
        self.queries = {
            f"q{i}": f"query {i:03d} {rng.choice(['alpha', 'bravo', 'gamma'])}"
            for i in range(n_queries)
        }
        self.qrels: dict[str, dict[str, float]] = {}
        self.rankings: dict[str, list[tuple[str, float]]] = {}
        for query_id, text in self.queries.items():
            ranked = rng.sample(docs, depth)
            self.rankings[text] = [
                (doc_id, float(depth - i) + 0.5) for i, doc_id in enumerate(ranked)
            ]
            judged = rng.sample(ranked, 4) + rng.sample(docs, 2)
            self.qrels[query_id] = {doc_id: float(rng.randint(0, 3)) for doc_id in judged}
            self.qrels[query_id][ranked[rng.randrange(depth)]] = 1.0

    def run(self, query_ids: Iterator[str] | list[str], limit: int) -> dict[str, list[str]]:
        """The rankings of ``query_ids`` as doc ids, cut at ``limit``: the in-process oracle."""
        return {
            query_id: [doc_id for doc_id, _ in self.rankings[self.queries[query_id]][:limit]]
            for query_id in query_ids
        }


class SearchServer:
    """A running ``http_server.py``: its base URL and its counters."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"

    def url(self, path: str = "/search") -> str:
        return self.base + path

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.url("/stats"), timeout=10) as response:
            return json.loads(response.read())  # type: ignore[no-any-return]

    def reset_stats(self) -> None:
        request = urllib.request.Request(self.url("/stats"), data=b"", method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()

    def sent(self, text: str, *, wait: float = 10.0) -> int:
        """The body bytes a streaming fault wrote for the query ``text`` before it stopped,
        once it has stopped (waiting up to ``wait`` seconds for that)."""
        deadline = time.monotonic() + wait
        while (sent := self.stats()["sent"].get(text)) is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"the server is still streaming the answer to {text!r}")
            time.sleep(0.02)
        return int(sent)

    def open_connections(self, *, wait: float = 5.0) -> int:
        """Connections the server still sees open, after waiting up to ``wait`` s for none."""
        deadline = time.monotonic() + wait
        while (open_now := self.stats()["connections_open"]) and time.monotonic() < deadline:
            time.sleep(0.02)
        return int(open_now)


@contextmanager
def running_server(
    directory: Path,
    *,
    rankings: Mapping[str, list[tuple[str, float]]] | None = None,
    faults: Mapping[str, str] | None = None,
    latency: float = 0.0,
    batch_order: str = "asked",
) -> Iterator[SearchServer]:
    """Start the server in a separate process on a free port; stop it on exit."""
    config = {
        "rankings": {text: [list(pair) for pair in r] for text, r in (rankings or {}).items()},
        "faults": dict(faults or {}),
        "latency": latency,
        "batch_order": batch_order,
    }
    config_path = directory / "search-server.json"
    config_path.write_text(json.dumps(config), encoding="utf-8")
    command = [sys.executable, str(SERVER_SCRIPT), "--config", str(config_path), "--port", "0"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            line = process.stdout.readline() if process.stdout is not None else ""
            if not line.startswith("PORT "):
                raise RuntimeError(f"the search server did not start: {line!r}")
            yield SearchServer(int(line.split()[1]))
        finally:
            process.terminate()
            process.wait(timeout=10)
