"""Retriever adapters and result → source doc id mapping, as a built-in plugin.

The built-in hook implementations are ``trylast``: a plugin that knows a specific retriever or
result type always wins over these generic fallbacks.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import sys
from collections.abc import Callable, Iterable, Mapping, Sized
from collections.abc import Set as AbstractSet
from itertools import islice
from typing import Any, NamedTuple, cast

import attrs

from ef.evaluation._hookspecs import hookimpl
from ef.evaluation._plugins import HOST
from ef.evaluation._trec import rank_by_score
from ef.segments import Segment
from ef.source_manager import SearchHit, SourceManager

__all__ = ["DocIds", "PreparedRetriever", "UnusableResults", "prepare_retriever", "to_doc_ids"]


@hookimpl(trylast=True)
def ef_evaluation_adapt_retriever(retriever: Any) -> Callable[..., Any] | None:
    """A SourceManager's ``retrieve``, a SearchableCorpus's ``search``, or the callable itself."""
    if isinstance(retriever, SourceManager):
        return retriever.retrieve
    # The built-in index ranks documents when asked, so that ``limit`` counts documents, not
    # segments. Its module is loaded once an index exists; until then nothing can be one.
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


class DocIds(NamedTuple):
    """One query's results as source doc ids.

    :ivar ranked: the doc ids, best first, de-duplicated to the best rank per source.
    :ivar scores: their scores, when the results carried them (a mapping's values, or every
        result's numeric ``score``, as a ``SearchHit`` has), else ``None``.
    :ivar retrieved: how many results the retriever returned (before truncation to ``limit``
        and de-duplication), or ``None`` when it returned an iterator.
    """

    ranked: list[str]
    scores: list[float] | None
    retrieved: int | None


_EXPECTED = "expected a list of results, best first, or a {doc_id: score} mapping"


def _refuse(results: object) -> None:
    """Raise :class:`TypeError` if ``results`` is no ranking at all (a forgotten ``return``, a
    coroutine nobody awaited, a string, an unordered set, a number)."""
    if results is None:
        raise TypeError(f"the retriever returned None; {_EXPECTED} (a missing return statement?)")
    if inspect.isawaitable(results):
        if inspect.iscoroutine(results):
            results.close()  # never to be awaited: close it rather than warn at collection
        raise TypeError(
            f"the retriever returned an awaitable ({type(results).__qualname__}) instead of "
            "results; an async retriever must be an async def function or have an async "
            "__call__ or search, so that it is awaited"
        )
    if isinstance(results, str | bytes | bytearray | memoryview):
        raise TypeError(
            f"the retriever returned a single {type(results).__name__} value {results!r:.40}; "
            f"{_EXPECTED}"
        )
    if isinstance(results, AbstractSet):
        raise TypeError(
            f"the retriever returned a {type(results).__name__}, which has no order; {_EXPECTED}"
        )
    if not isinstance(results, Iterable):
        raise TypeError(
            f"the retriever returned {results!r:.60} ({type(results).__qualname__}); {_EXPECTED}"
        )


def _is_finite(value: object) -> bool:
    if not isinstance(value, numbers.Real):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond the range of a float
        return False


def _from_scores(scores: Mapping[Any, Any], limit: int) -> DocIds:
    """A ``{doc_id: score}`` mapping ranked as trec_eval ranks a run, cut at ``limit``."""
    for doc_id, score in scores.items():
        if not isinstance(doc_id, str):
            raise TypeError(
                f"the retriever returned a mapping with the key {doc_id!r:.60} "
                f"({type(doc_id).__qualname__}); the keys of a {{doc_id: score}} mapping are "
                "doc ids, which are strings"
            )
        if isinstance(score, bool) or not isinstance(score, numbers.Real):
            raise TypeError(
                f"the retriever gave doc {doc_id!r} the score {score!r:.60} "
                f"({type(score).__qualname__}); scores must be finite numbers"
            )
        if not _is_finite(score):
            raise ValueError(
                f"the retriever gave doc {doc_id!r} the score {score!r}; scores must be finite "
                "numbers"
            )
    ranked = rank_by_score(scores)[:limit]
    return DocIds(ranked, [float(scores[doc_id]) for doc_id in ranked], len(scores))


def _getter_plugin(result_type: type) -> str:
    """The name of the plugin whose doc id getter handles ``result_type``, for messages."""
    caller = HOST.manager.hook.ef_evaluation_doc_id_getter
    for impl in reversed(caller.get_hookimpls()):  # pluggy's call order
        try:
            found = impl.function(result_type=result_type)
        except Exception:  # the host skipped it the same way
            continue
        if found is not None:
            return str(impl.plugin_name)
    return "?"


def _getter_for(result_type: type) -> Callable[[Any], str]:
    getter = HOST.doc_id_getter(result_type)
    if getter is None:
        raise UnusableResults(
            TypeError(
                f"cannot map a result of type {result_type.__qualname__} to a doc id: "
                "expected str, Segment or SearchHit, or a plugin that maps it "
                "(ef_evaluation_doc_id_getter)"
            )
        )
    return getter


class UnusableResults(Exception):
    """What a retriever returned cannot be ranked: ``error`` says why, and the query fails.

    A shape that is no ranking, a result type no plugin maps, a doc id that is not a string, a
    bad score, or an exception raised while the results were being read (a lazy iterator's):
    the retriever's doing, so its query fails as if the retriever had raised ``error``.
    An exception raised by a plugin's doc id getter is the plugin's own and is not wrapped.
    """

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


def to_doc_ids(results: object, limit: int) -> DocIds:
    """Map a retriever's results to source doc ids, as the ranking that gets scored.

    A sequence or iterator is read in its own order: its first ``limit`` results are mapped to
    doc ids by the plugin hook ``ef_evaluation_doc_id_getter`` and de-duplicated, each source
    keeping its first (best) rank and score. A ``{doc_id: score}`` mapping is ranked by score as
    trec_eval ranks a run (score descending, ties by doc id descending) and cut at ``limit``;
    its scores must be finite numbers.

    :param results: what the retriever returned.
    :param limit: how many results to read.
    :raises UnusableResults: wrapping a :class:`TypeError` for results that are no ranking —
        ``None``, an awaitable, a string, a set, a number — for a result type no plugin maps,
        a doc id that is not a string (naming the getter's plugin) or a score that is not a
        number; a :class:`ValueError` for a NaN or infinite score; or whatever reading the
        results raised.

    >>> to_doc_ids({'d9': 0.1, 'd1': 0.9}, 10)
    DocIds(ranked=['d1', 'd9'], scores=[0.9, 0.1], retrieved=2)
    >>> to_doc_ids(['d1', 'd2', 'd1', 'd3'], 3).ranked
    ['d1', 'd2']
    >>> to_doc_ids(None, 3)
    Traceback (most recent call last):
        ...
    ef.evaluation._adapters.UnusableResults: the retriever returned None; expected a list of results, best first, or a {doc_id: score} mapping (a missing return statement?)
    """  # noqa: E501 - a doctest's expected output is one line
    try:
        _refuse(results)
        if isinstance(results, Mapping):
            return _from_scores(results, limit)
        retrieved = len(results) if isinstance(results, Sized) else None
        items = islice(cast("Iterable[Any]", results), limit)
    except (TypeError, ValueError) as error:
        raise UnusableResults(error) from None
    ranked: dict[str, float | None] = {}
    getters: dict[type, Callable[[Any], str]] = {}
    scored = True
    while True:
        try:
            result = next(items)
        except StopIteration:
            break
        except Exception as error:  # in the retriever's own lazy iterator
            raise UnusableResults(error) from None
        result_type = type(result)
        getter = getters.get(result_type)
        if getter is None:
            getter = getters[result_type] = _getter_for(result_type)
        try:
            doc_id = getter(result)
        except Exception as error:
            error.add_note(
                f"in the doc id getter of plugin {_getter_plugin(result_type)!r} for "
                f"{result_type.__qualname__} results"
            )
            raise
        if not isinstance(doc_id, str):
            raise UnusableResults(
                TypeError(
                    f"the doc id getter of plugin {_getter_plugin(result_type)!r} mapped a "
                    f"{result_type.__qualname__} result to {doc_id!r:.60} "
                    f"({type(doc_id).__qualname__}); doc ids are strings"
                )
            )
        if doc_id not in ranked:
            score = getattr(result, "score", None)
            if isinstance(score, bool) or not _is_finite(score):
                scored = False
                score = None
            ranked[doc_id] = score
    scores = [float(s) for s in ranked.values() if s is not None] if scored else None
    return DocIds(list(ranked), scores, retrieved)
