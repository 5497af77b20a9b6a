"""Segments, hits and the SourceManager."""

from __future__ import annotations

import pytest

from ef.segments import Segment
from ef.source_manager import SearchableCorpus, SearchHit, SourceManager


class Memory:
    def __init__(self, name, docs):
        self.name = name
        self.docs = docs  # doc id -> text

    def search(self, query, *, limit=10):
        words = set(query.split())
        scored = [
            SearchHit(Segment(doc_id, text), float(len(words & set(text.split()))))
            for doc_id, text in self.docs.items()
        ]
        scored = [hit for hit in scored if hit.score > 0]
        scored.sort(key=lambda hit: -hit.score)
        return scored[:limit]


def test_segment_defaults():
    segment = Segment("doc", "some text", start=5)
    assert segment.end == 14
    assert segment.segment_id == "doc:5"
    assert Segment("doc", "x", 0, 1, "custom").segment_id == "custom"


def test_two_corpora_merge_by_score():
    manager = SourceManager()
    manager.add("wiki", Memory("wiki", {"w1": "cats and dogs", "w2": "dogs only"}))
    manager.add("news", Memory("news", {"n1": "cats dogs birds", "n2": "birds"}))
    hits = manager.retrieve("cats dogs birds", limit=3)
    assert [hit.segment.source_id for hit in hits] == ["n1", "w1", "w2"]
    assert [hit.score for hit in hits] == [3.0, 2.0, 1.0]
    assert isinstance(Memory("x", {}), SearchableCorpus)
    assert list(manager.sources) == ["wiki", "news"]


def test_ties_keep_the_order_sources_were_added():
    manager = SourceManager()
    manager.add("first", Memory("first", {"a": "x"}))
    manager.add("second", Memory("second", {"b": "x"}))
    assert [hit.segment.source_id for hit in manager.retrieve("x")] == ["a", "b"]


def test_bad_sources_are_refused():
    manager = SourceManager()
    manager.add("one", Memory("one", {}))
    with pytest.raises(ValueError, match="already added"):
        manager.add("one", Memory("one", {}))
    with pytest.raises(TypeError, match="no search"):
        manager.add("two", object())  # type: ignore[arg-type]
