"""Measures trec_eval lacks, each as its own source of truth defines it.

Exponential-gain nDCG (ranx ``ndcg_burges``, gdeval), ERR (gdeval), rank-biased precision and
its residual (Moffat and Zobel; cwl_eval), F1 and hits (ranx), Unjudged (BEIR's Hole per
query), Judged (ir_measures) and the reciprocal rank cut at k. Each reads one query's
:class:`~ef.evaluation._scoring.measures.summary.QueryFacts`; a cutoff ``None`` means the whole
ranking.
"""

from __future__ import annotations

from ef.evaluation._scoring.cutoffs import (
    PRECISION,
    RECALL,
    RECIPROCAL_RANK,
    WHOLE,
    dcg_at,
    hits_at,
    ndcg_at,
)
from ef.evaluation._scoring.measures.cut import values
from ef.evaluation._scoring.measures.sets import f_measure
from ef.evaluation._scoring.measures.summary import QueryFacts

__all__ = [
    "ERR_MAX_GRADE",
    "err",
    "f1",
    "hits",
    "judged_share",
    "ndcg_exp",
    "rbp",
    "rbp_residual",
    "reciprocal_rank_at",
    "unjudged",
]

ERR_MAX_GRADE = 4
"""ERR's normaliser is ``2**ERR_MAX_GRADE``, gdeval's ``$MAX_JUDGMENT``: a fixed scale, so a
query's ERR does not change when another document gets a higher grade."""


def _depth(facts: QueryFacts, k: int | None) -> int:
    """How many ranks a measure cut at ``k`` looks at."""
    return facts.num_ret if k is None else min(k, facts.num_ret)


def ndcg_exp(facts: QueryFacts, k: int | None) -> float:
    """nDCG with exponential gain ``2**grade - 1`` and discount ``log2(rank + 1)``.

    ranx's ``ndcg_burges``, gdeval's ``ndcg@k`` (Burges et al., ICML 2005); the ideal ranking is
    every positive grade, descending, cut at ``k``. 0 when nothing has a positive grade.

    >>> from ef.evaluation._scoring.measures.summary import facts_from_ranking
    >>> facts = facts_from_ranking(['x', 'd1'], {'d1': 2, 'd2': 1})
    >>> round(ndcg_exp(facts, None), 6)  # (3 / log2 3) / (3 + 1 / log2 3)
    0.521296
    """
    ideal = facts.all_gains
    if not ideal:
        return 0.0
    # The same DCG sum as nDCG's, over the gains 2**grade - 1 and unscaled (x / 1.0 is x).
    cutoff = (WHOLE if k is None else k,)
    idcg = dcg_at(range(min(len(ideal), cutoff[0])), [2.0**g - 1.0 for g in ideal], 1.0, cutoff)
    graded = facts.graded
    gains = [2.0**grade - 1.0 for _, grade in graded]
    return ndcg_at([position for position, _ in graded], gains, 1.0, idcg, cutoff)[0]


def err(facts: QueryFacts, k: int | None, max_grade: int = ERR_MAX_GRADE) -> float:
    """Expected reciprocal rank (Chapelle et al., CIKM 2009), as gdeval computes it.

    A document of grade ``g`` satisfies the user with probability ``(2**g - 1) / 2**m``, ``m``
    the largest grade of the scale (``max_grade``, gdeval's fixed 4); ERR is the expected
    ``1 / rank`` at which the user stops. The normaliser is the scale's, not the query's largest
    grade, so grades must be at most ``max_grade``.

    :raises ValueError: for a retrieved grade above ``max_grade`` (its probability would exceed
        1); the evaluation adds a note naming the query.

    >>> from ef.evaluation._scoring.measures.summary import facts_from_ranking
    >>> err(facts_from_ranking(['d1'], {'d1': 4}), 10)
    0.9375
    """
    scale = 2.0**max_grade
    depth = _depth(facts, k)
    total, decay = 0.0, 1.0
    for position, grade in facts.graded:
        if position >= depth:
            break
        if grade > max_grade:
            scale_name = "gdeval's scale" if max_grade == ERR_MAX_GRADE else "max_rel"
            raise ValueError(f"ERR takes grades 0 to {max_grade} ({scale_name}); got {grade!r}")
        stop = (2.0**grade - 1.0) / scale
        total += stop * decay / (position + 1)
        decay *= 1.0 - stop
    return total


