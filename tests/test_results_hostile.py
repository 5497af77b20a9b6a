"""What a retriever returns: every shape that is no ranking fails its query, never scores 0.

Each case runs through the public entry points: ``evaluate_retrieval`` inline (a sync retriever
in the caller's thread) and ``evaluate_retrieval_async`` on asyncio and trio, with a sync
retriever (worker threads) and an async one.
"""

from __future__ import annotations

import gc
import math
import re
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from ef.evaluation import (
    IncompleteEvaluationWarning,
    QueryError,
    evaluate_retrieval,
    evaluate_retrieval_async,
    evaluate_run,
    hookimpl,
    journal_to_trec_run,
    read_trec_run,
)
from ef.evaluation.testing import registered_plugin
from ef.segments import Segment
from ef.source_manager import SearchHit

QRELS = {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}
QUERIES = {"q1": "bad", "q2": "good"}


async def _found() -> list[str]:
    return ["d1"]


# (case, what the retriever returns for q1, the error type, what its message says)
HOSTILE: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("None", lambda: None, TypeError, "returned None"),
    ("set", lambda: {"d1", "x"}, TypeError, "returned a set, which has no order"),
    ("frozenset", lambda: frozenset({"d1"}), TypeError, "frozenset, which has no order"),
    ("dict keys", lambda: {"d1": 1.0}.keys(), TypeError, "dict_keys, which has no order"),
    ("int", lambda: 7, TypeError, "returned 7 (int)"),
    ("float", lambda: 0.5, TypeError, "returned 0.5 (float)"),
    ("str", lambda: "d1", TypeError, "single str value 'd1'"),
    ("bytes", lambda: b"d1", TypeError, "single bytes value b'd1'"),
    ("nested lists", lambda: [["d1"]], TypeError, "cannot map a result of type list"),
    ("None result", lambda: [None, "d1"], TypeError, "cannot map a result of type NoneType"),
    ("coroutine", _found, TypeError, "returned an awaitable (coroutine)"),
    ("NaN score", lambda: {"d1": math.nan}, ValueError, "doc 'd1' the score nan"),
    ("inf score", lambda: {"d1": math.inf}, ValueError, "doc 'd1' the score inf"),
    ("-inf score", lambda: {"d1": -math.inf}, ValueError, "doc 'd1' the score -inf"),
    ("str score", lambda: {"d1": "0.9"}, TypeError, "doc 'd1' the score '0.9' (str)"),
    ("bool score", lambda: {"d1": True}, TypeError, "doc 'd1' the score True (bool)"),
    ("None score", lambda: {"d1": None}, TypeError, "doc 'd1' the score None"),
    ("int key", lambda: {1: 0.9}, TypeError, "mapping with the key 1 (int)"),
]
CASES = [pytest.param(*case[1:], id=case[0]) for case in HOSTILE]


def retriever_for(bad: Callable[[], Any], kind: str) -> Callable[..., Any]:
    """A retriever answering q1 with ``bad()`` and q2 with the right doc, sync or async."""

    def sync(query: str, *, limit: int) -> Any:
        return bad() if query == "bad" else ["d2"]

    async def asynchronous(query: str, *, limit: int) -> Any:
        await anyio.lowlevel.checkpoint()
        return sync(query, limit=limit)

    return sync if kind == "sync" else asynchronous


def check_raised(raised: pytest.ExceptionInfo[QueryError], error: type, message: str) -> None:
    assert raised.value.query_id == "q1"
    assert type(raised.value.__cause__) is error
    assert message in str(raised.value)


def check_recorded(report: Any, error: type, message: str) -> None:
    [failure] = report.failures
    assert (failure.query_id, failure.error_type, failure.attempts) == ("q1", error.__name__, 1)
    assert message in failure.message
    assert list(report.per_query) == ["q2"]  # left out of the means, not scored 0
    assert report.metrics["ndcg@1"] == 1.0


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize(("bad", "error", "message"), CASES)
async def test_a_result_that_is_no_ranking_fails_its_query(kind, bad, error, message):
    retriever = retriever_for(bad, kind)
    with pytest.raises(QueryError, match=r"query 'q1' after 1 attempt") as raised:
        await evaluate_retrieval_async(retriever, QRELS, QUERIES, k_values=(1,), retries=3)
    check_raised(raised, error, message)
    with pytest.warns(IncompleteEvaluationWarning, match="1 of 2 queries failed"):
        report = await evaluate_retrieval_async(
            retriever, QRELS, QUERIES, k_values=(1,), on_error="record", retries=3
        )
    check_recorded(report, error, message)


