"""The extension API: what it gives a plugin is what an evaluation does inside.

Each name is checked against the public behaviour it stands for: a prepared retriever answers as
``evaluate_retrieval`` calls it, the identity is the one the manifest records, a BM25 index
built from the public parts searches as ``ingest``'s does, and ``plugin_disabled`` leaves the
host as it found it, without the core reusing what a plugin computed.
"""

from __future__ import annotations

import marshal
import math
from typing import Any

import anyio
import pytest

import ef.evaluation.extending as extending
from ef.evaluation import evaluate_retrieval, evaluate_run, hookimpl, list_plugins
from ef.evaluation.extending import (
    Bm25Index,
    bm25_engine,
    bm25_tokenizer,
    doc_id_getter,
    index_retriever_id,
    plugin_disabled,
    prepare_retriever,
    reference_ideal_grades,
    retriever_identity,
    whole_documents,
)
from ef.evaluation.testing import registered_plugin
from ef.segments import Segment
from ef.source_manager import SearchHit, ingest

CORPUS = {
    "d1": "Sort a list in place with the sort method.",
    "d2": "Open a file for reading and read its lines.",
    "d3": "Sorting algorithms compared: merge sort, quick sort.",
    "d4": "Reading a list of files from a folder.",
    "d5": "",
}
QUERIES = ["sorting lists", "read files", "quick sort of a list", "nothing matches zzz"]


def _names() -> list[str]:
    return [info.name for info in list_plugins() if not info.builtin]


def test_the_module_exports_what_it_documents():
    assert sorted(extending.__all__) == extending.__all__
    for name in extending.__all__:
        assert getattr(extending, name).__doc__, name


def test_a_prepared_retriever_answers_as_the_evaluation_calls_it():
    seen: list[tuple[str, int]] = []

    def retriever(query: str, *, limit: int = 10) -> list[str]:
        seen.append((query, limit))
        return ["d1", "d2", "d3"][:limit]

    prepared = prepare_retriever(retriever, 2)
    assert (prepared.is_async, prepared.call("q")) == (False, ["d1", "d2"])
    evaluate_retrieval(retriever, {"q1": {"d1": 1.0}}, {"q1": "q"}, k_values=(2,))
    assert seen == [("q", 2), ("q", 2)]  # the same call, limit included


def test_a_plugin_adapter_is_what_prepare_retriever_uses():
    class Wrapped:
        pass

    class Adapter:
        @hookimpl
        def ef_evaluation_adapt_retriever(self, retriever: Any) -> Any:
            if isinstance(retriever, Wrapped):

                async def search(query: str, *, limit: int) -> list[str]:
                    return [f"{query}-{i}" for i in range(limit)]

                return search
            return None

    with pytest.raises(TypeError, match=r"cannot evaluate a .*Wrapped: expected a callable"):
        prepare_retriever(Wrapped(), 3)
    with registered_plugin(Adapter()):
        prepared = prepare_retriever(Wrapped(), 3)
        assert prepared.is_async
        assert anyio.run(prepared.call, "q") == ["q-0", "q-1", "q-2"]


def test_the_identity_is_the_one_the_manifest_records():
    index = ingest(CORPUS)
    report = evaluate_retrieval(index, {"q1": {"d1": 1.0}}, {"q1": "sorting lists"})
    assert retriever_identity(index) == report.manifest["retriever"]
    assert retriever_identity(index, "mine") == "mine"

    def plain(query: str) -> list[str]:
        return []

    report = evaluate_retrieval(plain, {"q1": {"d1": 1.0}}, {"q1": "x"}, on_error="record")
    assert retriever_identity(plain) == report.manifest["retriever"]


def test_the_doc_id_getters_are_the_runners():
    hit = SearchHit(Segment("d7", "text", start=3), 0.5)
    assert doc_id_getter(SearchHit)(hit) == "d7"
    assert doc_id_getter(Segment)(hit.segment) == "d7"
    assert doc_id_getter(complex) is None


