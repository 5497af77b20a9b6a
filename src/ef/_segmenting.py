"""Cutting documents into segments for the built-in indexes, and fingerprinting what was cut.

Documents are split into :class:`~ef.segments.Segment`\\ s of at most ``segment_size`` words
(a word is a run of non-space characters) that share ``overlap`` words with the previous one;
a document of at most ``segment_size`` words stays whole. Each segment keeps its character
offsets in its document, so ``text[segment.start:segment.end] == segment.text``, and a hit maps
back to its source through ``segment.source_id``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence

from ef.segments import DEFAULT_OVERLAP, DEFAULT_SEGMENT_SIZE, Segment

__all__ = [
    "check_sizes",
    "segment_corpus",
    "segment_document",
    "segments_fingerprint",
    "whole_documents",
]

_WORD = re.compile(r"\S+")


def check_sizes(segment_size: int, overlap: int) -> None:
    """Refuse sizes that cannot segment: ``segment_size >= 1`` and ``0 <= overlap < size``."""
    if isinstance(segment_size, bool) or not isinstance(segment_size, int) or segment_size < 1:
        raise ValueError(f"segment_size must be an integer >= 1; got {segment_size!r}")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 0:
        raise ValueError(f"overlap must be an integer >= 0; got {overlap!r}")
    if overlap >= segment_size:
        raise ValueError(
            f"overlap ({overlap}) must be smaller than segment_size ({segment_size}), "
            "or segments would never advance"
        )


def segment_document(
    source_id: str,
    text: str,
    *,
    segment_size: int = DEFAULT_SEGMENT_SIZE,
    overlap: int = DEFAULT_OVERLAP,
) -> list[Segment]:
    """Split one document into segments of at most ``segment_size`` words.

    A document of at most ``segment_size`` words is one segment, the whole text (spaces
    included). A longer one is cut into windows of ``segment_size`` words, each starting
    ``segment_size - overlap`` words after the previous one, the last ending at the last word;
    each window's text runs from its first word's first character to its last word's last.

    :param source_id: the document's id, copied into every segment.
    :param text: the document.
    :param segment_size: the most words a segment holds.
    :param overlap: the words a segment shares with the one before it.
    :raises ValueError: if ``segment_size < 1`` or ``overlap`` is not in
        ``[0, segment_size)``.

    >>> [s.text for s in segment_document("d1", "a b c d e", segment_size=3, overlap=1)]
    ['a b c', 'c d e']
    >>> segment_document("d2", "short text", segment_size=3, overlap=1)[0].segment_id
    'd2:0'
    """
    check_sizes(segment_size, overlap)
    words = [match.span() for match in _WORD.finditer(text)]
    if len(words) <= segment_size:
        return [Segment(source_id, text)]
    step = segment_size - overlap
    segments = []
    for first in range(0, len(words), step):
        last = min(first + segment_size, len(words)) - 1
        start, end = words[first][0], words[last][1]
        segments.append(Segment(source_id, text[start:end], start=start, end=end))
        if last == len(words) - 1:
            break
    return segments


def _check_entry(doc_id: object, text: object) -> None:
    if not isinstance(doc_id, str) or not isinstance(text, str):
        raise TypeError(
            f"corpus entry {doc_id!r}: expected a str id and a str text; got "
            f"{type(doc_id).__name__} and {type(text).__name__}"
        )


def segment_corpus(
    corpus: Mapping[str, str],
    *,
    segment_size: int = DEFAULT_SEGMENT_SIZE,
    overlap: int = DEFAULT_OVERLAP,
) -> list[Segment]:
    """Segment every document of ``corpus``, in the corpus's order.

    :param corpus: ``{doc_id: text}``.
    :param segment_size: the most words a segment holds.
    :param overlap: the words a segment shares with the one before it.
    :raises TypeError: if a document id or text is not a string.
    :raises ValueError: for sizes :func:`segment_document` refuses.

    >>> len(segment_corpus({"d1": "one two three", "d2": "four"}, segment_size=2, overlap=0))
    3
    """
    check_sizes(segment_size, overlap)
    segments: list[Segment] = []
    for doc_id, text in corpus.items():
        _check_entry(doc_id, text)
        segments += segment_document(doc_id, text, segment_size=segment_size, overlap=overlap)
    return segments


def whole_documents(corpus: Mapping[str, str]) -> list[Segment]:
    """One segment per document, its whole text, in the corpus's order.

    :raises TypeError: if a document id or text is not a string.

    >>> [s.text for s in whole_documents({"d1": "Paris Capital of France.", "d2": ""})]
    ['Paris Capital of France.', '']
    """
    segments = []
    for doc_id, text in corpus.items():
        _check_entry(doc_id, text)
        segments.append(Segment(doc_id, text))
    return segments


def segments_fingerprint(segments: Sequence[Segment]) -> str:
    """The SHA-256 of what was indexed: every segment's source id, offset and text, in order.

    Two corpora, or one corpus segmented two ways, give two fingerprints; a saved index is
    reused only for the fingerprint it was built from.
    """
    digest = hashlib.sha256()
    for segment in segments:
        for part in (segment.source_id, str(segment.start), segment.text):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\0")
    return digest.hexdigest()
