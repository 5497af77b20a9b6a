"""Micro-batching: the searches that arrive while a replica is busy go to it in one call.

Each call through Ray costs the driver and the actor a fixed amount of CPU (submitting the task,
(de)serialising, the reply); on a machine where the replicas and the driver share the cores,
that cost, not the search, limits throughput. A replica has at most ``depth`` calls in flight
(those it answers, plus one queued so that it never waits for the driver); searches arriving
meanwhile wait in a batch, sent as one call as soon as a call in flight comes back. A batch is
sent at once when the replica has room — after one pass of the event loop, so that searches
started together go together.

Each search waits for its own answer: an exception of one query fails that query only (the
replica pickles each query's outcome on its own), a cancelled search leaves the others of its
batch waiting, and a lost actor fails every search of its batch with ``RayActorError``, for the
retriever to resubmit each to another replica.
"""

from __future__ import annotations

import asyncio
import pickle
import threading
from collections import deque
from typing import Any

import anyio
import anyio.lowlevel

from ef_evaluation_ray._calls import await_refs, on_asyncio, unwrapped

__all__ = ["Batcher"]


class _Entry:
    __slots__ = ("abandoned", "limit", "position", "query")

    def __init__(self, query: str, limit: int) -> None:
        self.query, self.limit = query, limit
        self.position = -1
        self.abandoned = False


class _Batch:
    """Searches for one replica, sent as one call."""

    __slots__ = ("entries", "handle", "ref", "released", "sent", "shared", "waiting")

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.entries: list[_Entry] = []
        self.sent = anyio.Event()
        self.ref: Any = None
        self.shared: asyncio.Future[Any] | None = None
        self.waiting = 0
        self.released = False


async def _value(ref: Any) -> Any:
    return await ref


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # read, so that a batch nobody waits for any more logs nothing


class Batcher:
    """The batches of a retriever's replicas.

    :param replicas: how many replicas.
    :param depth: calls in flight per replica.
    :param max_batch: searches per call at most.
    :param lock: the retriever's lock (trio runs parts of a search in worker threads).
    """

    def __init__(self, replicas: int, depth: int, max_batch: int, lock: threading.Lock) -> None:
        self._depth, self._max_batch, self._lock = depth, max_batch, lock
        self._waiting: list[deque[_Batch]] = [deque() for _ in range(replicas)]
        self._out = [0] * replicas
        self.calls = 0
        """How many calls were sent (a batch is one call)."""

    async def ask(self, index: int, handle: Any, query: str, limit: int) -> Any:
        """The results of ``query`` from replica ``index``, sent alone or with others.

        :raises Exception: the retriever's exception for this query, or the call's error —
            ``RayActorError`` when the replica died — for every query of the batch.
        """
        entry = _Entry(query, limit)
        with self._lock:
            queue = self._waiting[index]
            lead = not queue or len(queue[-1].entries) >= self._max_batch
            if lead:
                queue.append(_Batch(handle))
            batch = queue[-1]
            batch.entries.append(entry)
            batch.waiting += 1
        finished = False  # whether this search saw its call come back (answered or failed)
        try:
            if lead:
                # One pass of the loop: the searches started with this one join it.
                await anyio.lowlevel.checkpoint()
                self._dispatch(index)
            await batch.sent.wait()
            try:
                outcomes = await self._outcomes(batch)
            except Exception:
                finished = True  # the call failed: a lost actor, or the factory's error
                raise
            finished = True
        finally:
            self._leave(index, batch, entry, finished)
        success, value = pickle.loads(outcomes[entry.position])
        if success:
            return value
        raise value

    async def _outcomes(self, batch: _Batch) -> list[bytes]:
        if batch.shared is not None and on_asyncio():
            try:
                return list(await asyncio.shield(batch.shared))
            except Exception as error:
                cause = unwrapped(error)
                if cause is error:
                    raise
                raise cause from error
        (outcomes,) = await await_refs([batch.ref])
        return list(outcomes)

    def _dispatch(self, index: int) -> None:
        """Send waiting batches while the replica has room for them."""
        sent: list[_Batch] = []
        with self._lock:
            queue = self._waiting[index]
            while queue and self._out[index] < self._depth:
                batch = queue.popleft()
                live = [entry for entry in batch.entries if not entry.abandoned]
                if not live:
                    continue  # every search of it was cancelled while it waited
                for position, entry in enumerate(live):
                    entry.position = position
                batch.ref = batch.handle.search_batch.remote(
                    [(entry.query, entry.limit) for entry in live]
                )
                self._out[index] += 1
                self.calls += 1
                sent.append(batch)
        for batch in sent:
            if on_asyncio():
                # One future per call, awaited by each of its searches: a search cancelled
                # (a timeout) abandons its wait without cancelling the others'.
                batch.shared = asyncio.ensure_future(_value(batch.ref))
                batch.shared.add_done_callback(_retrieved)
            batch.sent.set()

    def _leave(self, index: int, batch: _Batch, entry: _Entry, finished: bool) -> None:
        """A search is done with its batch: answered, failed or cancelled. The first search to
        see the call come back (or the last to leave) frees the replica's room for the next."""
        with self._lock:
            batch.waiting -= 1
            if batch.ref is None:
                entry.abandoned = True  # cancelled before it was sent: it is not sent at all
            elif batch.released or not (finished or batch.waiting == 0):
                return
            else:
                batch.released = True
                self._out[index] -= 1
        # Also when a batch's first search was cancelled before sending it: the others wait.
        self._dispatch(index)