def _rbp_positions(facts: QueryFacts, k: int | None) -> list[int]:
    depth = _depth(facts, k)
    return [position for position in facts.positions if position < depth]


def rbp(facts: QueryFacts, p: float, k: int | None = None) -> float:
    """Rank-biased precision (Moffat and Zobel, TOIS 2008), binary relevance.

    ``(1 - p) · Σ p**i`` over the relevant documents at 0-based rank ``i``: the rate of relevant
    documents seen by a user who reads on from each result with probability ``p``.

    >>> from ef.evaluation._scoring.measures.summary import facts_from_ranking
    >>> round(rbp(facts_from_ranking(['d1', 'x', 'd2'], {'d1': 1, 'd2': 1}), 0.8), 6)
    0.328
    """
    total = 0.0
    for position in _rbp_positions(facts, k):
        total += p**position
    return (1.0 - p) * total


def rbp_residual(facts: QueryFacts, p: float, k: int | None = None) -> float:
    """The most RBP could still grow: the weight of the unjudged ranks and of the tail.

    ``p**d`` for the ranks past the ``d`` evaluated, plus ``(1 - p) · p**i`` for each evaluated
    rank ``i`` without a judgement (a negative grade counts as unjudged, as in trec_eval).
    ``rbp + rbp_residual`` is the largest RBP the ranking could turn out to have.

    >>> from ef.evaluation._scoring.measures.summary import facts_from_ranking
    >>> round(rbp_residual(facts_from_ranking(['d1', 'x'], {'d1': 1}), 0.5), 6)  # .25 + .25
    0.5
    """
    depth = _depth(facts, k)
    judged_weight = 0.0
    for position, grade in facts.judged:
        if position >= depth:
            break
        if grade >= 0:
            judged_weight += (1.0 - p) * p**position
    return 1.0 - judged_weight


def hits(facts: QueryFacts, k: int) -> float:
    """Relevant documents in the top ``k`` (ranx ``hits``)."""
    return float(hits_at(facts.positions, (k,))[0])


def f1(facts: QueryFacts, k: int) -> float:
    """The harmonic mean of precision@k and recall@k (ranx ``f1``); 0 when either is 0."""
    at_k = values(facts, (k,))
    return f_measure(at_k[PRECISION][0], at_k[RECALL][0])


def _judged_within(facts: QueryFacts, depth: int) -> int:
    """How many judged documents (any grade) are in the top ``depth``."""
    return hits_at([position for position, _ in facts.judged], (depth,))[0]


def unjudged(facts: QueryFacts, k: int) -> float:
    """The documents of the top ``k`` without a judgement for the query, over ``k``.

    BEIR's ``Hole@k`` on one query; on several, BEIR counts a document judged for *any* query
    as judged, and ef does not compute that (docs/semantics.md)."""
    depth = _depth(facts, k)
    return (depth - _judged_within(facts, depth)) / k


def judged_share(facts: QueryFacts, k: int | None) -> float:
    """ir_measures' ``Judged@k``: judged documents in the top ``k`` over ``min(k, retrieved)``.

    Any grade counts as a judgement. 0 for an empty ranking.
    """
    depth = _depth(facts, k)
    if not depth:
        return 0.0
    return _judged_within(facts, depth) / depth


def reciprocal_rank_at(facts: QueryFacts, k: int | None) -> float:
    """``1 / rank`` of the first relevant document if it is in the top ``k``, else 0."""
    return values(facts, (WHOLE if k is None else k,))[RECIPROCAL_RANK][0]
