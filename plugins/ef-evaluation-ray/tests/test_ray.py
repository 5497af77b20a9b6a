"""Retrievers and indexes on a real two-node Ray cluster (loopback only), evaluated through the
ef runner: the same reports as in-process, exact sharded rankings, a lost node survived."""

from __future__ import annotations

import functools
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
import ray.cloudpickle

import ef_evaluation_ray
from ef.evaluation import evaluate_retrieval, evaluate_retrieval_async
from ef.evaluation.extending import whole_documents
from ef.source_manager import ingest
from ef_evaluation_ray import RayRetriever, ShardedIndex
from ef_evaluation_ray._bm25_shard import CollectionStatistics, global_bm25_shard, shard_statistics
from ef_evaluation_ray._sharded import merge_hits, split_corpus

# Dense indexes encode with ef's numpy encoder, in the actors (the module's Ray job) as in this
# process: the same all-MiniLM-L6-v2, sharded the same way, without importing torch in each.
DENSE_BACKEND = {"EF_DENSE_BACKEND": "numpy"}

# A cluster of its own: a test below removes a node holding one of its replicas, which may be
# any node but the head (on the run's cluster, a node the other modules' actors run on).
pytestmark = [
    pytest.mark.usefixtures("cluster"),
    pytest.mark.own_ray_cluster("removes a node"),
    pytest.mark.ray_job_env(**DENSE_BACKEND),
]

# The actors run the test's retrievers; they cannot import this module, so it travels by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

RNG = random.Random(27)
WORDS = [f"term{i}" for i in range(120)] + ["sorting", "sorted", "lists", "files", "reading"]
CORPUS = {
    f"doc{i:03d}": " ".join(RNG.choice(WORDS) for _ in range(RNG.randint(0, 25)))
    for i in range(240)
}
QUERIES = {
    f"q{i}": " ".join(RNG.choice(WORDS) for _ in range(RNG.randint(1, 4))) for i in range(24)
}
QRELS = {f"q{i}": {f"doc{(i * 7) % 240:03d}": 1, f"doc{(i * 11) % 240:03d}": 2} for i in range(24)}
OPTIONS: dict[str, Any] = {"k_values": (1, 5, 10), "metrics": ("ndcg", "recall", "mrr")}


def hits(found: list[Any]) -> list[tuple[str, float]]:
    return [(hit.segment.source_id, hit.score) for hit in found]


@pytest.fixture(scope="module")
def local_report() -> Any:
    return evaluate_retrieval(ingest(CORPUS), QRELS, QUERIES, **OPTIONS)


@pytest.fixture(scope="module")
def replicated() -> Any:
    retriever = RayRetriever(functools.partial(ingest, CORPUS), replicas=2, num_cpus=0.5)
    yield retriever.start()
    retriever.shutdown()


@pytest.mark.timeout(240)  # at least 10 times its time on an idle 2-core machine
@pytest.mark.anyio
async def test_an_evaluation_through_replicas_equals_the_in_process_one(
    replicated: RayRetriever, local_report: Any
) -> None:
    report = await evaluate_retrieval_async(
        replicated, QRELS, QUERIES, max_concurrency=8, **OPTIONS
    )
    assert report.metrics == local_report.metrics
    assert report.per_query == local_report.per_query
    assert report.manifest["retriever"] == local_report.manifest["retriever"]
    info = report.manifest["retriever_info"]
    assert info["replicas"] == 2 and len(info["nodes"]) == 2  # spread over both nodes
    assert info["resources"] == {"num_cpus": 0.5, "num_gpus": 0}
    assert "127.0.0.1" not in replicated.retriever_id


def test_a_retriever_error_is_recorded_as_in_process() -> None:
    retriever = RayRetriever(functools.partial(Failing, "q3"), num_cpus=0.5)
    try:
        with pytest.warns(Warning, match="1 of 24 queries failed"):
            report = evaluate_retrieval(retriever, QRELS, QUERIES, on_error="record", **OPTIONS)
    finally:
        retriever.shutdown()
    (failure,) = report.failures
    assert failure.query_id == "q3"
    assert failure.error_type == "LookupError"
    assert "no shard for 'q3'" in failure.message


