"""HttpRetriever: a search service over HTTP as a retriever, on asyncio and trio.

This module holds the request and answer shapes and the errors; the clients that carry the
requests, one per event loop, are in ``_http_clients``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Self
from urllib.parse import urlsplit

import anyio

from ef.evaluation._exceptions import (
    BodyTooLarge,
    HttpClientError,
    HttpConnectionError,
    HttpServerError,
    ResponseShapeError,
)
from ef.evaluation._http.auth import request_target
from ef.evaluation._http.batch import DEFAULT_BATCH_ID_FIELD, BatchEndpoint, BatchRanking, Unmatched
from ef.evaluation._http.clients import LoopClients
from ef.evaluation._http.shapes import (
    MISSING,
    canonical,
    checked_limit,
    dotted_path,
    fill,
    json_template,
    walk,
)
from ef.evaluation._json import JsonProblem, loads_strict
from ef.evaluation._redact import redact_secrets, redact_url
from ef.evaluation._running.adapters import qualified_name
from ef.segments import Segment
from ef.source_manager import SearchHit

__all__ = ["HttpRetriever"]

_EXCERPT_CHARS = 200
# Not 5xx, but each says "try again later".
_TRANSIENT_STATUSES = frozenset({408, 425, 429})
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024


class HttpRetriever:
    """A search service over HTTP, evaluated like any async retriever.

    Each :meth:`search` sends one request — the query and the limit put into a JSON ``body``
    template or a URL ``params`` template — and reads the ranked doc ids, and optionally the
    scores, from the JSON answer. Pass it to :func:`evaluate_retrieval` (or ``await``
    :func:`evaluate_retrieval_async`) with ``max_concurrency``, ``timeout``, ``retries`` and
    ``on_error`` as for any retriever; the guide ``docs/remote.md`` shows how.

    Templates: a string that is only ``"{query}"`` or ``"{limit}"`` becomes the value itself (the
    limit stays an int in JSON); inside longer text, its string. With neither ``body`` nor
    ``params``, ``{"query": ..., "limit": ...}`` goes in the body of a ``POST``, in the URL of a
    ``GET``.

    Answers: ``results`` is the dotted path to the list of results (``""``: the answer is the
    list; a numeric part indexes a list). A result is an object with its doc id (a string or an
    int) at the dotted path ``id_field``, or a bare doc-id string. :meth:`search` returns the doc
    ids in the service's order, or :class:`~ef.source_manager.SearchHit`\\ s carrying the number
    at ``score_field`` when that is set.

    Failures are per query, so ``on_error="record"`` records them: :class:`HttpServerError`
    (5xx, 408, 425, 429), :class:`HttpConnectionError` and :class:`TimeoutError` are
    :class:`OSError`\\ s, retried by the default ``retry_on``; :class:`HttpClientError` (another
    status) and :class:`ResponseShapeError` (including a body over ``max_response_bytes``) are
    :class:`ValueError`\\ s, not retried.

    Limits: each request has ``timeout`` seconds (30 by default) to bring its whole answer, and
    each answer at most ``max_response_bytes`` (64 MiB by default), refused from its
    ``Content-Length`` before it is read, or as soon as the body passes the cap. With the
    evaluation's own ``timeout`` too, the smaller applies.

    Batches: with ``batch_url``, the service's endpoint for several queries at once, the
    evaluation sends batches of queries there (``batch_size`` per request, or the evaluation's
    ``batch_size=``) through :attr:`search_batch`: a ``POST`` of ``batch_body`` (by default
    ``{"queries": [...], "query_ids": [...], "limit": ...}``) answered by a list of one answer
    per query at the dotted path ``batch_answers`` (``{"answers": [...]}`` by default), each in
    the shape of the one-query answer and matched to its query by the id it carries at
    ``batch_id_field`` — or, when none carries one, taken in the order asked (unless
    ``batch_require_ids``). A query no answer is matched to fails with a
    :class:`ResponseShapeError`. A batch request has ``timeout`` seconds per query in it. A
    batch that fails is retried or split by the evaluation until a failing query fails alone,
    asked at ``url``. The guide ``docs/remote.md`` shows a service.

    Credentials: a ``user:password@`` in the URL is sent as Basic auth (percent-decoded, UTF-8)
    on both event loops; with an ``Authorization`` header too, the constructor refuses it. The
    credentials and the values of headers that may hold a key (all but the likes of ``Accept``
    and ``Content-Type``) are hidden as ``***`` in every message, body excerpt and
    :func:`repr`, and are not part of :attr:`retriever_id`.

    The client: aiohttp on asyncio, httpcore on trio, one per event loop, pooling connections
    (as many as requests in flight: the evaluation's ``max_concurrency`` bounds them, or
    ``max_connections``). ``async with retriever:`` opens it and closes it at the end of the
    block; without that, the first search opens one that is closed when its event loop ends
    (``asyncio.run``, ``anyio.run`` and ``trio.run`` finalise it) or by ``await
    retriever.aclose()``.

    :param url: the search endpoint, ``http://`` or ``https://``.
    :param method: ``"POST"`` or ``"GET"`` (no body).
    :param body: the JSON body template.
    :param params: the URL parameters template (strings and numbers).
    :param headers: extra request headers, e.g. an API key: never part of
        :attr:`retriever_id`, unlike the URL (but for its ``user:password@``) and the templates.
        Header names are checked, and values may not hold line breaks.
    :param results: dotted path to the list of results in the answer.
    :param id_field: dotted path to the doc id within a result object.
    :param score_field: dotted path to the score within a result object, or ``None``.
    :param max_connections: a cap on connections, or ``None`` for one per request in flight.
    :param retriever_id: the identity in fingerprints, instead of :attr:`retriever_id`'s.
    :param timeout: seconds for each request, from sending to the end of the answer, or
        ``None`` for no limit of its own; past it the request fails with :class:`TimeoutError`.
    :param max_response_bytes: the largest answer body accepted, or ``None`` for no cap (a
        batch's whole answer included).
    :param batch_url: the batch endpoint, a path (resolved against ``url``) or a URL on the
        same service; ``None``: one query per request. Not part of :attr:`retriever_id` (it
        must answer as ``url`` does), so a journal resumes across batch sizes.
    :param batch_body: the batch request's JSON body template, with ``"{queries}"``.
    :param batch_answers: dotted path to the list of answers in a batch's answer.
    :param batch_size: queries per batch request the service takes; ``None``: the
        evaluation's ``batch_size=``, else 32.
    :param batch_id_field: dotted path to the query id within each answer of a batch.
    :param batch_require_ids: fail each query of a batch whose answers carry no query ids.
    :raises ValueError: for a bad URL or method, a ``GET`` with a body, no ``{query}``, a bad
        header or limit, credentials in the URL together with an ``Authorization`` header, a
        batch URL on another service, a batch body without ``"{queries}"`` (or ids required
        without ``"{query_ids}"``), or an empty ``batch_id_field``.
    :raises TypeError: for a template that is not a JSON object, headers not strings, or a
        ``batch_require_ids`` that is not a bool.
    :raises ImportError: when the ``http`` extra is not installed.

    >>> a = HttpRetriever("http://127.0.0.1:8000/search", body={"q": "{query}", "k": "{limit}"},
    ...                   results="hits")
    >>> b = HttpRetriever("http://127.0.0.1:8000/search", body={"k": "{limit}", "q": "{query}"},
    ...                   results="hits", headers={"Authorization": "Bearer secret"})
    >>> a.retriever_id == b.retriever_id
    True
    >>> a.retriever_id.split(" ", 1)[1]
    'POST http://127.0.0.1:8000/search body={"k":"{limit}","q":"{query}"} results=hits id=id'
    """

    def __init__(
        self,
        url: str,
        *,
        method: str = "POST",
        body: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        results: str = "results",
        id_field: str = "id",
        score_field: str | None = None,
        max_connections: int | None = None,
        retriever_id: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        max_response_bytes: int | None = DEFAULT_MAX_RESPONSE_BYTES,
        batch_url: str | None = None,
        batch_body: Mapping[str, Any] | None = None,
        batch_answers: str = "answers",
        batch_size: int | None = None,
        batch_id_field: str = DEFAULT_BATCH_ID_FIELD,
        batch_require_ids: bool = False,
    ) -> None:
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            shown = repr(redact_url(url) if isinstance(url, str) else url)
            raise ValueError(f"url must be an http:// or https:// URL, got {shown}")
        try:
            _ = parts.port  # parsed on access: a bad port is refused here, not per query
        except ValueError as error:
            raise ValueError(f"url {redact_url(url)!r}: {error}") from None
        method = method.upper() if isinstance(method, str) else method
        if method not in ("GET", "POST"):
            raise ValueError(f"method must be 'GET' or 'POST', got {method!r}")
        if method == "GET" and body is not None:
            raise ValueError("a GET request has no body: put the query in params=")
        cap = max_connections
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise ValueError(f"max_connections must be an int >= 1 or None, got {cap!r}")
        self.timeout = checked_limit("timeout", timeout, float)
        self.max_response_bytes = checked_limit("max_response_bytes", max_response_bytes, int)
        self.url, self.method = redact_url(url), method
        self._body, self._params = json_template("body", body), json_template("params", params)
        if self._body is None and self._params is None:
            default = {"query": "{query}", "limit": "{limit}"}
            self._body, self._params = (default, None) if method == "POST" else (None, default)
        for key, value in (self._params or {}).items():
            if isinstance(value, dict | list) or value is None:
                raise TypeError(f"params[{key!r}] must be a string or a number, got {value!r}")
        if "{query}" not in canonical([self._body, self._params]):
            raise ValueError("neither body nor params holds '{query}': the query would not be sent")
        self.results, self.id_field, self.score_field = results, id_field, score_field
        self._results_path = dotted_path("results", results)
        self._id_path = dotted_path("id_field", id_field)
        self._score_path = None if score_field is None else dotted_path("score_field", score_field)
        target = request_target(parts, headers)
        self._headers, self._secrets = target.headers, target.secrets
        if self._body is not None and not any(k.lower() == "content-type" for k in self._headers):
            self._headers["Content-Type"] = "application/json"
        # URL credentials stay out of messages and the identity: another account on the same
        # service is the same retriever (as with a header key); a password's hash could be undone.
        self._public_url = target.url
        self._where = f"{method} {parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"
        self._retriever_id = retriever_id
        self._clients = LoopClients(method, target.url, self._headers, cap, self.max_response_bytes)
        self.batch_size = checked_limit("batch_size", batch_size, int)
        self._batch = None
        if batch_url is not None:
            self._batch = BatchEndpoint(
                target.url,
                batch_url,
                batch_body,
                batch_answers,
                target.headers,
                cap,
                self.max_response_bytes,
                id_field=batch_id_field,
                require_ids=batch_require_ids,
            )

    @property
    def retriever_id(self) -> str:
        """Its identity in fingerprints: the class, the URL, the request and answer shapes."""
        if self._retriever_id is not None:
            return self._retriever_id
        parts = [qualified_name(self), self.method, self._public_url]
        if self._body is not None:
            parts.append(f"body={canonical(self._body)}")
        if self._params is not None:
            parts.append(f"params={canonical(self._params)}")
        parts.append(f"results={self.results} id={self.id_field}")
        if self.score_field is not None:
            parts.append(f"score={self.score_field}")
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"<{type(self).__qualname__} {self.method} {self._public_url}>"

    async def search(self, query: str, *, limit: int = 10) -> list[str] | list[SearchHit]:
        """Ask the service for up to ``limit`` results for ``query``, best first.

        :raises HttpServerError: for a 5xx, 408, 425 or 429 answer.
        :raises HttpClientError: for any other answer that is not 2xx.
        :raises HttpConnectionError: when the connection fails before a complete answer.
        :raises ResponseShapeError: when the answer is not JSON in the configured shape.
        """
        params = content = None
        if self._params is not None:
            params = {key: str(value) for key, value in fill(self._params, query, limit).items()}
        if self._body is not None:
            content = json.dumps(fill(self._body, query, limit)).encode()
        return self._parse(
            await self._request(self._clients, self._where, params, content, self.timeout)
        )

    @property
    def search_batch(self) -> Callable[..., Awaitable[list[BatchRanking]]] | None:
        """The batch form an evaluation uses, ``search_batch(queries, *, limit, query_ids)``
        (per query, in order, its ranking as :meth:`search` returns it, or the error of a query
        no answer is matched to), or ``None`` without ``batch_url``.

        :raises HttpServerError: for a 5xx, 408, 425 or 429 answer, and the other errors of
            :meth:`search`: each fails the whole batch.
        :raises ResponseShapeError: also when the answer does not hold one answer per query.
        :raises ValueError: for ``query_ids`` not one per query each once, or none when
            ``batch_require_ids``.
        """
        return None if self._batch is None else self._search_batch

    async def _search_batch(
        self, queries: list[str], *, limit: int = 10, query_ids: list[str] | None = None
    ) -> list[BatchRanking]:
        batch = self._batch
        assert batch is not None
        seconds = None if self.timeout is None else self.timeout * max(len(queries), 1)
        content = batch.content(queries, limit, query_ids)
        answer = await self._request(batch.clients, batch.where, None, content, seconds)
        answers = walk(self._document(answer, batch.where), batch.answers_path)
        if not isinstance(answers, list) or len(answers) != len(queries):
            expected = f"a list of {len(queries)} answers, one per query, at {batch.answers!r}"
            raise self._shape_error(expected, answer, where=batch.where)
        return [
            self._shape_error(item.expected, answer, where=batch.where)
            if isinstance(item, Unmatched)
            else self._ranking(item, answer, batch.where)
            for item in batch.matched(answers, query_ids)
        ]

    async def _request(
        self,
        clients: LoopClients,
        where: str,
        params: dict[str, str] | None,
        content: bytes | None,
        seconds: float | None,
    ) -> bytes:
        """The body of a 2xx answer to one request, within ``seconds`` (``None``: no limit)."""
        with anyio.move_on_after(seconds):
            status, answer = await self._send(clients, where, params, content)
            if not 200 <= status < 300:
                transient = status >= 500 or status in _TRANSIENT_STATUSES
                raise (HttpServerError if transient else HttpClientError)(
                    where, status, self._excerpt(answer)
                )
            return answer
        raise TimeoutError(f"{where}: no complete answer within the {seconds:g} s timeout")

    async def _send(
        self,
        clients: LoopClients,
        where: str,
        params: dict[str, str] | None,
        content: bytes | None,
    ) -> tuple[int, bytes]:
        client = await clients.current()
        try:
            return await client.send(params, content)
        except BodyTooLarge as error:
            declared = "" if error.declared is None else f" (Content-Length: {error.declared})"
            raise ResponseShapeError(
                f"{where}: the answer is larger than max_response_bytes={error.cap}{declared}"
            ) from None
        except client.errors as error:
            reason = redact_secrets(str(error), self._secrets) or "the connection failed"
            failure = f"{where}: {type(error).__qualname__}: {reason}"
            raise HttpConnectionError(failure) from error

    def _all_clients(self) -> list[LoopClients]:
        return [self._clients] + ([] if self._batch is None else [self._batch.clients])

    async def __aenter__(self) -> Self:
        for clients in self._all_clients():
            await clients.enter()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for clients in self._all_clients():
            await clients.exit()

    async def aclose(self) -> None:
        """Close the running event loop's clients now; a later search opens new ones."""
        for clients in self._all_clients():
            await clients.aclose()

    def _parse(self, answer: bytes) -> list[str] | list[SearchHit]:
        """The ranking in the one-query endpoint's ``answer``."""
        return self._ranking(self._document(answer, self._where), answer, self._where)

    def _document(self, answer: bytes, where: str) -> Any:
        try:
            return loads_strict(answer)
        except JsonProblem as problem:
            raise self._shape_error("a JSON body", answer, problem, where=where) from None

    def _ranking(self, document: Any, answer: bytes, where: str) -> list[str] | list[SearchHit]:
        """The ranking in one query's answer ``document`` (``answer``: the body it is in)."""
        items = walk(document, self._results_path)
        if not isinstance(items, list):
            place = f"at {self.results!r}" if self.results else "as the whole answer"
            raise self._shape_error(f"a list of results {place}", answer, where=where)
        ids = [walk(item, self._id_path) if isinstance(item, dict) else item for item in items]
        if not all(type(doc_id) is str for doc_id in ids):
            ids = [self._doc_id(doc_id, n, answer, where) for n, doc_id in enumerate(ids)]
        if self._score_path is None:
            return ids
        hits = []
        for position, (item, doc_id) in enumerate(zip(items, ids, strict=True)):
            score = walk(item, self._score_path) if isinstance(item, dict) else MISSING
            if isinstance(score, bool) or not isinstance(score, int | float):
                expected = f"result {position} to hold a number at {self.score_field!r}"
                raise self._shape_error(expected, answer, where=where)
            hits.append(SearchHit(Segment(doc_id, "", 0, 0, f"{doc_id}:0"), float(score)))
        return hits

    def _doc_id(self, value: Any, position: int, answer: bytes, where: str) -> str:
        if isinstance(value, str):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        expected = f"result {position} to be an object with a doc id at {self.id_field!r}"
        raise self._shape_error(expected + " or a doc-id string", answer, where=where)

    def _shape_error(
        self, expected: str, answer: bytes, problem: JsonProblem | None = None, *, where: str
    ) -> ResponseShapeError:
        why = "" if problem is None else f": {problem}"
        got = self._excerpt(answer)
        return ResponseShapeError(f"{where}: expected {expected}, got {got}{why}")

    def _excerpt(self, data: bytes) -> str:
        """The start of a body, its secrets hidden before it is cut so no part of one shows."""
        text = redact_secrets(data.decode("utf-8", "replace"), self._secrets)
        return repr(text if len(text) <= _EXCERPT_CHARS else text[:_EXCERPT_CHARS] + "…")
