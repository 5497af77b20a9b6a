"""A search service's batch endpoint: where HttpRetriever sends a batch of queries, the request
it sends and where the answers are in what comes back.

The request is a ``POST`` of a JSON body filled from a template (``"{queries}"``: the list of
query texts; ``"{query_ids}"``: the list of their ids; ``"{limit}"``: the results asked for per
query), by default ``{"queries": [...], "query_ids": [...], "limit": 10}``. The answer holds,
at the dotted path ``answers`` (``"answers"`` by default), a list of one answer per query, each
in the shape of the one-query endpoint's whole answer (read with the retriever's ``results``,
``id_field`` and ``score_field``), and each carrying its query's id at the dotted path
``id_field`` (``"query_id"`` by default), or none of them carrying one: then they are taken in
the order asked. The endpoint is on the same service as the one-query URL (same scheme, host
and port), since it gets the same headers and credentials.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple
from urllib.parse import urljoin, urlsplit

from ef.evaluation._exceptions import ResponseShapeError
from ef.evaluation._http.clients import LoopClients
from ef.evaluation._http.shapes import (
    MISSING,
    canonical,
    dotted_path,
    fill_batch,
    json_template,
    walk,
)
from ef.evaluation._redact import redact_url
from ef.source_manager import SearchHit

__all__ = [
    "DEFAULT_BATCH_BODY",
    "DEFAULT_BATCH_ID_FIELD",
    "BatchEndpoint",
    "BatchRanking",
    "Unmatched",
]

DEFAULT_BATCH_BODY = {"queries": "{queries}", "query_ids": "{query_ids}", "limit": "{limit}"}
"""The batch request's body when ``batch_body`` is not given."""
DEFAULT_BATCH_ID_FIELD = "query_id"
"""Where an answer of a batch carries its query's id when ``batch_id_field`` is not given."""
_SHOWN_STRAYS = 3

BatchRanking = list[str] | list[SearchHit] | ResponseShapeError
"""One query's answer in a batch: its ranking, or why no answer was matched to it."""


