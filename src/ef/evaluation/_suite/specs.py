"""Retriever specs: the strings that name a retriever, as ``ef-eval retrieval --retriever``,
``ef-eval check`` and a suite's systems take them.

- ``bm25``, ``st:MODEL``: the corpus indexed with :func:`ef.source_manager.ingest` (whole
  documents unless given a segment size), reused from or saved in an index folder when given;
- ``http://…``, ``https://…``: an :class:`~ef.evaluation.HttpRetriever` for the URL;
- ``module:attr``: the object imported from ``module`` (``attr`` may be dotted; the working
  directory is importable): a class is instantiated with the corpus, ``attr(corpus)``; anything
  else — a callable ``query -> results``, an object with ``search(query, *, limit)`` — is the
  retriever as it is.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Mapping
from typing import Any

from ef.evaluation._redact import redact_url
from ef.evaluation._types import Corpus

__all__ = [
    "RETRIEVER_FORMS",
    "import_object",
    "is_module_attr",
    "is_retriever_spec",
    "retriever_from_spec",
]

RETRIEVER_FORMS = (
    "bm25",
    "st:MODEL (e.g. st:all-MiniLM-L6-v2)",
    "module:attr (e.g. mypackage.search:retriever)",
    "an http:// or https:// URL",
)
"""The forms of a retriever spec, as help texts and errors list them."""

_MODULE_ATTR = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def is_retriever_spec(text: str) -> bool:
    """Whether ``text`` has the form of a retriever spec (:data:`RETRIEVER_FORMS`).

    >>> [is_retriever_spec(t) for t in ("bm25", "st:all-MiniLM-L6-v2", "runs/bm25.txt")]
    [True, True, False]
    """
    return text == "bm25" or text.startswith(("st:", "http://", "https://")) or is_module_attr(text)


def retriever_from_spec(
    spec: str,
    corpus: Corpus,
    *,
    segment_size: int | None = None,
    overlap: int | None = None,
    http_options: Mapping[str, Any] | None = None,
    index_dir: str | os.PathLike[str] | None = None,
    progress: bool = False,
) -> Any:
    """The retriever ``spec`` names (see the module's description), built over ``corpus`` when
    it needs it.

    :param corpus: the dataset's documents, ``{doc_id: text}``.
    :param segment_size: passed to ``ingest`` (``None``: whole documents).
    :param overlap: passed to ``ingest`` (``None``: a quarter of ``segment_size``).
    :param http_options: keyword arguments for the :class:`~ef.evaluation.HttpRetriever`.
    :param index_dir: passed to ``ingest``: reuse the index saved there, or save it there.
    :param progress: passed to ``ingest``: show each stage of indexing on standard error.
    :raises ValueError: for a spec of no known form (the message lists the forms), or HTTP
        options the retriever refuses (as :class:`TypeError` too).
    :raises ImportError: for a module that cannot be imported, or an attribute it lacks.

    >>> retriever_from_spec("ef.evaluation:evaluate_run", {}).__name__
    'evaluate_run'
    """
    if spec == "bm25" or spec.startswith("st:"):
        from ef.source_manager import ingest

        return ingest(
            corpus,
            embedder=spec,
            segment_size=segment_size,
            overlap=overlap,
            index_dir=index_dir,
            progress=progress,
        )
    if spec.startswith(("http://", "https://")):
        from ef.evaluation._http.retriever import HttpRetriever

        return HttpRetriever(spec, **dict(http_options or {}))
    if is_module_attr(spec):
        obj = import_object(spec)
        return obj(corpus) if isinstance(obj, type) else obj
    raise ValueError(
        f"unknown retriever {redact_url(spec)!r}; expected one of: {'; '.join(RETRIEVER_FORMS)}"
    )


def is_module_attr(spec: str) -> bool:
    """Whether ``spec`` is of the form ``module:attr`` (``attr`` may be dotted)."""
    return bool(_MODULE_ATTR.match(spec))


def import_object(spec: str) -> Any:
    """The object ``module:attr`` names, imported (the working directory is importable).

    :raises ImportError: for a module that cannot be imported, or an attribute it lacks.
    """
    module_name, _, attr_path = spec.partition(":")
    # A console script's sys.path starts at its own folder: make the user's folder importable.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise ImportError(f"cannot import {module_name!r}: {error}") from error
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ImportError(f"{module_name!r} has no attribute {attr_path!r}") from None
    return obj