@pytest.mark.parametrize(("bad", "error", "message"), CASES)
def test_a_result_that_is_no_ranking_fails_its_query_inline(bad, error, message):
    retriever = retriever_for(bad, "sync")
    with pytest.raises(QueryError, match=r"query 'q1' after 1 attempt") as raised:
        evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(1,))
    check_raised(raised, error, message)
    with pytest.warns(IncompleteEvaluationWarning, match="1 of 2 queries failed"):
        report = evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(1,), on_error="record")
    check_recorded(report, error, message)


def test_a_refused_coroutine_is_closed_not_left_to_warn():
    made = []

    def retriever(query):
        made.append(_found())
        return made[-1]

    with pytest.warns(IncompleteEvaluationWarning):
        evaluate_retrieval(retriever, QRELS, QUERIES, on_error="record")
    assert all(coroutine.cr_frame is None for coroutine in made)  # closed
    made.clear()
    gc.collect()  # an unclosed coroutine would warn "never awaited" here (an error in tests)


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_score_mapping_is_ranked_by_score_not_insertion(kind):
    scores = {"d9": 0.1, "d1": 0.9}
    report = await evaluate_retrieval_async(
        retriever_for(lambda: scores, kind), {"q1": {"d1": 1.0}}, QUERIES, k_values=(1, 2)
    )
    assert report.per_query["q1"]["ndcg@1"] == 1.0
    assert (
        report.per_query
        == evaluate_run({"q1": scores}, {"q1": {"d1": 1.0}}, k_values=(1, 2)).per_query
    )


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_score_ties_put_the_larger_doc_id_first_as_trec_eval_does(kind):
    scores = {"a": 1.0, "c": 1.0, "b": 1.0, "d": 2.0}  # ranked d, c, b, a
    report = await evaluate_retrieval_async(
        retriever_for(lambda: scores, kind), {"q1": {"b": 1.0}}, QUERIES, k_values=(4,)
    )
    assert report.per_query["q1"]["mrr@4"] == 1 / 3


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_score_mapping_is_cut_at_limit_after_ranking(kind):
    # The best-scored doc comes last in the mapping: cutting before ranking would lose it.
    scores = {"x1": 0.5, "x2": 0.4, "x3": 0.3, "d1": 0.95}
    report = await evaluate_retrieval_async(
        retriever_for(lambda: scores, kind), {"q1": {"d1": 1.0}}, QUERIES, k_values=(3,), limit=1
    )
    assert report.per_query["q1"]["mrr@3"] == 1.0
    assert report.short_rankings == ("q1",)  # 4 returned, ranking of 1 < the cutoff 3


class Doc:
    def __init__(self, number: int) -> None:
        self.number = number


class IntIds:
    """A plugin whose doc id getter maps ``Doc`` results to ints instead of strings."""

    @hookimpl
    def ef_evaluation_doc_id_getter(self, result_type):
        if issubclass(result_type, Doc):
            return lambda doc: doc.number
        return None


def docs_retriever(kind: str) -> Callable[..., Any]:
    def sync(query: str) -> list[Doc]:
        return [Doc(1), Doc(2)]

    async def asynchronous(query: str) -> list[Doc]:
        return sync(query)

    return sync if kind == "sync" else asynchronous


INT_IDS_MESSAGE = re.escape(
    "the doc id getter of plugin 'int-ids' mapped a Doc result to 1 (int); doc ids are strings"
)


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_doc_id_getter_returning_ints_is_refused_naming_its_plugin(kind):
    qrels = {"q1": {"1": 1.0}}
    with registered_plugin(IntIds(), name="int-ids"):
        with pytest.raises(QueryError, match=rf"query 'q1'.*{INT_IDS_MESSAGE}") as raised:
            await evaluate_retrieval_async(docs_retriever(kind), qrels, QUERIES)
        assert type(raised.value.__cause__) is TypeError
        with pytest.warns(IncompleteEvaluationWarning):
            report = await evaluate_retrieval_async(
                docs_retriever(kind), qrels, QUERIES, on_error="record"
            )
    assert re.search(INT_IDS_MESSAGE, report.failures[0].message)
    assert report.n_queries == 0  # not scored 0: the ids could never match


def test_a_doc_id_getter_returning_ints_is_refused_inline():
    with registered_plugin(IntIds(), name="int-ids"):
        with pytest.raises(QueryError, match=rf"query 'q1'.*{INT_IDS_MESSAGE}"):
            evaluate_retrieval(docs_retriever("sync"), {"q1": {"1": 1.0}}, QUERIES)


def over_limit(calls: list[str]) -> Callable[[str], list[str]]:
    """A retriever without ``limit=`` returning twice as many results as asked for."""

    def retriever(query: str) -> list[str]:
        calls.append(query)
        return ["x0", "x1", "r1", "r2", "x4", "x5"]  # r1 at rank 3, r2 at rank 4

    return retriever


