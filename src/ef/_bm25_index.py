"""BM25 over segments with ``bm25s`` (the ``bm25`` extra), built, saved and loaded."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ef._encoding import require
from ef._index_files import damaged, load_npy
from ef._index_store import StoredIndex
from ef._progress import IndexProgressArg, StageReporter
from ef._segment_index import SegmentIndex
from ef.segments import Segment

__all__ = ["BM25_PROTOCOL", "Bm25Index", "bm25_engine", "bm25_tokenizer"]

BM25_PROTOCOL: Mapping[str, Any] = {
    "k1": 1.5,
    "b": 0.75,
    "method": "lucene",
    "stemmer": "english",
    "stopwords": "en",
    "splitter": r"(?u)\b\w\w+\b",
    "lower": True,
    # Every word of the corpus is in the vocabulary. Indexes saved before this key existed
    # could miss words first seen after their first 4,096 segments; the new key changes the
    # identity, so such an index is rebuilt instead of reused.
    "vocabulary": "whole corpus",
}
"""BM25 as bm25s benchmarks it on BEIR: Lucene's variant with ``k1=1.5, b=0.75``, lower-cased
words of two or more letters or digits, English stop words, the Snowball English stemmer."""

_BM25_FOLDER = "bm25"
_TOKENIZER_VOCAB = "vocab.tokenizer.json"
_TOKENIZE_CHUNK = 4096
"""Segments tokenized between two progress reports."""
_ARRAYS = ("data", "indices", "indptr")
"""bm25s's arrays: the scores of a term's segments, which segments, where each term's start."""


def _check_arrays(
    folder: Path, arrays: Mapping[str, Any], segments: int, token_ids: list[int]
) -> None:
    """Refuse arrays that do not make one index of ``segments`` segments over the vocabulary."""
    numpy = importlib.import_module("numpy")
    data, indices, indptr = (arrays[name] for name in _ARRAYS)

    def refuse(name: str, problem: str) -> ValueError:
        return damaged(folder / f"{name}.csc.index.npy", problem)

    if indptr.ndim != 1 or indptr.dtype.kind not in "iu" or len(indptr) < 1:
        raise refuse("indptr", f"a {indptr.dtype} array of shape {indptr.shape}; expected integers")
    if indptr[0] != 0 or (numpy.diff(indptr) < 0).any() or indptr[-1] != len(indices):
        raise refuse("indptr", f"not the term offsets of {len(indices):,} entries")
    if indices.ndim != 1 or indices.dtype.kind not in "iu" or len(data) != len(indices):
        raise refuse("indices", f"a {indices.dtype} array of shape {indices.shape}")
    if len(indices) and (int(indices.min()) < 0 or int(indices.max()) >= segments):
        raise refuse("indices", f"names segments outside the {segments:,} the index holds")
    if data.ndim != 1 or data.dtype.kind != "f" or not numpy.isfinite(data).all():
        raise refuse("data", f"a {data.dtype} array of shape {data.shape}; expected finite scores")
    if token_ids and (min(token_ids) < 0 or max(token_ids) >= len(indptr) - 1):
        raise damaged(
            folder / _TOKENIZER_VOCAB,
            f"term ids up to {max(token_ids):,}; the index holds {len(indptr) - 1:,} terms",
        )


def bm25_tokenizer() -> Any:
    """A fresh ``bm25s`` tokenizer set up as the built-in index tokenizes documents and queries
    (:data:`BM25_PROTOCOL`), its vocabulary empty.

    :raises ImportError: naming the ``bm25`` extra when ``bm25s`` or PyStemmer is missing.
    """
    require("bm25s", "bm25", "BM25 indexing")
    stemmer = require("Stemmer", "bm25", "BM25 stemming").Stemmer(BM25_PROTOCOL["stemmer"])
    tokenization = importlib.import_module("bm25s.tokenization")
    return tokenization.Tokenizer(
        lower=BM25_PROTOCOL["lower"],
        splitter=BM25_PROTOCOL["splitter"],
        stopwords=BM25_PROTOCOL["stopwords"],
        stemmer=stemmer.stemWord,
    )


def bm25_engine() -> Any:
    """A fresh ``bm25s.BM25`` scorer with the built-in index's settings (:data:`BM25_PROTOCOL`),
    nothing indexed yet.

    :raises ImportError: naming the ``bm25`` extra when ``bm25s`` is missing.
    """
    bm25s = require("bm25s", "bm25", "BM25 indexing")
    protocol = BM25_PROTOCOL
    return bm25s.BM25(k1=protocol["k1"], b=protocol["b"], method=protocol["method"])


