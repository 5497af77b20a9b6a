"""The catalogue: the registry's metrics seen as measures — keys, parameters, aggregation, source.

``RETRIEVAL_METRICS`` maps a name to one function; the catalogue says, for every registered
name, which report keys it produces, at which parameters, how those aggregate over queries and
where the definition comes from (a trec_eval source file, ef, or the plugin that registered it).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ef.evaluation._plugins.registry import CORE_PLUGIN, RetrievalMetric
from ef.evaluation._scoring.measures.canon import CANON, Canon
from ef.evaluation._scoring.measures.family import Aggregation
from ef.evaluation._scoring.notation import TREC_NAMES

__all__ = [
    "MeasureInfo",
    "catalogue",
    "describe_canon",
    "describe_metric",
    "metric_for_key",
    "notations_of",
    "with_notations",
]


@attrs.frozen
class MeasureInfo:
    """One registered metric, as a measure.

    :ivar name: the name asked for in ``metrics=``.
    :ivar keys: its report keys; ``None`` for a metric reported as ``name@k`` at each cutoff
        of ``k_values``.
    :ivar parameters: the parameters its keys stand for (cutoffs, recall levels, multiples of R).
    :ivar aggregation: how its values aggregate over queries: ``mean``, ``sum`` or
        ``geometric``.
    :ivar source: where its definition comes from.
    :ivar plugin: the plugin that registered it.
    :ivar description: one line on what it measures.
    :ivar notations: how it may be written in ``metrics=`` (filled by
        ``measure_catalogue(notations=True)``).
    :ivar options: the named parameters it takes in ``Name(param=value)``, with their defaults.
    """

    name: str
    keys: tuple[str, ...] | None
    parameters: tuple[float, ...]
    aggregation: Aggregation
    source: str
    plugin: str
    description: str
    notations: tuple[str, ...] = attrs.field(default=(), kw_only=True)
    options: tuple[str, ...] = attrs.field(default=(), kw_only=True)


def describe_metric(metric: RetrievalMetric) -> MeasureInfo:
    """The catalogue entry of one registered metric."""
    family = metric.family
    if family is not None:
        return MeasureInfo(
            metric.name,
            family.keys,
            family.parameters,
            family.aggregation,
            family.source,
            metric.plugin,
            family.description,
        )
    keys = None if metric.cutoff else (metric.name,)
    return MeasureInfo(
        metric.name, keys, (), "mean", metric.plugin, metric.plugin, metric.description
    )


def notations_of(metric: RetrievalMetric) -> tuple[str, ...]:
    """How a registered metric may be written: its name, then its other spellings."""
    name = metric.name
    if metric.family is None:
        if not metric.cutoff:
            return (name,)
        shown = ",".join(f"{key}={value!r}" for key, value in metric.parameters.items())
        return (name, f"{name}@K") + ((f"{name}({shown})@K",) if shown else ())
    trec = [key for key, canon in TREC_NAMES.items() if key == name or key == name[5:]]
    if trec and metric.family.parameters:
        return (name, f"{trec[0]}.X", f"{trec[0]}_X")
    return (name,)


def _options(canon: Canon) -> tuple[str, ...]:
    return tuple(
        f"{param.name}={param.default!r}: {param.description}, {param.domain.describe()}"
        if param.default is not None
        else f"{param.name}: {param.description}, {param.domain.describe()} "
        "(default: the evaluation's rule)"
        for param in canon.params
    )


def describe_canon(canon: Canon, plugin: str) -> MeasureInfo:
    """The catalogue entry of a core measure known by its notations (``nDCG@10``, ``ERR@20``)."""
    cutoff = {"required": "cutoff required", "optional": "cutoff optional", "none": "no cutoff"}
    kind = f", a {canon.cutoff_name}: {canon.cutoff_domain.describe()}" if canon.fraction else ""
    return MeasureInfo(
        canon.name,
        None,
        (),
        canon.aggregation,
        canon.source,
        plugin,
        f"{canon.description} ({cutoff[canon.cutoff]}{kind})",
        notations=canon.notations,
        options=_options(canon),
    )


def with_notations(info: MeasureInfo, metric: RetrievalMetric) -> MeasureInfo:
    """``info`` with the metric's notations, and those of the core measure of its name."""
    notations = notations_of(metric)
    canon = CANON.get(metric.name)
    options = tuple(f"{k}={v!r}" for k, v in metric.parameters.items())
    if canon is not None:
        notations = tuple(dict.fromkeys((*notations, *canon.notations)))
        options = _options(canon)
    return attrs.evolve(info, notations=notations, options=options)


def metric_for_key(metrics: Mapping[str, RetrievalMetric], key: str) -> str | None:
    """The registered name whose report keys include ``key`` (``P_10`` → ``P``), if any."""
    if key in metrics:
        return key
    for name, metric in metrics.items():
        if metric.family is not None and key in metric.family.keys:
            return name
    return None


def catalogue(
    metrics: Mapping[str, RetrievalMetric], *, notations: bool = False
) -> dict[str, MeasureInfo]:
    """Every one of ``metrics`` as a measure, by name; with ``notations``, also every core
    measure known only by its notations, and each entry's notations and options filled."""
    if not notations:
        return {name: describe_metric(metric) for name, metric in metrics.items()}
    described = {
        name: with_notations(describe_metric(metric), metric) for name, metric in metrics.items()
    }
    for name, canon in CANON.items():
        if name not in described:
            described[name] = describe_canon(canon, CORE_PLUGIN)
    return described
