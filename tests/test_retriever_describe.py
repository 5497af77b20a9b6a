"""A retriever (or its plugin adapter) describing itself: ``manifest["retriever_info"]``."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from ef.evaluation import evaluate_retrieval, evaluate_retrieval_async, hookimpl
from ef.evaluation.testing import registered_plugin

QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1}}
QUERIES = {"q1": "first", "q2": "second"}


class Described:
    """A retriever whose description changes as it answers (as a cluster's may)."""

    def __init__(self, info: Any = None) -> None:
        self.asked: list[str] = []
        self.info = info

    def search(self, query: str, *, limit: int = 10) -> list[str]:
        self.asked.append(query)
        return ["d1", "d2"][:limit]

    def describe(self) -> Any:
        if self.info is not None:
            return self.info
        return {"replicas": 2, "answered": len(self.asked), "nodes": ["a", "b"]}


def test_the_description_is_recorded_as_it_stands_after_the_run() -> None:
    report = evaluate_retrieval(Described(), QRELS, QUERIES, k_values=(2,), metrics=("mrr",))
    assert report.manifest["retriever_info"] == {
        "replicas": 2,
        "answered": 2,
        "nodes": ["a", "b"],
    }
    assert json.loads(report.to_json())["manifest"]["retriever_info"]["answered"] == 2


def test_a_retriever_without_describe_records_nothing() -> None:
    def retriever(query: str, *, limit: int = 10) -> list[str]:
        return ["d1"]

    report = evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(1,), metrics=("mrr",))
    assert "retriever_info" not in report.manifest


class Wrapped:
    """A retriever type only a plugin knows how to call."""

    def ask(self, query: str) -> list[str]:
        return ["d2"]


class DescribingAdapter:
    def __init__(self, wrapped: Wrapped) -> None:
        self.wrapped = wrapped

    def __call__(self, query: str, *, limit: int = 10) -> list[str]:
        return self.wrapped.ask(query)[:limit]

    def describe(self) -> dict[str, Any]:
        return {"adapted_by": "test plugin"}


class AdapterPlugin:
    @hookimpl
    def ef_evaluation_adapt_retriever(self, retriever: Any) -> Any:
        return DescribingAdapter(retriever) if isinstance(retriever, Wrapped) else None


@pytest.mark.anyio
async def test_a_plugin_adapter_describes_what_it_wraps() -> None:
    with registered_plugin(AdapterPlugin()):
        report = await evaluate_retrieval_async(
            Wrapped(), QRELS, QUERIES, k_values=(1,), metrics=("mrr",)
        )
    assert report.manifest["retriever_info"] == {"adapted_by": "test plugin"}
    assert report.metrics["mrr@1"] == 0.5


@pytest.mark.parametrize(
    ("info", "problem"),
    [
        ("two replicas", "not a mapping"),
        ({"load": math.nan}, "not plain JSON"),
        ({"node": object()}, "not plain JSON"),
        ({"nodes": [{1: "x"}]}, "the key 1 is no string"),
    ],
)
def test_a_description_that_is_no_json_object_fails_before_any_query(
    info: Any, problem: str
) -> None:
    retriever = Described(info)
    with pytest.raises(TypeError, match=problem) as caught:
        evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(1,), metrics=("mrr",))
    assert "manifest['retriever_info']" in str(caught.value)
    assert "test_retriever_describe.Described" in str(caught.value)
    assert retriever.asked == []


def test_an_error_in_describe_names_the_retriever() -> None:
    class Broken(Described):
        def describe(self) -> Any:
            raise RuntimeError("cluster unreachable")

    with pytest.raises(RuntimeError, match="cluster unreachable") as caught:
        evaluate_retrieval(Broken(), QRELS, QUERIES, k_values=(1,), metrics=("mrr",))
    assert any("in describe() of retriever" in note for note in caught.value.__notes__)


def test_the_description_is_not_part_of_the_journal_identity(tmp_path: Any) -> None:
    journal = tmp_path / "run.journal"
    first = Described({"cluster": "10.0.0.1:6379", "replicas": 2})
    evaluate_retrieval(first, QRELS, QUERIES, k_values=(1,), metrics=("mrr",), journal=journal)
    second = Described({"cluster": "10.9.9.9:6379", "replicas": 4})
    report = evaluate_retrieval(
        second, QRELS, QUERIES, k_values=(1,), metrics=("mrr",), journal=journal
    )
    assert second.asked == []
    assert report.manifest["journal"]["resumed"] == 2
    assert report.manifest["retriever_info"]["cluster"] == "10.9.9.9:6379"
