"""``RayRetriever``: a retriever built once in each of N Ray actors, searched through them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ef_evaluation_ray._batches import Batcher
from ef_evaluation_ray._calls import await_refs
from ef_evaluation_ray._starting import (
    DEFAULT_START_TIMEOUT,
    check_resources,
    check_timeout,
    started,
)

__all__ = ["RayRetriever"]


def _count(name: str, value: object, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{name} must be an int >= {least}, got {value!r}")
    return value


class RayRetriever:
    """A retriever spread over Ray actors: each replica builds its own copy with ``factory()``
    (loading its model or index once) and answers searches; ``evaluate_retrieval`` awaits the
    replicas as it awaits any async retriever, so ``max_concurrency``, timeouts, retries,
    ``on_error``, progress and journals work as they do in-process.

    Each search goes to the replica with the fewest searches in flight. A replica has at most
    ``actor_concurrency + 1`` calls in flight; the searches that arrive meanwhile go to it
    together, up to ``max_batch`` in one call, when a call comes back (micro-batching: a call
    through Ray costs CPU of its own, which batches share). Each query of a batch is answered
    and fails on its own, as a call of its own would. When a replica dies
    (its node is lost, its process crashes), Ray restarts it (up to ``max_restarts`` times) but
    fails the searches it was answering with a ``RayActorError``; those are resubmitted here to
    another replica (each search of a lost batch on its own), once per replica, so a lost node
    costs time, not queries. Each search is answered once: nothing is scored twice.
    A search the runner gives up on (its ``timeout``) is given up in its replica too, which
    goes on with the next search at once (the hung one's thread runs on, abandoned); a call
    returns the searches it has done without waiting for one that stalls (see
    ``docs/cluster.md``).

    :param factory: builds the retriever in an actor — a picklable callable without arguments,
        e.g. ``functools.partial(ef.source_manager.load_index, "/shared/index")``.
    :param replicas: how many actors.
    :param num_cpus: CPUs Ray reserves for each actor.
    :param num_gpus: GPUs Ray reserves for each actor (a model on ``"cuda"`` sees its own).
    :param actor_concurrency: searches one actor answers at once, in threads (the retriever
        must then be thread-safe).
    :param max_restarts: how often Ray restarts a dead actor (``-1``: always).
    :param max_batch: searches sent to a replica in one call at most (``1``: each on its own).
    :param retriever_id: the identity recorded in journals and the manifest; by default the
        identity of the retriever the actors build (as an in-process evaluation records it),
        so a journal resumes on another cluster, or in-process.
    :param start_timeout: seconds to wait for the replicas to start (placed on the cluster, and
        their retriever built) before :meth:`start` gives up with a ``TimeoutError`` naming the
        resources asked for and those of the cluster (``None``: no limit). An evaluation starts
        the replicas the same way, when it reads :attr:`retriever_id` or :meth:`describe`.
    """

    def __init__(
        self,
        factory: Callable[[], Any],
        *,
        replicas: int = 1,
        num_cpus: float = 1,
        num_gpus: float = 0,
        actor_concurrency: int = 1,
        max_restarts: int = 3,
        max_batch: int = 32,
        retriever_id: str | None = None,
        start_timeout: float | None = DEFAULT_START_TIMEOUT,
    ) -> None:
        if not callable(factory):
            raise TypeError(f"factory must be a callable building the retriever, got {factory!r}")
        check_resources(num_cpus, num_gpus)
        self.factory = factory
        self.replicas = _count("replicas", replicas, 1)
        self.actor_concurrency = _count("actor_concurrency", actor_concurrency, 1)
        self.max_restarts = _count("max_restarts", max_restarts, -1)
        self.max_batch = _count("max_batch", max_batch, 1)
        self.num_cpus, self.num_gpus = num_cpus, num_gpus
        self.start_timeout = check_timeout("start_timeout", start_timeout)
        self._started = False
        self._identity = retriever_id
        self._handles: list[Any] | None = None
        self._in_flight: list[int] = []
        self._resending: list[object | None] = []  # per replica, the resent search in flight
        self._turn = 0
        self._lock = threading.Lock()  # trio runs searches from worker threads too
        self._batches = Batcher(
            self.replicas, self.actor_concurrency + 1, self.max_batch, self._lock
        )
        self.resubmitted = 0
        """How many searches went to another replica because theirs died."""

    @classmethod
    def sharded(cls, corpus: Any, **options: Any) -> Any:
        """A corpus split over actors, searched by scatter-gather: see
        :class:`~ef_evaluation_ray.ShardedIndex`."""
        from ef_evaluation_ray._sharded import ShardedIndex

        return ShardedIndex(corpus, **options)

    def _actors(self) -> list[Any]:
        with self._lock:
            if self._handles is None:
                from ef_evaluation_ray._actors import Replica

                options = Replica.options(
                    num_cpus=self.num_cpus,
                    num_gpus=self.num_gpus,
                    # An asyncio actor: its searches run in threads of its own, at most
                    # actor_concurrency at once; the loop takes calls (and abandonments).
                    max_concurrency=1000,
                    max_restarts=self.max_restarts,
                    max_task_retries=0,  # resubmitted here, to another replica
                    scheduling_strategy="SPREAD",
                )
                self._handles = [
                    options.remote(self.factory, self.actor_concurrency)
                    for _ in range(self.replicas)
                ]
                self._in_flight = [0] * self.replicas
                self._resending = [None] * self.replicas
            return self._handles

    def start(self) -> RayRetriever:
        """Start the replicas and wait until each has built its retriever (the first search
        does this otherwise).

        :raises TimeoutError: when the replicas have not all started in ``start_timeout``
            seconds (the cluster lacks the resources asked for, or the factory is slow); the
            message names the resources asked for and the cluster's.
        :raises Exception: the factory's error, when a replica could not build its retriever.
        """
        count = f"{self.replicas} replica{'s' if self.replicas != 1 else ''}"
        try:
            started(
                self._actors(),
                timeout=self.start_timeout,
                what=count,
                num_cpus=self.num_cpus,
                num_gpus=self.num_gpus,
            )
        except BaseException:
            with self._lock:
                self._handles = None  # killed by started(); the next start begins afresh
            raise
        self._started = True
        return self

    @property
    def retriever_id(self) -> str:
        """The identity in journals and the manifest (never a cluster address): ``retriever_id=``
        or, asked of a replica, the identity of the retriever it built — reading it then starts
        the replicas and waits for them, as :meth:`start` does."""
        if self._identity is None:
            import ray

            if not self._started:
                self.start()
            handle = self._actors()[0]
            self._identity = str(ray.get(handle.identity.remote()))
        return self._identity

    def _choose(self, tried: set[int]) -> tuple[int, Any]:
        handles = self._actors()
        with self._lock:
            count = len(handles)
            index = min(
                (i for i in range(count) if i not in tried),
                key=lambda i: (self._in_flight[i], (i - self._turn) % count),
            )
            self._turn = (index + 1) % count
            self._in_flight[index] += 1
            return index, handles[index]

    async def search(self, query: str, *, limit: int = 10) -> Any:
        """The results of the retriever in one replica, as it returned them — except a list of
        ``SearchHit`` results, which comes back as :class:`~ef_evaluation_ray.RankedHit` (doc id,
        score) pairs: the same ranking and scores, without the segments' text."""
        from ray.exceptions import RayActorError

        tried: set[int] = set()
        turn = object()  # this search's turn to be resent, once it lost a replica
        while True:
            index, handle = self._choose(tried)
            try:
                if tried:
                    await self._resend_alone(index, handle, turn)
                return await self._batches.ask(index, handle, query, limit)
            except RayActorError:
                tried.add(index)
                if len(tried) == self.replicas:
                    raise
                with self._lock:
                    self.resubmitted += 1
            finally:
                with self._lock:
                    self._in_flight[index] -= 1
                    if self._resending[index] is turn:
                        self._resending[index] = None

    async def _resend_alone(self, index: int, handle: Any, turn: object) -> None:
        """Wait until no other resubmitted search is in flight on replica ``index``, take its
        turn, and wait until the replica answers (it may be restarting). A search that kills
        every replica it reaches (a query that crashes the retriever) then dies alone on each:
        the healthy searches lost with it are resent and answered, and only it fails, once it
        has lost every replica.

        :raises RayActorError: when the replica does not come back (3 tries).
        """
        import anyio
        from ray.exceptions import RayActorError

        while True:
            with self._lock:
                if self._resending[index] is None:
                    self._resending[index] = turn
                    break
            await anyio.sleep(0.01)  # rare: only after a replica died
        for attempt in range(3):  # a replica just lost may not be known as restarting yet
            try:
                await await_refs([handle.ready.remote()])
                return
            except RayActorError:
                if attempt == 2:
                    raise
                await anyio.sleep(0.5)

    def describe(self) -> dict[str, Any]:
        """Replicas, the nodes they run on, resources: ``manifest["retriever_info"]``."""
        import ray
        from ray.exceptions import RayActorError

        if not self._started:
            self.start()  # an evaluation asks before its first search: it waits at most so long
        places: list[dict[str, Any]] = []
        for handle in self._actors():
            ref = handle.ready.remote()
            ready, _ = ray.wait([ref], timeout=10)
            try:
                if not ready:
                    raise TimeoutError("no answer in 10 s")
                places.append(ray.get(ref))
            except (RayActorError, TimeoutError) as error:
                # Dead or restarting: the report says so rather than waiting for it.
                places.append({"node": None, "gpus": [], "unavailable": type(error).__name__})
        return {
            "engine": "ray",
            "ray_version": ray.__version__,
            "replicas": self.replicas,
            "nodes": sorted({p["node"] for p in places if p["node"] is not None}),
            "actors": places,
            "resources": {"num_cpus": self.num_cpus, "num_gpus": self.num_gpus},
            "actor_concurrency": self.actor_concurrency,
            "max_restarts": self.max_restarts,
            "max_batch": self.max_batch,
            "calls": self._batches.calls,
            "resubmitted": self.resubmitted,
        }

    def shutdown(self) -> None:
        """Stop the replicas (they stop with the Ray session otherwise)."""
        import ray

        with self._lock:
            handles, self._handles = self._handles, None
            self._started = False
        for handle in handles or ():
            ray.kill(handle)
