"""Batched search through the runner: a retriever's ``search_batch`` is handed batches of
queries, with the per-query rules of one query at a time (failures, retries, timeouts, the
journal). Every evaluation here runs inline, on asyncio and on trio."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import attrs
import pytest

from ef.evaluation import evaluate_retrieval, evaluate_retrieval_async
from ef.evaluation._exceptions import IncompleteEvaluationWarning, QueryError
from ef.evaluation._running.batches import find_batch_form

N = 23
QUERIES = {f"q{i}": f"text {i:02d}" for i in range(N)}  # one length: batches in plan order
QRELS = {f"q{i}": {f"d{i}": 1.0, f"d{(i * 7) % N}": 2.0} for i in range(N)}
DOCS = [f"d{i}" for i in range(N)]


def ranking(text: str, limit: int) -> list[str]:
    """A fixed, query-dependent ranking: the judged docs land at varied depths."""
    number = int(text.split()[-1])
    return [DOCS[(number * 5 + step * 3) % N] for step in range(N)][:limit]


class Fails(Exception):
    """A failure of one query, never retried."""


class Retriever:
    """A sync retriever with a batch form; records every call; fails the texts in ``bad``."""

    def __init__(self, bad: Sequence[str] = (), batch_size: int | None = None) -> None:
        self.bad = set(bad)
        self.batch_size = batch_size
        self.lock = threading.Lock()
        self.single: list[str] = []
        self.batches: list[list[str]] = []

    def answer(self, text: str, limit: int) -> list[str]:
        if text in self.bad:
            raise Fails(f"cannot answer {text!r}")
        return ranking(text, limit)

    def search(self, query: str, *, limit: int = 10) -> list[str]:
        with self.lock:
            self.single.append(query)
        return self.answer(query, limit)

    def search_batch(self, queries: list[str], *, limit: int = 10) -> list[list[str]]:
        with self.lock:
            self.batches.append(list(queries))
        return [self.answer(text, limit) for text in queries]

    def asked(self) -> list[str]:
        return self.single + [text for batch in self.batches for text in batch]


class AsyncRetriever(Retriever):
    async def search(self, query: str, *, limit: int = 10) -> list[str]:  # type: ignore[override]
        await anyio.lowlevel.checkpoint()
        return Retriever.search(self, query, limit=limit)

    async def search_batch(  # type: ignore[override]
        self, queries: list[str], *, limit: int = 10
    ) -> list[list[str]]:
        await anyio.lowlevel.checkpoint()
        return Retriever.search_batch(self, queries, limit=limit)


def same_report(batched: Any, single: Any) -> None:
    """Equal in everything but the latencies and the manifest."""
    assert batched.metrics == single.metrics
    assert batched.per_query == single.per_query
    assert batched.n_queries == single.n_queries
    assert [attrs.asdict(f) for f in batched.failures] == [attrs.asdict(f) for f in single.failures]


def evaluate(retriever: Any, mode: str, **options: Any) -> Any:
    """Inline (no loop), or on a fresh asyncio or trio loop with two workers."""
    if mode == "inline":
        return evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(1, 3, 10), **options)
    options = {"max_concurrency": 2, **options}
    return anyio.run(
        lambda: evaluate_retrieval_async(retriever, QRELS, QUERIES, k_values=(1, 3, 10), **options),
        backend=mode,
    )


MODES = ["inline", "asyncio", "trio"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("size", [2, 5, 32])
def test_batched_and_one_at_a_time_give_identical_reports(mode: str, size: int) -> None:
    kind = Retriever if mode == "inline" else AsyncRetriever
    single_retriever, batched_retriever = kind(), kind()
    single = evaluate(single_retriever, mode, batch_size=1)
    batched = evaluate(batched_retriever, mode, batch_size=size)
    same_report(batched, single)
    assert single_retriever.batches == [] and sorted(single_retriever.single) == sorted(
        QUERIES.values()
    )
    # Every query asked exactly once, in batches of at most ``size``.
    assert sorted(batched_retriever.asked()) == sorted(QUERIES.values())
    assert max(map(len, batched_retriever.batches)) == min(size, N)
    assert len(batched_retriever.single) <= 1  # only a last batch of one goes alone


@pytest.mark.parametrize("mode", MODES)
def test_the_retrievers_own_batch_size_is_used_unless_the_evaluation_says(mode: str) -> None:
    kind = Retriever if mode == "inline" else AsyncRetriever
    own = kind(batch_size=4)
    evaluate(own, mode)
    assert max(map(len, own.batches)) == 4
    told = kind(batch_size=4)
    evaluate(told, mode, batch_size=6)
    assert max(map(len, told.batches)) == 6


@pytest.mark.parametrize("mode", MODES)
def test_a_batch_with_one_failing_query_records_exactly_that_failure(mode: str) -> None:
    kind = Retriever if mode == "inline" else AsyncRetriever
    bad = QUERIES["q6"]
    with pytest.warns(IncompleteEvaluationWarning):
        single = evaluate(kind(bad=[bad]), mode, batch_size=1, on_error="record")
    retriever = kind(bad=[bad])
    with pytest.warns(IncompleteEvaluationWarning):
        batched = evaluate(retriever, mode, batch_size=8, on_error="record")
    same_report(batched, single)
    (failure,) = batched.failures
    assert (failure.query_id, failure.error_type, failure.attempts) == (
        "q6",
        f"{__name__}.Fails",
        1,
    )
    assert batched.n_queries == N - 1
    # The failing query was asked alone, through the one-query form, once.
    assert retriever.single.count(bad) == 1
    answered = [text for batch in retriever.batches if bad not in batch for text in batch]
    assert sorted(answered + retriever.single) == sorted(QUERIES.values())


@pytest.mark.parametrize("mode", MODES)
def test_a_failing_query_in_a_batch_raises_naming_it(mode: str) -> None:
    kind = Retriever if mode == "inline" else AsyncRetriever
    with pytest.raises(QueryError) as raised:
        evaluate(kind(bad=[QUERIES["q3"]]), mode, batch_size=8)
    assert raised.value.failure.query_id == "q3"
    assert isinstance(raised.value.__cause__, Fails)


@pytest.mark.parametrize("mode", MODES)
def test_a_transient_batch_failure_retries_the_batch_as_a_whole(mode: str) -> None:
    class Flaky(Retriever if mode == "inline" else AsyncRetriever):  # type: ignore[misc]
        failed = False

        def answer(self, text: str, limit: int) -> list[str]:
            if not self.failed:
                self.failed = True
                raise ConnectionError("reset")
            return ranking(text, limit)

    retriever = Flaky()
    report = evaluate(retriever, mode, batch_size=N, retries=1)
    assert report.n_queries == N and not report.failures
    assert [len(batch) for batch in retriever.batches] == [N, N]  # the same batch, twice
    assert retriever.single == []


@pytest.mark.parametrize("mode", MODES)
def test_the_journal_resumes_mid_batch_without_asking_a_finished_query(
    mode: str, tmp_path: Path
) -> None:
    journal = tmp_path / "run.jsonl"
    # q0-q7 answered in a first batch; in the second, q8-q11 fail as a batch, then q8 is
    # answered alone and q9 stops the evaluation: the journal ends in the middle of a batch.
    kind = Retriever if mode == "inline" else AsyncRetriever
    first = kind(bad=[QUERIES["q9"]])
    with pytest.raises(QueryError):
        evaluate(first, mode, batch_size=8, journal=journal, max_concurrency=1)
    bad = QUERIES["q9"]
    finished = {text for batch in first.batches if bad not in batch for text in batch}
    finished |= {text for text in first.single if text != bad}
    assert finished == {QUERIES[f"q{i}"] for i in range(9)}
    second = kind()
    resumed = evaluate(second, mode, batch_size=8, journal=journal, max_concurrency=1)
    assert not set(second.asked()) & finished
    assert sorted(second.asked()) == sorted(set(QUERIES.values()) - finished)
    assert resumed.manifest["journal"]["resumed"] == len(finished)
    same_report(resumed, evaluate(kind(), mode, batch_size=1))


def test_a_batch_that_hangs_is_split_until_the_hanging_query_times_out_alone() -> None:
    class Hangs(AsyncRetriever):
        async def search(self, query: str, *, limit: int = 10) -> list[str]:  # type: ignore[override]
            if query == QUERIES["q4"]:
                await anyio.sleep_forever()
            return ranking(query, limit)

        async def search_batch(  # type: ignore[override]
            self, queries: list[str], *, limit: int = 10
        ) -> list[list[str]]:
            self.batches.append(list(queries))
            if QUERIES["q4"] in queries:
                await anyio.sleep_forever()
            return [ranking(text, limit) for text in queries]

    async def main() -> Any:
        with pytest.warns(IncompleteEvaluationWarning):
            return await evaluate_retrieval_async(
                Hangs(), QRELS, QUERIES, timeout=0.05, batch_size=4, on_error="record"
            )

    report = anyio.run(main)
    (failure,) = report.failures
    assert (failure.query_id, failure.error_type) == ("q4", "TimeoutError")
    assert report.n_queries == N - 1


@pytest.mark.parametrize("answer", [[], [["d1"]] * 3, "d1", None])
def test_a_batch_form_that_breaks_its_protocol_stops_the_evaluation(answer: Any) -> None:
    class Broken(Retriever):
        def search_batch(self, queries: list[str], *, limit: int = 10) -> Any:
            return answer

    with pytest.raises(TypeError, match="search_batch returned"):
        evaluate_retrieval(Broken(), QRELS, QUERIES, batch_size=2, on_error="record")


def test_a_batch_form_must_match_the_one_query_form() -> None:
    class Mixed(Retriever):
        async def search_batch(  # type: ignore[override]
            self, queries: list[str], *, limit: int = 10
        ) -> list[list[str]]:
            return []

    with pytest.raises(TypeError, match="search_batch is async while its one-query form is sync"):
        evaluate_retrieval(Mixed(), QRELS, QUERIES)
    with pytest.raises(TypeError, match="batch_size must be an integer >= 1"):
        find_batch_form(Retriever(batch_size=0).search, 10, is_async=False)  # type: ignore[arg-type]


def test_a_retriever_without_a_batch_form_is_asked_one_query_at_a_time() -> None:
    asked: list[str] = []

    def search(query: str, *, limit: int = 10) -> list[str]:
        asked.append(query)
        return ranking(query, limit)

    report = evaluate_retrieval(search, QRELS, QUERIES, batch_size=8)
    assert report.n_queries == N and len(asked) == N


def test_batch_size_is_validated() -> None:
    with pytest.raises(ValueError, match="batch_size must be a positive integer or None"):
        evaluate_retrieval(Retriever(), QRELS, QUERIES, batch_size=0)


@pytest.mark.parametrize("mode", MODES)
def test_a_window_of_batches_is_asked_longest_text_first_and_scores_the_same(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ef.evaluation._running.batches as batches

    monkeypatch.setattr(batches, "BATCHES_PER_WINDOW", 3)  # windows of 3 batches of 2: 6 texts
    # Texts of varied lengths, in no order of length: "text 07", "x x text 08", …
    queries = {q: f"{'x ' * ((i * 5) % 4)}{text}" for i, (q, text) in enumerate(QUERIES.items())}

    def run(retriever: Any, size: int) -> Any:
        options = {"k_values": (1, 3, 10), "batch_size": size}
        if mode == "inline":
            return evaluate_retrieval(retriever, QRELS, queries, **options)
        return anyio.run(
            lambda: evaluate_retrieval_async(
                retriever, QRELS, queries, max_concurrency=1, **options
            ),
            backend=mode,
        )

    kind = Retriever if mode == "inline" else AsyncRetriever
    batched_retriever = kind()
    batched = run(batched_retriever, 2)
    same_report(batched, run(kind(), 1))
    planned = list(queries.values())
    # (A batch of one is asked through the one-query form: the last, here.)
    asked = [text for batch in batched_retriever.batches for text in batch]
    asked += batched_retriever.single
    assert sorted(asked) == sorted(planned)  # each once
    for first in range(0, len(planned), 6):  # each window: its texts, longest first
        window = planned[first : first + 6]
        assert asked[first : first + 6] == sorted(window, key=lambda text: -len(text))
    assert [len(batch) for batch in batched_retriever.batches] == [2] * 11
    assert len(batched_retriever.single) == 1


class TaggedRetriever(Retriever):
    """A batch form that takes the queries' ids and cannot tell ``q9``'s results."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[list[str]] = []

    def search_batch(  # type: ignore[override]
        self, queries: list[str], *, limit: int = 10, query_ids: list[str]
    ) -> list[list[str] | Exception]:
        self.ids.append(list(query_ids))
        answers = super().search_batch(queries, limit=limit)
        tagged = zip(query_ids, answers, strict=True)
        return [Fails("no answer tagged 'q9'") if q == "q9" else a for q, a in tagged]


