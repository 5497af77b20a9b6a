"""The catalogue: the registry's metrics seen as measures — keys, parameters, aggregation, source.

``RETRIEVAL_METRICS`` maps a name to one function; the catalogue says, for every registered
name, which report keys it produces, at which parameters, how those aggregate over queries and
where the definition comes from (a trec_eval source file, ef, or the plugin that registered it).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ef.evaluation._plugins.registry import RetrievalMetric
from ef.evaluation._scoring.measures.family import Aggregation

__all__ = ["MeasureInfo", "describe_metric", "metric_for_key"]


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
    """

    name: str
    keys: tuple[str, ...] | None
    parameters: tuple[float, ...]
    aggregation: Aggregation
    source: str
    plugin: str
    description: str


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


def metric_for_key(metrics: Mapping[str, RetrievalMetric], key: str) -> str | None:
    """The registered name whose report keys include ``key`` (``P_10`` → ``P``), if any."""
    if key in metrics:
        return key
    for name, metric in metrics.items():
        if metric.family is not None and key in metric.family.keys:
            return name
    return None
