"""The Ray side: replica and shard actors, and the statistics task. Imported only when a
:class:`~ef_evaluation_ray.RayRetriever` starts, so that loading the plugin never imports Ray.

Actors run in Ray worker processes: they import ``ef`` and this package there, and build their
retriever or index once, in the constructor — which Ray runs again when it restarts an actor.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import pickle
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

import ray

from ef.evaluation.extending import (
    PreparedRetriever,
    doc_id_getter,
    prepare_retriever,
    retriever_identity,
    whole_documents,
)
from ef.source_manager import SearchHit, ingest
from ef_evaluation_ray._bm25_shard import CollectionStatistics, global_bm25_shard, shard_statistics
from ef_evaluation_ray._calls import LOST
from ef_evaluation_ray._hits import RankedHit

__all__ = ["STALL", "Replica", "Shard", "statistics_of"]


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
    getter = doc_id_getter(SearchHit)
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


STALL = 0.05
"""Seconds a call waits for more of its searches to finish, once one has, before it returns
those that have: a search that takes long (or hangs) keeps only itself waiting."""


class _Search:
    """One search in a replica: its task, and the event by which the driver abandons it."""

    __slots__ = ("abandoned", "task")

    def __init__(self) -> None:
        self.abandoned = asyncio.Event()
        self.task: asyncio.Task[bytes] | None = None


class _Replica(_Built):
    """One copy of the retriever ``factory()`` builds, answering searches.

    An asyncio actor: each search runs in a thread of the replica's own, at most
    ``concurrency`` at once, while the actor's loop stays free to take more searches, return
    those that are done, and hear that the driver abandoned one (the runner's timeout). An
    abandoned search gives its place to the next at once; its thread runs on, unused, as a
    timed-out thread in the runner does. The retriever is built, and with ``concurrency=1``
    searched, in one thread (thread-affine indexes such as sqlite work) — until a search is
    abandoned: the next ones run in a fresh thread.

    When the retriever has a batch form (``search_batch``, as an evaluation finds it: the
    built-in indexes have one), the searches of a call that ask for the same limit are answered
    by one ``search_batch`` in one thread, as an evaluation in-process asks a batch — the dense
    index encodes them in one forward pass. If that call fails, each of its searches is asked
    alone, so that a failing query fails alone, with its own error.
    """

    def __init__(self, factory: Callable[[], Any], concurrency: int = 1) -> None:
        self._prepared: dict[int, PreparedRetriever] = {}
        self._concurrency = concurrency
        self._pool = self._new_pool()
        self._slots: asyncio.Semaphore | None = None  # made in the actor's loop
        self._searches: dict[int, _Search] = {}
        self._own = itertools.count(-1, -1)  # keys of searches not sent by a driver's batcher
        try:
            self._retriever = self._pool.submit(factory).result()
        except Exception as error:
            self._failure = error

    def _new_pool(self) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(self._concurrency, thread_name_prefix="ef-replica")

    async def ready(self) -> dict[str, Any]:
        """Where the replica runs, once its retriever is built."""
        self._check()
        return _where()

    async def identity(self) -> str:
        """The retriever's identity, as an in-process evaluation would record it."""
        self._check()
        return retriever_identity(self._retriever)

    async def search(self, query: str, limit: int) -> Any:
        """The results of one search (``SearchHit`` results sent as :class:`RankedHit` tuples)."""
        self._check()
        (outcome,) = await self.search_batch([(next(self._own), query, limit)])
        assert outcome
        success, value = pickle.loads(outcome)
        if success:
            return value
        raise value

    async def search_batch(self, calls: Sequence[tuple[int, str, int]]) -> list[bytes | None]:
        """Several searches in one call, ``(key, query, limit)`` each: each answered on its own,
        its results or its exception pickled on its own — one query's failure fails only that
        query. The call returns when every search is done, or when some are and the others
        have not moved for :data:`STALL` seconds: those are ``None``, for :meth:`more`.

        :returns: per call, a pickled ``(True, results)`` or ``(False, exception)``, or None.
        """
        self._check()
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._concurrency)
        keys = []
        groups: dict[int, list[tuple[_Search, str]]] = {}
        for key, query, limit in calls:
            search = self._searches[key] = _Search()
            groups.setdefault(limit, []).append((search, query))
            keys.append(key)
        for limit, members in groups.items():
            if len(members) == 1 or self._prepared_for(limit).batch is None:
                for search, query in members:
                    search.task = asyncio.ensure_future(self._run(search, query, limit))
                continue
            shared = asyncio.ensure_future(self._run_batch(members, limit))
            for position, (search, query) in enumerate(members):
                search.task = asyncio.ensure_future(
                    self._member(shared, position, search, query, limit)
                )
        return await self.more(keys)

    async def more(self, keys: Sequence[int]) -> list[bytes | None]:
        """The outcomes of searches sent before, as :meth:`search_batch` returns them."""
        tasks = [search.task for key in keys if (search := self._searches.get(key)) is not None]
        pending = {task for task in tasks if task is not None}
        progressed = False
        while pending:
            done, pending = await asyncio.wait(
                pending,
                timeout=STALL if progressed else None,
                return_when=asyncio.FIRST_COMPLETED,
            )
            if not done:
                break  # stalled: those done go back now, the others wait for more()
            progressed = True
        outcomes: list[bytes | None] = []
        for key in keys:
            search = self._searches.get(key)
            if search is None:  # abandoned (nobody waits for it), or lost in a restart
                outcomes.append(LOST)
            elif search.task is not None and search.task.done():
                del self._searches[key]
                outcomes.append(search.task.result())
            else:
                outcomes.append(None)
        return outcomes

    async def abandon(self, key: int) -> None:
        """Give up search ``key`` (the driver no longer waits for it): it gives its place to
        the next search, or never runs."""
        search = self._searches.pop(key, None)
        if search is not None:
            search.abandoned.set()

    async def _run(self, search: _Search, query: str, limit: int) -> bytes:
        assert self._slots is not None
        async with self._slots:
            if search.abandoned.is_set():
                return _packed((False, TimeoutError("the search was abandoned")))
            pool = self._pool
            answer = asyncio.wrap_future(pool.submit(self._outcome, query, limit))
            abandoned = asyncio.ensure_future(search.abandoned.wait())
            waiting: set[asyncio.Future[Any]] = {answer, abandoned}
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            abandoned.cancel()
            if answer.done():
                return answer.result()
            if self._pool is pool:  # its thread stays busy: the next searches get new ones
                self._pool = self._new_pool()
                pool.shutdown(wait=False)
            return _packed((False, TimeoutError("the search was abandoned")))

    async def _run_batch(
        self, members: list[tuple[_Search, str]], limit: int
    ) -> list[bytes] | None:
        """The outcomes of ``members`` asked in one ``search_batch`` (a thread, a slot), or
        ``None`` when it failed, or when every member was abandoned before it answered."""
        assert self._slots is not None
        async with self._slots:
            pool = self._pool
            texts = [query for _, query in members]
            answer = asyncio.wrap_future(pool.submit(self._outcomes, texts, limit))
            abandoned = asyncio.gather(*(search.abandoned.wait() for search, _ in members))
            waiting: set[asyncio.Future[Any]] = {answer, abandoned}
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            abandoned.cancel()
            if answer.done():
                return answer.result()
            if self._pool is pool:  # its thread stays busy: the next searches get new ones
                self._pool = self._new_pool()
                pool.shutdown(wait=False)
            return None

    async def _member(
        self,
        shared: asyncio.Future[list[bytes] | None],
        position: int,
        search: _Search,
        query: str,
        limit: int,
    ) -> bytes:
        """One search of a batch: its outcome in the batch's, or asked alone if that failed."""
        abandoned = asyncio.ensure_future(search.abandoned.wait())
        waiting: set[asyncio.Future[Any]] = {shared, abandoned}
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        abandoned.cancel()
        if not shared.done():
            return _packed((False, TimeoutError("the search was abandoned")))
        outcomes = shared.result()
        if outcomes is None:
            return await self._run(search, query, limit)
        return outcomes[position]

    def _outcomes(self, texts: list[str], limit: int) -> list[bytes] | None:
        """Each text's packed results from one call of the batch form; ``None`` if it raised
        or broke its protocol (not one result per text)."""
        form = self._prepared_for(limit).batch
        assert form is not None
        try:
            results = form.call(texts)
            if form.is_async and inspect.isawaitable(results):
                results = asyncio.run(_awaited(results))
            if isinstance(results, str | bytes) or len(results) != len(texts):
                return None
            return [_packed((True, _compact(_portable(each)))) for each in results]
        except Exception:
            return None

    def _outcome(self, query: str, limit: int) -> bytes:
        try:
            outcome: tuple[bool, Any] = (True, _compact(self._answer(query, limit)))
        except Exception as error:
            outcome = (False, error)
        return _packed(outcome)

    def _prepared_for(self, limit: int) -> PreparedRetriever:
        prepared = self._prepared.get(limit)
        if prepared is None:
            prepared = self._prepared[limit] = prepare_retriever(self._retriever, limit)
        return prepared

    def _answer(self, query: str, limit: int) -> Any:
        prepared = self._prepared_for(limit)
        results = prepared.call(query)
        if prepared.is_async and inspect.isawaitable(results):
            # The replica's threads have no running loop; each call gets one of its own.
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
                self._index: Any = global_bm25_shard(whole_documents(documents), statistics)
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
