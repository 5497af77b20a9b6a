"""Every exception and warning the library defines, under two roots: one ``except`` catches all.

Each error derives from :class:`EvaluationError` *and* keeps the built-in base it always had
(:class:`ValueError`, :class:`OSError`, :class:`TypeError`, :class:`RuntimeError`), so existing
``except`` clauses keep working. Each warning derives from :class:`EvaluationWarning` and
:class:`UserWarning`.
"""

from __future__ import annotations

import os
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for annotations only: reports are a higher layer
    from ef.evaluation._report.reports import QueryFailure

__all__ = [
    "BodyTooLarge",
    "DatasetFormatError",
    "EvaluationError",
    "EvaluationWarning",
    "HttpClientError",
    "HttpConnectionError",
    "HttpServerError",
    "HttpStatusError",
    "IncompleteEvaluationWarning",
    "JournalCorruptError",
    "JournalMismatchError",
    "JsonProblem",
    "MissingQueriesError",
    "MissingQueriesWarning",
    "ParameterError",
    "PluginWarning",
    "QueryError",
    "QueryGroupsWarning",
    "RelevanceLevelWarning",
    "ResponseShapeError",
    "UnusableResults",
]


class EvaluationError(Exception):
    """The base of every error ef-evaluation raises on purpose.

    Catch it to handle any of them; each also keeps its built-in base (a
    :class:`DatasetFormatError` is a :class:`ValueError` too, an :class:`HttpConnectionError` an
    :class:`OSError`), so ``except ValueError`` still catches what it caught before.

    >>> issubclass(DatasetFormatError, EvaluationError), issubclass(DatasetFormatError, ValueError)
    (True, True)
    """


class EvaluationWarning(UserWarning):
    """The base of every warning ef-evaluation issues (also a :class:`UserWarning`).

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", EvaluationWarning)  # silence them all
    ...     warnings.warn("a plugin was skipped", PluginWarning)
    """


# reading files


class DatasetFormatError(EvaluationError, ValueError):
    """A dataset file that breaks its format, pinned to the file and the line.

    The message reads ``"<path>:<line>: <what was wrong>; expected <what>"``, the shape compilers
    and linters use, so editors and terminals can jump straight to the offending line. The parts
    are kept as attributes for programs that want them. It is a :class:`ValueError`, so code that
    already catches bad values keeps working.

    :param path: the file that holds the bad line.
    :param line: the 1-based line number.
    :param problem: what was wrong with the line.
    :param expected: what the format expects there.

    >>> error = DatasetFormatError("qrels.tsv", 3, "grade 'high' is not a number", "a number")
    >>> str(error)
    "qrels.tsv:3: grade 'high' is not a number; expected a number"
    >>> error.path, error.line
    ('qrels.tsv', 3)
    """

    path: str
    """The file that holds the bad line."""
    line: int
    """The 1-based number of the bad line."""
    problem: str
    """What was wrong with the line."""
    expected: str
    """What the format expects there."""

    def __init__(
        self, path: str | os.PathLike[str], line: int, problem: str, expected: str
    ) -> None:
        self.path = os.fspath(path)
        self.line = line
        self.problem = problem
        self.expected = expected
        super().__init__(f"{self.path}:{line}: {problem}; expected {expected}")

    def __reduce__(self) -> tuple[type[DatasetFormatError], tuple[str, int, str, str]]:
        # The default pickling re-calls the class with the rendered message only.
        return (type(self), (self.path, self.line, self.problem, self.expected))


class JsonProblem(EvaluationError, ValueError):
    """Text that is not strict JSON; the message says what was wrong, without a place."""


class ParameterError(EvaluationError, ValueError):
    """A parameter of a measure or a fusion method outside its domain (or given twice); the
    message names the measure or method, the parameter and the values it takes."""


# query ids


class MissingQueriesError(EvaluationError, ValueError):
    """The judged queries are not in the run: none of them, or any under
    ``missing_queries="error"``.

    The message names both sides with example ids and, where one is found, the likely cause (a
    prefix such as ``q1`` against ``1``, zero padding, letter case). It is a
    :class:`ValueError`, so code that caught the old refusals keeps working.

    >>> issubclass(MissingQueriesError, ValueError)
    True
    """


# journals


class JournalCorruptError(DatasetFormatError):
    """A journal file that is damaged or is no journal at all, pinned to the file and the line.

    A :class:`DatasetFormatError` (and so a :class:`ValueError`): code that caught a damaged
    journal as one keeps working.

    >>> str(JournalCorruptError("run.journal", 1, "not an ef evaluation journal header", "one"))
    'run.journal:1: not an ef evaluation journal header; expected one'
    """


