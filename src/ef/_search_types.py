"""The hit type and the search protocol, shared by the source manager and the built-in indexes."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import attrs

from ef.segments import Segment

__all__ = ["SearchHit", "SearchableCorpus"]


@attrs.frozen
class SearchHit:
    """One search result: a segment and its score (higher is better).

    >>> from ef.segments import Segment
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
