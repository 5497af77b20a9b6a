"""Adapting a retriever: how to call it, and how its results become source doc ids.

The machinery only: which callable a retriever is, and which function maps a result type to a
doc id, are the plugins' answers (built-ins included), which the caller hands in.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from collections.abc import Callable, Iterable, Mapping, Sized
from collections.abc import Set as AbstractSet
from itertools import islice
from typing import Any, NamedTuple, Protocol, cast

import attrs

from ef.evaluation._exceptions import UnusableResults
from ef.evaluation._running.batches import BatchForm, find_batch_form
from ef.evaluation._scoring.order import rank_by_score

__all__ = [
    "DocIdGetters",
    "DocIds",
    "PreparedRetriever",
    "prepare_retriever",
    "qualified_name",
    "to_doc_ids",
]


class DocIdGetters(Protocol):
    """The plugins' answers to ``ef_evaluation_doc_id_getter`` (the plugin host gives them)."""

    def doc_id_getter(self, result_type: type) -> Callable[[Any], str] | None:
        """The function mapping a result of ``result_type`` to its doc id, or None."""

    def doc_id_getter_plugin(self, result_type: type) -> str:
        """The name of the plugin whose getter handles ``result_type``, for messages."""


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
    :ivar adapter: what the plugin adapted the retriever to, before ``limit`` was bound.
    :ivar batch: its batch form (``search_batch``), ``limit`` bound, or ``None``.
    """

    call: Callable[[str], Any]
    is_async: bool
    adapter: Callable[..., Any] | None = None
    batch: BatchForm | None = None


def qualified_name(obj: object) -> str:
    """``module.QualName`` of a function or class, or of an instance's class."""
    target: Any = obj if inspect.isfunction(obj) or inspect.isclass(obj) else type(obj)
    if isinstance(obj, functools.partial):
        target = obj.func
    module = getattr(target, "__module__", None) or "?"
    return f"{module}.{getattr(target, '__qualname__', type(target).__qualname__)}"


def prepare_retriever(
    retriever: object, limit: int, adapt: Callable[[object], Callable[..., Any] | None]
) -> PreparedRetriever:
    """Adapt ``retriever`` and bind ``limit``.

    :param adapt: the plugins' answer to ``ef_evaluation_adapt_retriever`` for a retriever.
    :raises TypeError: when no plugin knows how to call ``retriever``.
    """
    fn = adapt(retriever)
    if fn is None:
        raise TypeError(
            f"cannot evaluate a {type(retriever).__qualname__}: expected a callable "
            "query -> results, an object with search(query, *, limit), a SourceManager, "
            "or a type a plugin adapts (ef_evaluation_adapt_retriever)"
        )
    # Without limit= the results are cut to ``limit`` when they are mapped to doc ids.
    call: Callable[[str], Any] = functools.partial(fn, limit=limit) if _accepts_limit(fn) else fn
    is_async = _is_async(fn)
    return PreparedRetriever(call, is_async, fn, find_batch_form(fn, limit, is_async=is_async))


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
    if type(value) is float:  # the common case, without the numbers.Real check's cost
        return value - value == 0.0  # NaN for a NaN or an infinity
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


def _getter_for(getters: DocIdGetters, result_type: type) -> Callable[[Any], str]:
    getter = getters.doc_id_getter(result_type)
    if getter is None:
        raise UnusableResults(
            TypeError(
                f"cannot map a result of type {result_type.__qualname__} to a doc id: "
                "expected str, Segment or SearchHit, or a plugin that maps it "
                "(ef_evaluation_doc_id_getter)"
            )
        )
    return getter


def to_doc_ids(results: object, limit: int, getters: DocIdGetters) -> DocIds:
    """Map a retriever's results to source doc ids, as the ranking that gets scored.

    A sequence or iterator is read in its own order: its first ``limit`` results are mapped to
    doc ids by the plugin hook ``ef_evaluation_doc_id_getter`` and de-duplicated, each source
    keeping its first (best) rank and score. A ``{doc_id: score}`` mapping is ranked by score as
    trec_eval ranks a run (score descending, ties by doc id descending) and cut at ``limit``;
    its scores must be finite numbers.

    :param results: what the retriever returned.
    :param limit: how many results to read.
    :param getters: the plugins' doc id getters (the plugin host).
    :raises UnusableResults: wrapping a :class:`TypeError` for results that are no ranking —
        ``None``, an awaitable, a string, a set, a number — for a result type no plugin maps,
        a doc id that is not a string (naming the getter's plugin) or a score that is not a
        number; a :class:`ValueError` for a NaN or infinite score; or whatever reading the
        results raised.

    >>> class Strings:  # what the plugin host answers for str results
    ...     def doc_id_getter(self, result_type):
    ...         return str if result_type is str else None
    ...     def doc_id_getter_plugin(self, result_type):
    ...         return "example"
    >>> to_doc_ids({'d9': 0.1, 'd1': 0.9}, 10, Strings())
    DocIds(ranked=['d1', 'd9'], scores=[0.9, 0.1], retrieved=2)
    >>> to_doc_ids(['d1', 'd2', 'd1', 'd3'], 3, Strings()).ranked
    ['d1', 'd2']
    >>> to_doc_ids(None, 3, Strings())
    Traceback (most recent call last):
        ...
    ef.evaluation._exceptions.UnusableResults: the retriever returned None; expected a list of results, best first, or a {doc_id: score} mapping (a missing return statement?)
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
    found: dict[type, Callable[[Any], str]] = {}
    scored = True
    while True:
        try:
            result = next(items)
        except StopIteration:
            break
        except Exception as error:  # in the retriever's own lazy iterator
            raise UnusableResults(error) from None
        result_type = type(result)
        getter = found.get(result_type)
        if getter is None:
            getter = found[result_type] = _getter_for(getters, result_type)
        try:
            doc_id = getter(result)
        except Exception as error:
            plugin = getters.doc_id_getter_plugin(result_type)
            error.add_note(
                f"in the doc id getter of plugin {plugin!r} for {result_type.__qualname__} results"
            )
            raise
        if not isinstance(doc_id, str):
            plugin = getters.doc_id_getter_plugin(result_type)
            raise UnusableResults(
                TypeError(
                    f"the doc id getter of plugin {plugin!r} mapped a "
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
