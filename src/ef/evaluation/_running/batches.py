"""A retriever's batch form: how the runner finds it, cuts the plan into batches and reads the
answers.

The protocol. A retriever declares a batch form with a method ``search_batch(queries, *,
limit)`` beside the ``search`` (or ``__call__``) the runner calls for one query: given a list
of query texts it returns a sequence of as many results, the ``i``-th being what the one-query
form returns for ``queries[i]``. It is async exactly when the one-query form is. An integer
attribute ``batch_size`` on the same object says how many queries it likes per call (the
``batch_size=`` of the evaluation overrides it). ``limit=`` is passed when ``search_batch``
accepts it, as for the one-query form, and so are the keywords an adapter bound to ``search``
(the built-in index's ``per_document=True``). ``query_ids=``, the queries' ids in the order of
the texts, is passed when ``search_batch`` names that parameter, so that a service can tag
each answer with its query and the batch form match answers to queries by id. An item of the
answer that is an exception is that query's failure (the batch form could not tell that
query's results: a service's answer tagged with another query's id), recorded or raised as
``on_error`` says, with the batch's attempts; the other queries keep their results.

What the runner does with it (:mod:`ef.evaluation._running.runner`): workers take up to
``batch_size`` planned queries at a time from the one shared plan, which is cut into batches
16 batches' worth at a time, longest text first (:func:`batches`; memory holds that window and
at most ``max_concurrency`` batches), and each query's outcome is reported on its own, as it
is without batches. A batch attempt that fails with a ``retry_on`` error is retried as a
whole; one that fails for good is split in two halves, and so on, so that a query that fails
fails alone, asked through the one-query form with the one-query rules. A timeout allows a
batch ``timeout`` seconds per query in it. Each query of an answered batch records the batch's
attempts and an equal share of its wall time as its latency.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from typing import Any

import attrs

from ef.evaluation._exceptions import QueryError
from ef.evaluation._running.options import QueryOutcome, RunnerOptions, query_failure

__all__ = [
    "BATCHES_PER_WINDOW",
    "DEFAULT_BATCH_SIZE",
    "BatchForm",
    "answered_batch",
    "batches",
    "failed_outcome",
    "find_batch_form",
    "split",
]

DEFAULT_BATCH_SIZE = 32
"""Queries per call of a batch form when neither the evaluation nor the retriever says."""

Planned = tuple[str, str]


@attrs.frozen
class BatchForm:
    """A retriever's batch form, ``limit`` bound.

    :ivar call: ``call(texts)`` → one result per text (an awaitable of them when ``is_async``).
    :ivar is_async: whether ``call`` returns an awaitable.
    :ivar size: the retriever's own ``batch_size``, or ``None``.
    :ivar takes_query_ids: whether ``call`` takes the queries' ids too, as ``query_ids=``.
    """

    call: Callable[..., Any]
    is_async: bool
    size: int | None = None
    takes_query_ids: bool = attrs.field(default=False, kw_only=True)

    def call_for(self, batch: Sequence[Planned]) -> Callable[[list[str]], Any]:
        """``call``, given the ids of ``batch`` when it takes them."""
        if not self.takes_query_ids:
            return self.call
        return functools.partial(self.call, query_ids=[query_id for query_id, _ in batch])

    def size_for(self, requested: int | None) -> int:
        """Queries per call: ``requested`` (the evaluation's ``batch_size``), the retriever's
        own ``batch_size``, or :data:`DEFAULT_BATCH_SIZE`."""
        if requested is not None:
            return requested
        return self.size if self.size is not None else DEFAULT_BATCH_SIZE


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        (p.name == name and p.kind is not inspect.Parameter.POSITIONAL_ONLY)
        or p.kind is inspect.Parameter.VAR_KEYWORD
        for p in parameters
    )


def _names(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` has a parameter ``name`` that can be passed by keyword (a ``**`` catch-all
    does not count: it may hand the keyword on to a call that does not take it)."""
    try:
        parameter = inspect.signature(fn).parameters.get(name)
    except (TypeError, ValueError):
        return False
    return parameter is not None and parameter.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )


def _is_async(fn: Callable[..., Any]) -> bool:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.iscoroutinefunction(fn)


