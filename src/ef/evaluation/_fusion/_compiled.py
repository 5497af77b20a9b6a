"""The compiled fusion kernel a plugin may offer (hook ``ef_evaluation_fusion_kernel``).

The ``ef-evaluation-speedups`` distribution offers one in C. It covers the built-in
unsupervised methods but ``condorcet`` and ``w_condorcet`` — the rank-based ones (``rrf``,
``rbc``, ``isr``, ``log_isr``, ``logn_isr``, ``bordafuse``, ``w_bordafuse``) under no
normalisation or one that keeps each run's order (their values come from the ranks alone), the
score-based ones (``sum``, ``wsum``, ``mnz``, ``anz``, ``gmnz``, ``max``, ``min``, ``med``,
``wmnz``, ``mixed``) under none, ``min-max`` or ``max`` — identified by their functions, so a
plugin's method of the same name never takes it. It takes plain runs only (``dict`` of ``dict``,
``str`` ids, finite ``float`` or ``int`` scores) and gives the pure-Python path's fused run float
for float; for anything else it declines (returns ``None``) and the Python path runs and raises
its own error.

The kernel is told how to combine a doc's values (``combine``): ``"total"`` adds them run after
run (the additive methods); the others are asked of a kernel only when it lists them in its
``combines`` attribute, so a kernel written for the additive methods alone keeps working. The
factors by which ``mnz``-like methods scale a doc's summed values are computed here, in Python,
by the very expressions of :mod:`~ef.evaluation._fusion.methods`, once per call.

:func:`from_runs` hands it the runs as given (checking, ordering, normalising and fusing in one
call, for :func:`~ef.evaluation.fuse`); :func:`from_prepared` hands it runs already checked,
ordered (and normalised, for :func:`~ef.evaluation.optimize_fusion`), taking each ranking as it
is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ef.evaluation._fusion import methods, norms
from ef.evaluation._fusion._entries import MethodEntry, NormEntry
from ef.evaluation._fusion._inputs import PreparedRuns
from ef.evaluation._plugins.hookspecs import FusionKernel

if TYPE_CHECKING:
    from ef.evaluation._plugins.host import PluginHost

__all__ = ["from_prepared", "from_runs"]

FusedRun = dict[str, dict[str, float]]


class _Covered(NamedTuple):
    """How the kernel fuses one built-in method."""

    combine: str
    """The kernel's ``combine``: how a doc's values are combined."""
    rank_kind: str | None
    """``methods._rank_table``'s kind for a rank-based method (its values are the table's)."""
    parameter: str | None
    """The method's one parameter (besides ``weights``), or ``None``."""
    weighted: bool
    factor: Callable[[int, Any], Any] | None = None
    """The factor of a doc ``c`` runs retrieved, from ``c`` and the parameter, for
    ``sum_times`` and ``sum_over``: the expression the method applies to ``len(scores)``."""


def _count(count: int, _: Any) -> int:
    return count


_COVERED: dict[Callable[..., Any], _Covered] = {
    methods.rrf: _Covered("total", "rrf", "k", weighted=False),
    methods.rbc: _Covered("total", "rbc", "phi", weighted=False),
    methods.sum_: _Covered("total", None, None, weighted=False),
    methods.wsum: _Covered("total", None, None, weighted=True),
    methods.mnz: _Covered("sum_times", None, None, weighted=False, factor=_count),
    methods.anz: _Covered("sum_over", None, None, weighted=False, factor=_count),
    methods.gmnz: _Covered(
        "sum_times", None, "gamma", weighted=False, factor=lambda count, gamma: count**gamma
    ),
    methods.max_: _Covered("max", None, None, weighted=False),
    methods.min_: _Covered("min", None, None, weighted=False),
    methods.med: _Covered("median", None, None, weighted=False),
    methods.wmnz: _Covered("sum_times_weights", None, None, weighted=True),
    methods.mixed: _Covered(
        "sum_times", None, None, weighted=True, factor=lambda count, _: math.sqrt(count)
    ),
    methods.isr: _Covered("sum_times", "isr", None, weighted=False, factor=_count),
    methods.log_isr: _Covered(
        "sum_times", "isr", None, weighted=False, factor=lambda count, _: math.log(count)
    ),
    methods.logn_isr: _Covered(
        "sum_times",
        "isr",
        "sigma",
        weighted=False,
        factor=lambda count, sigma: math.log(count + sigma),
    ),
    methods.bordafuse: _Covered("borda", None, None, weighted=False),
    methods.w_bordafuse: _Covered("borda", None, None, weighted=True),
}
"""The built-in methods the kernel covers, by function."""

