"""The Ray side: replica and shard actors, and the statistics task. Imported only when a
:class:`~ef_evaluation_ray.RayRetriever` starts, so that loading the plugin never imports Ray.

Actors run in Ray worker processes: they import ``ef`` and this package there, and build their
retriever or index once, in the constructor — which Ray runs again when it restarts an actor.
"""

from __future__ import annotations

import asyncio
import inspect
import pickle
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

import ray

from ef._search_types import SearchHit
from ef._segmenting import whole_documents
from ef.evaluation._plugins import HOST, adapt_retriever
from ef.evaluation._running.adapters import PreparedRetriever, prepare_retriever
from ef.evaluation._running.driver import retriever_identity
from ef.source_manager import ingest
from ef_evaluation_ray._bm25_shard import CollectionStatistics, GlobalBm25Shard, shard_statistics
from ef_evaluation_ray._hits import RankedHit

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


def _compact(results: Any) -> Any:
    """A list of ``SearchHit`` results as :class:`RankedHit` tuples — the same doc ids (as the
    runner's getter reads them) and scores, in the same order and number, without the segments'
    text; any other results as they are."""
    if type(results) is not list or not results:
        return results
    getter = HOST.doc_id_getter(SearchHit)
    if getter is None:
        return results
    compact = []
    for hit in results:
        if type(hit) is not SearchHit:
            return results
        doc_id, score = getter(hit), hit.score
        if type(doc_id) is not str or type(score) is not float:
            return results  # for the runner to judge, as it judges them in-process
        compact.append(RankedHit(doc_id, score))
    return compact


_cloudpickle = cast("Callable[[Any], bytes]", ray.cloudpickle.dumps)


def _packed(outcome: tuple[bool, Any]) -> bytes:
    """One query's outcome, pickled on its own: results that cannot travel fail their query only
    (as they did when each query was a call of its own), not the batch.

    The C pickler first (hits and exceptions of importable types, the common case, at a fraction
    of the cost), then cloudpickle, as Ray pickles what it sends (a lambda, a local class).
    """
    try:
        return pickle.dumps(outcome, protocol=5)
    except Exception:
        pass
    try:
        return _cloudpickle(outcome)
    except Exception as error:
        problem = TypeError(f"the results of this query cannot be sent to the driver: {error}")
        return _cloudpickle((False, problem))


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
        """The results of one search (``SearchHit`` results sent as :class:`RankedHit` tuples)."""
        self._check()
        return _compact(self._answer(query, limit))

    def search_batch(self, calls: Sequence[tuple[str, int]]) -> list[bytes]:
        """Several searches in one call: each answered on its own, its results or its exception
        pickled on its own — one query's failure fails only that query.

        :returns: per call, a pickled ``(True, results)`` or ``(False, exception)``.
        """
        self._check()
        packed = []
        for query, limit in calls:
            try:
                outcome: tuple[bool, Any] = (True, _compact(self._answer(query, limit)))
            except Exception as error:
                outcome = (False, error)
            packed.append(_packed(outcome))
        return packed

    def _answer(self, query: str, limit: int) -> Any:
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