def find_batch_form(adapted: Callable[..., Any], limit: int, *, is_async: bool) -> BatchForm | None:
    """The batch form of the object whose ``search`` or ``__call__`` ``adapted`` is, or ``None``.

    :param adapted: what the adapter plugin turned the retriever into: a callable object, a
        bound ``search`` or ``__call__``, or a :func:`functools.partial` of one with keywords.
    :param limit: the results asked for per query.
    :param is_async: whether the one-query form is async.
    :raises TypeError: when ``search_batch`` is async and the one-query form is not, or the
        other way round, or ``batch_size`` is not an integer >= 1.

    >>> class Index:
    ...     batch_size = 8
    ...     def search(self, query, *, limit=10): return [query][:limit]
    ...     def search_batch(self, queries, *, limit=10): return [[q][:limit] for q in queries]
    >>> form = find_batch_form(Index().search, 5, is_async=False)
    >>> form.size, form.call(["a", "b"])
    (8, [['a'], ['b']])
    """
    target: Any = adapted
    keywords: dict[str, Any] = {}
    if isinstance(target, functools.partial):
        if target.args:
            return None
        keywords, target = dict(target.keywords), target.func
    owner: Any = None
    if callable(getattr(target, "search_batch", None)) and not inspect.ismethod(target):
        owner = target  # a callable object: its __call__ beside its search_batch
    elif inspect.ismethod(target) and target.__name__ in ("search", "__call__"):
        owner = target.__self__
    search_batch = getattr(owner, "search_batch", None) if owner is not None else None
    if not callable(search_batch):
        return None
    if _accepts(search_batch, "limit"):
        keywords["limit"] = limit
    call = functools.partial(search_batch, **keywords) if keywords else search_batch
    batch_is_async = _is_async(search_batch)
    if batch_is_async != is_async:
        kinds = ("async", "sync") if batch_is_async else ("sync", "async")
        raise TypeError(
            f"{type(owner).__qualname__}.search_batch is {kinds[0]} while its one-query form is "
            f"{kinds[1]}; a batch form must be async exactly when the one-query form is"
        )
    size = getattr(owner, "batch_size", None)
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
        raise TypeError(
            f"{type(owner).__qualname__}.batch_size must be an integer >= 1 or None; got {size!r}"
        )
    return BatchForm(call, is_async, size, takes_query_ids=_names(search_batch, "query_ids"))


def batches(planned: Iterator[Planned], size: int) -> Iterator[list[Planned]]:
    """Batches of up to ``size`` planned queries, taken lazily from ``planned``,
    :data:`BATCHES_PER_WINDOW` batches' worth at a time, longest text first within each window
    (ties in plan order): a model pads every text of a batch to its longest, so a batch of
    texts alike in length costs the least (300 generated queries through MiniLM in batches of
    64 took 1.3× the time of one sorted ``encode`` call in plan order, 1.05× so). Each query's
    outcome is its own, so the order they are asked in changes no number.

    >>> list(batches(iter([("q1", "a"), ("q2", "bbb"), ("q3", "cc")]), 2))
    [[('q2', 'bbb'), ('q3', 'cc')], [('q1', 'a')]]
    """
    while window := list(islice(planned, size * BATCHES_PER_WINDOW)):
        window.sort(key=_shorter)
        for first in range(0, len(window), size):
            yield window[first : first + size]


def _shorter(query: Planned) -> int:
    return -len(query[1])


BATCHES_PER_WINDOW = 16
"""Batches whose queries :func:`batches` orders by length together."""


def split(batch: list[Planned]) -> tuple[list[Planned], list[Planned]]:
    """The two halves of a batch that failed for good, to be asked apart."""
    half = len(batch) // 2
    return batch[:half], batch[half:]


def answered_batch(
    batch: Sequence[Planned],
    results: Any,
    attempts: int,
    started: float,
    options: RunnerOptions,
) -> Iterator[QueryOutcome]:
    """One outcome per query of a batch whose call answered ``results``, in order: a result
    that is an exception is its query's failure (:class:`QueryError` in raise mode, once the
    outcomes before it are taken).

    :raises TypeError: when ``results`` is not a sequence of one result per query: the batch
        form broke its protocol, which no query can be blamed for, so the evaluation stops.
    """
    if isinstance(results, str | bytes) or not isinstance(results, Sequence):
        raise TypeError(
            f"search_batch returned {results!r:.60} ({type(results).__qualname__}) for "
            f"{len(batch)} queries; it must return a list of one result per query, in order"
        )
    if len(results) != len(batch):
        raise TypeError(
            f"search_batch returned {len(results)} results for {len(batch)} queries (the first "
            f"{batch[0][0]!r}); it must return one result per query, in order"
        )
    latency = (time.perf_counter() - started) / len(batch)
    return _outcomes(batch, results, attempts, latency, options)


def failed_outcome(
    options: RunnerOptions, query_id: str, error: Exception, attempts: int, latency: float
) -> QueryOutcome:
    """The outcome of a query that failed for good, or :class:`QueryError` in raise mode."""
    failure = query_failure(query_id, error, attempts)
    if options.on_error == "raise":
        raise QueryError(failure) from error
    return QueryOutcome(query_id, None, failure, latency, attempts)


def _outcomes(
    batch: Sequence[Planned],
    results: Sequence[Any],
    attempts: int,
    latency: float,
    options: RunnerOptions,
) -> Iterator[QueryOutcome]:
    for (query_id, _), answer in zip(batch, results, strict=True):
        if isinstance(answer, Exception):
            yield failed_outcome(options, query_id, answer, attempts, latency)
        else:
            yield QueryOutcome(query_id, answer, None, latency, attempts)
