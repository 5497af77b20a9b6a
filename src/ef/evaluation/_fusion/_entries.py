"""What the fusion code needs of a registered fusion method or normalisation.

The registry's entries (``FusionMethod`` and ``Normalization`` in the plugin layer) have these
attributes. Only this package's entry points (:func:`~ef.evaluation.fuse`,
:func:`~ef.evaluation.optimize_fusion`) ask the plugin host, once per call; the rest reads the
entries it is handed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ef.evaluation._scoring.domains import Domain

__all__ = ["MethodEntry", "NormEntry"]


class MethodEntry(Protocol):
    """A registered fusion method (see the ``ef_evaluation_register_fusion_methods`` hook)."""

    @property
    def name(self) -> str: ...
    @property
    def fn(self) -> Callable[..., Mapping[str, float]]: ...
    @property
    def rank_based(self) -> bool: ...
    @property
    def weighted(self) -> bool: ...
    @property
    def defaults(self) -> Mapping[str, Any]: ...
    @property
    def required(self) -> tuple[str, ...]: ...
    @property
    def train(self) -> Callable[..., Mapping[str, Any]] | None: ...
    @property
    def trained(self) -> tuple[str, ...]: ...
    @property
    def train_params(self) -> tuple[str, ...]: ...
    @property
    def grid(self) -> Callable[[int], Mapping[str, Sequence[Any]]] | None: ...
    @property
    def aliases(self) -> tuple[str, ...]: ...
    @property
    def plugin(self) -> str: ...
    @property
    def domains(self) -> Mapping[str, Domain]: ...


class NormEntry(Protocol):
    """A registered score normalisation (``ef_evaluation_register_normalizations``)."""

    @property
    def name(self) -> str: ...
    @property
    def fn(self) -> Callable[..., Sequence[Mapping[str, float]]]: ...
    @property
    def order_based(self) -> bool: ...
    @property
    def plugin(self) -> str: ...
