"""``fuse``: combine the runs of several systems into one scored run.

The pieces — method lookup, argument checks, normalisation, training, fusing — are separate
functions so that :mod:`~ef.evaluation._fusion.optimize` can normalise once and fuse many times.
Fusion methods and normalisations come from the plugin registry (built-ins and plugins alike):
:func:`fuse` takes the process's plugin host once and hands it to the pieces.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ef.evaluation._fusion import _compiled
from ef.evaluation._fusion._entries import MethodEntry, NormEntry
from ef.evaluation._fusion._inputs import (
    EMPTY,
    PreparedRuns,
    Ranking,
    check_queries,
    prepare_runs,
    rank_order,
)
from ef.evaluation._fusion._order import in_trec_order
from ef.evaluation._fusion.checks import check_params, check_weights
from ef.evaluation._fusion.norms import KEEPS_ORDER
from ef.evaluation._fusion.training import train
from ef.evaluation._plugins import HOST
from ef.evaluation._scoring.run_queries import MissingQueries, check_missing_queries
from ef.evaluation._types import Qrels, Run

if TYPE_CHECKING:
    from ef.evaluation._plugins.host import PluginHost

__all__ = [
    "DEFAULT_NORM",
    "FusedRun",
    "fuse",
    "fuse_prepared",
    "normalize",
    "resolve",
    "tables",
]

FusedRun = dict[str, dict[str, float]]
DEFAULT_NORM = "default"
"""``norm=`` default: ``min-max`` for score-based methods, none for rank-based ones."""


def tables(plugins: PluginHost) -> tuple[Mapping[str, MethodEntry], Mapping[str, NormEntry]]:
    """The fusion methods and normalisations registered with ``plugins`` (loaded on first
    use)."""
    snapshot = plugins.registry
    return snapshot.fusion_methods, snapshot.normalizations


def _known(names: Mapping[str, Any]) -> str:
    return ", ".join(sorted(names))


def resolve(
    method: str, norm: str | None, plugins: PluginHost
) -> tuple[MethodEntry, NormEntry | None]:
    """The method named ``method`` (or one of its aliases) and the normalisation, as registered
    with ``plugins``.

    :raises ValueError: for an unknown method or normalisation (listing the known ones).
    """
    methods, norms = tables(plugins)
    entry = methods.get(method) if isinstance(method, str) else None
    if entry is None and isinstance(method, str):
        entry = next((m for m in methods.values() if method in m.aliases), None)
    if entry is None:
        aliases = sorted(alias for m in methods.values() for alias in m.aliases)
        raise ValueError(
            f"unknown fusion method {method!r}; known methods: {_known(methods)} "
            f"(aliases: {', '.join(aliases)})"
        )
    if norm == DEFAULT_NORM:
        norm = None if entry.rank_based else "min-max"
    if norm is None or norm == "none":
        return entry, None
    spelled = norm.replace("_", "-") if isinstance(norm, str) else norm
    norm_entry = norms.get(norm) or norms.get(spelled)
    if norm_entry is None:
        raise ValueError(f"unknown normalisation {norm!r}; known normalisations: {_known(norms)}")
    return entry, norm_entry


def check_scored(prepared: PreparedRuns, entry: MethodEntry, norm: NormEntry | None) -> None:
    """Refuse scores that are not there: a run of ranked lists under a score-based step."""
    unscored = [i + 1 for i, scored in enumerate(prepared.scored) if not scored]
    if not unscored:
        return
    if norm is not None and not norm.order_based:
        needs = f"normalisation {norm.name!r}"
    elif norm is None and not entry.rank_based:
        needs = f"fusion method {entry.name!r}"
    else:
        return
    raise ValueError(
        f"run {unscored[0]} gives ranked doc ids without scores, and {needs} needs scores; "
        "use a rank-based method or the 'rank' or 'borda' normalisation"
    )


def _normalizer(norm: NormEntry) -> Callable[[str, list[Ranking]], list[Ranking]]:
    """``normalize(query_id, rankings)``: one query's rankings normalised, in rank order."""
    fn = norm.fn
    keeps_order = getattr(fn, KEEPS_ORDER, False) is True

    def normalize_query(query_id: str, rankings: list[Ranking]) -> list[Ranking]:
        try:
            normalized = fn(rankings)
        except Exception as error:
            error.add_note(
                f"in normalisation {norm.name!r} (plugin {norm.plugin}), query {query_id!r}"
            )
            raise
        if keeps_order:
            return [s if isinstance(s, dict) else dict(s) for s in normalized]
        return [rank_order(scores) if scores else EMPTY for scores in normalized]

    return normalize_query