class Bm25Index(SegmentIndex):
    """Segments ranked by BM25 (Lucene's variant, ``k1=1.5``, ``b=0.75``) with ``bm25s``.

    Text is lower-cased, split into words of two or more letters or digits, stripped of English
    stop words and stemmed with the Snowball English stemmer, for documents and queries alike
    (:data:`BM25_PROTOCOL`). :meth:`search` returns only segments sharing at least one term with
    the query (a score of 0 would rank the rest in an arbitrary order).

    :param segments: what to index.
    :param name: how the index describes itself in ``retriever_id``.
    :param progress: ``True`` to show the work on standard error, or a callback receiving
        :class:`~ef.source_manager.IndexProgress` values.
    :raises ImportError: naming the ``bm25`` extra when ``bm25s`` or PyStemmer is missing.

    >>> index = Bm25Index([Segment("d1", "sorting a list"), Segment("d2", "reading files")])
    >>> [hit.segment.source_id for hit in index.search("how to sort lists")]
    ['d1']
    """

    engine = "bm25"
    positive_only = True

    def __init__(
        self, segments: Sequence[Segment], *, name: str = "bm25", progress: IndexProgressArg = None
    ) -> None:
        self._tokenizer = bm25_tokenizer()
        super().__init__(segments, name=name)
        reporter = StageReporter(progress, describe=f"with {name}")
        texts = [segment.text for segment in self.segments]
        tokens: list[list[int]] = []
        with reporter.stage("tokenizing", len(texts), "segments") as advance:
            for first in range(0, len(texts), _TOKENIZE_CHUNK):
                # update_vocab=True: bm25s's default grows the vocabulary only while it is
                # empty, which would drop every word first seen after the first chunk.
                tokens += self._tokenizer.tokenize(
                    texts[first : first + _TOKENIZE_CHUNK],
                    update_vocab=True,
                    show_progress=False,
                    return_as="ids",
                )
                advance(len(tokens))
        self._bm25 = bm25_engine()
        if self.segments:
            with reporter.stage("indexing", len(texts), "segments") as advance:
                self._bm25.index(tokens, show_progress=False)
                advance(len(texts))

    @classmethod
    def from_engine(
        cls, segments: Sequence[Segment], tokenizer: Any, engine: Any, *, name: str = "bm25"
    ) -> Bm25Index:
        """The index over ``segments`` that searches with a tokenizer and an engine made
        elsewhere: ``tokenizer`` from :func:`bm25_tokenizer`, its vocabulary the segments'
        (query words it lacks score nothing), ``engine`` from :func:`bm25_engine`, holding one
        row of scores per segment, in order (as ``engine.index`` or another scoring of the same
        token ids leaves it). Nothing is checked or computed here but what every index holds
        (the segments' fingerprint, the tie order).

        :param name: how the index describes itself in ``retriever_id``.
        """
        index = cls.__new__(cls)
        SegmentIndex.__init__(index, segments, name=name)
        index._tokenizer, index._bm25 = tokenizer, engine
        return index

    @classmethod
    def _from_saved(cls, stored: StoredIndex) -> Bm25Index:
        """The index saved in ``stored.folder``, whose files ``read_index_dir`` has checked.

        The engine is made from :data:`BM25_PROTOCOL`, not from the saved ``params.index.json``,
        and its arrays are read here (each named when it is damaged) and checked to fit
        together, so a search can neither fail on an index out of range nor score by other
        settings than the identity names.
        """
        identity = stored.manifest["identity"]
        tokenizer = bm25_tokenizer()
        vocab = stored.file(f"{_BM25_FOLDER}/{_TOKENIZER_VOCAB}")
        try:
            tokenizer.load_vocab(str(vocab.parent), vocab.name)
            token_ids = [int(i) for i in tokenizer.word_to_id.values()]
        except Exception as error:  # bm25s reads it with no checks of its own
            problem = f"not a tokenizer vocabulary ({type(error).__name__}: {error})"
            raise damaged(vocab, problem) from None
        index = cls.from_engine(stored.segments, tokenizer, bm25_engine(), name=identity["name"])
        if stored.segments:
            arrays = {
                name: load_npy(stored.file(f"{_BM25_FOLDER}/{name}.csc.index.npy"))
                for name in _ARRAYS
            }
            _check_arrays(stored.folder / _BM25_FOLDER, arrays, len(stored.segments), token_ids)
            # What bm25s's own load sets: the scores, no vocabulary (scoring is by id), and no
            # non-occurrence array (Lucene's variant has none).
            index._bm25.scores = {**arrays, "num_docs": len(stored.segments)}
            index._bm25.vocab_dict = {}
            index._bm25.unique_token_ids_set = set()
            index._bm25.nonoccurrence_array = None
        index.build = {"segmenting": identity.get("segmenting")}
        return index

    def _scores(self, query: str) -> Any:
        return next(self._scores_batch([query]))

    def _scores_batch(self, queries: list[str]) -> Iterator[Any]:
        # One tokenizer call for the batch; each query is then scored by bm25s on its own, so
        # its scores are those of a search for it alone.
        batch = self._tokenizer.tokenize(
            queries, update_vocab=False, show_progress=False, return_as="ids"
        )
        for ids in batch:
            # Words unseen while indexing map to the empty token (id 0), which scores nothing.
            ids = [token for token in ids if token != 0]
            yield self._bm25.get_scores(ids) if ids else None

    def _engine_manifest(self) -> dict[str, Any]:
        return {"bm25": dict(BM25_PROTOCOL)}

    def _write_engine(self, folder: Path) -> None:
        target = folder / _BM25_FOLDER
        target.mkdir()
        self._tokenizer.save_vocab(str(target), _TOKENIZER_VOCAB)
        if self.segments:
            # Indexed from token ids, bm25s keys its vocabulary by int, which its JSON writer
            # refuses; scoring by id never reads it, so the saved copy is keyed by str.
            vocabulary = self._bm25.vocab_dict
            self._bm25.vocab_dict = {str(key): value for key, value in vocabulary.items()}
            try:
                self._bm25.save(str(target), allow_pickle=False)
            finally:
                self._bm25.vocab_dict = vocabulary
