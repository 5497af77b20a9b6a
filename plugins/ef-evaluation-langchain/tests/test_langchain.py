"""A real langchain-core retriever evaluated through the installed plugin, on asyncio and trio."""

from __future__ import annotations

import threading

import anyio
import pytest
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field

from ef.evaluation import (
    evaluate_retrieval,
    evaluate_retrieval_async,
    evaluate_run,
    list_plugins,
)
from ef_evaluation_langchain import LangChainRetriever

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
CORPUS = {
    f"doc{i}": f"{WORDS[i % 8]} {WORDS[(i * 3) % 8]} {WORDS[(i * 5 + 1) % 8]}" for i in range(40)
}
QUERIES = {f"q{i}": f"{WORDS[i]} {WORDS[(i + 2) % 8]}" for i in range(8)}


def ranking(query: str) -> list[str]:
    words = set(query.split())
    scored = [(-len(words & set(text.split())), doc_id) for doc_id, text in CORPUS.items()]
    return [doc_id for score, doc_id in sorted(scored) if score < 0]


QRELS = {q: {doc_id: 1.0 for doc_id in ranking(text)[::3]} for q, text in QUERIES.items()}


class OverlapRetriever(BaseRetriever):
    """Ranks the corpus by word overlap; records the thread and peak concurrency of calls."""

    in_flight: int = 0
    peak: int = 0
    async_calls: int = 0
    sync_threads: set[int] = Field(default_factory=set)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        self.sync_threads.add(threading.get_ident())
        return self._documents(query)

    async def _aget_relevant_documents(self, query: str, *, run_manager) -> list[Document]:
        self.async_calls += 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        await anyio.sleep(0.01)
        self.in_flight -= 1
        return self._documents(query)

    def _documents(self, query: str) -> list[Document]:
        return [
            Document(page_content=CORPUS[d], id=d, metadata={"source": d.upper()})
            for d in ranking(query)
        ]


@pytest.mark.anyio
async def test_a_langchain_retriever_is_evaluated_concurrently(anyio_backend):
    retriever = OverlapRetriever()
    report = await evaluate_retrieval_async(
        retriever, QRELS, QUERIES, max_concurrency=4, k_values=(1, 5, 10)
    )
    expected = evaluate_run({q: ranking(t) for q, t in QUERIES.items()}, QRELS, k_values=(1, 5, 10))
    assert report.per_query == expected.per_query
    if anyio_backend == "asyncio":
        assert retriever.async_calls == len(QUERIES)
        assert retriever.peak == 4
    else:
        assert retriever.async_calls == 0
        assert threading.get_ident() not in retriever.sync_threads
        assert len(retriever.sync_threads) >= 1


def test_the_sync_entry_point_and_metadata_ids():
    qrels = {q: {d.upper(): g for d, g in judged.items()} for q, judged in QRELS.items()}
    report = evaluate_retrieval(
        LangChainRetriever(OverlapRetriever(), id_key="source"), qrels, QUERIES, k_values=(10,)
    )
    expected = evaluate_run(
        {q: [d.upper() for d in ranking(t)] for q, t in QUERIES.items()}, qrels, k_values=(10,)
    )
    assert report.metrics == expected.metrics
    assert report.manifest["retriever"].endswith("OverlapRetriever id_key=source")


def test_results_are_limited():
    report = evaluate_retrieval(OverlapRetriever(), QRELS, QUERIES, k_values=(1,), limit=1)
    expected = evaluate_run({q: ranking(t)[:1] for q, t in QUERIES.items()}, QRELS, k_values=(1,))
    assert report.per_query == expected.per_query


def test_a_document_without_an_id_is_a_clear_error():
    class NoIds(OverlapRetriever):
        def _documents(self, query):
            return [Document(page_content="text")]

    with pytest.raises(ValueError, match=r"has no Document.id \(content: 'text'\)"):
        evaluate_retrieval(NoIds(), QRELS, QUERIES)


def test_the_plugin_is_loaded_from_its_installed_distribution():
    info = {p.name: p for p in list_plugins()}["langchain"]
    assert info.distribution == "ef-evaluation-langchain"
    assert set(info.hooks) == {"ef_evaluation_adapt_retriever", "ef_evaluation_doc_id_getter"}
