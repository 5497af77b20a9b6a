"""Segments: the pieces a source document is split into for indexing."""

from __future__ import annotations

import attrs

__all__ = ["DEFAULT_OVERLAP", "DEFAULT_SEGMENT_SIZE", "Segment"]

DEFAULT_SEGMENT_SIZE = 128
"""Words per segment: well inside the 256 word pieces a MiniLM-class model reads."""
DEFAULT_OVERLAP = 32
"""Words a segment shares with the one before it, so a passage cut in two is still found."""


@attrs.frozen
class Segment:
    """A piece of a source document.

    :param source_id: the id of the document this piece comes from; retrieval metrics are
        computed on source ids, so every segment of a document counts as that document.
    :param text: the text of the piece.
    :param start: offset of the first character of ``text`` in the source document.
    :param end: offset one past the last character; ``None`` means ``start + len(text)``.
    :param segment_id: a unique id for the piece; defaults to ``"<source_id>:<start>"``.

    >>> Segment("doc-1", "hello world").segment_id
    'doc-1:0'
    >>> Segment("doc-1", "world", start=6).end
    11
    """

    source_id: str
    text: str
    start: int = 0
    end: int = attrs.field(
        default=attrs.Factory(lambda self: self.start + len(self.text), takes_self=True)
    )
    segment_id: str = attrs.field(
        default=attrs.Factory(lambda self: f"{self.source_id}:{self.start}", takes_self=True)
    )
