"""The built-in retriever adapters and doc id getters, as a hook module.

Both hooks are ``trylast``: a plugin that knows a specific retriever or result type always wins
over these generic fallbacks.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

from ef.evaluation._plugins.hookspecs import hookimpl
from ef.segments import Segment
from ef.source_manager import SearchHit, SourceManager


@hookimpl(trylast=True)
def ef_evaluation_adapt_retriever(retriever: Any) -> Callable[..., Any] | None:
    """A SourceManager's ``retrieve``, the built-in index's ``search`` by document, a
    SearchableCorpus's ``search``, or the callable itself."""
    if isinstance(retriever, SourceManager):
        return retriever.retrieve
    # The built-in index ranks documents when asked, so that ``limit`` counts documents, not
    # segments. Its module is loaded once an index exists; until then nothing can be one, and
    # looking it up here keeps the engines out of ``import ef.evaluation``.
    built_in = sys.modules.get("ef._segment_index")
    if built_in is not None and isinstance(retriever, built_in.SegmentIndex):
        return functools.partial(retriever.search, per_document=True)
    search = getattr(retriever, "search", None)
    if callable(search):
        return search  # type: ignore[no-any-return]
    if callable(retriever):
        return retriever  # type: ignore[no-any-return]
    return None


def _segment_source(segment: Segment) -> str:
    return segment.source_id


def _hit_source(hit: SearchHit) -> str:
    return hit.segment.source_id


def _itself(doc_id: str) -> str:
    return doc_id


@hookimpl(trylast=True)
def ef_evaluation_doc_id_getter(result_type: type) -> Callable[[Any], str] | None:
    """``str`` is its own doc id; a Segment's is its ``source_id``; a SearchHit's its segment's."""
    if issubclass(result_type, str):
        return _itself
    if issubclass(result_type, SearchHit):
        return _hit_source
    if issubclass(result_type, Segment):
        return _segment_source
    return None
