"""Confidence intervals of means: Student's t and the percentile bootstrap, and their record.

One implementation serves the whole library: a report's means (:meth:`with_intervals` of the
retrieval and RAG reports) and :func:`~ef.evaluation.compare`'s paired bootstrap interval of a
difference (a mean too: of the per-query differences) both draw their resamples through
:func:`percentile_bootstrap`, and decide the degenerate cases with :func:`common_value`.

scipy (the optional ``stats`` extra) is imported on first use, so the core stays scipy-free.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterable, Mapping, Sequence
from functools import reduce
from operator import add
from typing import Any, Literal

import attrs

from ef.evaluation._report.fields import (
    JsonReport,
    checked,
    count,
    finite,
    integer,
    list_of,
    mapping_of,
    optional,
    string,
)
from ef.evaluation._report.frozen import FrozenDict, frozen_dict

__all__ = [
    "DEFAULT_N_RESAMPLES",
    "DEFAULT_SEED",
    "INTERVAL_METHODS",
    "MAX_RESAMPLED_VALUES",
    "RELATIVE_TOLERANCE",
    "IntervalMethod",
    "MeanIntervals",
    "check_interval_options",
    "common_value",
    "mean_interval",
    "mean_intervals",
    "percentile_bootstrap",
    "plain_mean",
    "rng_option",
    "scipy_modules",
]

IntervalMethod = Literal["t", "bootstrap"]
INTERVAL_METHODS: tuple[IntervalMethod, ...] = ("t", "bootstrap")
"""The intervals of a mean a report can state (``interval=``)."""

DEFAULT_N_RESAMPLES = 10_000
"""How many resamples a bootstrap interval draws, unless told otherwise (as :func:`compare`)."""

DEFAULT_SEED = 0
"""The seed of ``numpy.random.default_rng`` for a bootstrap interval, unless told otherwise."""

_INSTALL_HINT = "pip install 'ef-evaluation[stats]'"
MAX_RESAMPLED_VALUES = 2**24
"""The most values a bootstrap holds at once (128 MiB of floats): resamples are drawn in batches
of at most this many values, which draws the same resamples as one batch would."""
RELATIVE_TOLERANCE = 1e-12
"""Values within this fraction of their largest magnitude (at least 1) count as equal."""


def scipy_modules() -> tuple[Any, Any]:
    """``(numpy, scipy.stats)``, or an ImportError naming the extra that provides them."""
    try:
        # Optional extra: untyped, and absent from a core-only type check.
        import numpy  # type: ignore[import-not-found, unused-ignore]
        from scipy import stats  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError as error:
        if isinstance(error, ModuleNotFoundError) and error.name in {"scipy", "numpy"}:
            raise ImportError(
                f"significance tests and confidence intervals need scipy, but {error.name} is "
                f"not installed ({_INSTALL_HINT})"
            ) from error
        raise ImportError(
            f"scipy is installed but failed to import: {error} (reinstall it: {_INSTALL_HINT})"
        ) from error
    return numpy, stats


def rng_option(function: Any, seed: int) -> dict[str, Any]:
    """The seeded generator under the keyword this scipy accepts (``rng`` from 1.15 on)."""
    numpy, _ = scipy_modules()
    keyword = "rng" if "rng" in inspect.signature(function).parameters else "random_state"
    return {keyword: numpy.random.default_rng(seed)}


def common_value(values: Sequence[float], scale: float) -> float | None:
    """The value every one of ``values`` has, up to rounding noise, else ``None``.

    Values count as one when they lie within ``1e-12 × scale`` of each other (``scale`` is at
    least 1: the largest magnitude involved); the common value is then their mean, or ``0.0``
    when that is within the same distance of 0. Per-query values computed in floating point
    carry rounding noise (``0.3 - 0.2`` is ``0.09999999999999998``), which scipy would read as
    a real spread.

    >>> common_value([0.09999999999999998, 0.1], 1.0)
    0.09999999999999999
    >>> common_value([0.1, 0.2], 1.0) is None
    True
    """
    tolerance = RELATIVE_TOLERANCE * scale
    if max(values) - min(values) > tolerance:
        return None
    common = math.fsum(values) / len(values)
    return 0.0 if abs(common) <= tolerance else common


def _scale(values: Iterable[float]) -> float:
    return max(1.0, *(abs(float(v)) for v in values))


def check_interval_options(
    method: str | None,
    confidence_level: float,
    n_resamples: int = DEFAULT_N_RESAMPLES,
) -> None:
    """Refuse an unknown interval method, a level outside (0, 1) or fewer than one resample.

    :raises ValueError: naming the bad value and what is expected.

    >>> check_interval_options("normal", 0.95)
    Traceback (most recent call last):
    ...
    ValueError: unknown interval 'normal': expected 't', 'bootstrap' or None
    """
    if method is not None and method not in INTERVAL_METHODS:
        raise ValueError(f"unknown interval {method!r}: expected 't', 'bootstrap' or None")
    if type(confidence_level) is bool or not isinstance(confidence_level, int | float):
        raise TypeError(f"confidence_level must be a number in (0, 1), got {confidence_level!r}")
    if not 0.0 < confidence_level < 1.0:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level}")
    if type(n_resamples) is bool or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(f"n_resamples must be an integer >= 1, got {n_resamples!r}")


def percentile_bootstrap(
    values: Sequence[float], *, confidence_level: float, n_resamples: int, seed: int
) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of ``values`` (``scipy.stats.bootstrap``,
    ``method="percentile"``), resampling from ``numpy.random.default_rng(seed)``.

    No degenerate case is decided here: callers handle a single value and constant values
    (:func:`mean_interval`, :func:`~ef.evaluation._compare.stats.bootstrap_interval`). The
    resamples are drawn in batches of at most :data:`MAX_RESAMPLED_VALUES` values, so that
    10,000 resamples of a million queries do not need 80 GB.
    """
    numpy, stats = scipy_modules()
    batch = max(1, MAX_RESAMPLED_VALUES // max(1, len(values)))
    result = stats.bootstrap(
        (numpy.asarray(values, dtype=float),),
        numpy.mean,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        method="percentile",
        vectorized=True,
        batch=batch if batch < n_resamples else None,
        **rng_option(stats.bootstrap, seed),
    )
    interval = result.confidence_interval
    return (float(interval.low), float(interval.high))


def _t_interval(values: Sequence[float], confidence_level: float) -> tuple[float, float]:
    numpy, stats = scipy_modules()
    array = numpy.asarray(values, dtype=float)
    low, high = stats.t.interval(
        confidence_level, len(array) - 1, loc=numpy.mean(array), scale=stats.sem(array)
    )
    return (float(low), float(high))


def mean_interval(
    values: Sequence[float],
    method: IntervalMethod,
    *,
    confidence_level: float = 0.95,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> tuple[float, float] | None:
    """A confidence interval of the mean of ``values`` (one value per query or sample).

    ``"t"`` is Student's t interval, ``scipy.stats.t.interval(confidence_level, n - 1,
    loc=mean, scale=sem)``; ``"bootstrap"`` is the percentile bootstrap interval from
    ``n_resamples`` resamples of the values with replacement (:func:`percentile_bootstrap`).
    Values that are all the same (up to rounding noise, :func:`common_value`) give the
    interval ``(value, value)``: every resample has that mean. A single value gives ``None``:
    one query says nothing about how the mean varies.

    :raises ValueError: for an unknown method, a level outside (0, 1), ``n_resamples < 1``,
        or no values.

    >>> mean_interval([0.5, 0.5, 0.5], "t")
    (0.5, 0.5)
    >>> mean_interval([0.5], "bootstrap") is None
    True
    """
    check_interval_options(method, confidence_level, n_resamples)
    if not values:
        raise ValueError("no values: a mean needs at least one")
    if len(values) == 1:
        return None
    common = common_value(values, _scale(values))
    if common is not None:
        return (common, common)
    if method == "t":
        return _t_interval(values, confidence_level)
    return percentile_bootstrap(
        values, confidence_level=confidence_level, n_resamples=n_resamples, seed=seed
    )


def _bounds(value: Iterable[float] | None) -> tuple[float, float] | None:
    if value is None:
        return None
    low, high = value
    return (low, high)


def _bounds_pair(value: Any, where: str) -> Any:
    pair = list_of(finite)(value, where)
    if len(pair) != 2:
        raise ValueError(f"{where} holds {len(pair)} numbers; expected [low, high]")
    return pair


def _frozen_bounds(
    value: Mapping[str, Iterable[float] | None],
) -> FrozenDict[str, tuple[float, float] | None]:
    return frozen_dict({key: _bounds(bounds) for key, bounds in value.items()})


def _method(value: Any, where: str) -> str:
    if string(value, where) not in INTERVAL_METHODS:
        raise ValueError(f"{where} is {value!r}; expected 't' or 'bootstrap'")
    return str(value)


@attrs.frozen
class MeanIntervals(JsonReport):
    """The confidence intervals of a report's means, and how they were made.

    :param method: ``"t"`` (Student's t) or ``"bootstrap"`` (percentile bootstrap).
    :param confidence_level: their coverage, in (0, 1).
    :param bounds: ``(low, high)`` for each metric key of the report, ``None`` where no
        interval exists (a single query); a key that is not a mean (trec_eval's sums and
        geometric means) has no entry.
    :param n_resamples: how many resamples the bootstrap drew (``None`` for ``"t"``).
    :param seed: the seed of ``numpy.random.default_rng`` the bootstrap drew them from
        (``None`` for ``"t"``).

    >>> MeanIntervals("t", 0.95, {"ndcg@10": (0.41, 0.57)}).bounds["ndcg@10"]
    (0.41, 0.57)
    """

    method: str = attrs.field(metadata=checked(_method))
    confidence_level: float = attrs.field(metadata=checked(finite))
    bounds: FrozenDict[str, tuple[float, float] | None] = attrs.field(
        converter=_frozen_bounds, metadata=checked(mapping_of(optional(_bounds_pair)))
    )
    n_resamples: int | None = attrs.field(default=None, metadata=checked(optional(count)))
    seed: int | None = attrs.field(default=None, metadata=checked(optional(integer)))

    def describe(self) -> str:
        """One line saying what the intervals are, for a table's title.

        >>> MeanIntervals("bootstrap", 0.95, {}, n_resamples=10000, seed=0).describe()
        '95% percentile bootstrap intervals (10,000 resamples, seed 0)'
        """
        level = f"{self.confidence_level:.0%}"
        if self.method == "t":
            return f"{level} t intervals"
        return (
            f"{level} percentile bootstrap intervals ({self.n_resamples:,} resamples, "
            f"seed {self.seed})"
        )


def plain_mean(values: Sequence[float]) -> float:
    """The mean as the reports form it: summed left to right from 0.0, over the count."""
    return reduce(add, values, 0.0) / len(values)


def mean_intervals(
    means: Mapping[str, float],
    values: Mapping[str, Sequence[float]],
    method: IntervalMethod,
    *,
    confidence_level: float = 0.95,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> MeanIntervals:
    """The intervals of each of ``means`` from the values it is the mean of.

    A key whose reported value is not the mean of its values (a sum, a geometric mean, as
    trec_eval aggregates ``num_*`` and ``gm_*``) gets no interval: it has no entry.

    :param means: the report's value per key.
    :param values: each key's per-query (or per-sample) values, in the report's order.
    :raises ValueError: as :func:`mean_interval`.
    """
    check_interval_options(method, confidence_level, n_resamples)
    bounds: dict[str, tuple[float, float] | None] = {}
    for key, mean in means.items():
        key_values = values.get(key)
        if not key_values:
            continue
        plain = plain_mean(key_values)
        if abs(plain - mean) > RELATIVE_TOLERANCE * _scale((plain, mean)):
            continue
        bounds[key] = mean_interval(
            key_values,
            method,
            confidence_level=confidence_level,
            n_resamples=n_resamples,
            seed=seed,
        )
    bootstrap = method == "bootstrap"
    return MeanIntervals(
        method,
        confidence_level,
        bounds,
        n_resamples=n_resamples if bootstrap else None,
        seed=seed if bootstrap else None,
    )
