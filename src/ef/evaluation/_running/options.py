"""The runner's rules and results: options, one query's outcome, and the raise-mode error.

Kept apart from the runner itself so that these light value classes import without anyio.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable
from typing import Any, Literal

import attrs

from ef.evaluation._report.reports import QueryFailure

__all__ = [
    "DEFAULT_ASYNC_CONCURRENCY",
    "DEFAULT_SYNC_CONCURRENCY",
    "QueryOutcome",
    "RunnerOptions",
    "error_type_name",
    "query_failure",
]

DEFAULT_SYNC_CONCURRENCY = 1
DEFAULT_ASYNC_CONCURRENCY = 16


_Validator = Callable[[object, "attrs.Attribute[Any]", Any], None]


def _must_be(expected: str, accept: Callable[[Any], bool]) -> _Validator:
    """An attrs validator raising ``ValueError("<field> must be <expected>, got <value>")``."""

    def check(_: object, attribute: attrs.Attribute[Any], value: Any) -> None:
        if not accept(value):
            raise ValueError(f"{attribute.name} must be {expected}, got {value!r}")

    return check


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _as_type_tuple(
    value: type[BaseException] | Iterable[type[BaseException]],
) -> tuple[type[BaseException], ...]:
    return (value,) if isinstance(value, type) else tuple(value)


def _exception_types(_: object, attribute: attrs.Attribute[Any], value: tuple[Any, ...]) -> None:
    for item in value:
        if not (isinstance(item, type) and issubclass(item, Exception)):
            raise ValueError(
                f"{attribute.name} must hold exception classes deriving from Exception, got "
                f"{item!r} (cancellation, KeyboardInterrupt and SystemExit are never retried)"
            )


_optional_count = _must_be(
    "a positive integer or None", lambda v: v is None or (_is_int(v) and v >= 1)
)
_optional_seconds = _must_be(
    "a positive finite number of seconds or None", lambda v: v is None or (_is_finite(v) and v > 0)
)
_non_negative_seconds = _must_be(
    "a non-negative finite number of seconds", lambda v: _is_finite(v) and v >= 0
)


@attrs.frozen(kw_only=True)
class RunnerOptions:
    """How the runner calls the retriever: concurrency, timeout, retries, failures, rate limit.

    Every field is validated on construction (a :class:`ValueError` names the field and the value).

    :param max_concurrency: how many queries may be in flight at once; ``None`` means
        1 for a sync retriever and 16 for an async one (see :meth:`concurrency_for`).
    :param timeout: seconds allowed for each attempt, or ``None`` for no limit. A timed-out
        attempt raises :class:`TimeoutError`, so it is retried under the default ``retry_on``.
    :param retries: how many times a failed attempt is retried: at most ``retries + 1`` calls.
    :param retry_on: the exception classes worth retrying; any other exception fails at once.
    :param on_error: ``"raise"`` stops the run at the first failed query with
        :class:`QueryError`; ``"record"`` reports the failure and carries on.
    :param rate_limit: the most requests (attempts) per second, shared by every worker, or
        ``None``; starts are spaced ``1 / rate_limit`` apart, so the initial burst is one.
    :param backoff_base: seconds; before retry ``n`` (counting from 1) the runner sleeps a
        uniform random time in ``[0, min(backoff_max, backoff_base * 2 ** (n - 1))]``.
    :param backoff_max: the cap on a single backoff sleep, in seconds.
    :param rng: the random source of the backoff jitter (a fresh :class:`random.Random` per run
        when ``None``); pass a seeded one for reproducible runs.
    :raises ValueError: if a field is out of range.

    >>> options = RunnerOptions(timeout=2.0, retries=3)
    >>> options.concurrency_for(is_async=True), options.concurrency_for(is_async=False)
    (16, 1)
    >>> RunnerOptions(retries=-1)
    Traceback (most recent call last):
        ...
    ValueError: retries must be a non-negative integer, got -1
    """

    max_concurrency: int | None = attrs.field(default=None, validator=_optional_count)
    timeout: float | None = attrs.field(default=None, validator=_optional_seconds)
    retries: int = attrs.field(
        default=0, validator=_must_be("a non-negative integer", lambda v: _is_int(v) and v >= 0)
    )
    retry_on: tuple[type[BaseException], ...] = attrs.field(
        default=(TimeoutError, OSError), converter=_as_type_tuple, validator=_exception_types
    )
    on_error: Literal["raise", "record"] = attrs.field(
        default="raise", validator=_must_be("'raise' or 'record'", ("raise", "record").__contains__)
    )
    rate_limit: float | None = attrs.field(
        default=None,
        validator=_must_be(
            "a positive finite number of requests per second or None",
            lambda v: v is None or (_is_finite(v) and v > 0),
        ),
    )
    backoff_base: float = attrs.field(default=0.1, validator=_non_negative_seconds)
    backoff_max: float = attrs.field(default=10.0, validator=_non_negative_seconds)
    rng: random.Random | None = attrs.field(
        default=None,
        eq=False,
        repr=False,
        validator=_must_be(
            "a random.Random or None", lambda v: v is None or isinstance(v, random.Random)
        ),
    )

    def concurrency_for(self, *, is_async: bool) -> int:
        """The number of workers: ``max_concurrency``, or the default for this kind of call."""
        if self.max_concurrency is not None:
            return self.max_concurrency
        return DEFAULT_ASYNC_CONCURRENCY if is_async else DEFAULT_SYNC_CONCURRENCY

    def backoff_delay(self, retry: int, rng: random.Random) -> float:
        """Full-jitter sleep before retry number ``retry`` (1 for the first retry).

        >>> RunnerOptions(backoff_base=0.5).backoff_delay(3, random.Random(0)) <= 2.0
        True
        """
        if self.backoff_base == 0:
            return 0.0
        try:
            growth = self.backoff_base * 2.0 ** (retry - 1)
        except OverflowError:
            growth = math.inf
        return rng.uniform(0.0, min(self.backoff_max, growth))

    def should_retry(self, error: Exception, attempts: int) -> bool:
        """Whether ``error``, raised by attempt number ``attempts``, earns another attempt."""
        return attempts <= self.retries and isinstance(error, self.retry_on)


@attrs.frozen
class QueryOutcome:
    """What happened to one query: its results, or the failure that stopped it.

    :param query_id: the planned query.
    :param results: what the retriever returned, or ``None`` when the query failed.
    :param failure: the failure (in ``on_error="record"`` mode), or ``None`` on success.
    :param latency: wall time in seconds from the start of the first attempt to the end of the
        last one, backoff sleeps included.
    :param attempts: how many times the retriever was called for this query.
    """

    query_id: str
    results: Any | None
    failure: QueryFailure | None
    latency: float
    attempts: int


def error_type_name(error: BaseException) -> str:
    """The name recorded for ``error``'s type: bare for built-ins, else ``module.QualName``.

    >>> error_type_name(TimeoutError())
    'TimeoutError'
    >>> import json
    >>> error_type_name(json.JSONDecodeError("Expecting value", "", 0))
    'json.decoder.JSONDecodeError'
    """
    cls = type(error)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def query_failure(query_id: str, error: BaseException, attempts: int) -> QueryFailure:
    """What is recorded of a query that failed for good with ``error`` after ``attempts``.

    >>> query_failure("q1", TypeError("the retriever returned None"), 1).message
    'the retriever returned None'
    """
    return QueryFailure(
        query_id=query_id, error_type=error_type_name(error), message=str(error), attempts=attempts
    )