_RANK_BASED = (methods.bordafuse, methods.w_bordafuse)
"""Rank-based methods without a rank table (their points are counted in the kernel)."""
# Increasing maps of each run's scores: a rank-based method's values do not depend on them.
_KEEPS_ORDER = (None, "none", *norms.SHIFT_SCALE)
_KERNEL_NORMS = {None: None, "none": None, "min-max": "min-max", "max": "max"}


def _depth(runs: Sequence[Any]) -> int | None:
    """The longest ranking in ``runs`` (``None`` for a run that is not plain)."""
    try:
        return max((max(map(len, run.values()), default=0) for run in runs), default=0)
    except (AttributeError, TypeError):
        return None


def _factors(factor: Callable[[int, Any], Any], parameter: Any, n_runs: int) -> tuple[float, ...]:
    """The factor of a doc 1, 2, …, ``n_runs`` runs retrieved, as the floats Python multiplies
    (or divides) by: an int factor is converted as ``float * int`` converts it."""
    return tuple(float(factor(count, parameter)) for count in range(1, n_runs + 1))


def _arguments(
    entry: MethodEntry,
    norm: NormEntry | None,
    options: Mapping[str, Any],
    depth: int | None,
    n_runs: int,
) -> dict[str, Any] | None:
    """The kernel's keyword arguments for ``entry`` under ``norm``, or ``None`` when it does not
    cover them. ``depth`` is the longest ranking, for a rank-based method's table."""
    covered = _COVERED.get(entry.fn)
    if covered is None:
        return None
    expected = {name for name in (covered.parameter,) if name is not None}
    if covered.weighted:
        expected.add("weights")
    if set(options) != expected:
        return None
    norm_name = norms.builtin_name(norm)
    rank_based = covered.rank_kind is not None or entry.fn in _RANK_BASED
    if norm_name not in (_KEEPS_ORDER if rank_based else _KERNEL_NORMS):
        return None
    parameter = options.get(covered.parameter) if covered.parameter else None
    arguments: dict[str, Any] = {
        "norm": None if rank_based else _KERNEL_NORMS[norm_name],
        "weights": options.get("weights"),
        "rank_scores": None,
    }
    try:
        if covered.rank_kind is not None:
            if depth is None:
                return None
            # methods._table's size for this depth: the very floats the Python path uses.
            size = 1 << max(depth - 1, 0).bit_length()
            rank_parameter = 0.0 if covered.rank_kind == "isr" else parameter
            arguments["rank_scores"] = methods._rank_table(covered.rank_kind, rank_parameter, size)
        if covered.factor is not None:
            arguments["factors"] = _factors(covered.factor, parameter, n_runs)
    except Exception:  # e.g. k = -1: the Python path raises it, naming the query
        return None
    if covered.combine != "total":
        arguments["combine"] = covered.combine
    return arguments


def _kernel(entry: MethodEntry, plugins: PluginHost) -> FusionKernel | None:
    covered = _COVERED.get(entry.fn)
    if covered is None:
        return None  # not one it covers: no need to ask the plugins
    kernel = plugins.fusion_kernel()
    if kernel is None:
        return None
    if covered.combine != "total" and covered.combine not in getattr(kernel, "combines", ()):
        return None  # a kernel for the additive methods alone
    return kernel


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
    depth = _depth(given) if _COVERED[entry.fn].rank_kind is not None else 0
    arguments = _arguments(entry, norm, options, depth, len(given))
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
    arguments = _arguments(entry, norm, options, depth, prepared.n_runs)
    if arguments is None:
        return None
    runs = [
        {query_id: rankings[index] for query_id, rankings in by_query.items()}
        for index in range(prepared.n_runs)
    ]
    return kernel(runs, in_rank_order=True, **arguments)
