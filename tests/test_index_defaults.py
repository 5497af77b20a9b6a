"""The defaults of ``ingest`` are the published protocols on BEIR data, and the options that
change them (segments, batch size, device, float16 storage) do what they say."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import numpy
import pytest

from ef import _encoding
from ef._indexing import PROTOCOLS, Bm25Index, DenseIndex
from ef.segments import Segment
from ef.source_manager import ingest

DOCS = Path(__file__).resolve().parents[1] / "docs"
CORPUS = {
    "d1": "Paris Capital of France, on the Seine.",
    "d2": " ".join(f"word{i}" for i in range(400)) + " lighthouse",
}


def test_ingest_indexes_whole_documents_by_default() -> None:
    parameters = inspect.signature(ingest).parameters
    assert parameters["segment_size"].default is None
    assert parameters["overlap"].default is None
    assert PROTOCOLS["documents"]["segment_size"] is None
    index = ingest(CORPUS)
    assert index.segments == (Segment("d1", CORPUS["d1"]), Segment("d2", CORPUS["d2"]))
    assert [hit.segment.text for hit in index.search("lighthouse")] == [CORPUS["d2"]]


def test_segments_when_asked_overlap_a_quarter() -> None:
    index = ingest(CORPUS, segment_size=100)
    long = [s for s in index.segments if s.source_id == "d2"]
    assert len(long[0].text.split()) == 100
    second_start = len(" ".join(f"word{i}" for i in range(75))) + 1
    assert long[1].start == second_start  # 100 - 25 words later
    with pytest.raises(ValueError, match="overlap applies only with a segment_size"):
        ingest(CORPUS, overlap=8)


def test_bm25_is_built_as_the_protocol_says() -> None:
    index = ingest(CORPUS)
    assert isinstance(index, Bm25Index)
    protocol = PROTOCOLS["bm25"]
    engine = index._bm25
    assert (
        (engine.k1, engine.b, engine.method)
        == (
            protocol["k1"],
            protocol["b"],
            protocol["method"],
        )
        == (1.5, 0.75, "lucene")
    )
    tokenizer = index._tokenizer
    import bm25s.stopwords

    assert set(tokenizer.stopwords) == set(bm25s.stopwords.STOPWORDS_EN)
    assert tokenizer.stemmer("running") == "run"  # Snowball English
    assert tokenizer.lower is True
    assert tokenizer.splitter("a BM25 x-ray") == ["BM25", "ray"]  # two or more \w


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_dense_reads_each_document_up_to_the_models_window(offline: None) -> None:
    index = ingest(CORPUS, embedder="st:all-MiniLM-L6-v2")
    assert isinstance(index, DenseIndex)
    model = index.model
    assert model.max_seq_length == 256  # the model's own window, not ours
    assert index._vectors.dtype == numpy.float32 == numpy.dtype(PROTOCOLS["dense"]["dtype"])
    assert numpy.allclose(numpy.linalg.norm(index._vectors, axis=1), 1.0, atol=1e-5)
    # Words past the window change nothing: the text is truncated, not cut into segments.
    longer = {**CORPUS, "d2": CORPUS["d2"] + " and a great many more words" * 50}
    again = ingest(longer, embedder="st:all-MiniLM-L6-v2")
    assert numpy.allclose(again._vectors, index._vectors, atol=1e-6)


def test_the_docs_name_each_default_protocol_and_how_to_switch() -> None:
    text = re.sub(r"\s+", " ", (DOCS / "beir.md").read_text())
    for needle in (
        "k1=1.5",
        "b=0.75",
        'method="lucene"',
        "Snowball English stemmer",
        "English stop words",
        "max_seq_length",
        "title and text",
        "segment_size=None",
        "--segment-size",
        "float32",
    ):
        assert needle in text, needle


# options


def test_batch_size_changes_speed_not_numbers(offline: None) -> None:
    model = _encoding.load_model("all-MiniLM-L6-v2")
    texts = [f"text number {i} " * (i % 7 + 1) for i in range(40)]
    one = _encoding.encode_texts(model, texts, batch_size=3)
    many = _encoding.encode_texts(model, texts, batch_size=64)
    assert one.dtype == numpy.float32 and one.shape == (40, 384)
    assert numpy.allclose(one, many, atol=1e-5)
    # Same order as the texts, although they are encoded longest first.
    direct = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    assert numpy.allclose(one, direct, atol=1e-5)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="batch_size must be an integer >= 1"):
            _encoding.encode_texts(model, texts, batch_size=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("available", "expected"),
    [
        ({"cuda": True, "mps": True}, "cuda"),
        ({"cuda": False, "mps": True}, "mps"),
        ({"cuda": False, "mps": False}, "cpu"),
        ({}, "cpu"),
    ],
)
def test_the_best_available_device_is_chosen(available: dict[str, bool], expected: str) -> None:
    assert _encoding.choose_device(None, available) == expected


def test_a_requested_device_is_checked() -> None:
    assert _encoding.choose_device("cuda:1", {"cuda": True}) == "cuda:1"
    assert _encoding.choose_device("cpu", {}) == "cpu"
    with pytest.raises(ValueError, match=r"device 'cuda' is not available here"):
        _encoding.choose_device("cuda", {"cuda": False, "mps": True})
    with pytest.raises(ValueError, match=r"device 'mps' is not available here"):
        _encoding.choose_device("mps", {"cuda": True})
    for bad in ("gpu", "cuda:x", "mps:0", "cpu:1"):
        with pytest.raises(ValueError, match="unknown device"):
            _encoding.choose_device(bad, {"cuda": True, "mps": True})


def test_float16_storage_is_optional_and_close(offline: None) -> None:
    full = ingest(CORPUS, embedder="st:all-MiniLM-L6-v2")
    half = ingest(CORPUS, embedder="st:all-MiniLM-L6-v2", dtype="float16")
    assert half._vectors.dtype == numpy.float16
    assert half._vectors.nbytes * 2 == full._vectors.nbytes
    for query in ("the capital of France", "a lighthouse"):
        a, b = full.search(query), half.search(query)
        assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=2e-3)
        assert isinstance(b[0].score, float)
    with pytest.raises(ValueError, match="dtype must be one of 'float32', 'float16'"):
        ingest(CORPUS, embedder="st:all-MiniLM-L6-v2", dtype="int8")


def test_per_document_search_counts_documents() -> None:
    corpus = {
        "long": " ".join(["needle haystack"] * 200),
        "short": "needle",
        "other": "needle in a haystack",
    }
    index = ingest(corpus, segment_size=20)
    segments = index.search("needle", limit=2)
    assert [h.segment.source_id for h in segments] == ["long", "long"]  # segments, as before
    documents = index.search("needle", limit=3, per_document=True)
    assert sorted(h.segment.source_id for h in documents) == ["long", "other", "short"]
    for hit in documents:
        # Each document's best segment, with its score.
        best = max(
            (
                h
                for h in index.search("needle", limit=100)
                if h.segment.source_id == hit.segment.source_id
            ),
            key=lambda h: h.score,
        )
        assert hit.score == best.score
    assert len(index.search("needle", limit=1, per_document=True)) == 1
    assert index.search("zebra", per_document=True) == []


# what evaluate_retrieval asks the index for


def test_evaluate_retrieval_counts_documents_not_segments() -> None:
    from ef.evaluation import evaluate_retrieval

    corpus = {
        "long": " ".join(["needle haystack"] * 200),
        "short": "needle",
        "other": "needle in a haystack",
    }
    qrels = {"q": {"other": 1.0, "short": 1.0}}
    index = ingest(corpus, segment_size=20)
    report = evaluate_retrieval(index, qrels, {"q": "needle"}, k_values=(3,))
    # Asked for 3 segments, the index would have answered with segments of "long" alone.
    assert report.metrics["recall@3"] == 1.0
    assert report.short_rankings == ()
    assert [h.segment.source_id for h in index.search("needle", limit=3)] == ["long"] * 3

    def segments(query: str, *, limit: int = 10) -> list[object]:
        return index.search(query, limit=limit)  # type: ignore[return-value]

    # A retriever answering with segments is still read as it answers, and reported short.
    short = evaluate_retrieval(segments, qrels, {"q": "needle"}, k_values=(3,))
    assert short.metrics["recall@3"] == 0.0 and short.short_rankings == ("q",)


def test_the_cli_indexes_whole_documents_unless_given_a_segment_size(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ef.evaluation.cli import main

    argv = ["retrieval", "builtin:stdlib-docs", "--retriever", "bm25", "--k", "10"]
    assert main([*argv, "--overlap", "8"]) == 2
    assert "--overlap needs --segment-size" in capsys.readouterr().err
    assert main([*argv, "--format", "csv", "--metrics", "ndcg"]) == 0
    whole = capsys.readouterr().out
    assert main([*argv, "--format", "csv", "--metrics", "ndcg", "--segment-size", "128"]) == 0
    assert capsys.readouterr().out != whole  # segments are another protocol, another number
    assert whole.splitlines()[1] == "bm25,0.5316"