class AsyncTaggedRetriever(TaggedRetriever):
    async def search(self, query: str, *, limit: int = 10) -> list[str]:  # type: ignore[override]
        return TaggedRetriever.search(self, query, limit=limit)

    async def search_batch(  # type: ignore[override]
        self, queries: list[str], *, limit: int = 10, query_ids: list[str]
    ) -> list[list[str] | Exception]:
        await anyio.lowlevel.checkpoint()
        return TaggedRetriever.search_batch(self, queries, limit=limit, query_ids=query_ids)


@pytest.mark.parametrize("mode", MODES)
def test_a_batch_form_is_given_the_query_ids_and_an_exception_fails_its_query(
    mode: str,
) -> None:
    retriever = TaggedRetriever() if mode == "inline" else AsyncTaggedRetriever()
    with pytest.warns(IncompleteEvaluationWarning, match="1 of 23 queries failed"):
        report = evaluate(retriever, mode, batch_size=5, on_error="record")
    assert sorted(query_id for ids in retriever.ids for query_id in ids) == sorted(QUERIES)
    for ids, texts in zip(retriever.ids, retriever.batches, strict=True):
        assert [QUERIES[query_id] for query_id in ids] == texts
    (failure,) = report.failures
    assert (failure.query_id, failure.message, failure.attempts) == (
        "q9",
        "no answer tagged 'q9'",
        1,
    )
    assert QUERIES["q9"] not in retriever.single  # not asked again alone
    single = evaluate(Retriever(), mode, batch_size=1)
    assert report.per_query == {q: v for q, v in single.per_query.items() if q != "q9"}
    with pytest.raises(QueryError, match="q9") as raised:
        evaluate(
            TaggedRetriever() if mode == "inline" else AsyncTaggedRetriever(), mode, batch_size=5
        )
    assert isinstance(raised.value.__cause__, Fails)


def test_query_ids_go_to_a_batch_form_that_names_them_and_only_to_it() -> None:
    tagged = TaggedRetriever()
    with pytest.warns(IncompleteEvaluationWarning):
        evaluate(tagged, "inline", batch_size=5, on_error="record")
    assert [len(ids) for ids in tagged.ids] == [5, 5, 5, 5, 3]

    class Forwards(Retriever):
        def search_batch(self, queries: list[str], **options: Any) -> list[list[str]]:  # type: ignore[override]
            assert "query_ids" not in options, options
            return super().search_batch(queries, **options)

    report = evaluate(Forwards(), "inline", batch_size=5)
    assert report.per_query == evaluate(Retriever(), "inline", batch_size=1).per_query
