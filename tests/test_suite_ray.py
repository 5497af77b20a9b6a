"""A suite whose system spreads each cell's queries over a Ray cluster (the ray plugin's
RayRetriever, built by a factory per dataset): the same cells, bit for bit, as bm25 run
locally, and each cell's actors freed when the cell is done."""

from __future__ import annotations

import functools
import os
import time

import pytest

from ef.evaluation import evaluate_suite
from ef.source_manager import ingest
from suite_fixtures import beir_folder

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ.setdefault("RAY_worker_niceness", "0")


@pytest.fixture(scope="module")
def ray_session():
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "node_ip_address": "127.0.0.1",
            "object_store_memory": 80 * 1024**2,
            "num_cpus": 2,
            "include_dashboard": False,
        },
    )
    try:
        ray.init(address=cluster.address, logging_level="warning", log_to_driver=False)
        yield ray
    finally:
        ray.shutdown()
        cluster.shutdown()


def on_ray(corpus):
    from ef_evaluation_ray import RayRetriever

    return RayRetriever(functools.partial(ingest, corpus), replicas=2, num_cpus=0.5)


def test_a_system_on_ray_gives_the_local_cells(ray_session, tmp_path):
    datasets = [str(beir_folder(tmp_path, name, seed)) for name, seed in (("pine", 6), ("oak", 7))]
    report = evaluate_suite(
        {"bm25": "bm25", "bm25 on ray": on_ray}, datasets, k_values=(1, 10), metrics=("ndcg",)
    )
    for dataset in report.datasets:
        local, spread = (report.cells[dataset][s] for s in ("bm25", "bm25 on ray"))
        assert spread.metrics == local.metrics
        assert spread.per_query == local.per_query
        assert spread.manifest["retriever_info"]["replicas"] == 2


def test_each_cells_actors_are_freed_before_the_next_cell(ray_session, tmp_path):
    free_at_start = []

    def recording(corpus):
        # The previous cell's retriever is still referenced here: only its shutdown frees it.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and ray_session.available_resources().get("CPU") != 2:
            time.sleep(0.05)
        free_at_start.append(ray_session.available_resources().get("CPU"))
        return on_ray(corpus)

    datasets = [str(beir_folder(tmp_path, name, seed)) for name, seed in (("elm", 8), ("ash", 9))]
    evaluate_suite({"ray": recording}, datasets, k_values=(10,), metrics=("ndcg",))
    assert free_at_start == [2.0, 2.0]
