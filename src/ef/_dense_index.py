"""Dense search over segments with sentence-transformers (the ``dense`` extra): exact cosine
similarity against every segment's embedding, kept as one float32 matrix."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ef._encoding import DEFAULT_BATCH_SIZE, encode_texts, load_model, model_fingerprint, require
from ef._index_files import damaged, load_npy
from ef._index_store import MANIFEST, StoredIndex
from ef._progress import IndexProgressArg, StageReporter
from ef._segment_index import SegmentIndex
from ef.segments import Segment

__all__ = ["DTYPES", "DenseIndex"]

DTYPES = ("float32", "float16")
"""How embeddings may be stored: float32 (the default) or float16 (half the memory; the scores
change in the third or fourth decimal, so rankings can too)."""
_VECTORS = "vectors.npy"


class DenseIndex(SegmentIndex):
    """Segments ranked by the cosine similarity of sentence-transformers embeddings.

    Every segment is embedded once, normalised to unit length, and kept in one matrix; a query
    is embedded the same way and compared with every segment (exact search, a matrix-vector
    product), so the ranking is the true cosine ranking. Texts longer than the model's
    ``max_seq_length`` are truncated by its tokenizer.

    :param segments: what to index.
    :param model: a model name or directory (see :func:`~ef._encoding.resolve_model`), or a
        loaded ``SentenceTransformer``.
    :param name: how the index describes itself in ``retriever_id``.
    :param batch_size: texts per forward pass of the model.
    :param device: ``"cpu"``, ``"cuda"``, ``"cuda:<n>"``, ``"mps"``, or ``None`` for the best one
        available (see :func:`~ef._encoding.choose_device`); ignored for a loaded model.
    :param dtype: ``"float32"``, or ``"float16"`` to halve the memory (it changes scores).
    :param progress: ``True`` to show the encoding on standard error, or a callback receiving
        :class:`~ef.source_manager.IndexProgress` values.
    :raises ImportError: naming the ``dense`` extra when sentence-transformers is missing.
    :raises OSError: when the model cannot be loaded; the message says how to get it.
    :raises ValueError: for a bad ``batch_size``, ``dtype`` or ``device``.
    """

    engine = "dense"

    def __init__(
        self,
        segments: Sequence[Segment],
        *,
        model: Any,
        name: str = "dense",
        batch_size: int = DEFAULT_BATCH_SIZE,
        device: str | None = None,
        dtype: str = "float32",
        progress: IndexProgressArg = None,
    ) -> None:
        numpy = require("numpy", "dense", "dense indexing")
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(map(repr, DTYPES))}; got {dtype!r}")
        super().__init__(segments, name=name)
        self.batch_size = batch_size
        self.dtype = dtype
        self._device = device
        self._model_name = model if isinstance(model, str) else None
        self._model: Any = load_model(model, device=device) if isinstance(model, str) else model
        reporter = StageReporter(progress, describe=f"with {name}")
        texts = [segment.text for segment in self.segments]
        with reporter.stage("encoding", len(texts), "segments") as advance:
            vectors = encode_texts(self._model, texts, batch_size=batch_size, advance=advance)
        self._vectors = vectors.astype(numpy.dtype(dtype), copy=False)

    @classmethod
    def _from_saved(
        cls, stored: StoredIndex, *, model: Any = None, device: str | None = None
    ) -> DenseIndex:
        """The index saved in ``stored.folder``; the model is loaded at the first search."""
        numpy = require("numpy", "dense", "dense indexing")
        identity = stored.manifest["identity"]
        settings = identity.get("dense")
        manifest = stored.folder / MANIFEST
        if not isinstance(settings, dict) or settings.get("dtype") not in DTYPES:
            raise damaged(manifest, 'no dense settings ("identity"."dense" with a "dtype")')
        index = cls.__new__(cls)
        SegmentIndex.__init__(index, stored.segments, name=identity["name"])
        index.batch_size = DEFAULT_BATCH_SIZE
        index.dtype = settings["dtype"]
        index._device = device
        model_name = settings.get("model")
        index._model_name = model_name if isinstance(model_name, str) else None
        index._model = model
        if model is None and index._model_name is None:
            raise ValueError(
                f"{stored.folder}: the index was built with a model object, not a name: pass "
                "load_index(path, model=...)"
            )
        path = stored.file(_VECTORS)
        vectors = load_npy(path)
        expected_rows = len(stored.segments)
        if (
            vectors.dtype != numpy.dtype(index.dtype)
            or vectors.ndim != 2
            or (vectors.shape[0] != expected_rows)
        ):
            raise damaged(
                path,
                f"a {vectors.dtype} array of shape {vectors.shape}; expected {index.dtype} with "
                f"{expected_rows} rows",
            )
        if not numpy.isfinite(vectors).all():
            raise damaged(path, "it holds values that are not finite numbers")
        index._vectors = vectors
        index.build = {"segmenting": identity.get("segmenting")}
        return index

    @property
    def model(self) -> Any:
        """The sentence-transformers model, loaded on first use for an index read from disk."""
        if self._model is None:
            self._model = load_model(self._model_name or "", device=self._device)
        return self._model

    def _scores(self, query: str) -> Any:
        return next(self._scores_batch([query]))

    def _scores_batch(self, queries: list[str]) -> Iterator[Any]:
        # Queries are encoded ``batch_size`` at a time, then scored one matrix-vector product
        # each: a query's scores are the same whatever else is in its batch. (The rows of one
        # matrix product over a block of queries round by their place in the block on some
        # processors, so a query would rank its ties otherwise in a batch than alone; the
        # products cost a few per cent of the encoding.)
        numpy = require("numpy", "dense", "dense indexing")
        encoded = encode_texts(self.model, queries, batch_size=self.batch_size)
        if encoded.shape[1] != self._vectors.shape[1]:
            raise ValueError(
                f"the model gives {encoded.shape[1]}-dimensional embeddings; the index holds "
                f"{self._vectors.shape[1]}-dimensional ones: load it with the model it was built "
                "with"
            )
        vectors = self._vectors
        if vectors.dtype != numpy.float32:  # float16 storage: scored in float32, once a batch
            vectors = vectors.astype(numpy.float32)
        for query in encoded.astype(numpy.float32, copy=False):
            yield vectors @ query

    def _engine_manifest(self) -> dict[str, Any]:
        name = self._model_name
        fingerprint = model_fingerprint(name) if name else None
        return {"dense": {"model": name, "model_fingerprint": fingerprint, "dtype": self.dtype}}

    def _write_engine(self, folder: Path) -> None:
        numpy = require("numpy", "dense", "dense indexing")
        numpy.save(folder / _VECTORS, self._vectors, allow_pickle=False)