def test_sharded_bm25_scores_with_the_collection_statistics_in_process() -> None:
    whole = ingest(CORPUS)
    parts = split_corpus(CORPUS, 3)
    statistics = CollectionStatistics.combine(shard_statistics(list(p.values())) for p in parts)
    shards = [global_bm25_shard(whole_documents(part), statistics) for part in parts]
    local = [ingest(part) for part in parts]  # each with its own statistics: not the same
    differs = 0
    for query in QUERIES.values():
        expected = hits(whole.search(query, limit=15, per_document=True))
        found = [shard.search(query, limit=15, per_document=True) for shard in shards]
        assert hits(merge_hits(found, 15)) == expected
        alone = [index.search(query, limit=15, per_document=True) for index in local]
        differs += hits(merge_hits(alone, 15)) != expected
    assert differs > 0


def test_a_sharded_bm25_index_ranks_as_the_unsharded_one(local_report: Any) -> None:
    index = RayRetriever.sharded(CORPUS, shards=2, num_cpus=0.5)
    try:
        whole = ingest(CORPUS)
        for query in QUERIES.values():
            found = anyio.run(functools.partial(index.search, query, limit=20))
            assert hits(found) == hits(whole.search(query, limit=20, per_document=True))
        report = evaluate_retrieval(index, QRELS, QUERIES, **OPTIONS)
    finally:
        index.shutdown()
    assert report.metrics == local_report.metrics
    assert report.manifest["retriever"] == local_report.manifest["retriever"]
    shards = report.manifest["retriever_info"]["shards"]
    assert [shard["documents"] for shard in shards] == [120, 120]


