"""The Ray side: replica and shard actors, and the statistics task. Imported only when a
:class:`~ef_evaluation_ray.RayRetriever` starts, so that loading the plugin never imports Ray.

Actors run in Ray worker processes: they import ``ef`` and this package there, and build their
retriever or index once, in the constructor — which Ray runs again when it restarts an actor.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import ray

from ef._segmenting import whole_documents
from ef.evaluation._plugins import adapt_retriever
from ef.evaluation._running.adapters import PreparedRetriever, prepare_retriever
from ef.evaluation._running.driver import retriever_identity
from ef.source_manager import ingest
from ef_evaluation_ray._bm25_shard import CollectionStatistics, GlobalBm25Shard, shard_statistics

__all__ = ["Replica", "Shard", "statistics_of"]


def _where() -> dict[str, Any]:
    context = ray.get_runtime_context()
    return {"node": context.get_node_id(), "gpus": [str(gpu) for gpu in ray.get_gpu_ids()]}


def _portable(results: Any) -> Any:
    """Results that can travel back to the driver: a lazy iterator is read into a list (it
    cannot be pickled); anything else goes as it is, to be judged where it is scored."""
    if isinstance(results, Mapping):
        return dict(results)
    if isinstance(results, list | tuple | str | bytes | set | frozenset) or results is None:
        return results
    if isinstance(results, Iterable):
        return list(results)
    return results


class _Built:
    """An actor that keeps the error of building what it serves, and raises it from every call:
    Ray reports an error in an actor's constructor only as a message, the error itself lost."""

    _failure: Exception | None = None

    def _check(self) -> None:
        if self._failure is not None:
            raise self._failure


class _Replica(_Built):
    """One copy of the retriever ``factory()`` builds, answering searches."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._prepared: dict[int, PreparedRetriever] = {}
        try:
            self._retriever = factory()
        except Exception as error:
            self._failure = error

    def ready(self) -> dict[str, Any]:
        """Where the replica runs, once its retriever is built."""
        self._check()
        return _where()

    def identity(self) -> str:
        """The retriever's identity, as an in-process evaluation would record it."""
        self._check()
        return retriever_identity(self._retriever)

    def search(self, query: str, limit: int) -> Any:
        self._check()
        prepared = self._prepared.get(limit)
        if prepared is None:
            prepared = self._prepared[limit] = prepare_retriever(
                self._retriever, limit, adapt_retriever
            )
        results = prepared.call(query)
        if prepared.is_async and inspect.isawaitable(results):
            # A threaded actor has no running loop; each call gets one of its own.
            results = asyncio.run(_awaited(results))
        return _portable(results)


Replica: Any = ray.remote(_Replica)
"""The replica as a Ray actor class."""


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


@ray.remote
def statistics_of(texts: Sequence[str]) -> CollectionStatistics:
    """The BM25 statistics of one shard (run before the shard actors start)."""
    return shard_statistics(texts)


class _Shard(_Built):
    """One shard of a corpus, indexed: BM25 with the collection's statistics, or dense."""

    def __init__(
        self,
        documents: dict[str, str],
        embedder: str,
        statistics: CollectionStatistics | None,
        options: dict[str, Any],
    ) -> None:
        self.documents = len(documents)
        try:
            if embedder == "bm25":
                assert statistics is not None
                self._index: Any = GlobalBm25Shard(whole_documents(documents), statistics)
            else:
                self._index = ingest(documents, embedder=embedder, **options)
        except Exception as error:
            self._failure = error

    def ready(self) -> dict[str, Any]:
        self._check()
        return {**_where(), "documents": self.documents}

    def search(self, query: str, limit: int) -> list[Any]:
        self._check()
        return list(self._index.search(query, limit=limit, per_document=True))


Shard: Any = ray.remote(_Shard)
"""The shard as a Ray actor class."""