def normalize(prepared: PreparedRuns, norm: NormEntry | None) -> PreparedRuns:
    """Every query's rankings normalised and put back in rank order."""
    if norm is None:
        return prepared
    normalize_query = _normalizer(norm)
    by_query = {
        query_id: normalize_query(query_id, rankings)
        for query_id, rankings in prepared.by_query.items()
    }
    return PreparedRuns(by_query, [True] * prepared.n_runs)


def fuse_prepared(
    prepared: PreparedRuns,
    entry: MethodEntry,
    weights: Any,
    params: Mapping[str, Any],
    norm: NormEntry | None = None,
    *,
    plugins: PluginHost,
) -> FusedRun:
    """Fuse the runs query by query (normalising each query first, with ``norm``); each fused
    query's docs in trec_eval's order. Normalising here, one query at a time, keeps only that
    query's normalised scores in memory. A compiled kernel of ``plugins`` fuses them when
    there is one that covers the method."""
    options = dict(params)
    if weights is not None:
        options["weights"] = weights
    compiled = _compiled.from_prepared(prepared, entry, norm, options, plugins)
    if compiled is not None:
        return compiled
    normalize_query = None if norm is None else _normalizer(norm)
    fused_run: FusedRun = {}
    for query_id, rankings in prepared.by_query.items():
        if normalize_query is not None:
            rankings = normalize_query(query_id, rankings)
        fused_run[query_id] = _fuse_query(entry, options, query_id, rankings)
    return fused_run


def _fuse_query(
    entry: MethodEntry, options: Mapping[str, Any], query_id: str, rankings: list[Ranking]
) -> dict[str, float]:
    """One query's (normalised) rankings fused by the method's Python function, checked finite
    and in trec_eval's order."""
    try:
        fused = entry.fn(rankings, **options)
    except Exception as error:
        error.add_note(
            f"in fusion method {entry.name!r} (plugin {entry.plugin}), query {query_id!r}"
        )
        raise
    # A sum is finite only if every value is (a finite sum skips the scan).
    if not math.isfinite(sum(fused.values())) and not all(map(math.isfinite, fused.values())):
        raise _not_finite(entry, query_id, fused)
    return in_trec_order(fused)


def _not_finite(entry: MethodEntry, query_id: str, fused: Mapping[str, float]) -> ValueError:
    doc, score = next((d, s) for d, s in fused.items() if not math.isfinite(s))
    return ValueError(
        f"fusion method {entry.name!r} (plugin {entry.plugin}) gave doc {doc!r} of query "
        f"{query_id!r} the score {score!r}; fused scores must be finite"
    )


def _fuse_compiled(
    runs: object,
    entry: MethodEntry,
    norm: NormEntry | None,
    weights: Sequence[float] | None,
    params: Mapping[str, Any] | None,
    plugins: PluginHost,
) -> FusedRun | None:
    """``runs`` fused by a plugin's compiled kernel (:mod:`~ef.evaluation._fusion._compiled`),
    or ``None`` (no kernel, or input it does not take): the same fused run, float for float."""
    if type(runs) not in (list, tuple):
        return None
    try:
        checked_weights = check_weights(entry, weights, len(runs))  # type: ignore[arg-type]
    except Exception:  # the Python path raises it, after any error it finds in the runs first
        return None
    return _compiled.from_runs(runs, entry, norm, checked_weights, dict(params or {}), plugins)


