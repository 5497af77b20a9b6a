"""A measure family: one trec_eval measure name, its parameters, its report keys, its rule.

trec_eval names a measure family (``P``) and reports one value per parameter (``P_5``,
``P_10`` …). A :class:`Family` says which keys it reports at its default parameters (exactly
pytrec_eval's output keys), how to compute them all at once from a query's
:class:`~ef.evaluation._scoring.measures.summary.QueryFacts`, how they aggregate over queries and
which source defines them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from ef.evaluation._scoring.aggregation import AGGREGATIONS, Aggregation
from ef.evaluation._scoring.measures.summary import (
    DEFAULT_JUDGING,
    QueryFacts,
    facts_from_ranking,
)

if TYPE_CHECKING:  # a type name only: the canonical measures are built on families
    from ef.evaluation._scoring.measures.canon import Measure

__all__ = ["AGGREGATIONS", "Aggregation", "Family", "cutoff_keys", "fraction_keys"]


Compute = Callable[[QueryFacts], list[float]]


def cutoff_keys(name: str, cutoffs: Sequence[int]) -> tuple[str, ...]:
    """pytrec_eval's keys for a cutoff family: ``P_5``, ``P_10`` …"""
    return tuple(f"{name}_{k}" for k in cutoffs)


def fraction_keys(name: str, fractions: Sequence[float]) -> tuple[str, ...]:
    """pytrec_eval's keys for a family measured at fractions: ``iprec_at_recall_0.10`` …"""
    return tuple(f"{name}_{x:.2f}" for x in fractions)


@attrs.frozen
class Family:
    """One measure family, as the scoring core computes it.

    :param name: the name asked for in ``metrics=`` (trec_eval's, unless it clashes with ef's).
    :param keys: the report keys at the default parameters, pytrec_eval's output keys.
    :param compute: ``compute(facts) -> [value per key]`` for one query.
    :param parameters: the default parameters, aligned with ``keys`` (empty for a family of one
        key without parameters).
    :param aggregation: how the per-query values aggregate (see :data:`AGGREGATIONS`).
    :param source: where the definition comes from: the trec_eval source file, or ``ef``.
    :param description: one line on what it measures.
    :param depth: the deepest rank a family cut at its own cutoff reads (``nDCG@1000``: 1000),
        so that a retriever is asked for that many documents; ``None`` otherwise.
    :param measure: the canonical measure a family of one written name computes (``nDCG@10``),
        for a compiled kernel that computes it too; ``None`` otherwise.
    """

    name: str
    keys: tuple[str, ...]
    compute: Compute
    parameters: tuple[float, ...] = ()
    aggregation: Aggregation = "mean"
    source: str = ""
    description: str = ""
    depth: int | None = attrs.field(default=None, kw_only=True)
    measure: Measure | None = attrs.field(default=None, kw_only=True)

    def values(self, ranked: Sequence[str], relevant: Mapping[str, float]) -> dict[str, float]:
        """Every key for one ranking, with trec_eval's default options."""
        facts = facts_from_ranking(ranked, relevant, DEFAULT_JUDGING)
        return dict(zip(self.keys, self.compute(facts), strict=True))

    def function(self) -> Callable[..., float]:
        """``fn(ranked, relevant, parameter)`` — or ``fn(ranked, relevant)`` for a family
        without parameters — the family's value at one of its default parameters."""
        keys, parameters, compute = self.keys, self.parameters, self.compute
        name = self.name

        if not parameters:

            def measure(ranked: Sequence[str], relevant: Mapping[str, float]) -> float:
                return compute(facts_from_ranking(ranked, relevant, DEFAULT_JUDGING))[0]

        else:

            def measure(  # type: ignore[misc]
                ranked: Sequence[str], relevant: Mapping[str, float], parameter: float
            ) -> float:
                try:
                    at = parameters.index(parameter)
                except ValueError:
                    raise ValueError(
                        f"{name} is computed at its default parameters "
                        f"{list(parameters)}; got {parameter!r}"
                    ) from None
                return compute(facts_from_ranking(ranked, relevant, DEFAULT_JUDGING))[at]

        measure.__name__ = measure.__qualname__ = name
        measure.__doc__ = f"trec_eval's {name} ({', '.join(keys)}). {self.description}"
        return measure
