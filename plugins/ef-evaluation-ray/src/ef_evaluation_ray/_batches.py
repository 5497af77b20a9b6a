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

A search that takes long — or hangs — keeps only itself waiting. The replica runs each search
of a call on its own and answers the call with the searches done once the others stall (see
``_actors.STALL``); those still running are asked for again in a follow-up call (``more``).
A search cancelled after it was sent (the runner's timeout) is abandoned in the replica, which
gives its place to the next search at once.

On asyncio a call's answer reaches its searches through one callback: Ray's thread hands it to
the loop once, which sets each search's own future and sends the next call for the replica at
once — no task, shielded future or event per search, which cost the driver as much CPU per call
as awaiting the call itself. On trio each search waits for its batch in a worker thread.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import math
import pickle
import threading
from collections import deque
from concurrent.futures import Future
from typing import Any

import anyio
import anyio.lowlevel

from ef_evaluation_ray._calls import LOST, await_refs, unwrapped

__all__ = ["Batcher"]


class _Batch:
    """Searches sent to one replica as one call (or the follow-up call for those of a call
    that were still running when it came back: ``next``)."""

    __slots__ = ("entries", "next", "ref", "released", "waiting")

    def __init__(self, ref: Any, entries: list[_Entry]) -> None:
        self.ref = ref
        self.entries = entries
        self.waiting = len(entries)
        self.released = False
        self.next: _Batch | None = None


class _Entry:
    """One search, waiting to be sent, then for its batch's answer: on asyncio in ``answer``,
    a future of its own that the batch's arrival sets; elsewhere by fetching the batch's ref
    once ``sent`` is set."""

    __slots__ = ("answer", "batch", "key", "left", "limit", "position", "query", "sent")

    def __init__(
        self, key: int, query: str, limit: int, loop: asyncio.AbstractEventLoop | None
    ) -> None:
        self.key, self.query, self.limit = key, query, limit
        self.left = False
        self.answer: asyncio.Future[bytes] | None = None
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
        self._keys = itertools.count()
        self.calls = 0
        """How many calls were sent (a batch is one call)."""

    async def ask(self, index: int, handle: Any, query: str, limit: int) -> Any:
        """The results of ``query`` from replica ``index``, sent alone or with others.

        :raises Exception: the retriever's exception for this query, or the call's error —
            ``RayActorError`` when the replica died — for every query of the batch.
        """
        entry = _Entry(next(self._keys), query, limit, _running_loop())
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
                outcome = await self._outcome(index, entry)
            except Exception as error:
                finished = True  # the call failed: a lost actor, or the factory's error
                cause = unwrapped(error)
                if cause is error:
                    raise
                raise cause from error
            finished = True
        finally:
            self._leave(index, entry, finished)
        if outcome == LOST:
            from ray.exceptions import RayActorError

            raise RayActorError(error_msg="the replica restarted and lost this search")
        success, value = pickle.loads(outcome)
        if success:
            return value
        raise value

    async def _outcome(self, index: int, entry: _Entry) -> bytes:
        if entry.answer is not None:
            # Cancelled (a timeout), this search abandons its own future, not its batch's.
            return await entry.answer
        assert entry.sent is not None
        await entry.sent.wait()
        while True:
            with self._lock:  # another search's thread may move it on to a follow-up call
                batch, position = entry.batch, entry.position
            assert batch is not None
            (outcomes,) = await await_refs([batch.ref])
            outcome: bytes | None = outcomes[position]
            if outcome is not None:
                return outcome
            self._follow(index, batch, outcomes)

    def _follow(self, index: int, batch: _Batch, outcomes: list[bytes | None]) -> list[_Entry]:
        """Ask the replica again for the searches of ``batch`` it had not answered, in one
        call (once per batch); the searches moved on to it."""
        with self._lock:
            if batch.next is not None:
                return []
            entries = [
                entry
                for entry in batch.entries
                if outcomes[entry.position] is None and not entry.left
            ]
            if not batch.released:
                batch.released = True
                self._out[index] -= 1
            if not entries:
                return []
            ref = self._handles[index].more.remote([entry.key for entry in entries])
            batch.next = follow_up = _Batch(ref, entries)
            for position, entry in enumerate(entries):
                entry.batch, entry.position = follow_up, position
            self._out[index] += 1
            self.calls += 1
        return entries

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
                    [(entry.key, entry.query, entry.limit) for entry in entries]
                )
                batch = _Batch(ref, entries)
                for position, entry in enumerate(entries):
                    entry.batch, entry.position = batch, position
                self._out[index] += 1
                self.calls += 1
                sent.append((batch, entries))
        for batch, entries in sent:
            self._when_back(index, batch)
            for entry in entries:
                if entry.sent is not None:
                    entry.sent.set()

    def _when_back(self, index: int, batch: _Batch) -> None:
        loop = _running_loop()
        if loop is not None:
            # Ray calls back from its own thread; the loop hands the answer to each search
            # at once, one wake-up per call rather than a task and a future per search.
            arrived = functools.partial(self._arrived, index, batch)
            batch.ref.future().add_done_callback(functools.partial(_call_soon, loop, arrived))

    def _arrived(self, index: int, batch: _Batch, call: Future[Any]) -> None:
        """A call came back (on the loop): each of its searches gets its answer, unless it was
        cancelled meanwhile; those the replica had not answered are asked for again; the
        replica's room goes to the searches waiting for it."""
        error = call.exception()
        outcomes = None if error is not None else call.result()
        for entry in batch.entries:
            answer = entry.answer
            if answer is None or answer.done():
                continue
            if outcomes is None:
                answer.set_exception(error)  # type: ignore[arg-type]
            elif outcomes[entry.position] is not None:
                answer.set_result(outcomes[entry.position])
        if outcomes is not None and batch.next is None and None in outcomes:
            if self._follow(index, batch, outcomes):
                assert batch.next is not None
                self._when_back(index, batch.next)
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
            entry.left = True
            batch = entry.batch
            if batch is None:
                self._waiting[index].remove(entry)  # cancelled before it was sent: never sent
            else:
                if not finished:  # sent, and given up (a timeout): the replica gives it up too
                    self._handles[index].abandon.remote(entry.key)
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