def fuse(
    runs: Sequence[Run],
    *,
    method: str = "rrf",
    norm: str | None = DEFAULT_NORM,
    weights: Sequence[float] | None = None,
    params: Mapping[str, Any] | None = None,
    qrels: Qrels | None = None,
    missing_queries: MissingQueries = "warn",
) -> FusedRun:
    """Fuse the runs of several systems into one scored run (hybrid search: BM25 + dense).

    Each query's rankings are normalised (``norm``), then combined by ``method``: one of ranx's
    methods under ranx's names — rank-based ``rrf``, ``isr``, ``log_isr``, ``logn_isr``,
    ``rbc``, ``bordafuse``, ``w_bordafuse``, ``condorcet``, ``w_condorcet`` and the supervised
    ``bayesfuse``, ``mapfuse``, ``posfuse``, ``probfuse``, ``slidefuse``; score-based ``sum``,
    ``mnz``, ``max``, ``min``, ``med``, ``anz``, ``gmnz``, ``wsum``, ``wmnz``, ``mixed`` and
    the supervised ``segfuse`` (``combsum``, ``combmnz``, … are aliases) — or a plugin's. The
    numbers are ranx's; ``docs/fusion.md`` lists where they differ and why. A query missing from
    a run is an empty ranking there (ranx refuses such runs), with one warning per run that
    lacks some of the others' queries; a run that shares no query with the others is refused,
    naming the likely cause (a prefix such as ``q1`` against ``1``, zero padding, letter case):
    see ``missing_queries``. Each query of the result iterates
    in trec_eval's order (score descending, ties by doc id descending), so the fused run
    evaluates the same everywhere; it is ready for :func:`evaluate_run`, :func:`compare` and
    :func:`write_trec_run`.

    :param runs: two or more runs, ``{query_id: {doc_id: score}}`` (or ranked doc-id lists,
        for rank-based methods and the ``rank`` and ``borda`` normalisations).
    :param method: the fusion method's name or alias.
    :param norm: ``"default"`` (``min-max`` for score-based methods, none for rank-based ones),
        ``None``/``"none"``, ``"min-max"``, ``"min-max-inverted"``, ``"max"``, ``"sum"``,
        ``"zmuv"``, ``"rank"``, ``"borda"`` or a plugin's.
    :param weights: one finite number per run, for the weighted methods (``wsum``, ``wmnz``,
        ``mixed``, ``w_bordafuse``, ``w_condorcet``); ``None`` gives every run 1.0.
    :param params: the method's parameters, e.g. ``{"k": 60}`` for ``rrf``, ``{"phi": 0.8}``
        for ``rbc``, or a supervised method's trained ``probs``/``log_odds``/``map_scores``.
    :param qrels: judgements a supervised method trains on when ``params`` lacks what training
        gives (see :func:`optimize_fusion` to train on some queries and fuse others).
    :param missing_queries: what a query some runs hold and another lacks does: ``"warn"``
        (the default: fused from the runs that hold it, with one
        :class:`MissingQueriesWarning` per run that lacks some), ``"zero"`` (the same, silently,
        even for runs that share no query) or ``"error"`` (refused).
    :returns: ``{query_id: {doc_id: fused score}}``.
    :raises MissingQueriesError: for a run that shares no query with the others (unless
        ``missing_queries="zero"``), or lacks any of theirs under ``"error"``.
    :raises ValueError: for an unknown method or normalisation (listing the known ones), a
        weights count that is not the number of runs, a weight or score that is not finite
        (naming the run and query), a ranked list naming one doc twice, an unknown or missing
        parameter, or scores asked of runs without them.
    :raises ParameterError: for a parameter outside its domain (``rrf``'s ``k`` > 0, ``rbc``'s
        ``phi`` in (0, 1), …; ``docs/fusion.md`` lists them), before any work.
    :raises TypeError: if ``runs`` is not a sequence of run mappings.

    >>> bm25 = {'q1': {'d1': 12.0, 'd2': 9.5, 'd3': 4.0}}
    >>> dense = {'q1': {'d3': 0.91, 'd1': 0.85}}
    >>> fuse([bm25, dense], method='rrf')
    {'q1': {'d1': 0.03252247488101534, 'd3': 0.032266458495966696, 'd2': 0.016129032258064516}}
    >>> fuse([bm25, dense], method='wsum', weights=[0.3, 0.7])
    {'q1': {'d3': 0.7, 'd1': 0.3, 'd2': 0.20625}}
    """
    plugins = HOST
    entry, norm_entry = resolve(method, norm, plugins)
    merged = check_params(entry, params)  # before any work
    mode = check_missing_queries(missing_queries)
    if qrels is None:
        compiled = _fuse_compiled(runs, entry, norm_entry, weights, merged, plugins)
        if compiled is not None:  # the kernel took plain dicts only, and checked them
            check_queries([list(run) for run in runs], mode)
            return compiled
    prepared = prepare_runs(runs)
    if prepared.n_runs < 2:
        raise ValueError(f"fuse needs at least two runs, got {prepared.n_runs}")
    check_scored(prepared, entry, norm_entry)
    checked_weights = check_weights(entry, weights, prepared.n_runs)
    check_queries([prepared.held_by(i) for i in range(prepared.n_runs)], mode)
    untrained = [name for name in entry.trained if name not in merged]
    if entry.train is not None and untrained:
        if qrels is None:
            raise ValueError(
                f"fusion method {entry.name!r} is supervised: pass qrels= to train it, or its "
                f"trained {', '.join(untrained)} in params"
            )
        merged.update(train(normalize(prepared, norm_entry), entry, merged, qrels))
    elif qrels is not None:
        raise ValueError(
            f"qrels= is for training supervised methods; {entry.name!r} "
            + ("is not one" if entry.train is None else "has its trained parameters already")
        )
    return fuse_prepared(prepared, entry, checked_weights, merged, norm_entry, plugins=plugins)
