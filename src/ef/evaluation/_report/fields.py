"""Checking the fields of a report rebuilt from JSON: the right types, finite numbers.

A saved report is input like any other: ``from_dict`` checks every field before building the
report, so a damaged file (a string where a number belongs, ``null`` for a mean, a number
that overflowed to infinity) is refused with a message naming the field, instead of becoming
a report that fails later or prints a wrong number. Checkers return the value unchanged (ints
stay ints, so a report round-trips exactly) and raise :class:`TypeError` for a value of the
wrong JSON type, :class:`ValueError` for a wrong value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from ef.evaluation._json import json_type

__all__ = [
    "Checker",
    "check_fields",
    "count",
    "finite",
    "integer",
    "list_of",
    "mapping_of",
    "object_",
    "optional",
    "string",
]

Checker = Callable[[Any, str], Any]
"""Checks a value found at a place (such as ``"per_query['q1']"``) and returns it."""


def _wrong_type(value: Any, where: str, expected: str) -> TypeError:
    return TypeError(f"{where} is a JSON {json_type(value)}; expected {expected}")


def finite(value: Any, where: str) -> float:
    """A finite number (an int or a float, never a bool or a string)."""
    if type(value) is bool or not isinstance(value, int | float):
        raise _wrong_type(value, where, "a number")
    if not math.isfinite(value):
        raise ValueError(f"{where} is {value}; expected a finite number")
    return value


def count(value: Any, where: str) -> int:
    """An integer of at least 0."""
    if type(value) is bool or not isinstance(value, int):
        raise _wrong_type(value, where, "an integer")
    if value < 0:
        raise ValueError(f"{where} is {value}; expected an integer >= 0")
    return value


def integer(value: Any, where: str) -> int:
    """Any integer (a seed)."""
    if type(value) is bool or not isinstance(value, int):
        raise _wrong_type(value, where, "an integer")
    return value


def string(value: Any, where: str) -> str:
    """A string."""
    if not isinstance(value, str):
        raise _wrong_type(value, where, "a string")
    return value


def object_(value: Any, where: str) -> dict[str, Any]:
    """A JSON object, whatever it holds."""
    if not isinstance(value, dict):
        raise _wrong_type(value, where, "an object")
    return value


def optional(checker: Checker) -> Checker:
    """``checker``, or ``None`` (JSON ``null``)."""

    def check(value: Any, where: str) -> Any:
        return None if value is None else checker(value, where)

    return check


def mapping_of(checker: Checker) -> Checker:
    """A JSON object whose every value passes ``checker``."""

    def check(value: Any, where: str) -> dict[str, Any]:
        for key, item in object_(value, where).items():
            checker(item, f"{where}[{key!r}]")
        return value  # type: ignore[no-any-return]

    return check


def list_of(checker: Checker) -> Checker:
    """A JSON array whose every item passes ``checker``."""

    def check(value: Any, where: str) -> Any:
        if not isinstance(value, list | tuple):
            raise _wrong_type(value, where, "an array")
        for index, item in enumerate(value):
            checker(item, f"{where}[{index}]")
        return value

    return check


def check_fields(
    cls: type[Any], data: Any, checkers: Mapping[str, Checker], where: str = ""
) -> dict[str, Any]:
    """The fields of an attrs class ``cls`` in ``data``, each checked.

    Every field without a default must be present; a name that is no field is refused.

    :param cls: the attrs class to build.
    :param data: the decoded JSON object.
    :param checkers: a checker for each field of ``cls``.
    :param where: the place of ``data`` in a larger value, for messages.
    :raises TypeError: for a missing or unknown field, or a value of the wrong type.
    :raises ValueError: for a number that is not finite, or a negative count.

    >>> @attrs.frozen
    ... class Point:
    ...     x: float
    ...     label: str = ""
    >>> check_fields(Point, {"x": 1.5}, {"x": finite, "label": string})
    {'x': 1.5}
    >>> check_fields(Point, {"x": "1.5"}, {"x": finite, "label": string})
    Traceback (most recent call last):
    ...
    TypeError: x is a JSON string; expected a number
    """
    owner = f"{where}: " if where else ""
    if not isinstance(data, Mapping):
        raise _wrong_type(data, where or "the report", "an object")
    fields = {field.name: field for field in attrs.fields(cls)}
    unknown = [name for name in data if name not in fields]
    if unknown:
        raise TypeError(f"{owner}unknown field {unknown[0]!r}; expected {', '.join(fields)}")
    missing = [
        name
        for name, field in fields.items()
        if field.default is attrs.NOTHING and name not in data
    ]
    if missing:
        raise TypeError(f"{owner}missing field {missing[0]!r}")
    prefix = f"{where}." if where else ""
    return {name: checkers[name](value, prefix + name) for name, value in data.items()}
