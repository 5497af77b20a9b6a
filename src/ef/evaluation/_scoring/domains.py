"""The values a parameter may take: one declaration per parameter, one check for all of them.

Every parameter of a measure (its cutoff, ``rel``, ``p``, ``dcg``) and of a fusion method
(``k``, ``phi``, ``gamma``, trained ``probs`` …) declares a :class:`Domain` next to its
definition. :meth:`Domain.check` is the one check: it takes the value as given (or as written
in a notation, a string) and returns it converted, or raises a
:class:`~ef.evaluation.ParameterError` naming the measure or method, the parameter and the
domain, before any work is done.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any, Literal

import attrs

from ef.evaluation._exceptions import ParameterError

__all__ = [
    "CUTOFF",
    "Domain",
    "abbreviated",
    "choice",
    "integer",
    "like",
    "number",
    "per_run",
]

Kind = Literal["int", "number", "choice", "text", "per_run", "per_run_rows"]

_MAX_DIGITS = 30
"""A longer number written in a notation is refused before Python converts it."""


@attrs.frozen
class Domain:
    """The values one parameter takes.

    :ivar kind: ``int``, ``number`` (a finite int or float), ``choice`` (one of ``choices``),
        ``text`` (any string), ``per_run`` (one finite number per run) or ``per_run_rows`` (one
        sequence of finite numbers per run; a 2-D numpy array too).
    :ivar low: the smallest value, if bounded below; ``low_open``: ``low`` itself is excluded.
    :ivar high: the largest value, if bounded above; ``high_open``: ``high`` itself is excluded.
    :ivar choices: the values of a ``choice``.
    """

    kind: Kind
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()

    def describe(self) -> str:
        """The domain in words, as errors and the catalogue show it: ``a number in (0, 1)``."""
        if self.kind == "choice":
            return "one of " + ", ".join(map(repr, self.choices))
        if self.kind == "text":
            return "a string"
        if self.kind == "per_run":
            return "one finite number per run"
        if self.kind == "per_run_rows":
            return "one sequence of finite numbers per run"
        noun = "an int" if self.kind == "int" else "a finite number"
        low, high = self.low, self.high
        if low is not None and high is not None:
            left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
            return f"{noun} in {left}{_shown(low)}, {_shown(high)}{right}"
        if low is not None:
            return f"{noun} {'>' if self.low_open else '>='} {_shown(low)}"
        if high is not None:
            return f"{noun} {'<' if self.high_open else '<='} {_shown(high)}"
        return noun

    def check(self, value: Any, owner: str, name: str, *, written: bool = False) -> Any:
        """``value`` converted to the domain's type, if it is in the domain.

        With ``written``, ``value`` is the text of a notation, read as it writes a number
        (``'0.8'``, ``'10'``); otherwise it must already be of the domain's type (``k='60'`` is
        refused).

        :param owner: who takes the parameter, for the message: ``"metric 'P@5'"``,
            ``"fusion method 'rrf'"``.
        :param name: the parameter's name, for the message.
        :raises ParameterError: for a value outside the domain.

        >>> integer(1).check('10', "metric 'P@10'", 'cutoff', written=True)
        10
        >>> phi = number(0, 1, low_open=True, high_open=True)
        >>> phi.check(2, "fusion method 'rbc'", 'phi')  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ef.evaluation.ParameterError: fusion method 'rbc': parameter 'phi' must be a finite ...
        """
        if isinstance(value, str) and not written and self.kind not in ("text", "choice"):
            converted = _REFUSED  # a number given as text, outside a notation
        else:
            converted = self._converted(value)
        if converted is _REFUSED:
            raise ParameterError(
                f"{owner}: parameter {name!r} must be {self.describe()}, got {_given(value)}"
            )
        return converted

    def _converted(self, value: Any) -> Any:
        if self.kind == "text":
            return value if isinstance(value, str) else _REFUSED
        if self.kind == "choice":
            return value if isinstance(value, str) and value in self.choices else _REFUSED
        if self.kind in ("per_run", "per_run_rows"):
            return _per_run(value, rows=self.kind == "per_run_rows")
        converted = _read_number(value, integral=self.kind == "int")
        if converted is _REFUSED or not self._within(converted):
            return _REFUSED
        return converted

    def _within(self, value: float) -> bool:
        low, high = self.low, self.high
        if low is not None and (value <= low if self.low_open else value < low):
            return False
        return not (high is not None and (value >= high if self.high_open else value > high))


_REFUSED: Any = object()


def _shown(bound: float) -> str:
    if bound == 2**63 - 1:
        return "2**63 - 1"
    return str(int(bound)) if float(bound).is_integer() else str(bound)


def _given(value: Any) -> str:
    return abbreviated(value)


def abbreviated(value: Any) -> str:
    """``repr(value)``, cut short when long (a 5,000-digit cutoff), for error messages.

    >>> abbreviated('P@' + '9' * 5000)
    "'P@9999999999999999999999999999999999999… (5004 characters)"
    """
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}… ({len(text)} characters)"


def _read_number(value: Any, *, integral: bool) -> Any:
    """``value`` as a Python int or finite float, or ``_REFUSED``."""
    if isinstance(value, str):
        text = value.strip()
        if not text.isascii() or len(text) > _MAX_DIGITS:
            return _REFUSED
        try:
            value = int(text) if integral else float(text)
        except ValueError:
            return _REFUSED
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return _REFUSED
    if isinstance(value, numbers.Integral):
        return int(value)
    if integral:
        return _REFUSED
    as_float = float(value)
    return as_float if math.isfinite(as_float) else _REFUSED


def _per_run(value: Any, *, rows: bool) -> Any:
    """A sequence (or numpy array) of finite numbers, or of such sequences, as lists."""
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        value = value.tolist()  # a numpy array, as ranx gives its trained parameters
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        return _REFUSED
    out: list[Any] = []
    for item in value:
        if rows:
            row = _per_run(item, rows=False)
            if row is _REFUSED:
                return _REFUSED
            out.append(row)
        else:
            number_ = _read_number(item, integral=False) if not isinstance(item, str) else _REFUSED
            if number_ is _REFUSED:
                return _REFUSED
            out.append(float(number_))
    return out


def integer(low: int | None = None, high: int | None = None) -> Domain:
    """Ints from ``low`` to ``high`` (both included)."""
    return Domain("int", low, high)


def number(
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> Domain:
    """Finite numbers between ``low`` and ``high`` (included unless ``*_open``)."""
    return Domain("number", low, high, low_open, high_open)


def choice(*choices: str) -> Domain:
    """One of ``choices``."""
    return Domain("choice", choices=choices)


def per_run(*, rows: bool = False) -> Domain:
    """One finite number per run, or (``rows``) one sequence of them per run."""
    return Domain("per_run_rows" if rows else "per_run")


def like(default: Any) -> Domain:
    """The domain a parameter declared only by its default takes: its default's type.

    >>> like(2).describe(), like(0.5).describe(), like('x').describe()
    ('an int', 'a finite number', 'a string')
    """
    if isinstance(default, str):
        return Domain("text")
    if isinstance(default, int) and not isinstance(default, bool):
        return integer()
    return number()


CUTOFF = integer(1, 2**63 - 1)
"""A rank cutoff: trec_eval reads it into a ``long``."""
