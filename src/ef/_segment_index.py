"""What the built-in indexes share: ranking with trec_eval's tie order, the best segment per
document, and saving.

An index scores every segment for a query (:meth:`SegmentIndex._scores`); :meth:`search` turns
the scores into hits — segments, or with ``per_document=True`` each document's best segment,
so that ``limit`` counts documents (what an evaluation ranks).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ef._index_store import write_index_dir
from ef._search_types import SearchHit
from ef._segmenting import segments_fingerprint
from ef.segments import Segment

__all__ = ["SegmentIndex", "index_retriever_id", "top"]


def index_retriever_id(segments: Sequence[Segment], *, name: str) -> str:
    """The ``retriever_id`` of a built-in index named ``name`` over ``segments``: the name and
    the start of the segments' fingerprint, computed without building the index.

    >>> from ef.segments import Segment
    >>> index_retriever_id([Segment("d1", "text")], name="bm25")
    'bm25(corpus=cf8f56744ff0)'
    """
    return _retriever_id(name, segments_fingerprint(segments))


def _retriever_id(name: str, fingerprint: str) -> str:
    return f"{name}(corpus={fingerprint[:12]})"


def top(scores: Any, limit: int, *, ties: Any, positive_only: bool) -> list[tuple[int, float]]:
    """The ``limit`` best ``(position, score)`` pairs, score descending, ties by ``ties``
    ascending (then by position); with ``positive_only``, only positive scores."""
    numpy = importlib.import_module("numpy")
    if limit <= 0 or len(scores) == 0:
        return []
    # With positive_only, the best are chosen among the positive scores alone: the others would
    # be dropped anyway, and a query scores most of a corpus 0 — selecting through those (a
    # partition of many equal values, then every one of them tied at the cut) cost more than
    # the scoring.
    candidates = numpy.flatnonzero(scores > 0) if positive_only else None
    chosen = scores if candidates is None else scores[candidates]
    if limit < len(chosen):
        # Everything scoring at least the limit-th best, so ties at the cut are all kept.
        threshold = numpy.partition(chosen, len(chosen) - limit)[len(chosen) - limit]
        kept = numpy.flatnonzero(chosen >= threshold)
        candidates = kept if candidates is None else candidates[kept]
    elif candidates is None:
        candidates = numpy.arange(len(scores))
    order = candidates[numpy.lexsort((candidates, ties[candidates], -scores[candidates]))][:limit]
    return [(int(i), float(scores[i])) for i in order if not positive_only or float(scores[i]) > 0]


class SegmentIndex:
    """The base of :class:`~ef._bm25_index.Bm25Index` and :class:`~ef._dense_index.DenseIndex`.

    :ivar segments: what was indexed, in corpus order.
    :ivar retriever_id: the engine and a fingerprint of the segments, e.g. ``bm25(corpus=…)``.
    :ivar fingerprint: the SHA-256 of the segments
        (see :func:`ef._segmenting.segments_fingerprint`).
    :ivar loaded_from: the folder the index was loaded from, or ``None`` when built here.
    """

    engine = "?"
    positive_only = False
    """Whether a score of 0 or less means "no match" (BM25) rather than "a poor match"."""

    def __init__(self, segments: Sequence[Segment], *, name: str) -> None:
        numpy = importlib.import_module("numpy")
        self.segments: tuple[Segment, ...] = tuple(segments)
        self.name = name
        self.fingerprint = segments_fingerprint(self.segments)
        self.retriever_id = _retriever_id(name, self.fingerprint)
        self.loaded_from: Path | None = None
        self.build: dict[str, Any] = {}
        # trec_eval's order for tied scores: doc id descending (byte-wise, Python's order for
        # str), so a run saved from these hits keeps its scores and reads back the same.
        doc_ids = list(dict.fromkeys(segment.source_id for segment in self.segments))
        place = {doc_id: rank for rank, doc_id in enumerate(sorted(doc_ids, reverse=True))}
        self._doc_ties = numpy.array([place[d] for d in doc_ids], dtype=numpy.int64)
        position = {doc_id: i for i, doc_id in enumerate(doc_ids)}
        self._doc_of = numpy.array(
            [position[segment.source_id] for segment in self.segments], dtype=numpy.int64
        )
        self._ties = self._doc_ties[self._doc_of] if len(self.segments) else self._doc_of
        self._one_per_document = len(doc_ids) == len(self.segments)
        self._members: list[Any] | None = None

    def __len__(self) -> int:
        return len(self.segments)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {len(self.segments)} segments>"

    def _scores(self, query: str) -> Any:
        """Every segment's score for ``query`` (a numpy vector), or ``None`` for no match."""
        raise NotImplementedError

    def search(self, query: str, *, limit: int = 10, per_document: bool = False) -> list[SearchHit]:
        """The ``limit`` best-scoring segments for ``query``, best first.

        Tied scores come in trec_eval's order, source doc id descending (then corpus order), so
        a run file saved with these scores reads back as the same ranking.

        :param query: the query text.
        :param limit: the most hits to return.
        :param per_document: return each document's best segment (the first, in corpus order,
            of its best-scoring ones) instead of every segment, so that ``limit`` counts
            documents. ``evaluate_retrieval`` asks for this; a RAG pipeline wanting passages
            leaves it off.
        """
        scores = self._scores(query) if self.segments else None
        return self._hits(scores, limit, per_document)

    def _scores_batch(self, queries: list[str]) -> Iterator[Any]:
        """Every segment's scores for each query, one vector (or ``None``) per query, in order;
        the same vectors as :meth:`_scores` gives one query at a time."""
        return map(self._scores, queries)

    def search_batch(
        self, queries: Sequence[str], *, limit: int = 10, per_document: bool = False
    ) -> list[list[SearchHit]]:
        """:meth:`search` for each of ``queries``, in order: the same hits, found in batches.

        The batch form ``evaluate_retrieval`` uses (``search_batch`` beside ``search``): the
        dense index encodes the queries in batches and scores each batch with one matrix
        product; the scores, and so the hits and their ties, are the ones :meth:`search` gives.

        :param queries: the query texts.
        :param limit: the most hits to return per query.
        :param per_document: as for :meth:`search`.
        """
        if not self.segments or not queries:
            return [[] for _ in queries]
        scored = self._scores_batch(list(queries))
        return [self._hits(scores, limit, per_document) for scores in scored]

    def _hits(self, scores: Any, limit: int, per_document: bool) -> list[SearchHit]:
        if scores is None:
            return []
        if not per_document or self._one_per_document:
            ranked = top(scores, limit, ties=self._ties, positive_only=self.positive_only)
            return [SearchHit(self.segments[i], score) for i, score in ranked]
        numpy = importlib.import_module("numpy")
        best = numpy.full(len(self._doc_ties), -numpy.inf, dtype=numpy.float64)
        numpy.maximum.at(best, self._doc_of, scores)
        if self._members is None:
            order = numpy.argsort(self._doc_of, kind="stable")
            bounds = numpy.cumsum(numpy.bincount(self._doc_of, minlength=len(self._doc_ties)))
            self._members = numpy.split(order, bounds[:-1])
        hits = []
        for doc, _ in top(best, limit, ties=self._doc_ties, positive_only=self.positive_only):
            members = self._members[doc]
            position = int(members[int(numpy.argmax(scores[members]))])
            hits.append(SearchHit(self.segments[position], float(scores[position])))
        return hits

    def _engine_manifest(self) -> dict[str, Any]:
        """The engine's entries of the manifest."""
        raise NotImplementedError

    def _write_engine(self, folder: Path) -> None:
        """Write the engine's files into ``folder``."""
        raise NotImplementedError

    def identity(self) -> dict[str, Any]:
        """What a saved copy must match to stand in for this index: the engine and its
        settings, how the corpus was segmented, and the segments' fingerprint."""
        return {
            "engine": self.engine,
            "name": self.name,
            "fingerprint": self.fingerprint,
            "segmenting": self.build.get("segmenting"),
            **self._engine_manifest(),
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Save the index to the folder ``path``, atomically; :func:`~ef.source_manager.load_index`
        reads it back.

        The folder is created (with its parents) or replaced when it holds a saved index;
        nothing is pickled (see :mod:`ef._index_store`).

        :returns: the folder, as an absolute path.
        :raises FileExistsError: when ``path`` is a file or a folder holding anything else.
        """
        manifest = {"segments": len(self.segments), "identity": self.identity()}
        return write_index_dir(path, manifest, self.segments, self._write_engine)