class Unmatched(NamedTuple):
    """A query of a batch that no answer, or more than one, carries the id of."""

    query_id: str
    expected: str
    """What the answer should have been, for the error's message."""


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
    :param id_field: the dotted path to an answer's query id.
    :param require_ids: whether an answer without its query id is refused rather than taken
        in the order asked.
    :raises ValueError: for a batch URL on another service or carrying credentials, a body
        without ``"{queries}"``, an empty ``id_field``, or ids required of a service whose
        body does not send them (no ``"{query_ids}"``).
    :raises TypeError: for a body that is not a JSON object template, or a ``require_ids``
        that is not a bool.

    >>> endpoint = BatchEndpoint("http://127.0.0.1:8000/search", "/batch", None, "answers", {})
    >>> endpoint.where
    'POST http://127.0.0.1:8000/batch'
    >>> endpoint.content(["a", "b"], 5, ["q1", "q2"])
    b'{"queries": ["a", "b"], "query_ids": ["q1", "q2"], "limit": 5}'
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
        *,
        id_field: str = DEFAULT_BATCH_ID_FIELD,
        require_ids: bool = False,
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
        self.id_path = dotted_path("batch_id_field", id_field)
        if not self.id_path:
            raise ValueError("batch_id_field is empty: name the field of an answer holding its id")
        if not isinstance(require_ids, bool):
            raise TypeError(f"batch_require_ids must be True or False, got {require_ids!r}")
        if require_ids and '"{query_ids}"' not in canonical(self.body):
            raise ValueError(
                "batch_require_ids=True but batch_body holds no '{query_ids}' value: the service "
                "would not know the ids its answers must carry"
            )
        self.id_field, self.require_ids = id_field, require_ids
        self.url, self.answers = resolved, answers
        self.answers_path = dotted_path("batch_answers", answers)
        parts = urlsplit(resolved)
        self.where = f"POST {parts.scheme}://{parts.netloc}{parts.path}"
        sent = dict(headers)
        if not any(name.lower() == "content-type" for name in sent):
            sent["Content-Type"] = "application/json"
        self.clients = LoopClients("POST", resolved, sent, cap, max_bytes)

    def content(self, queries: list[str], limit: int, query_ids: list[str] | None) -> bytes:
        """The request's body for ``queries`` (whose ids are ``query_ids``), ``limit`` results
        each.

        :raises ValueError: for ``query_ids`` that are not one per query, each once, or none
            when ids are required.
        """
        if query_ids is None and self.require_ids:
            raise ValueError("batch_require_ids=True: the batch's query ids are needed")
        if query_ids is not None and not len(queries) == len(query_ids) == len(set(query_ids)):
            raise ValueError(f"query_ids must be one id per query, each once, got {query_ids!r}")
        return json.dumps(fill_batch(self.body, queries, limit, query_ids)).encode()

    def matched(self, answers: list[Any], query_ids: list[str] | None) -> list[Any]:
        """The answer to each query, matched by the query ids the answers carry, or in the
        order asked when none carries one (and none is required); :class:`Unmatched` for a
        query that no answer, or more than one, carries the id of.

        :param answers: one answer per query (as many as ``query_ids``).
        :param query_ids: the queries' ids, each once; ``None`` when they are not known: the
            answers are then taken in order (:meth:`content` refuses that when ids are
            required).

        >>> endpoint = BatchEndpoint("http://127.0.0.1:8000/search", "/batch", None, "answers", {})
        >>> endpoint.matched([{"query_id": "q2", "n": 2}, {"query_id": "q1", "n": 1}], ["q1", "q2"])
        [{'query_id': 'q1', 'n': 1}, {'query_id': 'q2', 'n': 2}]
        >>> twice = endpoint.matched([{"query_id": "q1"}, {"query_id": "q1"}], ["q1", "q2"])
        >>> print(twice[0].expected)
        one answer with query id 'q1' at 'query_id'; answers 0, 1 have it
        >>> print(twice[1].expected)
        an answer with query id 'q2' at 'query_id'; none has it (answer 1 has 'q1', another query's)
        """
        if query_ids is None:
            return list(answers)
        carried = [self._query_id(answer) for answer in answers]
        field = self.id_field
        if all(query_id is MISSING for query_id in carried):
            if not self.require_ids:
                return list(answers)
            return [
                Unmatched(
                    query_id,
                    f"the answer to query {query_id!r} to carry its id at {field!r} "
                    "(batch_require_ids=True); no answer of the batch carries one",
                )
                for query_id in query_ids
            ]
        asked = set(query_ids)
        places: dict[str, list[int]] = {}
        strays: list[str] = []
        for position, query_id in enumerate(carried):
            if isinstance(query_id, str) and query_id in asked:
                places.setdefault(query_id, []).append(position)
            elif query_id is MISSING:
                strays.append(f"answer {position} has none")
            else:
                strays.append(f"answer {position} has {query_id!r}, no query of the batch")
        matched: list[Any] = []
        for query_id in query_ids:
            found = places.get(query_id, [])
            if len(found) == 1:
                matched.append(answers[found[0]])
                continue
            if found:
                which = ", ".join(map(str, found))
                expected = f"one answer with query id {query_id!r} at {field!r}; answers {which}"
                matched.append(Unmatched(query_id, f"{expected} have it"))
                continue
            others = [f"answer {p} has {q!r}, another query's" for q, p in _repeats(places)]
            why = (strays + others)[:_SHOWN_STRAYS]
            expected = f"an answer with query id {query_id!r} at {field!r}; none has it"
            matched.append(Unmatched(query_id, f"{expected} ({'; '.join(why)})"))
        return matched

    def _query_id(self, answer: Any) -> Any:
        """The query id ``answer`` carries (an int as its text), :data:`MISSING` for none."""
        value = walk(answer, self.id_path)
        if value is None:
            return MISSING
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return value


def _repeats(places: Mapping[str, list[int]]) -> list[tuple[str, int]]:
    """The second and later answers carrying an id that an earlier answer carries."""
    return [(query_id, p) for query_id, found in places.items() for p in found[1:]]
