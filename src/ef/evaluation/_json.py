"""Strict JSON decoding for untrusted input: files, reports, journals and service responses.

:func:`json.loads` accepts ``NaN`` and ``Infinity`` (which are not JSON), decodes a lone
surrogate escape into a string that cannot be encoded again, and fails on hostile input with
errors that name no place: ``RecursionError`` for deep nesting, a digit-limit ``ValueError``
for a huge integer. :func:`loads_strict` turns each of those into one :class:`JsonProblem`
carrying a short description, which every caller turns into its own error with a file and a
line, a query, or a service's URL.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ef.evaluation._exceptions import JsonProblem

__all__ = ["JsonProblem", "json_type", "loads_strict"]

# An escaped UTF-16 surrogate (high or low); only then can a decoded string hold a lone one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _refuse_constant(name: str) -> Any:
    raise JsonProblem(f"{name} is not a JSON number")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def loads_strict(text: str | bytes) -> Any:
    """Decode one JSON document, refusing what :func:`json.loads` lets through.

    Refused, each with a :class:`JsonProblem`: syntax errors (with the column), ``NaN`` and
    ``Infinity``, integers beyond Python's digit limit, nesting too deep to decode, bytes that
    are not UTF-8, and strings holding a lone UTF-16 surrogate (they cannot be written back).

    :param text: the document, as text or UTF-8 bytes.
    :raises JsonProblem: if ``text`` is not strict JSON.

    >>> loads_strict('{"a": [1, 2.5, "x"]}')
    {'a': [1, 2.5, 'x']}
    >>> loads_strict('[NaN]')
    Traceback (most recent call last):
    ...
    ef.evaluation._exceptions.JsonProblem: NaN is not a JSON number
    >>> loads_strict('"\\\\ud800"')
    Traceback (most recent call last):
    ...
    ef.evaluation._exceptions.JsonProblem: a string holds a lone UTF-16 surrogate (\\ud800)
    """
    if isinstance(text, bytes | bytearray):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise JsonProblem(f"not UTF-8 (byte {error.start + 1})") from None
    stripped = text.strip(" \t\r\n")
    try:
        value = _DECODER.decode(stripped)
    except json.JSONDecodeError as error:
        raise JsonProblem(f"invalid JSON ({error.msg} at column {error.pos + 1})") from None
    except RecursionError:
        raise JsonProblem("JSON nested too deeply") from None
    except JsonProblem:
        raise
    except ValueError as error:  # the integer digit limit
        raise JsonProblem(f"invalid JSON number ({error})") from None
    if _SURROGATE_ESCAPE.search(stripped):
        _check_encodable(value)
    return value


def _check_encodable(value: Any) -> None:
    """Refuse a lone surrogate anywhere in a decoded value (walked without recursion)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            strings = [item]
        elif isinstance(item, dict):
            strings = list(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
            continue
        else:
            continue
        for string in strings:
            code = lone_surrogate(string)
            if code is not None:
                raise JsonProblem(f"a string holds a lone UTF-16 surrogate (\\u{code:04x})")


def lone_surrogate(text: str) -> int | None:
    """The code point of the first lone UTF-16 surrogate in ``text`` (which UTF-8 cannot
    encode), or None.

    >>> lone_surrogate("ok"), hex(lone_surrogate("a\\ud800b"))
    (None, '0xd800')
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return ord(text[error.start])
    return None


def json_type(value: object) -> str:
    """The JSON name of a decoded value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"
