"""``ShardedIndex``: a corpus split over Ray actors, each indexing its part; a search asks every
shard and merges their best hits by score (scatter-gather)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ef.evaluation.extending import index_retriever_id, whole_documents
from ef_evaluation_ray._calls import await_refs
from ef_evaluation_ray._starting import (
    DEFAULT_START_TIMEOUT,
    check_resources,
    check_timeout,
    not_started,
    started,
)

__all__ = ["ShardedIndex", "merge_hits", "split_corpus"]


def split_corpus(corpus: Mapping[str, str], shards: int) -> list[dict[str, str]]:
    """``corpus`` cut into ``shards`` consecutive parts of sizes differing by at most one."""
    items = list(corpus.items())
    size, extra = divmod(len(items), shards)
    parts, start = [], 0
    for shard in range(shards):
        end = start + size + (1 if shard < extra else 0)
        parts.append(dict(items[start:end]))
        start = end
    return parts


def merge_hits(per_shard: list[list[Any]], limit: int) -> list[Any]:
    """The ``limit`` best hits of all shards: score descending, ties by doc id descending —
    the order of the unsharded index (each document lives in one shard)."""
    hits = [hit for hits in per_shard for hit in hits]
    hits.sort(key=lambda hit: hit.segment.source_id, reverse=True)
    hits.sort(key=lambda hit: -hit.score)  # stable: tied scores keep doc id descending
    return hits[:limit]


class ShardedIndex:
    """The built-in index of a corpus too big for one machine, split over ``shards`` actors.

    Each shard indexes its part of the corpus, in parallel (a dense model encodes on the
    shard's GPU when ``num_gpus`` gives it one); a search asks every shard for its ``limit``
    best documents and keeps the ``limit`` best of all. The hits — documents and scores — are
    those of ``ingest(corpus, embedder=...)`` on one machine: dense search is exact per shard;
    BM25 shards score with the whole collection's statistics (document frequencies, document
    count, average length), which a first pass over the shards gathers. Whole documents are
    indexed, as ``ingest`` does by default.

    A shard is stateful, so a dead one is restarted by Ray (``max_restarts``; it rebuilds its
    part) and the searches it was answering are retried on it (``max_task_retries``).

    :param corpus: ``{doc_id: text}``.
    :param embedder: ``"bm25"`` or ``"st:<model>"``, as for ``ingest``.
    :param shards: how many actors.
    :param num_cpus: CPUs Ray reserves for each shard.
    :param num_gpus: GPUs Ray reserves for each shard.
    :param max_restarts: how often Ray restarts a dead shard (``-1``: always).
    :param max_task_retries: how often a search is retried on a restarted shard.
    :param batch_size: texts per forward pass of a dense model.
    :param device: where a dense model runs (``None``: the shard's GPU if it has one).
    :param retriever_id: the identity in journals; by default the unsharded index's.
    :param start_timeout: seconds to wait for the shards to be placed and indexed before giving
        up with a ``TimeoutError`` naming the resources asked for and the cluster's (``None``:
        no limit).
    """

    def __init__(
        self,
        corpus: Mapping[str, str],
        *,
        embedder: str = "bm25",
        shards: int = 2,
        num_cpus: float = 1,
        num_gpus: float = 0,
        max_restarts: int = 3,
        max_task_retries: int = 3,
        batch_size: int = 64,
        device: str | None = None,
        retriever_id: str | None = None,
        start_timeout: float | None = DEFAULT_START_TIMEOUT,
    ) -> None:
        import ray

        from ef_evaluation_ray._actors import Shard, statistics_of

        if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
            raise ValueError(f"shards must be an int >= 1, got {shards!r}")
        check_resources(num_cpus, num_gpus)
        timeout = check_timeout("start_timeout", start_timeout)
        segments = whole_documents(corpus)  # checks every id and text is a string
        self.embedder = embedder
        self.documents = len(segments)
        self.num_cpus, self.num_gpus = num_cpus, num_gpus
        # The unsharded index's identity: the same hits, so its journals are interchangeable.
        self.retriever_id = retriever_id or index_retriever_id(segments, name=embedder)
        parts = split_corpus(corpus, shards)
        statistics = None
        if embedder == "bm25":
            from ef_evaluation_ray._bm25_shard import CollectionStatistics

            task = statistics_of.options(num_cpus=num_cpus)
            counting = [task.remote(list(part.values())) for part in parts]
            try:
                counted = ray.get(counting, timeout=timeout)
            except ray.exceptions.GetTimeoutError:
                for ref in counting:
                    ray.cancel(ref, force=True)
                what = f"the statistics tasks of {shards} shard{'s' if shards != 1 else ''}"
                raise not_started(what, timeout, num_cpus, num_gpus) from None
            statistics = ray.put(CollectionStatistics.combine(counted))
        options = {} if embedder == "bm25" else {"batch_size": batch_size, "device": device}
        actor = Shard.options(
            num_cpus=num_cpus,
            num_gpus=num_gpus,
            max_restarts=max_restarts,
            max_task_retries=max_task_retries,
            scheduling_strategy="SPREAD",
        )
        self._handles = [actor.remote(part, embedder, statistics, options) for part in parts]
        self._places = started(
            self._handles,
            timeout=timeout,
            what=f"{shards} shard{'s' if shards != 1 else ''}",
            num_cpus=num_cpus,
            num_gpus=num_gpus,
        )

    async def search(self, query: str, *, limit: int = 10) -> list[Any]:
        """The ``limit`` best documents of the whole corpus, as ``SearchHit``\\ s, best first."""
        per_shard = await await_refs([shard.search.remote(query, limit) for shard in self._handles])
        return merge_hits(per_shard, limit)

    def describe(self) -> dict[str, Any]:
        """Shards, their sizes and nodes, resources: ``manifest["retriever_info"]``."""
        import ray

        return {
            "engine": "ray",
            "ray_version": ray.__version__,
            "index": self.embedder,
            "documents": self.documents,
            "shards": self._places,
            "nodes": sorted({place["node"] for place in self._places}),
            "resources": {"num_cpus": self.num_cpus, "num_gpus": self.num_gpus},
        }

    def shutdown(self) -> None:
        """Stop the shards."""
        import ray

        for handle in self._handles:
            ray.kill(handle)
        self._handles = []
