"""The compact form in which a replica sends ``SearchHit`` results back to the driver."""

from __future__ import annotations

from operator import itemgetter
from typing import NamedTuple

__all__ = ["RankedHit", "ranked_hit_doc_id"]


class RankedHit(NamedTuple):
    """One hit as it travels from a replica: its source doc id and its score.

    A ``SearchHit`` carries its segment's text, which the runner never reads; a tuple of two
    fields is a fraction of the bytes and of the (un)pickling time, and the runner reads from it
    the same doc id and score (the plugin's doc id getter maps it).

    >>> RankedHit("d1", 0.5).doc_id
    'd1'
    """

    doc_id: str
    score: float


ranked_hit_doc_id = itemgetter(0)
"""The doc id of a :class:`RankedHit`."""
