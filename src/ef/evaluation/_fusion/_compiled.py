"""The compiled fusion kernel a plugin may offer (hook ``ef_evaluation_fusion_kernel``).

The ``ef-evaluation-speedups`` distribution offers one in C. It covers the additive built-in
methods — ``rrf`` and ``rbc`` under no normalisation or one that keeps each run's order (their
values come from the ranks alone), ``sum`` and ``wsum`` under none, ``min-max`` or ``max`` —
identified by their functions, so a plugin's method of the same name never takes it. It takes
plain runs only (``dict`` of ``dict``, ``str`` ids, finite ``float`` or ``int`` scores) and gives
the pure-Python path's fused run float for float; for anything else it declines (returns
``None``) and the Python path runs and raises its own error.

:func:`from_runs` hands it the runs as given (checking, ordering, normalising and fusing in one
call, for :func:`~ef.evaluation.fuse`); :func:`from_prepared` hands it runs already checked,
ordered (and normalised, for :func:`~ef.evaluation.optimize_fusion`), taking each ranking as it
is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ef.evaluation._fusion import methods, norms
from ef.evaluation._fusion._entries import MethodEntry, NormEntry
from ef.evaluation._fusion._inputs import PreparedRuns
from ef.evaluation._plugins.hookspecs import FusionKernel

if TYPE_CHECKING:
    from ef.evaluation._plugins.host import PluginHost

__all__ = ["from_prepared", "from_runs"]

FusedRun = dict[str, dict[str, float]]

_RANKED: dict[Callable[..., Any], tuple[str, str]] = {
    methods.rrf: ("rrf", "k"),
    methods.rbc: ("rbc", "phi"),
}
# Increasing maps of each run's scores: a rank-based method's values do not depend on them.
_KEEPS_ORDER = (None, "none", *norms.SHIFT_SCALE)
_KERNEL_NORMS = {None: None, "none": None, "min-max": "min-max", "max": "max"}


def _depth(runs: Sequence[Any]) -> int | None:
    """The longest ranking in ``runs`` (``None`` for a run that is not plain)."""
    try:
        return max((max(map(len, run.values()), default=0) for run in runs), default=0)
    except (AttributeError, TypeError):
        return None


def _arguments(
    entry: MethodEntry, norm: NormEntry | None, options: Mapping[str, Any], depth: int | None
) -> dict[str, Any] | None:
    """The kernel's keyword arguments for ``entry`` under ``norm``, or ``None`` when it does not
    cover them. ``depth`` is the longest ranking, for a rank-based method's table."""
    norm_name = norms.builtin_name(norm)
    ranked = _RANKED.get(entry.fn)
    if ranked is not None:
        if norm_name not in _KEEPS_ORDER or depth is None or set(options) != {ranked[1]}:
            return None
        try:
            # methods._table's size for this depth: the very floats the Python path adds.
            size = 1 << max(depth - 1, 0).bit_length()
            table = methods._rank_table(ranked[0], options[ranked[1]], size)
        except Exception:  # e.g. k = -1: the Python path raises it, naming the query
            return None
        return {"norm": None, "weights": None, "rank_scores": table}
    if entry.fn is methods.sum_ or entry.fn is methods.wsum:
        if norm_name not in _KERNEL_NORMS:
            return None
        weights = options.get("weights") if entry.fn is methods.wsum else None
        if set(options) != ({"weights"} if entry.fn is methods.wsum else set()):
            return None
        return {"norm": _KERNEL_NORMS[norm_name], "weights": weights, "rank_scores": None}
    return None


def _kernel(entry: MethodEntry, plugins: PluginHost) -> FusionKernel | None:
    if entry.fn not in _RANKED and entry.fn is not methods.sum_ and entry.fn is not methods.wsum:
        return None  # not one it covers: no need to ask the plugins
    return plugins.fusion_kernel()


def from_runs(
    runs: object,
    entry: MethodEntry,
    norm: NormEntry | None,
    weights: Any,
    params: Mapping[str, Any],
    plugins: PluginHost,
) -> FusedRun | None:
    """``runs`` (as given to :func:`~ef.evaluation.fuse`, weights and parameters checked)
    fused by the kernel of ``plugins``, or ``None`` when there is none or it declines."""
    if type(runs) not in (list, tuple) or len(runs) < 2:  # type: ignore[arg-type]
        return None
    given: Sequence[Any] = runs  # type: ignore[assignment]
    if any(type(run) is not dict for run in given):
        return None
    kernel = _kernel(entry, plugins)
    if kernel is None:
        return None
    options = dict(params)
    if weights is not None:
        options["weights"] = weights
    depth = _depth(given) if entry.fn in _RANKED else 0
    arguments = _arguments(entry, norm, options, depth)
    if arguments is None:
        return None
    return kernel(given, in_rank_order=False, **arguments)


def from_prepared(
    prepared: PreparedRuns,
    entry: MethodEntry,
    norm: NormEntry | None,
    options: Mapping[str, Any],
    plugins: PluginHost,
) -> FusedRun | None:
    """The prepared runs (each ranking in rank order; normalised when ``norm`` is ``None`` and
    the caller normalised them) fused by the kernel, or ``None``."""
    kernel = _kernel(entry, plugins)
    if kernel is None:
        return None
    by_query = prepared.by_query
    depth = max((len(r) for rankings in by_query.values() for r in rankings), default=0)
    arguments = _arguments(entry, norm, options, depth)
    if arguments is None:
        return None
    runs = [
        {query_id: rankings[index] for query_id, rankings in by_query.items()}
        for index in range(prepared.n_runs)
    ]
    return kernel(runs, in_rank_order=True, **arguments)
