"""RAG samples' text must be text UTF-8 can encode, or no report could be written."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ef.evaluation._json import lone_surrogate

__all__ = ["check_encodable"]

TEXT_FIELDS = (
    "user_input",
    "response",
    "reference",
    "retrieved_contexts",
    "reference_contexts",
    "retrieved_context_ids",
    "reference_context_ids",
)


def check_encodable(where: str, sample: Mapping[str, Any]) -> None:
    """Refuse a sample whose text UTF-8 cannot encode (a lone surrogate), naming the field.

    Such text could be scored, but no report, page or file could hold it: it is refused where
    the sample enters (:func:`~ef.evaluation.evaluate_rag`, ``to_html(samples=...)``,
    :func:`~ef.evaluation.as_ragas_dataset`).

    :param where: the sample, for the message (``"sample 3"``).
    :raises ValueError: naming the sample, the field and the code point.

    >>> check_encodable("sample 0", {"response": "caf\\ud800"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: sample 0: field 'response' holds a lone UTF-16 surrogate (\\ud800); expected ...
    """
    for field in TEXT_FIELDS:
        value = sample.get(field)
        texts = (
            [value] if isinstance(value, str) else value if isinstance(value, list | tuple) else ()
        )
        for position, text in enumerate(texts):
            code = lone_surrogate(text) if isinstance(text, str) else None
            if code is not None:
                item = field if isinstance(value, str) else f"{field}[{position}]"
                raise ValueError(
                    f"{where}: field {item!r} holds a lone UTF-16 surrogate (\\u{code:04x}); "
                    "expected text UTF-8 can encode"
                )
