"""The built-in indexes behind ``ef.source_manager.ingest`` and ``load_index``.

The engines are optional extras, imported on first use: BM25 is ``bm25s``
(:mod:`ef._bm25_index`, ``pip install 'ef-evaluation[bm25]'``); dense search is
sentence-transformers (:mod:`ef._dense_index`, ``pip install 'ef-evaluation[dense]'``).
Segmenting is :mod:`ef._segmenting`, encoding :mod:`ef._encoding`, the saved format
:mod:`ef._index_store`.

The defaults reproduce the published protocols on BEIR data (:data:`PROTOCOLS`): whole
documents (title and text, as ``read_beir`` joins them), BM25 as bm25s benchmarks it, and a
dense model reading each document up to its own ``max_seq_length``.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import Any

from ef._bm25_index import BM25_PROTOCOL, Bm25Index
from ef._dense_index import DenseIndex
from ef._encoding import DEFAULT_BATCH_SIZE, load_model, model_fingerprint, resolve_model
from ef._index_store import MANIFEST, check_target, read_index_dir, read_manifest, saved_at
from ef._progress import IndexProgressArg
from ef._segmenting import (
    segment_corpus,
    segment_document,
    segments_fingerprint,
    whole_documents,
)
from ef.segments import DEFAULT_OVERLAP, DEFAULT_SEGMENT_SIZE, Segment

__all__ = [
    "DEFAULT_OVERLAP",
    "DEFAULT_SEGMENT_SIZE",
    "EMBEDDER_FORMS",
    "PROTOCOLS",
    "Bm25Index",
    "DenseIndex",
    "ingest",
    "load_index",
    "load_model",
    "resolve_model",
    "segment_corpus",
    "segment_document",
]

EMBEDDER_FORMS = (
    "'bm25'",
    "'st:<model name>' (e.g. 'st:all-MiniLM-L6-v2')",
    "'st:<directory of a sentence-transformers model>'",
)
"""The ``embedder`` strings :func:`ingest` accepts, as its error message lists them."""

PROTOCOLS: Mapping[str, Mapping[str, Any]] = {
    "documents": {
        "fields": "title and text joined by a space (read_beir), the whole document",
        "segment_size": None,
    },
    "bm25": BM25_PROTOCOL,
    "dense": {
        "truncation": "the model's max_seq_length (256 word pieces for all-MiniLM-L6-v2)",
        "normalize_embeddings": True,
        "similarity": "cosine, exact (every document)",
        "dtype": "float32",
    },
}
"""What :func:`ingest` does by default, protocol by protocol (the docs name the same)."""

_log = logging.getLogger("ef.source_manager")
"""Where :func:`ingest` says that it reused a saved index (INFO), or why it rebuilds one
instead (WARNING)."""


def _segments(
    corpus: Mapping[str, str], segment_size: int | None, overlap: int | None
) -> list[Segment]:
    if segment_size is None:
        if overlap is not None:
            raise ValueError(
                "overlap applies only with a segment_size; without one, documents stay whole"
            )
        return whole_documents(corpus)
    if overlap is None and isinstance(segment_size, int) and not isinstance(segment_size, bool):
        overlap = segment_size // 4
    return segment_corpus(corpus, segment_size=segment_size, overlap=overlap)  # type: ignore[arg-type]


def _wanted(
    embedder: str,
    segments: list[Segment],
    segmenting: dict[str, int | None],
    dtype: str,
) -> dict[str, Any]:
    """The identity a saved index must have to be reused (see ``SegmentIndex.identity``)."""
    identity: dict[str, Any] = {
        "engine": "bm25" if embedder == "bm25" else "dense",
        "name": embedder,
        "fingerprint": segments_fingerprint(segments),
        "segmenting": segmenting,
    }
    if embedder == "bm25":
        identity["bm25"] = dict(BM25_PROTOCOL)
    else:
        model = embedder.partition(":")[2].strip()
        identity["dense"] = {
            "model": model,
            "model_fingerprint": model_fingerprint(model),
            "dtype": dtype,
        }
    return identity


def _reuse(
    index_dir: str | os.PathLike[str],
    wanted: dict[str, Any],
    device: str | None,
    progress: IndexProgressArg,
) -> Bm25Index | DenseIndex | str:
    """The index saved in ``index_dir`` when it was built as ``wanted`` and its files are whole
    (announced: :func:`loaded_line`); otherwise why not (empty when there is none, or it is
    simply another index)."""
    try:
        manifest = read_manifest(index_dir)
        if manifest is None or manifest.get("identity") != wanted:
            return ""
        index = load_index(index_dir, device=device)
    except (ValueError, ImportError) as error:
        return str(error)
    line = loaded_line(index, saved_at(index_dir, manifest))
    _log.info("%s", line)
    if progress is True:
        print(line, file=sys.stderr, flush=True)
    return index


def loaded_line(index: Bm25Index | DenseIndex, saved: str) -> str:
    """What reusing a saved index says: where from, how much, and when it was built.

    >>> index = Bm25Index(whole_documents({"a": "red apples", "b": "green pears"}), name="bm25")
    >>> index.loaded_from = "runs/index"
    >>> loaded_line(index, "2026-12-04 17:42 UTC")
    'loaded index from runs/index (bm25, 2 documents, built 2026-12-04 17:42 UTC)'
    """
    documents = len({segment.source_id for segment in index.segments})
    size = f"{documents:,} documents"
    if len(index.segments) != documents:
        size += f" in {len(index.segments):,} segments"
    return f"loaded index from {index.loaded_from} ({index.name}, {size}, built {saved})"


def ingest(
    corpus: Mapping[str, str],
    *,
    embedder: str = "bm25",
    segment_size: int | None = None,
    overlap: int | None = None,
    index_dir: str | os.PathLike[str] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    device: str | None = None,
    dtype: str = "float32",
    progress: IndexProgressArg = None,
) -> Bm25Index | DenseIndex:
    """Index ``corpus`` with the engine ``embedder`` names, or reuse the index saved in
    ``index_dir``.

    See :func:`ef.source_manager.ingest`, the public entry point.

    :raises ValueError: for an ``embedder`` string of no supported form, or bad sizes.
    """
    if not isinstance(embedder, str):
        raise TypeError(f"embedder must be a string; got {type(embedder).__name__}")
    kind, _, model = embedder.partition(":")
    model = model.strip()
    if embedder != "bm25" and not (kind == "st" and model):
        raise ValueError(
            f"unknown embedder {embedder!r}; supported forms: {', '.join(EMBEDDER_FORMS)}"
        )
    segments = _segments(corpus, segment_size, overlap)
    segmenting = {"segment_size": segment_size, "overlap": overlap}
    if index_dir is not None:
        wanted = _wanted(embedder if kind != "st" else f"st:{model}", segments, segmenting, dtype)
        reused = _reuse(index_dir, wanted, device, progress)
        if not isinstance(reused, str):
            return reused
        check_target(index_dir)  # before any work: never build what cannot be saved
        if reused:
            _log.warning("%s; rebuilding it", reused)
    index: Bm25Index | DenseIndex
    if embedder == "bm25":
        index = Bm25Index(segments, name=embedder, progress=progress)
    else:
        index = DenseIndex(
            segments,
            model=model,
            name=f"st:{model}",
            batch_size=batch_size,
            device=device,
            dtype=dtype,
            progress=progress,
        )
    index.build = {"segmenting": segmenting}
    if index_dir is not None:
        index.save(index_dir)
    return index


def load_index(
    path: str | os.PathLike[str],
    *,
    model: Any = None,
    device: str | None = None,
) -> Bm25Index | DenseIndex:
    """Read back an index saved by ``index.save(path)`` or ``ingest(..., index_dir=path)``.

    See :func:`ef.source_manager.load_index`, the public entry point.
    """
    stored = read_index_dir(path)
    engine = stored.manifest["identity"]["engine"]
    index: Bm25Index | DenseIndex
    try:
        if engine == "bm25":
            index = Bm25Index._from_saved(stored)
        elif engine == "dense":
            index = DenseIndex._from_saved(stored, model=model, device=device)
        else:
            raise ValueError(
                f"{stored.folder / MANIFEST}: not a usable saved index: unknown engine "
                f"{engine!r}; expected 'bm25' or 'dense'"
            )
    except ImportError as error:
        raise ImportError(f"{stored.folder / MANIFEST}: a saved {engine} index: {error}") from error
    index.loaded_from = stored.folder
    return index