@pytest.mark.timeout(240)  # at least 10 times its time on an idle 2-core machine
def test_a_sharded_dense_index_ranks_as_the_unsharded_one(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in DENSE_BACKEND.items():
        monkeypatch.setenv(name, value)  # as the shards encode
    corpus = dict(list(CORPUS.items())[:40])
    corpus.update({"py1": "Sort a list in place.", "py2": "Open a file for reading."})
    model = "st:all-MiniLM-L6-v2"
    index = ShardedIndex(corpus, embedder=model, shards=2, num_cpus=0.5)
    try:
        whole = ingest(corpus, embedder=model)
        for query in [*list(QUERIES.values())[:6], "sorting lists", "reading files"]:
            found = hits(anyio.run(functools.partial(index.search, query, limit=10)))
            expected = hits(whole.search(query, limit=10, per_document=True))
            assert [doc for doc, _ in found] == [doc for doc, _ in expected]
            # Float32 kernels sum in an order that depends on the matrix's shape and the
            # threads: a shard's cosines can differ from the whole matrix's in the last bit.
            assert [score for _, score in found] == pytest.approx(
                [score for _, score in expected], rel=1e-6, abs=1e-6
            )
    finally:
        index.shutdown()


class Failing:
    """A retriever failing one query, as a missing shard would."""

    def __init__(self, failing: str) -> None:
        self.failing = failing
        self.index = ingest(CORPUS)

    def search(self, query: str, *, limit: int = 10) -> Any:
        if query == QUERIES[self.failing]:
            raise LookupError(f"no shard for {self.failing!r}")
        return self.index.search(query, limit=limit, per_document=True)


class Gated:
    """A retriever that, on the node the test names in the file ``victim``, logs the query and
    waits for a file nobody writes: the test removes that node while the query is in flight."""

    def __init__(self, folder: str) -> None:
        import ray

        self.node = ray.get_runtime_context().get_node_id()
        self.folder = Path(folder)
        self.index = ingest(CORPUS)
        self.retriever_id = self.index.retriever_id  # it answers as the index does

    def search(self, query: str, *, limit: int = 10) -> Any:
        doomed = self.node == (self.folder / "victim").read_text()
        with open(self.folder / "asked.log", "a") as log:
            log.write(f"{'victim' if doomed else 'live'}\t{query}\n")
        if doomed:
            (self.folder / "blocked").touch()
            while not (self.folder / "released").exists():
                time.sleep(0.05)  # in the actor, until its node is gone
        return self.index.search(query, limit=limit, per_document=True)


def asked(folder: Path) -> list[tuple[str, str]]:
    lines = (folder / "asked.log").read_text().splitlines()
    return [(where, query) for where, query in (line.split("\t") for line in lines)]


# asyncio only: a node lost is a replica lost, as the driver sees it (a RayActorError); trio's
# path for a lost replica, a worker thread per call, is the one test_ray_batching.py covers.
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_a_node_lost_with_a_query_in_flight_loses_nothing(
    cluster: Any,
    loopback_node: dict[str, Any],
    tmp_path: Path,
    local_report: Any,
    anyio_backend: str,
) -> None:
    head = cluster.head_node.node_id
    cluster.add_node(**loopback_node, num_cpus=1)  # in the main thread: it installs signal handlers
    retriever = RayRetriever(functools.partial(Gated, str(tmp_path)), replicas=2, num_cpus=1)
    (tmp_path / "victim").write_text("")
    retriever.start()
    placed = [actor["node"] for actor in retriever.describe()["actors"]]
    victim_id = next(node for node in placed if node != head)  # the head has room for one
    (victim,) = [node for node in cluster.worker_nodes if node.node_id == victim_id]
    (tmp_path / "victim").write_text(victim_id)

    async def remove_the_node_once_a_query_waits_there() -> None:
        while not (tmp_path / "blocked").exists():  # noqa: ASYNC110 - written by another process
            await anyio.sleep(0.02)
        await anyio.to_thread.run_sync(cluster.remove_node, victim)

    journal = tmp_path / "run.journal"
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(remove_the_node_once_a_query_waits_there)
            report = await evaluate_retrieval_async(
                retriever, QRELS, QUERIES, journal=journal, max_concurrency=4, **OPTIONS
            )
        lost = [query for where, query in asked(tmp_path) if where == "victim"]
        answered = sorted(query for where, query in asked(tmp_path) if where == "live")
        assert lost  # at least one query was in flight on the lost node
        assert answered == sorted(QUERIES.values())  # each answered once, none lost
        assert report.failures == ()
        assert report.metrics == local_report.metrics
        # The searches waiting in the lost actor's queue are resubmitted too, never answered.
        assert report.manifest["retriever_info"]["resubmitted"] >= len(lost)

        before = len(asked(tmp_path))
        resumed = await evaluate_retrieval_async(
            retriever, QRELS, QUERIES, journal=journal, max_concurrency=4, **OPTIONS
        )
        assert len(asked(tmp_path)) == before  # nothing asked again
        assert resumed.manifest["journal"]["resumed"] == len(QUERIES)
        assert resumed.metrics == local_report.metrics
        # No cluster in the journal's identity: the in-process index resumes it as well.
        local = evaluate_retrieval(ingest(CORPUS), QRELS, QUERIES, journal=journal, **OPTIONS)
        assert local.manifest["journal"]["resumed"] == len(QUERIES)
    finally:
        retriever.shutdown()


def test_loading_the_plugin_imports_nothing_of_ray() -> None:
    code = "import sys, ef_evaluation_ray; print('ray' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "False"


def test_the_plugin_hook_adapts_ray_retrievers_to_their_async_search() -> None:
    retriever = RayRetriever(functools.partial(ingest, CORPUS))
    adapted = ef_evaluation_ray.ef_evaluation_adapt_retriever(retriever)
    assert adapted == retriever.search
    assert ef_evaluation_ray.ef_evaluation_adapt_retriever(ingest(CORPUS)) is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"replicas": 0}, "replicas must be an int >= 1, got 0"),
        ({"num_cpus": -1}, "num_cpus must be a number >= 0, got -1"),
        ({"num_gpus": float("nan")}, "num_gpus must be a number >= 0, got nan"),
        ({"actor_concurrency": True}, "actor_concurrency must be an int >= 1, got True"),
        ({"max_restarts": -2}, "max_restarts must be an int >= -1, got -2"),
    ],
)
def test_bad_options_are_refused_before_any_actor_starts(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        RayRetriever(functools.partial(ingest, CORPUS), **options)
    with pytest.raises(TypeError, match="factory must be a callable"):
        RayRetriever("load_index")  # type: ignore[arg-type]


def test_a_factory_error_surfaces_as_the_factory_raised_it() -> None:
    retriever = RayRetriever(functools.partial(ingest, CORPUS, embedder="tfidf"), num_cpus=0.5)
    try:
        with pytest.raises(ValueError, match="unknown embedder 'tfidf'"):
            retriever.start()
    finally:
        retriever.shutdown()
