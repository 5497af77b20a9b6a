"""The checks of what ``fuse`` and ``optimize_fusion`` are asked for: the weights, and each
parameter against the domain its method declares, before any run is read."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ef.evaluation._fusion._entries import MethodEntry
from ef.evaluation._scoring.domains import like, number

__all__ = ["check_params", "check_weights"]


def check_weights(entry: MethodEntry, weights: Sequence[float] | None, n_runs: int) -> Any:
    """The weights as floats, one per run; ``None`` gives every run 1.0.

    :raises ValueError: for weights given to an unweighted method, a count that is not the number
        of runs, or a weight that is not a finite number.
    """
    if not entry.weighted:
        if weights is not None:
            raise ValueError(f"fusion method {entry.name!r} takes no weights")
        return None
    if weights is None:
        return (1.0,) * n_runs
    if isinstance(weights, str | bytes) or not isinstance(weights, Sequence):
        raise ValueError(f"weights must be a sequence of numbers, got {type(weights).__name__}")
    if len(weights) != n_runs:
        raise ValueError(f"{len(weights)} weights given for {n_runs} runs; give one per run")
    for weight in weights:
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            raise ValueError(f"weight {weight!r} is not a number")
        if not math.isfinite(weight):
            raise ValueError(f"weight {weight!r} is not finite")
    return tuple(float(weight) for weight in weights)


def check_params(entry: MethodEntry, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The method's defaults updated with ``params``, each checked against its domain.

    A parameter's domain is the one the method declared, else its default's type (an int, a
    finite number, a string), else any finite number.

    :raises ValueError: for a parameter the method does not take (listing those it takes), a
        required one missing.
    :raises ParameterError: for a value outside its domain (naming the method, the parameter
        and the domain).
    """
    if params is not None and not isinstance(params, Mapping):
        raise ValueError(f"params must be a mapping of parameters, got {type(params).__name__}")
    given = dict(params or {})
    accepted = {*entry.defaults, *entry.required, *entry.trained, *entry.train_params}
    if "weights" in given:
        raise ValueError("pass weights with weights=, not in params")
    unknown = sorted(name for name in given if name not in accepted)
    if unknown:
        takes = ", ".join(sorted(accepted)) or "no parameters"
        raise ValueError(
            f"fusion method {entry.name!r} does not take {', '.join(map(repr, unknown))}; "
            f"it takes: {takes}"
        )
    owner = f"fusion method {entry.name!r}"
    for name, value in given.items():
        domain = entry.domains.get(name)
        if domain is None:
            domain = like(entry.defaults[name]) if name in entry.defaults else _ANY_NUMBER
            if domain is _ANY_NUMBER and not isinstance(value, int | float):
                continue  # an undeclared parameter of a plugin's method: its own to check
        given[name] = domain.check(value, owner, name)
    merged = {**entry.defaults, **given}
    missing = [name for name in entry.required if name not in merged]
    if missing:
        example = ", ".join(f"{name!r}: ..." for name in missing)
        raise ValueError(
            f"fusion method {entry.name!r} needs {', '.join(missing)}: params={{{example}}}"
        )
    return merged


_ANY_NUMBER = number()
