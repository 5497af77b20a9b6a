"""The options of an evaluation, declared once, and one query's outcome.

:class:`EvaluationOptions` holds every keyword of :func:`~ef.evaluation.evaluate_retrieval` and
:func:`~ef.evaluation.evaluate_retrieval_async`: the scoring ones (:class:`ScoringOptions`,
which :func:`~ef.evaluation.evaluate_run` shares) and the runner's (:class:`RunnerOptions`).
Each option is one field, with its default, its validation and what it is in the report's
manifest and the journal's fingerprint (:func:`role`); the entry points list the keywords
for their signatures (a test pins them to these fields, defaults included) and build the
options from them with :meth:`ScoringOptions.from_keywords`. Adding an option is one field
here and the keyword in the signatures.

Kept apart from the runner itself so that these light value classes import without anyio.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Self

import attrs

from ef.evaluation._report.reports import QueryFailure
from ef.evaluation._scoring.measures.summary import Judging
from ef.evaluation._scoring.run_queries import MissingQueries, check_missing_queries

if TYPE_CHECKING:
    from ef.evaluation._scoring.score_sheet import Progress

__all__ = [
    "DEFAULT_ASYNC_CONCURRENCY",
    "DEFAULT_K_VALUES",
    "DEFAULT_METRICS",
    "DEFAULT_SYNC_CONCURRENCY",
    "EvaluationOptions",
    "QueryOutcome",
    "RunOptions",
    "RunnerOptions",
    "ScoringOptions",
    "error_type_name",
    "query_failure",
    "role",
]

DEFAULT_SYNC_CONCURRENCY = 1
DEFAULT_ASYNC_CONCURRENCY = 16
DEFAULT_K_VALUES = (1, 5, 10, 100)
"""The cutoffs every evaluation computes unless told otherwise (``k_values=``)."""
DEFAULT_METRICS = ("ndcg", "recall", "precision", "mrr", "map")
"""The metrics every retrieval evaluation computes unless told otherwise (``metrics=``)."""

_KEYWORD = "ef.evaluation.keyword"
_RECORDED = "ef.evaluation.recorded"
_JOURNAL_KEY = "ef.evaluation.journal_key"


def role(
    *, keyword: bool = True, recorded: bool = True, journal_key: str | None = None
) -> dict[str, Any]:
    """The ``metadata=`` of an options field: what the evaluation does with the option.

    :param keyword: whether the entry points take it as a keyword (the backoff tuning and the
        random source are for tests and the runner's own callers).
    :param recorded: whether the report's manifest records it under ``parameters`` (the plan
        records the cutoffs and metrics itself, normalised; callbacks and paths are no
        parameters).
    :param journal_key: its key in the journal's fingerprint, for an option that decides what
        is retrieved (a journal written with another value is refused).
    """
    return {_KEYWORD: keyword, _RECORDED: recorded, _JOURNAL_KEY: journal_key}


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


_INTERNAL = role(keyword=False, recorded=False)
_QUIET = role(recorded=False)
_optional_count = _must_be(
    "a positive integer or None", lambda v: v is None or (_is_int(v) and v >= 1)
)
_optional_seconds = _must_be(
    "a positive finite number of seconds or None", lambda v: v is None or (_is_finite(v) and v > 0)
)
_non_negative_seconds = _must_be(
    "a non-negative finite number of seconds", lambda v: _is_finite(v) and v >= 0
)


@attrs.frozen(kw_only=True, slots=False)  # no slots: EvaluationOptions has two bases
class ScoringOptions:
    """What is scored: the options :func:`~ef.evaluation.evaluate_run` takes, and every
    evaluation shares.

    :param k_values: the rank cutoffs (checked by the scoring plan).
    :param metrics: the metric names, built-in or a plugin's.
    :param ignore_identical_ids: drop a doc whose id is the query's own id from each ranking.
    :param relevance_level: the smallest grade that counts as relevant (trec_eval ``-l``);
        ``None`` counts every grade ``> 0``.
    :param judged_only: rank only the judged documents (trec_eval ``-J``).

    The two judging options are recorded by the plan, and only when set, so that the manifest
    of an evaluation that does not use them stays as it was. They change how rankings are
    scored, not what is retrieved: no journal key.
    """

    k_values: Sequence[int] = attrs.field(default=DEFAULT_K_VALUES, metadata=role(recorded=False))
    metrics: Sequence[str] = attrs.field(default=DEFAULT_METRICS, metadata=role(recorded=False))
    ignore_identical_ids: bool = attrs.field(default=False, metadata=role(recorded=False))
    relevance_level: int | None = attrs.field(default=None, metadata=role(recorded=False))
    judged_only: bool = attrs.field(default=False, metadata=role(recorded=False))

    @property
    def judging(self) -> Judging:
        """The judging options as the scoring plan takes them.

        :raises ValueError: for a relevance level that is not an ``int >= 1``.
        """
        return Judging(self.relevance_level, self.judged_only)

    @classmethod
    def keywords(cls) -> dict[str, Any]:
        """The keyword options of the entry points, with their defaults.

        >>> ScoringOptions.keywords()['k_values']
        (1, 5, 10, 100)
        """
        return {
            field.name: field.default
            for field in attrs.fields(cls)
            if field.metadata.get(_KEYWORD, True)
        }

    @classmethod
    def from_keywords(cls, arguments: Mapping[str, Any]) -> Self:
        """The options from an entry point's arguments (its ``locals()``), by name.

        :raises KeyError: naming a keyword option the entry point does not take (a new field
            not yet in its signature).

        >>> arguments = {'run': {}, **ScoringOptions.keywords(), 'k_values': (10,)}
        >>> ScoringOptions.from_keywords(arguments).k_values
        (10,)
        """
        return cls(**{name: arguments[name] for name in cls.keywords()})

    def recorded(self) -> dict[str, Any]:
        """The options the report's manifest records, as JSON values (classes by name)."""
        return {
            field.name: _json_value(getattr(self, field.name))
            for field in attrs.fields(type(self))
            if field.metadata.get(_RECORDED, True)
        }

    def journal_keys(self) -> dict[str, Any]:
        """The options that decide what is retrieved, under their keys in the fingerprint."""
        return {
            key: getattr(self, field.name)
            for field in attrs.fields(type(self))
            if (key := field.metadata.get(_JOURNAL_KEY)) is not None
        }


