"""Strict JSON decoding for untrusted input: files, reports, journals and service responses.

:func:`json.loads` accepts ``NaN`` and ``Infinity`` (which are not JSON), decodes a lone
surrogate escape into a string that cannot be encoded again, and fails on hostile input with
errors that name no place: ``RecursionError`` for deep nesting, a digit-limit ``ValueError``
for a huge integer. :func:`loads_strict` turns each of those into one :class:`JsonProblem`
carrying a short description, which every caller turns into its own error with a file and a
line, a query, or a service's URL.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any

from ef.evaluation._exceptions import JsonProblem

__all__ = ["JsonProblem", "NumberParser", "decode_at", "json_type", "loads_strict"]

# An escaped UTF-16 surrogate (high or low); only then can a decoded string hold a lone one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _refuse_constant(name: str) -> Any:
    raise JsonProblem(f"{name} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise JsonProblem(f"key {key!r} appears twice in one object")
            seen.add(key)
    return mapping


NumberParser = Callable[[str], Any]
"""Turns the text of a JSON number into its value, or raises :class:`JsonProblem`."""


@functools.cache
def _decoder(unique_keys: bool, parse_number: NumberParser | None) -> json.JSONDecoder:
    return json.JSONDecoder(
        parse_constant=_refuse_constant,
        object_pairs_hook=_unique_keys if unique_keys else None,
        parse_float=parse_number,
        parse_int=parse_number,
    )


_DECODER = _decoder(False, None)


def loads_strict(
    text: str | bytes, *, unique_keys: bool = False, parse_number: NumberParser | None = None
) -> Any:
    """Decode one JSON document, refusing what :func:`json.loads` lets through.

    Refused, each with a :class:`JsonProblem`: syntax errors (with the column), ``NaN`` and
    ``Infinity``, integers beyond Python's digit limit, nesting too deep to decode, bytes that
    are not UTF-8, and strings holding a lone UTF-16 surrogate (they cannot be written back).

    :param text: the document, as text or UTF-8 bytes.
    :param unique_keys: refuse an object that names a key twice (:func:`json.loads` keeps the
        last value).
    :param parse_number: called with the text of every number, for its value (it may refuse
        it with a :class:`JsonProblem`); ``None`` reads numbers as :func:`json.loads` does.
    :raises JsonProblem: if ``text`` is not strict JSON.

    >>> loads_strict('{"a": [1, 2.5, "x"]}')
    {'a': [1, 2.5, 'x']}
    >>> loads_strict('[NaN]')
    Traceback (most recent call last):
    ...
    ef.evaluation._exceptions.JsonProblem: NaN is not a JSON number
    >>> loads_strict('{"a": 1, "a": 2}', unique_keys=True)
    Traceback (most recent call last):
    ...
    ef.evaluation._exceptions.JsonProblem: key 'a' appears twice in one object
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
        value, end = decode_at(stripped, 0, unique_keys=unique_keys, parse_number=parse_number)
    except json.JSONDecodeError as error:
        raise JsonProblem(f"invalid JSON ({error.msg} at column {error.pos + 1})") from None
    if end != len(stripped):
        raise JsonProblem(f"invalid JSON (Extra data at column {end + 1})")
    return value


def decode_at(
    text: str,
    position: int,
    *,
    unique_keys: bool = False,
    parse_number: NumberParser | None = None,
) -> tuple[Any, int]:
    """Decode the one JSON value that starts at ``text[position]``, as strictly as
    :func:`loads_strict`: for readers that walk a large document a part at a time.

    :returns: the value and the position just past it.
    :raises json.JSONDecodeError: for a syntax error (its ``pos`` places it in ``text``).
    :raises JsonProblem: for everything else :func:`loads_strict` refuses.

    >>> decode_at('{"q1": [1, 2], "q2": []}', 7)
    ([1, 2], 13)
    """
    try:
        value, end = _decoder(unique_keys, parse_number).raw_decode(text, position)
    except (json.JSONDecodeError, JsonProblem):
        raise
    except RecursionError:
        raise JsonProblem("JSON nested too deeply") from None
    except ValueError as error:  # the integer digit limit
        raise JsonProblem(f"invalid JSON number ({error})") from None
    if _SURROGATE_ESCAPE.search(text, position, end):
        _check_encodable(value)
    return value, end


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
