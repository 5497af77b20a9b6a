"""``optimize_fusion``: grid search of a fusion method's weights and parameters on judged queries.

Every configuration of the grid is fused and scored with :func:`~ef.evaluation.evaluate_run`;
the best is the first with the highest score, in the grid's order (ranx iterates the same grids
in the same order, but keeps the *last* of equal scores: ``docs/fusion.md``). Supervised methods
are trained on the same queries, once per distinct training parameter. With ``folds=``, each
fold is held out in turn: searched and trained on the other folds, scored on it.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ef.evaluation._fusion._entries import MethodEntry
from ef.evaluation._fusion._inputs import PreparedRuns, prepare_runs
from ef.evaluation._fusion.api import (
    DEFAULT_NORM,
    FusedRun,
    check_scored,
    fuse,
    fuse_prepared,
    normalize,
    resolve,
)
from ef.evaluation._fusion.checks import check_params, check_weights
from ef.evaluation._fusion.training import train, training_queries
from ef.evaluation._metric_names.resolve import check_keys
from ef.evaluation._plugins import HOST
from ef.evaluation._report.frozen import FrozenDict, FrozenList, as_tuple
from ef.evaluation._running.evaluate import evaluate_run
from ef.evaluation._types import Qrels, Run

if TYPE_CHECKING:
    from ef.evaluation._plugins.host import PluginHost

__all__ = ["FusionFold", "FusionOptimization", "optimize_fusion"]


def _frozen(value: Any) -> Any:
    # A result is a value: its configurations are read-only, however deep (weights, probs).
    # Unlike the reports' freeze(), a tuple stays a tuple: the grid's weight tuples are shown
    # as the grid gave them.
    if isinstance(value, tuple):
        return tuple(map(_frozen, value))
    if isinstance(value, list):
        return FrozenList(map(_frozen, value))
    if isinstance(value, dict):
        return FrozenDict({key: _frozen(item) for key, item in value.items()})
    return value


def _frozen_tries(tries: Any) -> tuple[tuple[dict[str, Any], float], ...]:
    return tuple((_frozen(params), score) for params, score in tries)


@attrs.frozen
class FusionFold:
    """One fold of :func:`optimize_fusion`'s cross-validation.

    :param queries: the held-out queries.
    :param best_params: the configuration chosen on the other folds (trained parameters too).
    :param train_score: its score on the other folds.
    :param held_out_score: its score on the held-out queries.
    """

    queries: tuple[str, ...] = attrs.field(converter=as_tuple)
    best_params: dict[str, Any] = attrs.field(converter=_frozen)
    train_score: float
    held_out_score: float


@attrs.frozen
class FusionOptimization:
    """The outcome of :func:`optimize_fusion`: the best configuration and every try.

    :param method: the fusion method's registered name.
    :param norm: the normalisation applied (``None`` for none).
    :param metric: the metric maximised, e.g. ``"ndcg@10"``.
    :param best_params: the best configuration: the method's parameters, its trained ones and,
        for a weighted method, ``"weights"``; :meth:`fuse` fuses runs with it.
    :param best_score: its score on all the judged queries.
    :param tries: ``(configuration, score)`` for every configuration of the grid, in order.
    :param folds: with ``folds=``, one :class:`FusionFold` per fold.
    :param mean_held_out: with ``folds=``, the mean of the folds' held-out scores.

    >>> result = FusionOptimization(
    ...     method='rrf', norm=None, metric='ndcg@10', best_params={'k': 60}, best_score=0.5,
    ...     tries=(({'k': 60}, 0.5),))
    >>> result.best_params
    {'k': 60}
    >>> result.best_params['k'] = 10
    Traceback (most recent call last):
    ...
    TypeError: a report's FrozenDict is read-only; copy it to change it
    """

    method: str
    norm: str | None
    metric: str
    best_params: dict[str, Any] = attrs.field(converter=_frozen)
    best_score: float
    tries: tuple[tuple[dict[str, Any], float], ...] = attrs.field(converter=_frozen_tries)
    folds: tuple[FusionFold, ...] = attrs.field(default=(), kw_only=True, converter=as_tuple)
    mean_held_out: float | None = attrs.field(default=None, kw_only=True)

    def fuse(self, runs: Sequence[Run]) -> FusedRun:
        """Fuse ``runs`` with the best configuration (no retraining)."""
        params = dict(self.best_params)
        weights = params.pop("weights", None)
        return fuse(
            runs, method=self.method, norm=self.norm or "none", weights=weights, params=params
        )


def _metric_scorer(metric: str, plugins: PluginHost) -> Any:
    """``score(fused, qrels)``: ``metric``'s mean; ``metric`` is any name that reports one key
    (every notation ``metrics=`` takes: ``ndcg@10``, ``nDCG@10``, ``P(rel=2)@5``, ``IPrec@0.5``)."""
    if not isinstance(metric, str):
        raise ValueError(f"metric must be a metric name, got {metric!r}")
    check_keys([metric], plugins.registry.metrics)  # before any work

    def score(fused: FusedRun, qrels: Qrels) -> float:
        # A judged query no run holds scores 0, as in every configuration: no warning each time.
        report = evaluate_run(
            fused, qrels, k_values=(1,), metrics=(metric,), missing_queries="zero"
        )
        value: float = report.metrics[metric]
        return value

    return score


def _configurations(
    entry: MethodEntry, search_space: Mapping[str, Sequence[Any]] | None, n_runs: int
) -> list[dict[str, Any]]:
    if search_space is None:
        if entry.grid is None:
            raise ValueError(
                f"fusion method {entry.name!r} has nothing to optimise (no parameters, weights "
                "or training); give a search_space or use fuse()"
            )
        space = entry.grid(n_runs)
    else:
        space = search_space
        accepted = {*entry.defaults, *entry.required, *entry.train_params}
        accepted |= {"weights"} if entry.weighted else set()
        unknown = sorted(name for name in space if name not in accepted)
        if unknown:
            raise ValueError(
                f"search_space names {', '.join(map(repr, unknown))}, which {entry.name!r} does "
                f"not take; it takes: {', '.join(sorted(accepted)) or 'nothing'}"
            )
    listed: dict[str, list[Any]] = {}
    for name, values in space.items():
        if hasattr(values, "tolist") and not isinstance(values, str | bytes):
            values = values.tolist()  # a numpy array: ranx's weight grid is a 2-D one
        if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
            raise ValueError(f"search_space[{name!r}] must be a non-empty sequence of values")
        listed[name] = list(values)
    names = list(listed)
    configurations = [
        dict(zip(names, values, strict=True)) for values in itertools.product(*listed.values())
    ]
    for configuration in configurations:  # every configuration in its domains, before any work
        options = dict(configuration)
        check_weights(entry, options.pop("weights", None), n_runs)
        check_params(entry, options)
    return configurations


def _search(
    prepared: PreparedRuns,
    entry: MethodEntry,
    configurations: list[dict[str, Any]],
    qrels: Qrels,
    score: Any,
    plugins: PluginHost,
) -> tuple[dict[str, Any], float, list[tuple[dict[str, Any], float]]]:
    tries: list[tuple[dict[str, Any], float]] = []
    trained_cache: dict[tuple[Any, ...], dict[str, Any]] = {}
    best: tuple[dict[str, Any], float] | None = None
    for configuration in configurations:
        options = dict(configuration)
        weights = check_weights(entry, options.pop("weights", None), prepared.n_runs)
        params = check_params(entry, options)
        if entry.train is not None and any(name not in params for name in entry.trained):
            key = tuple(repr(params.get(name)) for name in entry.train_params)
            if key not in trained_cache:
                trained_cache[key] = train(prepared, entry, params, qrels)
            params.update(trained_cache[key])
        value = score(fuse_prepared(prepared, entry, weights, params, plugins=plugins), qrels)
        tries.append((configuration, value))
        if best is None or value > best[1]:  # the first of equal scores wins
            chosen = dict(params)
            if weights is not None:
                chosen["weights"] = list(weights)
            best = (chosen, value)
    assert best is not None
    return best[0], best[1], tries


def _folds(folds: int | Sequence[Collection[str]], queries: list[str]) -> list[list[str]]:
    if isinstance(folds, bool):
        raise ValueError("folds must be a number of folds or the folds' query ids")
    if isinstance(folds, int):
        if not 2 <= folds <= len(queries):
            raise ValueError(
                f"folds={folds}: need 2 to {len(queries)} folds for {len(queries)} judged queries"
            )
        size, extra = divmod(len(queries), folds)
        split: list[list[str]] = []
        start = 0
        for index in range(folds):
            end = start + size + (index < extra)
            split.append(queries[start:end])
            start = end
        return split
    known = set(queries)
    split = [list(dict.fromkeys(fold)) for fold in folds]
    seen: set[str] = set()
    for index, fold in enumerate(split):
        if not fold:
            raise ValueError(f"fold {index + 1} is empty")
        strangers = [q for q in fold if q not in known]
        if strangers:
            raise ValueError(
                f"fold {index + 1}: query {strangers[0]!r} has no positive judgement in qrels"
            )
        if seen & set(fold):
            raise ValueError(f"fold {index + 1} repeats query {sorted(seen & set(fold))[0]!r}")
        seen |= set(fold)
    if len(split) < 2:
        raise ValueError("folds must hold at least two folds")
    return split


def optimize_fusion(
    runs: Sequence[Run],
    qrels: Qrels,
    *,
    method: str,
    metric: str = "ndcg@10",
    norm: str | None = DEFAULT_NORM,
    search_space: Mapping[str, Sequence[Any]] | None = None,
    folds: int | Sequence[Collection[str]] | None = None,
) -> FusionOptimization:
    """Find the weights or parameters of a fusion method that score best on judged queries.

    A grid search: by default ranx's grid for the method (weights in steps of 0.1 summing to 1
    for ``wsum``, ``wmnz``, ``mixed``, ``w_bordafuse``, ``w_condorcet``; ``k`` = 10, 20, …, 100
    for ``rrf``; ``phi``, ``gamma``, ``sigma`` = 0.01, …, 1.0 for ``rbc``, ``gmnz``,
    ``logn_isr``; ``n_segments`` and ``w`` = 1, …, 100 for ``probfuse`` and ``slidefuse``;
    training alone for ``bayesfuse``, ``mapfuse``, ``posfuse``, ``segfuse``). Each
    configuration is fused with :func:`fuse` and scored with :func:`evaluate_run`; the first
    configuration with the highest score wins.

    :param runs: the runs to fuse (as for :func:`fuse`).
    :param qrels: the judgements to score (and train) on.
    :param method: the fusion method.
    :param metric: the measure to maximise: any name ``metrics=`` takes that reports one value
        (``ndcg@10``, ``nDCG@10``, ``map@100``, ``P(rel=2)@5``, ``bpref``, …).
    :param norm: the normalisation, as for :func:`fuse`.
    :param search_space: ``{parameter: [values, …]}`` (``"weights"`` for the weights) to search
        instead of the default grid; the grid is their product, the last varying fastest. A
        numpy array of values is taken as its list (a 2-D array of weights, as ranx's grid).
    :param folds: a number of folds (contiguous blocks of the judged queries, in ``qrels``
        order) or the folds' query ids: each fold is scored with the configuration found on the
        others (``FusionOptimization.folds``, ``mean_held_out``).
    :raises ValueError: for an unknown method, metric or parameter, a method with nothing to
        optimise, or bad folds.
    :raises ParameterError: for a configuration of the grid outside a parameter's domain,
        before anything is fused.

    >>> runs = [{'q1': {'d1': 3.0, 'd2': 2.0}, 'q2': {'d3': 1.0, 'd4': 0.5}},
    ...         {'q1': {'d2': 0.9, 'd1': 0.1}, 'q2': {'d4': 0.8, 'd3': 0.7}}]
    >>> qrels = {'q1': {'d2': 1}, 'q2': {'d4': 1}}
    >>> best = optimize_fusion(runs, qrels, method='wsum', metric='mrr@1')
    >>> best.best_params['weights'], best.best_score
    ([0.0, 1.0], 1.0)
    """
    plugins = HOST
    entry, norm_entry = resolve(method, norm, plugins)
    score = _metric_scorer(metric, plugins)
    # The grid is checked before the runs are read, when their number is known without reading.
    given = isinstance(runs, list | tuple) and len(runs) >= 2
    configurations = _configurations(entry, search_space, len(runs)) if given else None
    prepared = prepare_runs(runs)
    if prepared.n_runs < 2:
        raise ValueError(f"optimize_fusion needs at least two runs, got {prepared.n_runs}")
    check_scored(prepared, entry, norm_entry)
    if configurations is None:
        configurations = _configurations(entry, search_space, prepared.n_runs)
    normalized = normalize(prepared, norm_entry)
    queries, _ = training_queries(qrels)
    best_params, best_score, tries = _search(
        normalized, entry, configurations, qrels, score, plugins
    )
    result_folds: list[FusionFold] = []
    if folds is not None:
        for held_out in _folds(folds, queries):
            excluded = set(held_out)
            kept = [q for q in queries if q not in excluded]
            train_qrels = {q: qrels[q] for q in kept}
            fold_params, fold_score, _ = _search(
                normalized.subset(kept), entry, configurations, train_qrels, score, plugins
            )
            params = dict(fold_params)
            weights = params.pop("weights", None)
            fused = fuse_prepared(
                normalized.subset(held_out), entry, weights, params, plugins=plugins
            )
            held_out_score = score(fused, {q: qrels[q] for q in held_out})
            result_folds.append(
                FusionFold(tuple(held_out), fold_params, fold_score, held_out_score)
            )
    mean = (
        sum(fold.held_out_score for fold in result_folds) / len(result_folds)
        if result_folds
        else None
    )
    return FusionOptimization(
        entry.name,
        None if norm_entry is None else norm_entry.name,
        metric,
        best_params,
        best_score,
        tuple(tries),
        folds=tuple(result_folds),
        mean_held_out=mean,
    )
