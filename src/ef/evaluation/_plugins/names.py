"""From the names in ``metrics=`` to what the scoring core computes.

A name registered as is (``ndcg``, ``P``, ``bpref``, a plugin's ``rbp``) is that metric. Any
other name is read as a notation (:mod:`ef.evaluation._scoring.notation`): a core measure in
ir_measures', trec_eval's, ef's, ranx's or BEIR's spelling, or a registered metric at a cutoff
with its declared parameters (``rbp(p=0.5)@10``). Such a name becomes a one-key measure family
whose report key is the name as written; every spelling of one measure shares one family, so it
is computed once.
"""

from __future__ import annotations

import difflib
import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ef.evaluation._plugins.registry import RetrievalMetric
from ef.evaluation._scoring.measures.canon import CANON, Measure
from ef.evaluation._scoring.measures.family import Family
from ef.evaluation._scoring.measures.summary import QueryFacts
from ef.evaluation._scoring.notation import Notation, measure_of, parse
from ef.evaluation._scoring.steps import MetricStep

__all__ = ["CORE_PLUGIN", "resolve_names", "suggestions"]

CORE_PLUGIN = "ef.evaluation._builtins"


def _measure_family(measure: Measure, keys: list[str]) -> Family:
    canon = CANON[measure.canon]
    n = len(keys)

    def compute(facts: QueryFacts) -> list[float]:
        return [measure.compute(facts)] * n

    return Family(
        keys[0],
        tuple(keys),
        compute,
        aggregation=canon.aggregation,
        source=canon.source,
        description=canon.description,
        depth=measure.cutoff if isinstance(measure.cutoff, int) else None,
    )


def _converted(metric: RetrievalMetric, key: str, raw: str, written: str) -> int | float | str:
    default = metric.parameters[key]
    if isinstance(default, str):
        return raw
    try:
        value: float = int(raw) if isinstance(default, int) else float(raw)
    except ValueError:
        value = math.nan
    if value - value != 0.0:
        kind = "an int" if isinstance(default, int) else "a finite number"
        raise ValueError(f"metric {written!r}: parameter {key!r} must be {kind}, got {raw!r}")
    return value


def _plugin_family(metric: RetrievalMetric, notation: Notation, written: str) -> Family:
    """A registered metric at one cutoff, with parameters: ``name(p=0.5)@10``."""
    if metric.family is not None or not metric.cutoff:
        raise ValueError(
            f"metric {written!r}: {metric.name!r} (plugin {metric.plugin!r}) takes no cutoff "
            f"or parameters; write {metric.name!r}"
        )
    if notation.cutoff is None or not notation.cutoff.isdigit() or int(notation.cutoff) < 1:
        raise ValueError(f"metric {written!r}: write {metric.name!r}@K with an int K >= 1")
    unknown = [key for key, _ in notation.params if key not in metric.parameters]
    if unknown:
        takes = ", ".join(metric.parameters) or "no parameters"
        raise ValueError(
            f"metric {written!r}: {metric.name!r} of plugin {metric.plugin!r} takes {takes}; "
            f"unknown parameter(s) {', '.join(map(repr, unknown))}"
        )
    params = {key: _converted(metric, key, raw, written) for key, raw in notation.params}
    called = metric
    if params:
        called = attrs.evolve(metric, fn=functools.partial(metric.fn, **params), all_cutoffs=None)
    step = MetricStep(attrs.evolve(called, name=written), (int(notation.cutoff),), trusted=False)

    def compute(facts: QueryFacts) -> list[float]:
        return step.run(facts)

    source = metric.plugin if metric.plugin != CORE_PLUGIN else "ef"
    return Family(
        written,
        (written,),
        compute,
        source=source,
        description=metric.description,
        depth=int(notation.cutoff),
    )


def _notation(
    written: str, metrics: Mapping[str, RetrievalMetric]
) -> tuple[Measure | None, Family | None, str]:
    """What ``written`` names: a core measure, or a registered metric's family; and its plugin."""
    for notation in parse(written):
        measure = measure_of(notation, written)
        if measure is not None:
            return measure, None, CORE_PLUGIN
        metric = None if notation.trec else metrics.get(notation.name)
        if metric is not None:
            return None, _plugin_family(metric, notation, written), metric.plugin
    raise ValueError(
        f"unknown metric name(s) {written!r}; {suggestions(written, metrics)}; "
        f"available: {', '.join(metrics)}"  # registration order: ef's own first
    )


def suggestions(written: str, metrics: Mapping[str, RetrievalMetric]) -> str:
    """The closest known names to ``written``, worded for an error message."""
    known = dict.fromkeys(metrics)
    for canon in CANON.values():
        known.update(dict.fromkeys(canon.notations))
    for metric in metrics.values():
        if metric.family is not None:
            known.update(dict.fromkeys(metric.family.keys))
    close = difflib.get_close_matches(written, list(known), n=5, cutoff=0.5)
    if not close:
        close = difflib.get_close_matches(written.lower(), [k.lower() for k in known], n=5)
        close = [k for k in known if k.lower() in close][:5]
    hint = f"closest: {', '.join(map(repr, close))}" if close else "no close name"
    return f"{hint} (`ef-eval metrics` lists every measure and its notations)"


def resolve_names(
    names: Sequence[str], metrics: Mapping[str, RetrievalMetric]
) -> list[RetrievalMetric]:
    """The metrics to compute for ``names``, in order, each measure once.

    :raises ValueError: for a name that parses nowhere (listing the closest names), or a known
        measure with a wrong cutoff or parameter.
    """
    if isinstance(names, str):
        names = [names]
    bad = [name for name in names if not isinstance(name, str)]
    if bad:
        raise TypeError(f"metric names must be str, got {bad[0]!r}")
    out: list[Any] = []
    groups: dict[Measure, list[str]] = {}
    for written in dict.fromkeys(names):
        if written in metrics:
            out.append(metrics[written])
            continue
        measure, family, plugin = _notation(written, metrics)
        if measure is not None:
            if measure not in groups:
                groups[measure] = []
                out.append(measure)
            groups[measure].append(written)
        elif family is not None:
            out.append(_as_metric(family, plugin))
    resolved: list[RetrievalMetric] = []
    for item in out:
        if isinstance(item, Measure):
            item = _as_metric(_measure_family(item, groups[item]), CORE_PLUGIN)
        resolved.append(item)
    return resolved


def _as_metric(family: Family, plugin: str) -> RetrievalMetric:
    return RetrievalMetric(
        family.name,
        family.function(),
        cutoff=False,
        description=family.description,
        plugin=plugin,
        family=family,
    )
