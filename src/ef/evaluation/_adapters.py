"""Retriever adapters and result → source doc id mapping, as a built-in plugin.

The built-in hook implementations are ``trylast``: a plugin that knows a specific retriever or
result type always wins over these generic fallbacks.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from ef.evaluation._hookspecs import hookimpl
from ef.evaluation._plugins import HOST
from ef.segments import Segment
from ef.source_manager import SearchHit, SourceManager

__all__ = ["PreparedRetriever", "prepare_retriever", "to_doc_ids"]


@hookimpl(trylast=True)
def ef_evaluation_adapt_retriever(retriever: Any) -> Callable[..., Any] | None:
    """A SourceManager's ``retrieve``, a SearchableCorpus's ``search``, or the callable itself."""
    if isinstance(retriever, SourceManager):
        return retriever.retrieve
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


def _is_async(fn: Callable[..., Any]) -> bool:
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - an async __call__ on an instance
    return call is not None and inspect.iscoroutinefunction(call)


def _accepts_limit(fn: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature
        return False
    return any(
        (p.name == "limit" and p.kind is not inspect.Parameter.POSITIONAL_ONLY)
        or p.kind is inspect.Parameter.VAR_KEYWORD
        for p in parameters
    )


@attrs.frozen
class PreparedRetriever:
    """A retriever inspected once: how to call it for one query.

    :ivar call: ``call(query_text)`` → results (an awaitable when ``is_async``).
    :ivar is_async: whether ``call`` returns an awaitable.
    :ivar passes_limit: whether ``limit=`` is passed (otherwise results are truncated).
    :ivar name: the retriever's qualified name, for the report's manifest.
    """

    call: Callable[[str], Any]
    is_async: bool
    passes_limit: bool
    name: str


def qualified_name(obj: object) -> str:
    """``module.QualName`` of a function or class, or of an instance's class."""
    target: Any = obj if inspect.isfunction(obj) or inspect.isclass(obj) else type(obj)
    if isinstance(obj, functools.partial):
        target = obj.func
    module = getattr(target, "__module__", None) or "?"
    return f"{module}.{getattr(target, '__qualname__', type(target).__qualname__)}"


def prepare_retriever(retriever: object, limit: int) -> PreparedRetriever:
    """Adapt ``retriever`` through the plugin hooks and bind ``limit``.

    :raises TypeError: when no plugin knows how to call ``retriever``.
    """
    fn: Callable[..., Any] | None = HOST.first_result(
        "ef_evaluation_adapt_retriever", retriever=retriever
    )
    if fn is None:
        raise TypeError(
            f"cannot evaluate a {type(retriever).__qualname__}: expected a callable "
            "query -> results, an object with search(query, *, limit), a SourceManager, "
            "or a type a plugin adapts (ef_evaluation_adapt_retriever)"
        )
    passes_limit = _accepts_limit(fn)
    call: Callable[[str], Any] = functools.partial(fn, limit=limit) if passes_limit else fn
    return PreparedRetriever(call, _is_async(fn), passes_limit, qualified_name(retriever))


def to_doc_ids(results: Iterable[Any], limit: int) -> tuple[list[str], list[float] | None]:
    """Map up to ``limit`` results to source doc ids, de-duplicated to the best rank per source.

    :returns: the doc ids, and their scores when every result carries a numeric ``score``
        (a ``SearchHit`` does), else ``None``.
    :raises TypeError: for a result type no plugin maps to a doc id.
    """
    if isinstance(results, str | bytes):
        raise TypeError("the retriever returned a string; expected a list of results")
    ranked: dict[str, float | None] = {}
    getters: dict[type, Callable[[Any], str]] = {}
    scored = True
    for position, result in enumerate(results):
        if position >= limit:
            break
        result_type = type(result)
        getter = getters.get(result_type)
        if getter is None:
            found = HOST.doc_id_getter(result_type)
            if found is None:
                raise TypeError(
                    f"cannot map a result of type {result_type.__qualname__} to a doc id: "
                    "expected str, Segment or SearchHit, or a plugin that maps it "
                    "(ef_evaluation_doc_id_getter)"
                )
            getter = getters[result_type] = found
        doc_id = getter(result)
        if doc_id not in ranked:
            score = getattr(result, "score", None)
            if not isinstance(score, int | float) or isinstance(score, bool):
                scored = False
                score = None
            ranked[doc_id] = score
    scores = [float(s) for s in ranked.values() if s is not None] if scored else None
    return list(ranked), scores
