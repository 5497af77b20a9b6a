"""HttpRetriever: a search service over HTTP as a retriever, on asyncio and trio.

This module holds the request and answer shapes and the errors; the clients that carry the
requests, one per event loop, are in ``_http_clients``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
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
from ef.evaluation._http.clients import LoopClients
from ef.evaluation._json import JsonProblem, loads_strict
from ef.evaluation._redact import redact_secrets, redact_url
from ef.evaluation._running.adapters import qualified_name
from ef.segments import Segment
from ef.source_manager import SearchHit

__all__ = ["HttpRetriever"]

_PLACEHOLDER = re.compile(r"\{(query|limit)\}")
_EXCERPT_CHARS = 200
# Not 5xx, but each says "try again later".
_TRANSIENT_STATUSES = frozenset({408, 425, 429})
_MISSING = object()
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024


def _fill(template: Any, query: str, limit: int) -> Any:
    """``template`` with the placeholders put in: a string that is only ``{query}`` or
    ``{limit}`` becomes the value itself (the limit stays an int), inside text its string."""
    if isinstance(template, str):
        if template == "{query}":
            return query
        if template == "{limit}":
            return limit
        if "{" not in template:
            return template
        # One pass, so a query that contains "{limit}" is sent as typed.
        return _PLACEHOLDER.sub(lambda m: query if m[1] == "query" else str(limit), template)
    if isinstance(template, dict):
        return {key: _fill(value, query, limit) for key, value in template.items()}
    if isinstance(template, list):
        return [_fill(value, query, limit) for value in template]
    return template


def _template(name: str, value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping (a JSON object template), got {value!r}")
    try:
        normalised: dict[str, Any] = json.loads(json.dumps(value))
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must hold JSON values only: {error}") from None
    return normalised


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _path(name: str, value: str) -> tuple[str, ...]:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a dotted path string, got {value!r}")
    parts = tuple(value.split(".")) if value else ()
    if not all(parts):
        raise ValueError(f"{name}={value!r} has an empty part; expected e.g. 'data.results'")
    return parts


def _limit(name: str, value: Any, kind: type[int] | type[float]) -> Any:
    """``value`` if it is ``None`` or a positive (finite) number of ``kind``, else an error."""
    number = isinstance(value, int | float) if kind is float else isinstance(value, int)
    if value is None or (number and not isinstance(value, bool) and 0 < value < math.inf):
        return value
    what = "a number > 0" if kind is float else "an int >= 1"
    raise ValueError(f"{name} must be {what} or None, got {value!r}")


def _walk(node: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if isinstance(node, dict):
            node = node.get(part, _MISSING)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return node


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
    :param max_response_bytes: the largest answer body accepted, or ``None`` for no cap.
    :raises ValueError: for a bad URL or method, a ``GET`` with a body, no ``{query}``, a bad
        header or limit, or credentials in the URL together with an ``Authorization`` header.
    :raises TypeError: for a template that is not a JSON object, or headers not strings.
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
        self.timeout = _limit("timeout", timeout, float)
        self.max_response_bytes = _limit("max_response_bytes", max_response_bytes, int)
        self.url, self.method = redact_url(url), method
        self._body, self._params = _template("body", body), _template("params", params)
        if self._body is None and self._params is None:
            default = {"query": "{query}", "limit": "{limit}"}
            self._body, self._params = (default, None) if method == "POST" else (None, default)
        for key, value in (self._params or {}).items():
            if isinstance(value, dict | list) or value is None:
                raise TypeError(f"params[{key!r}] must be a string or a number, got {value!r}")
        if "{query}" not in _canonical([self._body, self._params]):
            raise ValueError("neither body nor params holds '{query}': the query would not be sent")
        self.results, self.id_field, self.score_field = results, id_field, score_field
        self._results_path = _path("results", results)
        self._id_path = _path("id_field", id_field)
        self._score_path = None if score_field is None else _path("score_field", score_field)
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

    @property
    def retriever_id(self) -> str:
        """Its identity in fingerprints: the class, the URL, the request and answer shapes."""
        if self._retriever_id is not None:
            return self._retriever_id
        parts = [qualified_name(self), self.method, self._public_url]
        if self._body is not None:
            parts.append(f"body={_canonical(self._body)}")
        if self._params is not None:
            parts.append(f"params={_canonical(self._params)}")
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
            params = {key: str(value) for key, value in _fill(self._params, query, limit).items()}
        if self._body is not None:
            content = json.dumps(_fill(self._body, query, limit)).encode()
        with anyio.move_on_after(self.timeout):
            status, answer = await self._send(params, content)
            if not 200 <= status < 300:
                transient = status >= 500 or status in _TRANSIENT_STATUSES
                raise (HttpServerError if transient else HttpClientError)(
                    self._where, status, self._excerpt(answer)
                )
            return self._parse(answer)
        raise TimeoutError(
            f"{self._where}: no complete answer within the {self.timeout:g} s timeout"
        )

    async def _send(
        self, params: dict[str, str] | None, content: bytes | None
    ) -> tuple[int, bytes]:
        client = await self._clients.current()
        try:
            return await client.send(params, content)
        except BodyTooLarge as error:
            declared = "" if error.declared is None else f" (Content-Length: {error.declared})"
            raise ResponseShapeError(
                f"{self._where}: the answer is larger than max_response_bytes={error.cap}{declared}"
            ) from None
        except client.errors as error:
            reason = redact_secrets(str(error), self._secrets) or "the connection failed"
            failure = f"{self._where}: {type(error).__qualname__}: {reason}"
            raise HttpConnectionError(failure) from error

    async def __aenter__(self) -> Self:
        await self._clients.enter()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._clients.exit()

    async def aclose(self) -> None:
        """Close the running event loop's client now; a later search opens a new one."""
        await self._clients.aclose()

    def _parse(self, answer: bytes) -> list[str] | list[SearchHit]:
        try:
            document = loads_strict(answer)
        except JsonProblem as problem:
            raise self._shape_error("a JSON body", answer, problem) from None
        items = _walk(document, self._results_path)
        if not isinstance(items, list):
            where = f"at {self.results!r}" if self.results else "as the whole answer"
            raise self._shape_error(f"a list of results {where}", answer)
        ids = [_walk(item, self._id_path) if isinstance(item, dict) else item for item in items]
        if not all(type(doc_id) is str for doc_id in ids):
            ids = [self._doc_id(doc_id, position, answer) for position, doc_id in enumerate(ids)]
        if self._score_path is None:
            return ids
        hits = []
        for position, (item, doc_id) in enumerate(zip(items, ids, strict=True)):
            score = _walk(item, self._score_path) if isinstance(item, dict) else _MISSING
            if isinstance(score, bool) or not isinstance(score, int | float):
                expected = f"result {position} to hold a number at {self.score_field!r}"
                raise self._shape_error(expected, answer)
            hits.append(SearchHit(Segment(doc_id, "", 0, 0, f"{doc_id}:0"), float(score)))
        return hits

    def _doc_id(self, value: Any, position: int, answer: bytes) -> str:
        if isinstance(value, str):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        expected = f"result {position} to be an object with a doc id at {self.id_field!r}"
        raise self._shape_error(expected + " or a doc-id string", answer)

    def _shape_error(
        self, expected: str, answer: bytes, problem: JsonProblem | None = None
    ) -> ResponseShapeError:
        why = "" if problem is None else f": {problem}"
        got = self._excerpt(answer)
        return ResponseShapeError(f"{self._where}: expected {expected}, got {got}{why}")

    def _excerpt(self, data: bytes) -> str:
        """The start of a body, its secrets hidden before it is cut so no part of one shows."""
        text = redact_secrets(data.decode("utf-8", "replace"), self._secrets)
        return repr(text if len(text) <= _EXCERPT_CHARS else text[:_EXCERPT_CHARS] + "…")
