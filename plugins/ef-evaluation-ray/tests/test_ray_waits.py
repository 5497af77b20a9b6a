"""No wait without end on a real Ray cluster (loopback only): replicas that cannot start say
why after ``start_timeout``, and a replica that a query kills takes no other query with it."""

from __future__ import annotations

import functools
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
import ray.cloudpickle

from ef.evaluation import IncompleteEvaluationWarning, evaluate_retrieval
from ef_evaluation_ray import RayRetriever

pytestmark = pytest.mark.usefixtures("cluster")

# The actors run the test's retrievers; they cannot import this module, so it travels by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

QUERIES = {f"q{i:02d}": f"query {i}" for i in range(40)}
QRELS = {query_id: {"d1": 1} for query_id in QUERIES}
OPTIONS: dict[str, Any] = {"k_values": (1,), "metrics": ("ndcg",), "on_error": "record"}


class Listed:
    """Answers every search with ``d1`` after a short pause, so that searches overlap."""

    def search(self, query: str, *, limit: int = 10) -> list[str]:
        time.sleep(0.02)
        return ["d1"][:limit]


# start_timeout


def test_replicas_asking_for_more_than_the_cluster_has_fail_after_start_timeout() -> None:
    retriever = RayRetriever(Listed, replicas=1, num_cpus=64, start_timeout=1)
    with pytest.raises(TimeoutError) as caught:
        retriever.start()
    message = str(caught.value)
    assert message.startswith("1 of 1 replica did not start in 1 s (start_timeout): ")
    assert "each asks for CPU 64; the cluster has CPU 4 in all, " in message
    assert "Ask for less (num_cpus, num_gpus, fewer actors), add nodes" in message
    # Nothing is left holding the cluster: a retriever that fits starts at once.
    fitting = RayRetriever(Listed, replicas=2, num_cpus=1, start_timeout=60)
    try:
        assert fitting.start().describe()["replicas"] == 2
    finally:
        fitting.shutdown()


def test_an_evaluation_of_replicas_that_cannot_start_fails_after_start_timeout() -> None:
    retriever = RayRetriever(Listed, num_cpus=0.5, num_gpus=1, start_timeout=1, retriever_id="x")
    with pytest.raises(TimeoutError, match=r"each asks for CPU 0\.5, GPU 1; the cluster has"):
        evaluate_retrieval(retriever, QRELS, QUERIES, **OPTIONS)


def test_a_sharded_index_that_cannot_start_fails_after_start_timeout() -> None:
    corpus = {"d1": "one text", "d2": "another text"}
    with pytest.raises(TimeoutError, match=r"of 2 shards did not start in 1 s \(start_timeout\)"):
        RayRetriever.sharded(corpus, shards=2, num_cpus=64, start_timeout=1)


@pytest.mark.parametrize("value", [0, -1, float("inf"), "10", True])
def test_a_bad_start_timeout_is_refused(value: object) -> None:
    with pytest.raises(ValueError, match=r"^start_timeout must be a number of seconds > 0 or "):
        RayRetriever(Listed, start_timeout=value)  # type: ignore[arg-type]


# a query that kills its replica


class Crashing(Listed):
    """Ends its own process on the query ``"poison"``, every time it is asked (each replica)."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)

    def search(self, query: str, *, limit: int = 10) -> list[str]:
        if query == "poison":
            (self.folder / f"crashed-{os.getpid()}").write_text("")
            os._exit(1)
        return super().search(query, limit=limit)


def test_a_query_that_kills_every_replica_fails_alone(tmp_path: Path) -> None:
    queries = {**QUERIES, "q10": "poison"}
    retriever = RayRetriever(functools.partial(Crashing, str(tmp_path)), replicas=2, num_cpus=1)
    try:
        with pytest.warns(IncompleteEvaluationWarning, match="1 of 40 queries failed"):
            report = evaluate_retrieval(
                retriever.start(), QRELS, queries, max_concurrency=8, **OPTIONS
            )
        info = report.manifest["retriever_info"]
    finally:
        retriever.shutdown()
    [failure] = report.failures
    assert failure.query_id == "q10"
    assert failure.error_type.startswith("ray.exceptions.")  # the replica's loss, as Ray says
    assert len(list(tmp_path.glob("crashed-*"))) == 2  # it killed each replica once, no more
    # Every query in flight with it on either replica was resent and answered.
    assert report.metrics == {"ndcg@1": 1.0}
    assert len(report.per_query) == 39
    assert info["resubmitted"] >= 2


# searches that hang

TIMEOUT = 4.0
"""The runner's timeout per search: generous for a 20-ms search on a loaded machine."""