class JournalMismatchError(EvaluationError, ValueError):
    """The journal was written for another evaluation (other inputs, retriever or limit)."""


# running retrievers


class QueryError(EvaluationError, RuntimeError):
    """A query failed after every attempt in ``on_error="raise"`` mode.

    The message names the query, the attempts and the last error; ``__cause__`` is the original
    exception, and :attr:`failure` holds the same facts as a :class:`QueryFailure`.

    >>> from ef.evaluation import QueryFailure
    >>> error = QueryError(QueryFailure("q7", "TimeoutError", "too slow", 3))
    >>> str(error), error.query_id
    ("retrieval failed for query 'q7' after 3 attempts: TimeoutError: too slow", 'q7')
    """

    def __init__(self, failure: QueryFailure) -> None:
        super().__init__(failure)
        self.failure = failure

    @property
    def query_id(self) -> str:
        """The id of the query that failed."""
        return self.failure.query_id

    def __str__(self) -> str:
        failure = self.failure
        attempts = "1 attempt" if failure.attempts == 1 else f"{failure.attempts} attempts"
        error = failure.error_type + (f": {failure.message}" if failure.message else "")
        return f"retrieval failed for query {failure.query_id!r} after {attempts}: {error}"


class UnusableResults(EvaluationError):
    """What a retriever returned cannot be ranked: ``error`` says why, and the query fails.

    A shape that is no ranking, a result type no plugin maps, a doc id that is not a string, a
    bad score, or an exception raised while the results were being read (a lazy iterator's):
    the retriever's doing, so its query fails as if the retriever had raised ``error``.
    An exception raised by a plugin's doc id getter is the plugin's own and is not wrapped.
    """

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


# HTTP retrievers


class HttpStatusError(EvaluationError):
    """The service answered with a status other than 2xx.

    Raised as one of its two kinds: :class:`HttpServerError` (retried by default) or
    :class:`HttpClientError` (not retried). Redirects are not followed.

    :ivar where: the method and the URL asked (without its query string).
    :ivar status: the HTTP status code.
    :ivar body: the start of the answer's body.
    """

    def __init__(self, where: str, status: int, body: str) -> None:
        try:
            phrase = f" {HTTPStatus(status).phrase}"
        except ValueError:
            phrase = ""
        super().__init__(f"{where} answered {status}{phrase}: {body}")
        self.where, self.status, self.body = where, status, body

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.where, self.status, self.body)


class HttpServerError(HttpStatusError, OSError):
    """A 5xx status, or 408, 425 or 429: the service may answer if asked again.

    An :class:`OSError`, so the default ``retry_on`` of :func:`evaluate_retrieval` retries it.
    """


class HttpClientError(HttpStatusError, ValueError):
    """Any other status (3xx, 4xx): the request itself is wrong, so it is not retried."""


class HttpConnectionError(EvaluationError, OSError):
    """No complete answer: the connection was refused, reset or closed, or the body cut short.

    The same type on every backend, the client library's own error kept as ``__cause__``; an
    :class:`OSError`, so the default ``retry_on`` retries it.
    """


class ResponseShapeError(EvaluationError, ValueError):
    """The answer is not JSON, not in the configured shape, or larger than the retriever's
    ``max_response_bytes``; not retried by default."""


class BodyTooLarge(EvaluationError):
    """The answer's body is larger than the cap; the connection it came on is closed.

    :ivar cap: the cap, in bytes.
    :ivar declared: the size the answer's ``Content-Length`` declared, or ``None`` when the body
        passed the cap while it was read.
    """

    def __init__(self, cap: int, declared: int | None) -> None:
        super().__init__(cap, declared)
        self.cap, self.declared = cap, declared


# warnings


class PluginWarning(EvaluationWarning):
    """A plugin was skipped or one of its registrations ignored; the message says which and why."""


class MissingQueriesWarning(EvaluationWarning):
    """Some judged queries are not in the run: they score 0 (``missing_queries="warn"``).

    One warning per run, with the counts and the first ids missing; pass
    ``missing_queries="zero"`` to score them 0 without it, or ``"error"`` to refuse the run.
    """


class IncompleteEvaluationWarning(EvaluationWarning):
    """Some queries failed and were left out of the means (``on_error="record"``)."""


class RelevanceLevelWarning(EvaluationWarning):
    """Judged queries have nothing relevant at the ``relevance_level``: they are scored, as
    trec_eval scores them (0 for every measure that reads the level)."""


class QueryGroupsWarning(EvaluationWarning):
    """Query groups name queries the report did not score (not judged, skipped, failed or
    unknown): each group's means are over its scored queries, and its ``unscored`` lists the
    rest."""
