"""Micro-batching: the searches that arrive while a replica is busy go to it in one call.

Each call through Ray costs the driver and the actor a fixed amount of CPU (submitting the task,
(de)serialising, the reply); on a machine where the replicas and the driver share the cores,
that cost, not the search, limits throughput. A replica has at most ``depth`` calls in flight
(those it answers, plus one queued so that it never waits for the driver); searches arriving
meanwhile wait, and go as one call as soon as a call in flight comes back. Searches are sent at
once when the replica has room — after one pass of the event loop, so that searches started
together go together, shared over the free room so that the replica's next call is queued
while it answers one.

Each search waits for its own answer: an exception of one query fails that query only (the
replica pickles each query's outcome on its own), a cancelled search leaves the others of its
batch waiting, and a lost actor fails every search of its batch with ``RayActorError``, for the
retriever to resubmit each to another replica.
"""

from __future__ import annotations

import asyncio
import math
import pickle
import threading
from collections import deque
from typing import Any

import anyio
import anyio.lowlevel

from ef_evaluation_ray._calls import await_refs, on_asyncio, unwrapped

__all__ = ["Batcher"]


class _Batch:
    """Searches sent to one replica as one call."""

    __slots__ = ("ref", "released", "shared", "waiting")

    def __init__(self, ref: Any, waiting: int) -> None:
        self.ref = ref
        self.shared: asyncio.Future[Any] | None = None
        self.waiting = waiting
        self.released = False


class _Entry:
    """One search, waiting to be sent, then for its batch's answer."""

    __slots__ = ("batch", "limit", "position", "query", "sent")

    def __init__(self, query: str, limit: int) -> None:
        self.query, self.limit = query, limit
        self.sent = anyio.Event()
        self.batch: _Batch | None = None
        self.position = -1


async def _value(ref: Any) -> Any:
    return await ref


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # read, so that a call nobody waits for any more logs nothing


class Batcher:
    """The searches of a retriever's replicas, sent in batches.

    :param replicas: how many replicas.
    :param depth: calls in flight per replica.
    :param max_batch: searches per call at most.
    :param lock: the retriever's lock (trio runs parts of a search in worker threads).
    """

    def __init__(self, replicas: int, depth: int, max_batch: int, lock: threading.Lock) -> None:
        self._depth, self._max_batch, self._lock = depth, max_batch, lock
        self._waiting: list[deque[_Entry]] = [deque() for _ in range(replicas)]
        self._handles: list[Any] = [None] * replicas
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
            self._handles[index] = handle
            queue = self._waiting[index]
            queue.append(entry)
            lead = len(queue) == 1  # else the first waiting search, or an answer, sends it
        finished = False  # whether this search saw its call come back (answered or failed)
        try:
            if lead:
                # One pass of the loop: the searches started with this one join it.
                await anyio.lowlevel.checkpoint()
                self._dispatch(index)
            await entry.sent.wait()
            try:
                outcomes = await self._outcomes(entry)
            except Exception:
                finished = True  # the call failed: a lost actor, or the factory's error
                raise
            finished = True
        finally:
            self._leave(index, entry, finished)
        success, value = pickle.loads(outcomes[entry.position])
        if success:
            return value
        raise value

    async def _outcomes(self, entry: _Entry) -> list[bytes]:
        batch = entry.batch
        assert batch is not None
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
        """Send the waiting searches while the replica has room, shared over that room."""
        sent: list[tuple[_Batch, list[_Entry]]] = []
        with self._lock:
            queue = self._waiting[index]
            while queue and self._out[index] < self._depth:
                room = self._depth - self._out[index]
                size = min(self._max_batch, math.ceil(len(queue) / room))
                entries = [queue.popleft() for _ in range(size)]
                ref = self._handles[index].search_batch.remote(
                    [(entry.query, entry.limit) for entry in entries]
                )
                batch = _Batch(ref, len(entries))
                for position, entry in enumerate(entries):
                    entry.batch, entry.position = batch, position
                self._out[index] += 1
                self.calls += 1
                sent.append((batch, entries))
        on_loop = on_asyncio()
        for batch, entries in sent:
            if on_loop:
                # One future per call, awaited by each of its searches: a search cancelled
                # (a timeout) abandons its wait without cancelling the others'.
                batch.shared = asyncio.ensure_future(_value(batch.ref))
                batch.shared.add_done_callback(_retrieved)
            for entry in entries:
                entry.sent.set()

    def _leave(self, index: int, entry: _Entry, finished: bool) -> None:
        """A search is done: answered, failed or cancelled. The first search of a batch to see
        its call come back (or the last to leave it) frees the replica's room for the next."""
        with self._lock:
            batch = entry.batch
            if batch is None:
                self._waiting[index].remove(entry)  # cancelled before it was sent: never sent
            else:
                batch.waiting -= 1
                if batch.released or not (finished or batch.waiting == 0):
                    return
                batch.released = True
                self._out[index] -= 1
        # Also when the first waiting search was cancelled before sending: the others wait.
        self._dispatch(index)
