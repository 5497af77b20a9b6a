"""Every numeric trec_eval measure, and ef's hit_rate, r_precision and judged, as hook code.

Registered through the same hook as any third-party metric. A trec_eval family registers with
its :class:`~ef.evaluation._scoring.measures.family.Family` (keys, parameters, aggregation,
source); where its trec_eval name is one of ef's own metrics (``map``, ``ndcg``, ``recall``) it
is asked for as ``trec_map``, ``trec_ndcg``, ``trec_recall``, and its keys begin with that name
(``trec_map``, ``trec_ndcg``, ``trec_recall_5`` …), as every key begins with the name asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs

from ef.evaluation._scoring.measures.cut import first_hit_at, success
from ef.evaluation._scoring.measures.family_scorer import TREC_FAMILIES
from ef.evaluation._scoring.measures.incomplete import judged_at
from ef.evaluation._scoring.measures.summary import facts_for, facts_from_ranking
from ef.evaluation._scoring.measures.uncut import r_precision
from ef.evaluation._scoring.metrics import check_cutoff
from ef.evaluation._scoring.ranked import RankingSummary

__all__ = ["register_measures"]

R_PRECISION = attrs.evolve(
    next(family for family in TREC_FAMILIES if family.name == "Rprec"),
    name="r_precision",
    keys=("r_precision",),
    compute=r_precision,
    description="relevant documents in the top R, divided by R (trec_eval's Rprec)",
)


def hit_rate(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """``1.0`` if a relevant document is in the top ``k``, else ``0.0`` (trec_eval success).

    >>> hit_rate(['x', 'd1'], {'d1': 1}, 1), hit_rate(['x', 'd1'], {'d1': 1}, 2)
    (0.0, 1.0)
    """
    return success(facts_from_ranking(ranked, relevant), [check_cutoff(k)])[0]


def hit_rate_all(summary: RankingSummary, ks: Sequence[int]) -> list[float]:
    """:func:`hit_rate` at every cutoff, from the rank of the first relevant document."""
    return first_hit_at(summary.positions, ks)


def judged(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """The share of the top ``k`` that carries a judgement of any grade, divided by ``k``.

    >>> judged(['d1', 'x', 'n1', 'y'], {'d1': 1, 'n1': 0}, 4)
    0.5
    """
    return judged_at(facts_from_ranking(ranked, relevant), [check_cutoff(k)])[0]


def judged_all(summary: RankingSummary, ks: Sequence[int]) -> list[float]:
    """:func:`judged` at every cutoff, from where the judged documents landed."""
    return judged_at(facts_for(summary), ks)


def register_measures(register: Callable[..., None]) -> None:
    """Register every trec_eval family, then hit_rate, judged and r_precision."""
    for family in TREC_FAMILIES:
        register(
            family.name,
            family.function(),
            cutoff=False,
            description=f"{family.description} ({family.source})",
            family=family,
        )
    register(
        "hit_rate",
        hit_rate,
        all_cutoffs=hit_rate_all,
        description="1 if a relevant doc is in the top k, else 0 (trec_eval success)",
    )
    register(
        "judged",
        judged,
        all_cutoffs=judged_all,
        description="share of the top k with a judgement of any grade, over k (judged@k)",
    )
    register(
        "r_precision",
        R_PRECISION.function(),
        cutoff=False,
        description=f"{R_PRECISION.description} ({R_PRECISION.source})",
        family=R_PRECISION,
    )
