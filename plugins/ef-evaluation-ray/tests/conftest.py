"""A real Ray cluster of two nodes on loopback, one for the whole run, and both async backends.

The cluster (a head and a worker node, two CPUs each, every one bound to 127.0.0.1) is the
run's: the first test module of any worker that needs it starts it, as a service of the run
(``tests/process_groups.py``), and the run's owner ends it when the run ends. Each module
connects to it as a driver of its own (``ray.init`` then ``ray.shutdown``): a fresh job, whose
actors end with the module, as with a cluster per module. The tests' actors are anonymous and
not detached, so drivers in other workers never see them.

A module marked ``ray_job_env`` runs its actors and tasks with those environment variables
(the job's ``runtime_env``): ``test_ray.py`` has its dense shards encode with ef's numpy
encoder, as the test's own process then does, rather than import torch in each.

A module marked ``own_ray_cluster`` starts a cluster of its own instead (in the test's process,
as ``ray.cluster_utils.Cluster``), for tests that change the cluster itself: ``test_ray.py``
adds a node and removes one that holds one of its replicas, which may be any node but the head
and would be taken from under the other modules' actors on the run's cluster. It starts no more
than the tests use: no autoscaler monitor, no log monitor (nothing is logged to the driver), and
no workers started ahead of the first task (each actor starts its own worker anyway).

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
from dataclasses import dataclass
from typing import Any

import pytest

import process_groups

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ.setdefault("RAY_worker_niceness", "0")

NODE = dict(process_groups.RAY_NODE)


def pytest_configure(config: pytest.Config) -> None:
    # Run alone, this folder's tests still get the run's reaping (tests/process_groups.py).
    config.pluginmanager.import_plugin("process_groups")
    config.addinivalue_line(
        "markers",
        "own_ray_cluster(reason): the module's tests get a Ray cluster of their own, not the "
        "run's (they change the cluster)",
    )
    config.addinivalue_line(
        "markers",
        "ray_job_env(**variables): environment variables of the module's Ray job, set in every "
        "process that runs its actors and tasks",
    )


@dataclass(frozen=True)
class RunCluster:
    """The run's Ray cluster, as a module sees it."""

    address: str


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def loopback_node() -> dict[str, Any]:
    """The arguments of ``cluster.add_node`` for one more node on loopback."""
    return dict(NODE)


@pytest.fixture(scope="module")
def cluster(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A head node and a worker node, two CPUs each, every one bound to 127.0.0.1: the run's,
    connected to as a fresh driver for the module, or (``own_ray_cluster``) the module's own
    ``ray.cluster_utils.Cluster``."""
    import ray

    variables = request.node.get_closest_marker("ray_job_env")
    runtime_env = {"env_vars": dict(variables.kwargs)} if variables else None
    if request.node.get_closest_marker("own_ray_cluster") is None:
        address = process_groups.ray_cluster()
        ray.init(
            address=address, logging_level="warning", log_to_driver=False, runtime_env=runtime_env
        )
        try:
            yield RunCluster(address)
        finally:
            ray.shutdown()
        return

    from ray.cluster_utils import Cluster

    started = Cluster(
        initialize_head=True,
        head_node_args=dict(process_groups.RAY_HEAD),
    )
    try:
        started.add_node(**NODE, num_cpus=2)
        ray.init(
            address=started.address,
            logging_level="warning",
            log_to_driver=False,
            runtime_env=runtime_env,
        )
        yield started
    finally:
        ray.shutdown()
        started.shutdown()