@attrs.frozen(kw_only=True, slots=False)
class RunOptions(ScoringOptions):
    """:class:`ScoringOptions` and what scoring a saved run adds (``evaluate_run``'s keywords).

    :param missing_queries: what a judged query the run lacks does: ``"warn"`` scores it 0 with
        one warning for the run, ``"zero"`` silently, ``"error"`` refuses the run (see
        :mod:`~ef.evaluation._scoring.run_queries`); a retriever is asked every judged query.
    :param depth: score only each query's first ``depth`` results (trec_eval ``-M``).
    """

    depth: int | None = attrs.field(default=None, validator=_optional_count)

    missing_queries: MissingQueries = attrs.field(
        default="warn",
        validator=lambda _, __, value: check_missing_queries(value),
        metadata=role(recorded=False),
    )


def _json_value(value: Any) -> Any:
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    if isinstance(value, tuple | list):
        return [_json_value(item) for item in value]
    return value


@attrs.frozen(kw_only=True, slots=False)
class RunnerOptions:
    """How the runner calls the retriever: concurrency, timeout, retries, failures, rate limit.

    :param max_concurrency: queries in flight at once; ``None``: 1 sync, 16 async.
    :param timeout: seconds allowed for each attempt, or ``None`` for no limit. A timed-out
        attempt raises :class:`TimeoutError`, so it is retried under the default ``retry_on``.
    :param retries: how many times a failed attempt is retried: at most ``retries + 1`` calls.
    :param retry_on: the exception classes worth retrying; any other exception fails at once.
    :param on_error: ``"raise"`` stops the run at the first failed query with
        :class:`QueryError`; ``"record"`` reports the failure and carries on.
    :param rate_limit: the most requests (attempts) per second, shared by every worker, or
        ``None``; starts are spaced ``1 / rate_limit`` apart, so the initial burst is one.
    :param batch_size: queries per ``search_batch`` call; ``None``: the retriever's, else 32.
    :param backoff_base: seconds; before retry ``n`` (counting from 1) the runner sleeps a
        uniform random time in ``[0, min(backoff_max, backoff_base * 2 ** (n - 1))]``.
    :param backoff_max: the cap on a single backoff sleep, in seconds.
    :param rng: the random source of the backoff jitter (a fresh :class:`random.Random` per run
        when ``None``); pass a seeded one for reproducible runs.
    :raises ValueError: if a field is out of range (naming the field and the value).

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
    batch_size: int | None = attrs.field(default=None, validator=_optional_count, metadata=_QUIET)
    backoff_base: float = attrs.field(
        default=0.1, validator=_non_negative_seconds, metadata=_INTERNAL
    )
    backoff_max: float = attrs.field(
        default=10.0, validator=_non_negative_seconds, metadata=_INTERNAL
    )
    rng: random.Random | None = attrs.field(
        default=None,
        eq=False,
        repr=False,
        metadata=_INTERNAL,
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


def _progress_argument(_: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    # A TypeError, as ingest(progress=) raises for the same mistake.
    if not (value is None or isinstance(value, bool) or callable(value)):
        raise TypeError(
            f"{attribute.name} must be True, False, None or a callable; got {type(value).__name__}"
        )


@attrs.frozen(kw_only=True, slots=False)
class EvaluationOptions(ScoringOptions, RunnerOptions):
    """Every option of :func:`~ef.evaluation.evaluate_retrieval`: scoring, running, and these.

    :param limit: results asked for per query; ``None`` is resolved by the evaluation (the
        largest cutoff, or a journal's own limit).
    :param progress: called with a :class:`~ef.evaluation.Progress` after each query, or
        ``True`` for the queries done on standard error (the entry points turn it into a
        display for the run, ``progress_shown``).
    :param journal: the JSONL journal of finished queries, or ``None``.
    :param retriever_id: the retriever's identity in the fingerprint and manifest; ``None``
        is resolved from the retriever.

    >>> options = EvaluationOptions(k_values=(1, 10), retries=2)
    >>> options.recorded()['retry_on'], options.journal_keys()
    (['builtins.TimeoutError', 'builtins.OSError'], {'limit': None, 'retriever': None})
    """

    limit: int | None = attrs.field(default=None, metadata=role(journal_key="limit"))
    progress: bool | Callable[[Progress], None] | None = attrs.field(
        default=None, validator=_progress_argument, metadata=role(recorded=False)
    )
    journal: str | os.PathLike[str] | None = attrs.field(
        default=None, metadata=role(recorded=False)
    )
    retriever_id: str | None = attrs.field(
        default=None, metadata=role(recorded=False, journal_key="retriever")
    )

    @property
    def runs_inline(self) -> bool:
        """Whether a sync retriever may run in the caller's thread, with no event loop."""
        return self.max_concurrency in (None, 1) and self.timeout is None


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
