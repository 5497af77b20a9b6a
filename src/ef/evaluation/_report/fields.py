"""Report fields checked where a report is made, and reports to and from JSON through attrs.

Each field names its checker next to its declaration (:func:`checked`). A report built in code
is checked as strictly as one read from JSON: :class:`JsonReport` runs every field's checker
when the report is made (``__attrs_post_init__``, after the converters), so ``NaN`` for a mean
or ``-3`` queries is refused with the report class, the field, the key and the value, instead of
becoming a report that fails later (in ``to_json``) or prints a wrong number.

A saved report is input like any other: :func:`structure` checks every field of the JSON
before building the report (a string where a number belongs, ``null`` for a mean, a number that
overflowed to infinity), and the report it builds is not checked a second time. A checker
returns the value (ints stay ints, so a report round-trips exactly; a nested report class is
built from JSON) and raises :class:`TypeError` for a value of the wrong type,
:class:`ValueError` for a wrong value. :class:`JsonReport` gives every report the same
``to_dict``/``from_dict``/``to_json``/``from_json``.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Callable, Collection, Iterator, Mapping
from contextvars import ContextVar
from functools import reduce
from operator import iadd
from typing import Any, Self

import attr
import attrs

from ef.evaluation._json import json_type, loads_strict

__all__ = [
    "Checker",
    "JsonReport",
    "built",
    "check_fields",
    "checked",
    "count",
    "finite",
    "integer",
    "list_of",
    "mapping_of",
    "nested",
    "object_",
    "optional",
    "reading_json",
    "string",
    "structure",
]

Checker = Callable[[Any, str], Any]
"""Checks a value found at a place (such as ``"per_query['q1']"``) and returns it."""

_READING_JSON: ContextVar[bool] = ContextVar("ef_evaluation_reading_json", default=False)
"""True while :func:`structure` builds a report from JSON: its checkers name a value's JSON
type, and the reports it builds skip :func:`check_fields` (it checked their fields already)."""

_EVERY: dict[Checker, Callable[[Collection[Any]], bool]] = {}
"""For a checker of plain values, a test at C speed that every one of many values passes it.
Every report made is checked, and a report's per-query values checked one by one, each with
its place for the message, would cost more than making the report; when the test says no, the
checker goes value by value to name the first wrong one."""


@contextlib.contextmanager
def reading_json() -> Iterator[None]:
    """Within: values are checked as JSON (a message names a value's JSON type), and the
    reports built skip :func:`check_fields`, their JSON having been checked field by field."""
    token = _READING_JSON.set(True)
    try:
        yield
    finally:
        _READING_JSON.reset(token)


def _wrong_type(value: Any, where: str, expected: str) -> TypeError:
    if _READING_JSON.get():
        return TypeError(f"{where} is a JSON {json_type(value)}; expected {expected}")
    shown = "None" if value is None else f"{value!r:.80} (a {type(value).__name__})"
    return TypeError(f"{where} is {shown}; expected {expected}")


def _finite_sum(total: Callable[[], Any]) -> bool:
    """Whether the numbers ``total()`` adds up are certainly all finite ints or floats: a NaN or
    an infinity makes the sum NaN or infinite, a value that is no number stops it, and a number
    of another type (numpy's) makes the sum that type. A sum that overflows settles nothing."""
    try:
        value = total()
        return type(value) in (float, int) and math.isfinite(value)
    except (TypeError, OverflowError):
        return False


def _every_finite(values: Collection[Any]) -> bool:
    # One pass at C speed, as exact as math.isfinite: a bool is an int to sum(), so it passes
    # here in a report made in code; from JSON, where true and false are no numbers, the
    # types are looked at too.
    if _READING_JSON.get() and not set(map(type, values)) <= {float, int}:
        return False
    return _finite_sum(lambda: sum(values))


def _every_finite_row(rows: Collection[Any]) -> bool:
    # A report's per-query rows: one sum per row, without first joining their values.
    if not all(issubclass(kind, dict) for kind in set(map(type, rows))):
        return False
    if _READING_JSON.get():
        items: list[Any] = []
        return _every_finite(reduce(iadd, map(dict.values, rows), items))
    return _finite_sum(lambda: sum(map(sum, map(dict.values, rows))))


def finite(value: Any, where: str) -> float:
    """A finite number (an int or a float, never a bool or a string)."""
    if type(value) is bool or not isinstance(value, int | float):
        raise _wrong_type(value, where, "a number")
    if isinstance(value, float) and not math.isfinite(value):
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


_EVERY[finite] = _every_finite
_EVERY[count] = lambda values: set(map(type, values)) <= {int} and min(values, default=0) >= 0
_EVERY[string] = lambda values: set(map(type, values)) <= {str}


def _joined(values: Collection[Any], kind: type | tuple[type, ...]) -> list[Any] | None:
    """The items of every collection in ``values`` (mappings give their values), one list; None
    if one of ``values`` is not a ``kind``."""
    if not all(issubclass(each, kind) for each in set(map(type, values))):
        return None
    items: list[Any] = []
    return reduce(iadd, map(dict.values, values) if kind is dict else values, items)


def optional(checker: Checker) -> Checker:
    """``checker``, or ``None`` (JSON ``null``)."""

    def check(value: Any, where: str) -> Any:
        return None if value is None else checker(value, where)

    every = _EVERY.get(checker)
    if every is not None:
        _EVERY[check] = lambda values: every([value for value in values if value is not None])
    return check


def mapping_of(checker: Checker) -> Checker:
    """A JSON object whose every value passes ``checker``."""
    every = _EVERY.get(checker)

    def check(value: Any, where: str) -> dict[str, Any]:
        mapping = object_(value, where)
        if every is not None and every(mapping.values()):
            return mapping
        return {key: checker(item, f"{where}[{key!r}]") for key, item in mapping.items()}

    if checker is finite:
        _EVERY[check] = _every_finite_row
    elif every is not None:
        _EVERY[check] = lambda values: (items := _joined(values, dict)) is not None and every(items)
    return check


def list_of(checker: Checker) -> Checker:
    """A JSON array whose every item passes ``checker``."""
    every = _EVERY.get(checker)

    def check(value: Any, where: str) -> Any:
        if not isinstance(value, list | tuple):
            raise _wrong_type(value, where, "an array")
        if every is not None and every(value):
            return value
        return [checker(item, f"{where}[{index}]") for index, item in enumerate(value)]

    if every is not None:
        _EVERY[check] = lambda values: (
            (items := _joined(values, (list, tuple))) is not None and every(items)
        )
    return check


def built(cls: type[Any], build: Checker) -> Checker:
    """An instance of ``cls``: in a report made in code, one made already (and checked then);
    in JSON, the one ``build`` makes of the value."""

    def check(value: Any, where: str) -> Any:
        if isinstance(value, cls):
            return value
        if not _READING_JSON.get():
            raise _wrong_type(value, where, f"a {cls.__name__}")
        return build(value, where)

    return check


def nested(cls: type[Any]) -> Checker:
    """A JSON object holding the fields of the attrs class ``cls``, built into one (in a report
    made in code, an instance of ``cls``)."""
    return built(cls, lambda value, where: structure(cls, value, where))


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
    with reading_json():
        return _structure(cls, data, where)


def _structure(cls: type[Any], data: Any, where: str) -> Any:
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


_CHECKERS: dict[type[Any], tuple[tuple[str, Checker], ...]] = {}


def _checkers(cls: type[Any]) -> tuple[tuple[str, Checker], ...]:
    """Each checked field of the attrs class ``cls`` with its checker."""
    found = _CHECKERS.get(cls)
    if found is None:
        fields = attrs.fields(cls)
        found = tuple((f.name, f.metadata[_CHECK]) for f in fields if _CHECK in f.metadata)
        _CHECKERS[cls] = found
    return found


def check_fields(report: Any) -> None:
    """Check every field of ``report`` (an attrs instance) with the checker in its metadata.

    :raises TypeError: for a value of the wrong type, naming the class, the field (and the key
        or index inside it) and the value.
    :raises ValueError: for a wrong value (a number that is not finite, a negative count), as
        named.

    >>> @attrs.frozen
    ... class Point(JsonReport):
    ...     x: float = attrs.field(metadata=checked(finite))
    >>> Point(float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: Point.x is nan; expected a finite number
    """
    cls = type(report)
    for name, checker in _checkers(cls):
        checker(getattr(report, name), f"{cls.__name__}.{name}")


class JsonReport:
    """The JSON of a report class: ``attrs.asdict`` out, :func:`structure` back in; and the
    check of every field where a report is made (:func:`check_fields`)."""

    __slots__ = ()

    def __attrs_post_init__(self) -> None:
        if not _READING_JSON.get():  # structure() checked the fields it was built from
            check_fields(self)

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
