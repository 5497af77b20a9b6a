"""The domains of two parameters that are no number: a switch and a table of gains.

``judged_only=True`` (ir_measures' ``P(judged_only=True)@5``) and ``gains={0: 0, 1: 1, 2: 3}``
(ir_measures' ``nDCG(gains=...)``) are checked here, as every other parameter is checked by its
:class:`~ef.evaluation._scoring.domains.Domain`: the value as written in a notation, or as given,
converted, or a :class:`~ef.evaluation.ParameterError` naming the measure and the parameter.
"""

from __future__ import annotations

import math
import re
from typing import Any

import attrs

from ef.evaluation._exceptions import ParameterError
from ef.evaluation._scoring.domains import Domain, abbreviated

__all__ = ["FLAG", "GAINS", "Gains"]

Gains = tuple[tuple[float, float], ...]
"""A table of gains, ``((grade, gain), ...)`` by grade: hashable, so one measure is one value."""

_TRUE = ("True", "true", "1")
_FALSE = ("False", "false", "0")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_MAX_ENTRIES = 1000


def _refused(owner: str, name: str, domain: Domain, value: Any) -> ParameterError:
    return ParameterError(
        f"{owner}: parameter {name!r} must be {domain.describe()}, got {abbreviated(value)}"
    )


@attrs.frozen
class _Flag(Domain):
    """``True`` or ``False``, written as ir_measures writes them (``true``/``false`` too)."""

    def describe(self) -> str:
        return "True or False"

    def check(self, value: Any, owner: str, name: str, *, written: bool = False) -> Any:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and written:
            text = value.strip()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
        raise _refused(owner, name, self, value)


def _number(text: str) -> float | None:
    text = text.strip()
    if _NUMBER.fullmatch(text) is None:
        return None
    value = float(text)
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() else value


def _gains_table(value: Any) -> Gains | None:
    """``{grade: gain, ...}`` (a mapping, or its text) as a sorted table, or ``None``."""
    if isinstance(value, str):
        text = value.strip()
        if not (text.startswith("{") and text.endswith("}")):
            return None
        body = text[1:-1].strip()
        entries: list[tuple[float, float]] = []
        for part in body.split(",") if body else ():
            grade, colon, gain = part.partition(":")
            read_grade, read_gain = _number(grade), _number(gain)
            if not colon or read_grade is None or read_gain is None:
                return None
            entries.append((read_grade, read_gain))
    elif isinstance(value, dict):
        entries = []
        for grade, gain in value.items():
            if not all(
                isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
                for x in (grade, gain)
            ):
                return None
            entries.append((grade, gain))
    else:
        return None
    grades = [grade for grade, _ in entries]
    if not entries or len(entries) > _MAX_ENTRIES or len(set(grades)) != len(grades):
        return None
    return tuple(sorted(entries))


@attrs.frozen
class _Gains(Domain):
    """A table of gains by grade, ``{0: 0, 1: 1, 2: 3}``: each grade once, finite numbers."""

    def describe(self) -> str:
        return "a table {grade: gain, ...} of finite numbers, each grade once"

    def check(self, value: Any, owner: str, name: str, *, written: bool = False) -> Any:
        table = _gains_table(value)
        if table is None:
            raise _refused(owner, name, self, value)
        return table


FLAG: Domain = _Flag("choice", choices=("True", "False"))
"""``True`` or ``False``.

>>> FLAG.check('True', "metric 'P(judged_only=True)@5'", 'judged_only', written=True)
True
"""

GAINS: Domain = _Gains("text")
"""A table of gains by grade, read from ``{grade: gain, ...}``.

>>> GAINS.check('{0: 0, 2: 3, 1: 1}', "metric 'nDCG@10'", 'gains', written=True)
((0, 0), (1, 1), (2, 3))
"""
