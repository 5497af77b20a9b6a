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

On asyncio a call's answer reaches its searches through one callback: Ray's thread hands it to
the loop once, which sets each search's own future and sends the next call for the replica at
once — no task, shielded future or event per search, which cost the driver as much CPU per call
as awaiting the call itself. On trio each search waits for its batch in a worker thread.
"""

from __future__ import annotations

import asyncio
import functools
import math
import pickle
import threading
from collections import deque
from concurrent.futures import Future
from typing import Any

import anyio
import anyio.lowlevel

from ef_evaluation_ray._calls import await_refs, unwrapped

__all__ = ["Batcher"]


class _Batch:
    """Searches sent to one replica as one call."""

    __slots__ = ("ref", "released", "waiting")

    def __init__(self, ref: Any, waiting: int) -> None:
        self.ref = ref
        self.waiting = waiting
        self.released = False


class _Entry:
    """One search, waiting to be sent, then for its batch's answer: on asyncio in ``answer``,
    a future of its own that the batch's arrival sets; elsewhere by fetching the batch's ref
    once ``sent`` is set."""

    __slots__ = ("answer", "batch", "limit", "position", "query", "sent")

    def __init__(self, query: str, limit: int, loop: asyncio.AbstractEventLoop | None) -> None:
        self.query, self.limit = query, limit
        self.answer: asyncio.Future[list[bytes]] | None = None
        self.sent: anyio.Event | None = None
        if loop is None:
            self.sent = anyio.Event()
        else:
            self.answer = loop.create_future()
        self.batch: _Batch | None = None
        self.position = -1


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


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
        entry = _Entry(query, limit, _running_loop())
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
            try:
                outcomes = await self._outcomes(entry)
            except Exception as error:
                finished = True  # the call failed: a lost actor, or the factory's error
                cause = unwrapped(error)
                if cause is error:
                    raise
                raise cause from error
            finished = True
        finally:
            self._leave(index, entry, finished)
        success, value = pickle.loads(outcomes[entry.position])
        if success:
            return value
        raise value

    @staticmethod
    async def _outcomes(entry: _Entry) -> list[bytes]:
        if entry.answer is not None:
            # Cancelled (a timeout), this search abandons its own future, not its batch's.
            return await entry.answer
        assert entry.sent is not None
        await entry.sent.wait()
        assert entry.batch is not None
        (outcomes,) = await await_refs([entry.batch.ref])
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
        loop = _running_loop()
        for batch, entries in sent:
            if loop is not None:
                # Ray calls back from its own thread; the loop hands the answer to each search
                # at once, one wake-up per call rather than a task and a future per search.
                arrived = functools.partial(self._arrived, index, batch, entries)
                batch.ref.future().add_done_callback(functools.partial(_call_soon, loop, arrived))
            for entry in entries:
                if entry.sent is not None:
                    entry.sent.set()

    def _arrived(self, index: int, batch: _Batch, entries: list[_Entry], call: Future[Any]) -> None:
        """A call came back (on the loop): each of its searches gets the answer, unless it was
        cancelled meanwhile, and the replica's room goes to the searches waiting for it."""
        error = call.exception()
        for entry in entries:
            answer = entry.answer
            if answer is None or answer.done():
                continue
            if error is None:
                answer.set_result(call.result())
            else:
                answer.set_exception(error)
        with self._lock:
            if batch.released:
                return
            batch.released = True
            self._out[index] -= 1
        self._dispatch(index)

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


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Any, call: Future[Any]) -> None:
    try:
        loop.call_soon_threadsafe(callback, call)
    except RuntimeError:
        pass  # the loop is closed: nobody waits for this call any more