def test_results_of_a_retriever_without_limit_are_cut_at_exactly_limit(tmp_path):
    calls: list[str] = []
    journal = tmp_path / "journal.jsonl"
    report = evaluate_retrieval(
        over_limit(calls),
        {"q1": {"r1": 1.0, "r2": 1.0}},
        QUERIES,
        k_values=(5,),
        limit=3,
        journal=journal,
    )
    assert calls == ["bad"]
    # limit 3 keeps r1 (rank 3) and drops r2 (rank 4): recall@5 is 1/2, not 0 or 1.
    assert report.per_query["q1"]["recall@5"] == 0.5
    assert report.short_rankings == ("q1",)
    journal_to_trec_run(journal, tmp_path / "run.trec")
    assert list(read_trec_run(tmp_path / "run.trec")["q1"]) == ["x0", "x1", "r1"]


@pytest.mark.anyio
async def test_results_of_an_async_retriever_without_limit_are_cut_at_exactly_limit():
    calls: list[str] = []
    sync = over_limit(calls)

    async def retriever(query):
        return sync(query)

    report = await evaluate_retrieval_async(
        retriever, {"q1": {"r1": 1.0, "r2": 1.0}}, QUERIES, k_values=(5,), limit=3
    )
    assert report.per_query["q1"]["recall@5"] == 0.5


def test_a_source_split_into_segments_keeps_its_first_score(tmp_path):
    def hit(source: str, part: int, score: float) -> SearchHit:
        return SearchHit(Segment(source, f"{source} part {part}", start=part * 10), score=score)

    def retriever(query, *, limit):
        return [hit("A", 0, 0.9), hit("B", 0, 0.8), hit("A", 1, 0.7), hit("B", 1, 0.1)]

    journal = tmp_path / "journal.jsonl"
    report = evaluate_retrieval(
        retriever, {"q1": {"B": 1.0}}, QUERIES, k_values=(2,), limit=4, journal=journal
    )
    assert report.per_query["q1"]["mrr@2"] == 0.5  # A first, B second: the best rank each
    journal_to_trec_run(journal, tmp_path / "run.trec")
    assert read_trec_run(tmp_path / "run.trec") == {"q1": {"A": 0.9, "B": 0.8}}


@pytest.mark.parametrize(
    "entry",
    [{"d1", "x"}, frozenset({"d1"}), "d1", b"d1", 7],
    ids=["set", "frozenset", "str", "bytes", "int"],
)
def test_a_run_entry_that_is_no_ranking_is_refused_naming_the_query(entry):
    with pytest.raises(TypeError, match=r"run, query 'q1': the entry is a \w+; expected a list"):
        evaluate_run({"q1": entry, "q2": ["d2"]}, QRELS)


def test_a_run_entry_may_be_any_ordered_iterable():
    expected = evaluate_run({"q1": ["x", "d1"], "q2": []}, QRELS).per_query
    assert evaluate_run({"q1": ("x", "d1"), "q2": ()}, QRELS).per_query == expected
    assert evaluate_run({"q1": iter(["x", "d1"]), "q2": iter([])}, QRELS).per_query == expected


def test_a_nan_score_in_a_run_names_the_query():
    with pytest.raises(ValueError, match="run, query 'q1': doc 'd9' has score nan"):
        evaluate_run({"q1": {"d1": 1.0, "d9": math.nan}}, QRELS)


def test_an_error_while_reading_lazy_results_fails_the_query():
    def retriever(query):
        if query == "bad":
            yield "x"
            raise ConnectionResetError("stream cut")
        yield "d2"

    with pytest.warns(IncompleteEvaluationWarning):
        report = evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(3,), on_error="record")
    [failure] = report.failures
    assert (failure.query_id, failure.error_type, failure.message) == (
        "q1",
        "ConnectionResetError",
        "stream cut",
    )
    with pytest.raises(QueryError, match=r"query 'q1'.*stream cut"):
        evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(3,))


class RaisingIds:
    """A plugin whose doc id getter raises: the plugin's error, not the retriever's."""

    @hookimpl
    def ef_evaluation_doc_id_getter(self, result_type):
        if issubclass(result_type, Doc):
            return lambda doc: doc.missing_attribute
        return None


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_raising_doc_id_getter_keeps_its_error_and_names_plugin_and_query(kind):
    with registered_plugin(RaisingIds(), name="raising-ids"):
        with pytest.raises(AttributeError, match="missing_attribute") as raised:
            await evaluate_retrieval_async(
                docs_retriever(kind), {"q1": {"1": 1.0}}, QUERIES, on_error="record"
            )
    assert raised.value.__notes__ == [
        "in the doc id getter of plugin 'raising-ids' for Doc results",
        "while mapping the results of query 'q1'",
    ]
