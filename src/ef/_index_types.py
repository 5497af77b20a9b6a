"""The types every searchable corpus shares: a hit, and the protocol a search answers.

They live apart from :mod:`ef.source_manager` (which re-exports them, their public home) so that
the built-in indexes can name them without importing the module that imports the indexes.
"""

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
