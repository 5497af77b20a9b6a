"""Every report mean, and trec_eval's other aggregates over queries: sums and geometric means.

Every metric and measure is a plain mean over the scored queries except trec_eval's own
aggregates, kept as trec_eval defines them (``meas_avg.c``):

- ``gm_map`` and ``gm_bpref``: per query the AP or bpref value; over queries the geometric mean
  with trec_eval's floor, ``exp(mean(log(max(value, 1e-5))))`` (``MIN_GEO_MEAN``);
- ``num_q``, ``num_ret``, ``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret``: summed.

Sums run left to right from 0.0, in the planned order (builtin ``sum`` compensates on 3.12+,
which would change the last digits between Python versions).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from functools import reduce
from operator import add
from typing import Literal

__all__ = [
    "AGGREGATIONS",
    "MIN_GEO_MEAN",
    "Aggregation",
    "aggregate",
    "applicable_means",
    "exact_unit_scale",
]

Aggregation = Literal["mean", "sum", "geometric"]
AGGREGATIONS: tuple[Aggregation, ...] = ("mean", "sum", "geometric")
"""How a key's per-query values become ``report.metrics``: a plain mean over the scored queries,
a sum (trec_eval's ``num_*`` counts), or trec_eval's geometric mean (``gm_map``, ``gm_bpref``)."""

MIN_GEO_MEAN = 0.00001
"""trec_eval's floor under each value of a geometric mean, so one zero does not zero it all."""


def aggregate(values: Sequence[float], how: Aggregation) -> float:
    """The aggregate of per-query ``values``, as trec_eval forms it.

    :param values: one value per scored query, in the planned order (at least one).
    :param how: ``"mean"``, ``"sum"`` or ``"geometric"``.

    >>> aggregate([0.5, 0.0], "geometric") == math.exp((math.log(0.5) + math.log(1e-5)) / 2)
    True
    >>> aggregate([3.0, 4.0], "sum")
    7.0
    """
    if how == "sum":
        return reduce(add, values, 0.0)
    if how == "geometric":
        logs = (math.log(value if value > MIN_GEO_MEAN else MIN_GEO_MEAN) for value in values)
        return math.exp(reduce(add, logs, 0.0) / len(values))
    return reduce(add, values, 0.0) / len(values)


def applicable_means(
    rows: Sequence[Mapping[str, float | None]], names: Sequence[str]
) -> tuple[dict[str, float], dict[str, int]]:
    """Each name's mean over the rows where it applies (not ``None``), summed with
    :func:`math.fsum`, and how many rows that was (RAG samples: a metric that applied to none
    has coverage 0 and no mean).

    >>> applicable_means([{'f1': 0.5}, {'f1': None}, {'f1': 1.0}], ['f1'])
    ({'f1': 0.75}, {'f1': 2})
    """
    values: dict[str, list[float]] = {name: [] for name in names}
    for row in rows:
        for name in names:
            value = row.get(name)
            if value is not None:
                values[name].append(value)
    means = {name: math.fsum(kept) / len(kept) for name, kept in values.items() if kept}
    return means, {name: len(kept) for name, kept in values.items()}


def exact_unit_scale(values: Iterable[float]) -> float:
    """The power of two that brings the largest magnitude of ``values`` below 1 (1.0 when it is
    already): scaling by it is exact, so the scaled values' sums, differences and squares cannot
    overflow even near the float limit (±1.7e308).

    >>> exact_unit_scale([3.0, -0.5]), exact_unit_scale([0.5]), exact_unit_scale([1.7e308]) < 1
    (0.25, 1.0, True)
    """
    return math.ldexp(1.0, -max(math.frexp(max(map(abs, values)))[1], 0))
