"""A real Ray cluster of two nodes on loopback, shared by the module, and both async backends.

Ray reads its environment when it is imported: usage statistics stay off, and
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` keeps ``ray.init`` from turning the loopback address
it is given into the machine's network address (tests may only use loopback).
``RAY_worker_niceness=0``: Ray starts its workers at niceness 15, so on a machine busy with
other work its actors got almost no CPU (a replica importing sentence-transformers for minutes)
and a test waiting on them outlived every limit; at the tests' own priority they share the
machine like the tests do.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ.setdefault("RAY_worker_niceness", "0")

NODE = {
    "node_ip_address": "127.0.0.1",
    "object_store_memory": 80 * 1024**2,
}


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def loopback_node() -> dict[str, Any]:
    """The arguments of ``cluster.add_node`` for one more node on loopback."""
    return dict(NODE)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A head node and a worker node, two CPUs each, every one bound to 127.0.0.1."""
    import ray
    from ray.cluster_utils import Cluster

    started = Cluster(
        initialize_head=True,
        head_node_args={**NODE, "num_cpus": 2, "include_dashboard": False},
    )
    try:
        started.add_node(**NODE, num_cpus=2)
        ray.init(address=started.address, logging_level="warning", log_to_driver=False)
        yield started
    finally:
        ray.shutdown()
        started.shutdown()
