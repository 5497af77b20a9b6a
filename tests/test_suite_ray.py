"""A suite whose system spreads each cell's queries over a Ray cluster (the ray plugin's
RayRetriever, built by a factory per dataset): the same cells, bit for bit, as bm25 run
locally, and each cell's actors freed when the cell is done.

The cluster is the run's (``tests/process_groups.py``), shared with the Ray plugin's tests; the
module connects to it as a driver of its own."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest

import process_groups
from ef.evaluation import evaluate_suite
from ef.source_manager import ingest
from suite_fixtures import beir_folder

for _name, _value in process_groups.RAY_ENVIRONMENT.items():
    os.environ.setdefault(_name, _value)
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"


@pytest.fixture(scope="module")
def ray_session() -> Iterator[ModuleType]:
    import ray

    ray.init(address=process_groups.ray_cluster(), logging_level="warning", log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def on_ray(corpus: Any) -> Any:
    from ef_evaluation_ray import RayRetriever

    return RayRetriever(functools.partial(ingest, corpus), replicas=2, num_cpus=0.5)


def alive(ray: ModuleType, actors: list[Any]) -> int:
    """How many of ``actors`` are not known to be dead (an actor slow to answer counts)."""
    from ray.exceptions import RayActorError

    count = 0
    for actor in actors:
        answer = actor.ready.remote()
        ready, _ = ray.wait([answer], timeout=5)
        try:
            if ready:
                ray.get(answer)
            count += 1
        except RayActorError:
            pass
    return count


def left_after_a_while(ray: ModuleType, actors: list[Any]) -> int:
    """How many of ``actors`` still run after 30 s at most (a killed actor is known dead within a
    moment)."""
    left = alive(ray, actors)
    deadline = time.monotonic() + 30
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = alive(ray, actors)
    return left


@dataclass
class SuiteOnRay:
    """A suite of bm25 run locally and on Ray, and what its Ray cells' actors did."""

    report: Any
    cells: list[list[Any]]
    """Each Ray cell's actors, as the suite started them."""
    alive_at_start: list[int]
    """At the start of each Ray cell, how many of the previous one's actors still ran."""


@pytest.fixture(scope="module")
def suite_on_ray(ray_session: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> SuiteOnRay:
    """One suite for both tests below: the Ray cells' replicas are its cost."""
    cells: list[list[Any]] = []
    alive_at_start: list[int] = []

    def recording(corpus: Any) -> Any:
        # The previous cell's actors are still referenced here: only its shutdown ends them.
        # (Other drivers share the cluster: its free CPUs say nothing of this suite's actors.)
        alive_at_start.append(left_after_a_while(ray_session, cells[-1]) if cells else 0)
        retriever = on_ray(corpus)
        cells.append(list(retriever._actors()))
        return retriever

    folder = tmp_path_factory.mktemp("suite")
    datasets = [str(beir_folder(folder, name, seed)) for name, seed in (("pine", 6), ("oak", 7))]
    report = evaluate_suite(
        {"bm25": "bm25", "bm25 on ray": recording}, datasets, k_values=(1, 10), metrics=("ndcg",)
    )
    return SuiteOnRay(report, cells, alive_at_start)


# The suite runs in its setup (with the run's cluster's start, for the first module to ask).
@pytest.mark.timeout(240)  # at least 10 times its time on an idle 2-core machine
def test_a_system_on_ray_gives_the_local_cells(suite_on_ray: SuiteOnRay) -> None:
    report = suite_on_ray.report
    for dataset in report.datasets:
        local, spread = (report.cells[dataset][s] for s in ("bm25", "bm25 on ray"))
        assert spread.metrics == local.metrics
        assert spread.per_query == local.per_query
        assert spread.manifest["retriever_info"]["replicas"] == 2


def test_each_cells_actors_are_freed_before_the_next_cell(
    ray_session: ModuleType, suite_on_ray: SuiteOnRay
) -> None:
    assert suite_on_ray.alive_at_start == [0, 0]
    assert left_after_a_while(ray_session, suite_on_ray.cells[-1]) == 0  # the last cell's too
