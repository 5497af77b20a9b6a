"""Searchable corpora: the hit type, the protocol retrievers implement, and a manager of sources."""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

import attrs

from ef.segments import Segment

__all__ = ["SearchHit", "SearchableCorpus", "SourceManager"]


@attrs.frozen
class SearchHit:
    """One search result: a segment and its score (higher is better).

    >>> SearchHit(Segment("d1", "text"), 0.5).segment.source_id
    'd1'
    """

    segment: Segment
    score: float


@runtime_checkable
class SearchableCorpus(Protocol):
    """Anything that answers ``search(query, *, limit)`` with hits, best first."""

    def search(self, query: str, *, limit: int = 10) -> list[SearchHit]:
        """Return up to ``limit`` hits for ``query``, best first."""
        ...


class SourceManager:
    """Holds named sources and retrieves from all of them at once.

    Each source is a :class:`SearchableCorpus`; :meth:`retrieve` asks every source for ``limit``
    hits and merges them by score, highest first (ties keep the order sources were added).

    >>> class Fixed:
    ...     def __init__(self, hits):
    ...         self.hits = hits
    ...     def search(self, query, *, limit=10):
    ...         return self.hits[:limit]
    >>> manager = SourceManager()
    >>> manager.add("a", Fixed([SearchHit(Segment("a1", "x"), 0.9)]))
    >>> manager.add("b", Fixed([SearchHit(Segment("b1", "y"), 0.95)]))
    >>> [hit.segment.source_id for hit in manager.retrieve("q", limit=2)]
    ['b1', 'a1']
    """

    def __init__(self) -> None:
        self._sources: dict[str, SearchableCorpus] = {}

    def add(self, name: str, corpus: SearchableCorpus) -> None:
        """Add ``corpus`` under ``name``; a name already in use raises :class:`ValueError`."""
        if name in self._sources:
            raise ValueError(f"a source named {name!r} is already added")
        if not callable(getattr(corpus, "search", None)):
            raise TypeError(f"source {name!r} has no search(query, *, limit) method")
        self._sources[name] = corpus

    @property
    def sources(self) -> dict[str, SearchableCorpus]:
        """The sources by name, in the order they were added (a copy)."""
        return dict(self._sources)

    def retrieve(self, query: str, *, limit: int = 10) -> list[SearchHit]:
        """The ``limit`` best hits over all sources, merged by score."""
        ranked: Iterable[tuple[float, int, int, SearchHit]] = (
            (-hit.score, order, position, hit)
            for order, corpus in enumerate(self._sources.values())
            for position, hit in enumerate(corpus.search(query, limit=limit))
        )
        return [item[3] for item in heapq.nsmallest(limit, ranked)]
