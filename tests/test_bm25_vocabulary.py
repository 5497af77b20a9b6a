"""The built-in BM25 index knows every word of its corpus, however large the corpus."""

from __future__ import annotations

import json
from pathlib import Path

from ef._bm25_index import _TOKENIZE_CHUNK
from ef.source_manager import ingest


def test_a_word_first_seen_after_the_first_tokenizing_chunk_is_searchable() -> None:
    corpus = {f"d{i}": "common words here" for i in range(_TOKENIZE_CHUNK)}
    corpus["late"] = "zebra common"
    index = ingest(corpus, embedder="bm25")
    hits = index.search("zebra", limit=3)
    assert [hit.segment.source_id for hit in hits] == ["late"]


def test_the_vocabulary_is_the_same_whatever_the_chunking() -> None:
    late_words = [f"word{i}" for i in range(50)]
    corpus = {f"d{i}": "common words here" for i in range(_TOKENIZE_CHUNK + 3)}
    corpus |= {f"late{i}": f"{word} common" for i, word in enumerate(late_words)}
    index = ingest(corpus, embedder="bm25")
    for i, word in enumerate(late_words):
        assert [hit.segment.source_id for hit in index.search(word, limit=2)] == [f"late{i}"]


def test_an_index_saved_without_the_whole_vocabulary_is_rebuilt(tmp_path: Path) -> None:
    corpus = {"d1": "alpha beta", "d2": "gamma delta"}
    ingest(corpus, embedder="bm25", index_dir=tmp_path)
    manifests = list(tmp_path.rglob("manifest.json"))
    assert manifests
    for manifest in manifests:
        data = json.loads(manifest.read_text())
        data["identity"]["bm25"].pop("vocabulary")  # as written before the vocabulary fix
        manifest.write_text(json.dumps(data))
    stamps = {path: path.stat().st_mtime_ns for path in manifests}
    index = ingest(corpus, embedder="bm25", index_dir=tmp_path)
    assert [hit.segment.source_id for hit in index.search("gamma", limit=1)] == ["d2"]
    rebuilt = {path: json.loads(path.read_text())["identity"]["bm25"] for path in stamps}
    assert all(identity["vocabulary"] == "whole corpus" for identity in rebuilt.values())
