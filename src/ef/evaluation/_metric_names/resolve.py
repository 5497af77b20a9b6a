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
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ef.evaluation._plugins.registry import CORE_PLUGIN, RetrievalMetric
from ef.evaluation._scoring.domains import CUTOFF, like
from ef.evaluation._scoring.measures.canon import CANON, Measure
from ef.evaluation._scoring.measures.family import Family
from ef.evaluation._scoring.measures.named_sets import named_set, spelled_out
from ef.evaluation._scoring.measures.summary import QueryFacts
from ef.evaluation._scoring.notation import Notation, measure_of, parse
from ef.evaluation._scoring.steps import MetricStep

__all__ = ["check_keys", "resolve_names", "same_measure", "suggestions"]


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
        measure=measure,
    )


def _plugin_family(metric: RetrievalMetric, notation: Notation, written: str) -> Family:
    """A registered metric at one cutoff, with parameters: ``name(p=0.5)@10``."""
    if metric.family is not None or not metric.cutoff:
        raise ValueError(
            f"metric {written!r}: {metric.name!r} (plugin {metric.plugin!r}) takes no cutoff "
            f"or parameters; write {metric.name!r}"
        )
    if notation.cutoff is None:
        raise ValueError(f"metric {written!r}: write {metric.name!r}@K with an int K >= 1")
    owner = f"metric {written!r} ({metric.name}, plugin {metric.plugin!r})"
    cutoff: int = CUTOFF.check(notation.cutoff, owner, "cutoff", written=True)
    unknown = [key for key, _ in notation.params if key not in metric.parameters]
    if unknown:
        takes = ", ".join(metric.parameters) or "no parameters"
        raise ValueError(
            f"metric {written!r}: {metric.name!r} of plugin {metric.plugin!r} takes {takes}; "
            f"unknown parameter(s) {', '.join(map(repr, unknown))}"
        )
    # A plugin's parameter takes its default's type: an int, a finite number or a string.
    params = {
        key: like(metric.parameters[key]).check(raw, owner, key, written=True)
        for key, raw in notation.params
    }
    called = metric
    if params:
        called = attrs.evolve(metric, fn=functools.partial(metric.fn, **params), all_cutoffs=None)
    step = MetricStep(attrs.evolve(called, name=written), (cutoff,), trusted=False)

    def compute(facts: QueryFacts) -> list[float]:
        return step.run(facts)

    source = metric.plugin if metric.plugin != CORE_PLUGIN else "ef"
    return Family(
        written,
        (written,),
        compute,
        source=source,
        description=metric.description,
        depth=cutoff,
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
    for written in dict.fromkeys(spelled_out(names)):
        if written in metrics:
            out.append(metrics[written])
            continue
        named = named_set(written)  # trec_eval's all_trec, official
        if named is not None:
            out.extend(_as_metric(family, CORE_PLUGIN) for family in named)
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


def check_keys(keys: Sequence[str], metrics: Mapping[str, RetrievalMetric]) -> None:
    """Check that each of ``keys`` names one value: a key ``metrics=[key]`` reports as written.

    What :func:`~ef.evaluation.compare` and :func:`~ef.evaluation.optimize_fusion` pair or
    maximise is one value per query; a name that reports several keys (``ndcg`` at each of
    ``k_values``, trec_eval's ``P`` at nine cutoffs) is refused, saying which to write.

    :raises ValueError: for a name no metric takes (as :func:`resolve_names`), or one that
        reports other keys than itself.
    """
    if isinstance(keys, str):
        keys = [keys]
    for key in keys:
        resolved = resolve_names([key], metrics)
        if len(resolved) != 1:
            raise ValueError(f"metric key {key!r} names {len(resolved)} measures: name one")
        [metric] = resolved
        family = metric.family
        if family is None and not metric.cutoff:
            continue  # a plugin's metric without a cutoff: reported under its name
        if family is not None and key in family.keys:
            continue
        if family is None:
            raise ValueError(
                f"metric key {key!r}: {key!r} is reported at a cutoff: name it '{key}@K', such "
                f"as '{key}@10' (only metrics without a cutoff are named alone)"
            )
        shown = ", ".join(map(repr, family.keys[:3])) + (", …" if len(family.keys) > 3 else "")
        raise ValueError(f"metric key {key!r}: {key!r} reports {shown}: name one of them")


def _measure_named(key: str) -> Measure | None:
    try:
        for notation in parse(key):
            measure = measure_of(notation, key)
            if measure is not None:
                return measure
    except ValueError:
        return None
    return None


def same_measure(key: str, keys: Sequence[str]) -> str | None:
    """The first of ``keys`` that names the measure ``key`` names in another spelling
    (``P_5`` for ``P@5``, ``ndcg@10`` for ``nDCG@10``), or ``None``.

    >>> same_measure('nDCG@10', ['P_5', 'ndcg_cut_10']), same_measure('P@5', ['P_10'])
    ('ndcg_cut_10', None)
    """
    measure = _measure_named(key)
    if measure is None:
        return None
    return next((other for other in keys if _measure_named(other) == measure), None)