def test_a_bm25_index_built_from_the_public_parts_searches_as_ingests():
    segments = whole_documents(CORPUS)
    assert [(s.source_id, s.text) for s in segments] == list(CORPUS.items())
    tokenizer = bm25_tokenizer()
    token_ids = tokenizer.tokenize(
        [segment.text for segment in segments],
        update_vocab=True,
        show_progress=False,
        return_as="ids",
    )
    engine = bm25_engine()
    engine.index(token_ids, show_progress=False)
    built = Bm25Index.from_engine(segments, tokenizer, engine)
    whole = ingest(CORPUS)
    assert built.retriever_id == whole.retriever_id == index_retriever_id(segments, name="bm25")
    for query in QUERIES:
        assert built.search(query, limit=4) == whole.search(query, limit=4)


def test_the_index_identity_follows_the_segments_and_the_name():
    segments = whole_documents(CORPUS)
    other = whole_documents({**CORPUS, "d5": "now with text"})
    assert index_retriever_id(segments, name="bm25") != index_retriever_id(other, name="bm25")
    assert index_retriever_id(segments, name="st:x").startswith("st:x(corpus=")
    with pytest.raises(TypeError, match="corpus entry 'd9'"):
        whole_documents({"d9": 3})  # type: ignore[dict-item]


def test_plugin_disabled_takes_a_plugin_out_and_puts_it_back():
    class Hits:
        @hookimpl
        def ef_evaluation_register_metrics(self, register: Any) -> None:
            register("listed", lambda ranked, relevant, k: float(len(ranked[:k])))

    class Other:
        @hookimpl
        def ef_evaluation_register_metrics(self, register: Any) -> None:
            register("other_listed", lambda ranked, relevant, k: 1.0)

    with registered_plugin(Hits(), name="hits"), registered_plugin(Other(), name="other"):
        with plugin_disabled("hits"):
            assert "hits" not in _names() and "other" in _names()
            with pytest.raises(ValueError, match=r"unknown metric name.*'listed'"):
                evaluate_run({"q": ["a"]}, {"q": {"a": 1}}, metrics=["listed"], k_values=[1])
        assert {"hits", "other"} <= set(_names())
        report = evaluate_run({"q": ["a"]}, {"q": {"a": 1}}, metrics=["listed"], k_values=[1])
        assert report.metrics == {"listed@1": 1.0}
    assert not {"hits", "other"} & set(_names())


def test_plugin_disabled_refuses_unknown_names_and_built_ins():
    with pytest.raises(ValueError, match="no plugin named 'nowhere' is loaded"):
        with plugin_disabled("nowhere"):
            pass
    builtin = next(info.name for info in list_plugins() if info.builtin)
    with pytest.raises(ValueError, match="built-ins are never switched off"):
        with plugin_disabled(builtin):
            pass


def test_plugin_disabled_forgets_what_a_plugin_computed():
    # A first pass that writes the qrels' true bytes (so the core's digest is the same) but
    # made-up ideal grades: whatever the core remembers of them must not outlive the plugin.
    qrels = {"q1": {"d1": 1.0, "d2": 1.0}}

    class MadeUp:
        @hookimpl(tryfirst=True)
        def ef_evaluation_qrels_pass(self) -> object:
            return lambda given: (marshal.dumps(given, 2), {"q1": [1.0]})

    run = {"q1": ["d1", "d2"]}
    dcg = 1 / math.log2(2) + 1 / math.log2(3)  # both relevant, at ranks 1 and 2

    def ndcg() -> float:
        return evaluate_run(run, qrels, metrics=["ndcg"], k_values=[2]).metrics["ndcg@2"]

    with registered_plugin(MadeUp(), name="made-up"):
        assert ndcg() == pytest.approx(dcg / 1.0)  # the made-up ideal: one grade of 1
        with plugin_disabled("made-up"):
            assert ndcg() == pytest.approx(dcg / dcg)  # the true ideal
        assert ndcg() == pytest.approx(dcg / 1.0)


def test_the_reference_ideal_grades_are_the_positive_grades_descending():
    one, one_float = 1, 1.0
    grades = reference_ideal_grades({"q": {"a": one, "b": 3.0, "c": one_float, "d": 0, "e": -2}})
    assert grades == {"q": [3.0, 1, 1.0]}
    assert grades["q"][1] is one and grades["q"][2] is one_float  # a stable sort
    assert reference_ideal_grades({"q": {"a": True}}) is None  # not plain: checked elsewhere
