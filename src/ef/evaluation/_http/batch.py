"""A search service's batch endpoint: where HttpRetriever sends a batch of queries, the request
it sends and where the answers are in what comes back.

The request is a ``POST`` of a JSON body filled from a template (``"{queries}"``: the list of
query texts; ``"{limit}"``: the results asked for per query), by default
``{"queries": [...], "limit": 10}``. The answer holds, at the dotted path ``answers``
(``"answers"`` by default), a list of one answer per query in the order asked, each in the shape
of the one-query endpoint's whole answer (read with the retriever's ``results``, ``id_field``
and ``score_field``). The endpoint is on the same service as the one-query URL (same scheme,
host and port), since it gets the same headers and credentials.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

from ef.evaluation._http.clients import LoopClients
from ef.evaluation._http.shapes import canonical, dotted_path, fill_batch, json_template
from ef.evaluation._redact import redact_url

__all__ = ["DEFAULT_BATCH_BODY", "BatchEndpoint"]

DEFAULT_BATCH_BODY = {"queries": "{queries}", "limit": "{limit}"}
"""The batch request's body when ``batch_body`` is not given."""


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname, parts.port


class BatchEndpoint:
    """The batch endpoint of a service whose one-query endpoint is ``url``.

    :param url: the one-query URL, without credentials.
    :param batch_url: the batch endpoint: a path (``/search/batch``, resolved against ``url``)
        or an absolute URL on the same service.
    :param body: the JSON body template, or ``None`` for :data:`DEFAULT_BATCH_BODY`.
    :param answers: the dotted path to the list of answers.
    :param headers: the headers of every request (a JSON ``Content-Type`` is added).
    :param cap: a cap on connections, or ``None``.
    :param max_bytes: a cap on the answer's body, or ``None``.
    :raises ValueError: for a batch URL on another service or carrying credentials, or a body
        without ``"{queries}"``.
    :raises TypeError: for a body that is not a JSON object template.

    >>> endpoint = BatchEndpoint("http://127.0.0.1:8000/search", "/batch", None, "answers", {})
    >>> endpoint.where, endpoint.content(["a", "b"], 5)
    ('POST http://127.0.0.1:8000/batch', b'{"queries": ["a", "b"], "limit": 5}')
    """

    def __init__(
        self,
        url: str,
        batch_url: str,
        body: Mapping[str, Any] | None,
        answers: str,
        headers: Mapping[str, str],
        cap: int | None = None,
        max_bytes: int | None = None,
    ) -> None:
        if not isinstance(batch_url, str) or not batch_url:
            raise ValueError(f"batch_url must be a URL or a path, got {batch_url!r}")
        if "@" in urlsplit(batch_url).netloc:
            raise ValueError(
                f"batch_url {redact_url(batch_url)!r} carries credentials: put them in url, "
                "whose credentials the batch endpoint gets too"
            )
        resolved = urljoin(url, batch_url)
        if _origin(resolved) != _origin(url):
            raise ValueError(
                f"batch_url {batch_url!r} is not on the service of url {url!r}: the batch "
                "endpoint gets the same headers and credentials, so it must share the scheme, "
                "host and port"
            )
        template = json_template("batch_body", body)
        self.body: dict[str, Any] = dict(DEFAULT_BATCH_BODY) if template is None else template
        if '"{queries}"' not in canonical(self.body):
            raise ValueError("batch_body holds no '{queries}' value: the queries would not be sent")
        self.url, self.answers = resolved, answers
        self.answers_path = dotted_path("batch_answers", answers)
        parts = urlsplit(resolved)
        self.where = f"POST {parts.scheme}://{parts.netloc}{parts.path}"
        sent = dict(headers)
        if not any(name.lower() == "content-type" for name in sent):
            sent["Content-Type"] = "application/json"
        self.clients = LoopClients("POST", resolved, sent, cap, max_bytes)

    def content(self, queries: list[str], limit: int) -> bytes:
        """The request's body for ``queries``, ``limit`` results each."""
        return json.dumps(fill_batch(self.body, queries, limit)).encode()
