"""The built-in fusion methods and normalisations, as a hook module."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ef.evaluation._fusion import methods, supervised
from ef.evaluation._fusion.grids import hundredths, weights_only
from ef.evaluation._fusion.norms import BUILTIN_NORMALIZATIONS, ORDER_BASED
from ef.evaluation._plugins.hookspecs import hookimpl
from ef.evaluation._scoring.domains import integer, number, per_run

__all__ = ["ef_evaluation_register_fusion_methods", "ef_evaluation_register_normalizations"]


def _summary(fn: Callable[..., Any]) -> str:
    return (fn.__doc__ or "").strip().split("\n")[0]


def _grid(**values: Sequence[Any]) -> Callable[[int], Mapping[str, Sequence[Any]]]:
    def grid(n_runs: int) -> Mapping[str, Sequence[Any]]:
        return values

    return grid


def _no_grid(n_runs: int) -> Mapping[str, Sequence[Any]]:
    return {}


def _probfuse_train(hits: Any, counts: Any, *, n_segments: int) -> Mapping[str, Any]:
    return supervised.train_probfuse(hits, n_segments=n_segments)


def _segfuse_train(hits: Any, counts: Any) -> Mapping[str, Any]:
    return supervised.train_segfuse(hits)


def _position_train(hits: Any, counts: Any) -> Mapping[str, Any]:
    return supervised.train_position_probs(hits)


def _bayesfuse_train(hits: Any, counts: Any) -> Mapping[str, Any]:
    return supervised.train_bayesfuse(hits)


def _mapfuse_train(hits: Any, counts: Any) -> Mapping[str, Any]:
    return supervised.train_mapfuse(hits, counts)


_PROBS = per_run(rows=True)
"""A trained table: one sequence of finite numbers per run (a 2-D numpy array, as ranx's)."""


def _comb_aliases(name: str) -> tuple[str, ...]:
    return (f"comb{name}", f"comb_{name}")


@hookimpl
def ef_evaluation_register_fusion_methods(register: Callable[..., None]) -> None:
    """ranx's fusion methods under ranx's names (``ranx.fusion.fusion_switch``)."""
    score_based: tuple[tuple[str, Callable[..., Any]], ...] = (
        ("sum", methods.sum_),
        ("mnz", methods.mnz),
        ("max", methods.max_),
        ("min", methods.min_),
        ("med", methods.med),
        ("anz", methods.anz),
    )
    for name, fn in score_based:
        register(name, fn, rank_based=False, aliases=_comb_aliases(name), description=_summary(fn))
    register(
        "gmnz",
        methods.gmnz,
        rank_based=False,
        required=("gamma",),
        grid=_grid(gamma=hundredths()),
        domains={"gamma": number()},
        aliases=_comb_aliases("gmnz"),
        description=_summary(methods.gmnz),
    )
    weighted: tuple[tuple[str, Callable[..., Any], bool, tuple[str, ...]], ...] = (
        ("wsum", methods.wsum, False, ("weighted_sum",)),
        ("wmnz", methods.wmnz, False, ()),
        ("mixed", methods.mixed, False, ()),
        ("w_bordafuse", methods.w_bordafuse, True, ("weighted_bordafuse",)),
        ("w_condorcet", methods.w_condorcet, True, ("weighted_condorcet",)),
    )
    for name, fn, rank_based, aliases in weighted:
        register(
            name,
            fn,
            rank_based=rank_based,
            weighted=True,
            grid=weights_only,
            aliases=aliases,
            description=_summary(fn),
        )
    register(
        "rrf",
        methods.rrf,
        rank_based=True,
        defaults={"k": 60},
        grid=_grid(k=list(range(10, 101, 10))),
        domains={"k": number(0, low_open=True)},
        description=_summary(methods.rrf),
    )
    register("isr", methods.isr, rank_based=True, description=_summary(methods.isr))
    register("log_isr", methods.log_isr, rank_based=True, description=_summary(methods.log_isr))
    register(
        "logn_isr",
        methods.logn_isr,
        rank_based=True,
        defaults={"sigma": 0.01},
        grid=_grid(sigma=hundredths()),
        domains={"sigma": number(0, 1)},
        description=_summary(methods.logn_isr),
    )
    register(
        "rbc",
        methods.rbc,
        rank_based=True,
        required=("phi",),
        # ranx's grid ends at phi = 1.0, where every score is 0: out of phi's domain.
        grid=_grid(phi=hundredths()[:-1]),
        domains={"phi": number(0, 1, low_open=True, high_open=True)},
        description=_summary(methods.rbc),
    )
    register(
        "bordafuse", methods.bordafuse, rank_based=True, description=_summary(methods.bordafuse)
    )
    register(
        "condorcet", methods.condorcet, rank_based=True, description=_summary(methods.condorcet)
    )
    _register_supervised(register)


def _register_supervised(register: Callable[..., None]) -> None:
    register(
        "probfuse",
        supervised.probfuse,
        rank_based=True,
        train=_probfuse_train,
        trained=("probs",),
        train_params=("n_segments",),
        grid=_grid(n_segments=list(range(1, 101))),
        domains={"n_segments": integer(1), "probs": _PROBS},
        description=_summary(supervised.probfuse),
    )
    register(
        "segfuse",
        supervised.segfuse,
        rank_based=False,
        train=_segfuse_train,
        trained=("probs",),
        grid=_no_grid,
        domains={"probs": _PROBS},
        description=_summary(supervised.segfuse),
    )
    register(
        "slidefuse",
        supervised.slidefuse,
        rank_based=True,
        required=("w",),
        train=_position_train,
        trained=("probs",),
        grid=_grid(w=list(range(1, 101))),
        domains={"w": integer(0), "probs": _PROBS},
        description=_summary(supervised.slidefuse),
    )
    register(
        "posfuse",
        supervised.posfuse,
        rank_based=True,
        train=_position_train,
        trained=("probs",),
        grid=_no_grid,
        domains={"probs": _PROBS},
        description=_summary(supervised.posfuse),
    )
    register(
        "bayesfuse",
        supervised.bayesfuse,
        rank_based=True,
        train=_bayesfuse_train,
        trained=("log_odds",),
        grid=_no_grid,
        domains={"log_odds": _PROBS},
        description=_summary(supervised.bayesfuse),
    )
    register(
        "mapfuse",
        supervised.mapfuse,
        rank_based=True,
        train=_mapfuse_train,
        trained=("map_scores",),
        grid=_no_grid,
        domains={"map_scores": per_run()},
        description=_summary(supervised.mapfuse),
    )


@hookimpl
def ef_evaluation_register_normalizations(register: Callable[..., None]) -> None:
    """ranx's normalisations (``ranx.normalization.norm_switch``) and ``none``."""
    for name, (fn, description) in BUILTIN_NORMALIZATIONS.items():
        register(
            name,
            fn,
            order_based=name in ORDER_BASED,
            description=description.strip().split("\n")[0],
        )
