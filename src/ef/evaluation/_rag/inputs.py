"""What a RAG metric reads from a sample, with ``None`` for an input the sample lacks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["context_ids", "references", "response", "retrieved_contexts", "text_list"]


def response(sample: Mapping[str, Any]) -> str | None:
    """The sample's ``response``, or ``None`` when it has none."""
    value: str | None = sample.get("response")
    return value


def references(sample: Mapping[str, Any]) -> Sequence[str] | None:
    """The sample's references as a sequence (``reference`` may be a list), or ``None``."""
    reference: str | Sequence[str] | None = sample.get("reference")
    if reference is None:
        return None
    return (reference,) if isinstance(reference, str) else reference


def retrieved_contexts(sample: Mapping[str, Any]) -> Sequence[str]:
    """The retrieved contexts; missing or ``None`` means nothing was retrieved (as elsewhere)."""
    contexts: Sequence[str] | None = sample.get("retrieved_contexts")
    return () if contexts is None else contexts


def text_list(sample: Mapping[str, Any], field: str) -> Sequence[str] | None:
    """A list-of-strings field, or ``None`` when the sample lacks it."""
    value: Sequence[str] | None = sample.get(field)
    return value


def context_ids(sample: Mapping[str, Any], field: str) -> set[str] | None:
    """An id field as a set of strings (ids are compared as strings, as Ragas does), or None.

    >>> sorted(context_ids({'retrieved_context_ids': [1, '1', 'a']}, 'retrieved_context_ids'))
    ['1', 'a']
    """
    value: Sequence[str | int] | None = sample.get(field)
    if value is None:
        return None
    return {str(item) for item in value}