class Hanging(Listed):
    """Hangs on queries starting with ``hang`` until the file ``released`` exists (60 s at
    most, so that a replica that waits for them cannot keep the test waiting for ever)."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)

    def search(self, query: str, *, limit: int = 10) -> list[str]:
        if query.startswith("hang"):
            deadline = time.monotonic() + 60
            while not (self.folder / "released").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        return super().search(query, limit=limit)


@pytest.mark.timeout(240)  # at least 10 times its time on an idle 2-core machine
@pytest.mark.parametrize(
    ("actor_concurrency", "max_concurrency", "hangs"),
    [
        # One search at a time, each hang costs a timeout: two show the replica goes on after
        # an abandoned search, and that the next hang, with the first still running, times out
        # alone as well.
        (1, 1, {"q05", "q25"}),
        # Searches in batches hang together, in one timeout: four, in batches with others.
        (8, 12, {"q05", "q15", "q25", "q35"}),
    ],
    ids=["one-at-a-time", "batched"],
)
def test_searches_that_hang_time_out_alone(
    tmp_path: Path, actor_concurrency: int, max_concurrency: int, hangs: set[str]
) -> None:
    queries = {q: f"hang {text}" if q in hangs else text for q, text in QUERIES.items()}
    retriever = RayRetriever(
        functools.partial(Hanging, str(tmp_path)),
        num_cpus=0.5,
        actor_concurrency=actor_concurrency,
    )
    try:
        failed = f"{len(hangs)} of 40 queries failed"
        with pytest.warns(IncompleteEvaluationWarning, match=failed):
            report = evaluate_retrieval(
                retriever.start(),
                QRELS,
                queries,
                max_concurrency=max_concurrency,
                timeout=TIMEOUT,
                **OPTIONS,
            )
    finally:
        (tmp_path / "released").touch()  # the abandoned searches end
        retriever.shutdown()
    assert sorted(failure.query_id for failure in report.failures) == sorted(hangs)
    assert {failure.error_type for failure in report.failures} == {"TimeoutError"}
    assert len(report.per_query) == 40 - len(hangs)
    assert report.metrics == {"ndcg@1": 1.0}


@pytest.mark.anyio
async def test_a_hung_search_keeps_no_other_search_of_its_batch_waiting(tmp_path: Path) -> None:
    retriever = RayRetriever(
        functools.partial(Hanging, str(tmp_path)), num_cpus=0.5, actor_concurrency=2, max_batch=3
    ).start()
    found: dict[str, Any] = {}
    timeouts: dict[str, anyio.CancelScope] = {}

    async def one(query: str) -> None:
        with anyio.move_on_after(TIMEOUT) as timeouts[query]:  # the runner's timeout
            found[query] = await retriever.search(query, limit=1)

    try:
        together = ("first", "hang", "third", "fourth", "fifth", "sixth")
        async with anyio.create_task_group() as group:
            for query in together:
                group.start_soon(one, query)
            # The hung search times out once the others are answered and it is asked for
            # again: from then on it waits alone (the follow-up call waits for it), as it would
            # at any later timeout.
            with anyio.move_on_after(TIMEOUT):
                while len(found) < 5 or retriever._batches.calls < 4:  # noqa: ASYNC110 - polled
                    await anyio.sleep(0.01)
            timeouts["hang"].cancel()
        assert found == {query: ["d1"] for query in together if query != "hang"}
        # Two searches in each of 3 calls (3 in flight at most); the hung one asked for again.
        assert retriever._batches.calls == 4
        # Its place is free again: two more searches are answered while it still hangs.
        async with anyio.create_task_group() as group:
            for query in ("seventh", "eighth"):
                group.start_soon(one, query)
        assert found["seventh"] == found["eighth"] == ["d1"]
        assert not (tmp_path / "released").exists()
    finally:
        (tmp_path / "released").touch()
        retriever.shutdown()
