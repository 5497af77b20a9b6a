"""Reports to and from JSON through attrs: ``attrs.asdict`` out, one checked ``structure`` in.

A saved report is input like any other: :func:`structure` checks every field before building
the report, so a damaged file (a string where a number belongs, ``null`` for a mean, a number
that overflowed to infinity) is refused with a message naming the field, instead of becoming
a report that fails later or prints a wrong number. Each field names its checker next to its
declaration (:func:`checked`); a checker returns the value (ints stay ints, so a report
round-trips exactly; a nested report class is built) and raises :class:`TypeError` for a value
of the wrong JSON type, :class:`ValueError` for a wrong value. :class:`JsonReport` gives every
report the same ``to_dict``/``from_dict``/``to_json``/``from_json``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any, Self

import attr
import attrs

from ef.evaluation._json import json_type, loads_strict

__all__ = [
    "Checker",
    "JsonReport",
    "checked",
    "count",
    "finite",
    "integer",
    "list_of",
    "mapping_of",
    "nested",
    "object_",
    "optional",
    "string",
    "structure",
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
        return {
            key: checker(item, f"{where}[{key!r}]") for key, item in object_(value, where).items()
        }

    return check


def list_of(checker: Checker) -> Checker:
    """A JSON array whose every item passes ``checker``."""

    def check(value: Any, where: str) -> Any:
        if not isinstance(value, list | tuple):
            raise _wrong_type(value, where, "an array")
        return [checker(item, f"{where}[{index}]") for index, item in enumerate(value)]

    return check


def nested(cls: type[Any]) -> Checker:
    """A JSON object holding the fields of the attrs class ``cls``, built into one."""

    def check(value: Any, where: str) -> Any:
        return structure(cls, value, where)

    return check


_CHECK = "ef.evaluation.check"


def checked(checker: Checker) -> dict[str, Checker]:
    """The ``metadata=`` of an attrs field whose JSON value ``checker`` checks."""
    return {_CHECK: checker}


def structure(cls: type[Any], data: Any, where: str = "") -> Any:
    """An instance of the attrs class ``cls`` from its JSON ``data``, every field checked.

    Each field is checked by the checker in its metadata (:func:`checked`); every field
    without a default must be present; a name that is no field is refused.

    :param cls: the attrs class to build.
    :param data: the decoded JSON object.
    :param where: the place of ``data`` in a larger value, for messages.
    :raises TypeError: for a missing or unknown field, or a value of the wrong type.
    :raises ValueError: for a number that is not finite, or a negative count.

    >>> @attrs.frozen
    ... class Point:
    ...     x: float = attrs.field(metadata=checked(finite))
    ...     label: str = attrs.field(default="", metadata=checked(string))
    >>> structure(Point, {"x": 1.5})
    Point(x=1.5, label='')
    >>> structure(Point, {"x": "1.5"})
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
    return cls(
        **{
            name: fields[name].metadata[_CHECK](value, prefix + name)
            for name, value in data.items()
        }
    )


class JsonReport:
    """The JSON of a report class: ``attrs.asdict`` out, :func:`structure` back in."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (the inverse of :meth:`from_dict`): plain dicts and
        lists all the way down."""
        # attrs.asdict keeps tuples (and our read-only types); the classic one makes lists.
        return attr.asdict(self, retain_collection_types=False)  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Rebuild a report from :meth:`to_dict` output, checking every field first.

        :raises TypeError: for a missing or unknown field, or a value of the wrong type (a
            string or ``null`` where a number belongs).
        :raises ValueError: for a number that is not finite, or a negative count.
        """
        return structure(cls, data)  # type: ignore[no-any-return]

    def to_json(self, **dumps_options: Any) -> str:
        """The report as a JSON string; strict JSON, so a value that is not finite is refused.

        :raises ValueError: if a value is NaN or infinite.
        """
        return json.dumps(self.to_dict(), **{**dumps_options, "allow_nan": False})

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        """Rebuild a report from :meth:`to_json` output, which must be strict JSON.

        :raises ValueError: for text that is not strict JSON (a
            :class:`~ef.evaluation._json.JsonProblem`), or a field of the wrong value.
        :raises TypeError: for a field of the wrong type.
        """
        return cls.from_dict(loads_strict(text))
