"""The request templates and answer paths of HttpRetriever: filling a template, walking a path.

A template is a JSON object whose strings may hold placeholders: ``{query}`` and ``{limit}``
for one query, ``{queries}``, ``{query_ids}`` and ``{limit}`` for a batch. A string that is
only a placeholder becomes the value itself (the limit an int, the queries and their ids
lists); inside longer text, ``{query}`` and ``{limit}`` become their text. A path is dotted
(``data.results``); a numeric part indexes a list.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "MISSING",
    "canonical",
    "checked_limit",
    "dotted_path",
    "fill",
    "fill_batch",
    "json_template",
    "walk",
]

_PLACEHOLDER = re.compile(r"\{(query|limit)\}")
MISSING = object()
"""What :func:`walk` returns for a path that leads nowhere."""


def fill(template: Any, query: str, limit: int) -> Any:
    """``template`` with the placeholders put in: a string that is only ``{query}`` or
    ``{limit}`` becomes the value itself (the limit stays an int), inside text its string.

    >>> fill({"q": "{query}", "k": "{limit}", "x": "top {limit}"}, "cats", 5)
    {'q': 'cats', 'k': 5, 'x': 'top 5'}
    """
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
        return {key: fill(value, query, limit) for key, value in template.items()}
    if isinstance(template, list):
        return [fill(value, query, limit) for value in template]
    return template


def fill_batch(
    template: Any, queries: list[str], limit: int, query_ids: list[str] | None = None
) -> Any:
    """A batch template with the placeholders put in: ``"{queries}"`` becomes the list of query
    texts, ``"{query_ids}"`` the list of their ids (``None`` when they are not known),
    ``"{limit}"`` the int, and ``{limit}`` inside text its string.

    >>> fill_batch({"queries": "{queries}", "limit": "{limit}"}, ["a", "b"], 3)
    {'queries': ['a', 'b'], 'limit': 3}
    """
    if isinstance(template, str):
        if template == "{queries}":
            return list(queries)
        if template == "{query_ids}":
            return None if query_ids is None else list(query_ids)
        if template == "{limit}":
            return limit
        return template.replace("{limit}", str(limit))
    if isinstance(template, dict):
        return {k: fill_batch(v, queries, limit, query_ids) for k, v in template.items()}
    if isinstance(template, list):
        return [fill_batch(value, queries, limit, query_ids) for value in template]
    return template


def json_template(name: str, value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``value`` as a JSON object (a copy), or ``None``.

    :raises TypeError: when it is not a mapping of JSON values.
    """
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping (a JSON object template), got {value!r}")
    try:
        normalised: dict[str, Any] = json.loads(json.dumps(value))
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must hold JSON values only: {error}") from None
    return normalised


def canonical(value: object) -> str:
    """``value`` as compact JSON with sorted keys: equal templates, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def dotted_path(name: str, value: str) -> tuple[str, ...]:
    """The parts of a dotted path (``""``: the whole answer).

    :raises TypeError: when ``value`` is not a string.
    :raises ValueError: when a part is empty.
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a dotted path string, got {value!r}")
    parts = tuple(value.split(".")) if value else ()
    if not all(parts):
        raise ValueError(f"{name}={value!r} has an empty part; expected e.g. 'data.results'")
    return parts


def checked_limit(name: str, value: Any, kind: type[int] | type[float]) -> Any:
    """``value`` if it is ``None`` or a positive (finite) number of ``kind``, else an error."""
    number = isinstance(value, int | float) if kind is float else isinstance(value, int)
    if value is None or (number and not isinstance(value, bool) and 0 < value < math.inf):
        return value
    what = "a number > 0" if kind is float else "an int >= 1"
    raise ValueError(f"{name} must be {what} or None, got {value!r}")


def walk(node: Any, path: tuple[str, ...]) -> Any:
    """What ``path`` leads to in the JSON ``node``, or :data:`MISSING`.

    >>> walk({"data": {"results": [1, 2]}}, ("data", "results", "1"))
    2
    """
    for part in path:
        if isinstance(node, dict):
            node = node.get(part, MISSING)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return MISSING
    return node
