"""Measures built for incomplete judgements: bpref, gm_bpref, infAP, and ef's judged@k.

bpref and infAP look only at judged documents and tell a *pooled but unjudged* document
(a negative grade) apart from a judged non-relevant one (grade ``>= 0``, not relevant).
"""

from __future__ import annotations

from collections.abc import Sequence

from ef.evaluation._scoring.cutoffs import hits_at
from ef.evaluation._scoring.measures.family import Family
from ef.evaluation._scoring.measures.summary import QueryFacts

__all__ = ["FAMILIES", "INFAP_EPSILON", "judged_at"]

INFAP_EPSILON = 0.00001
"""trec_eval's smoothing constant in infAP's estimate of precision above a relevant document."""


def bpref(facts: QueryFacts) -> list[float]:
    """Binary preference (Buckley and Voorhees, SIGIR 2004; ``m_bpref.c``).

    Every relevant document retrieved with ``n`` judged non-relevant ones above it adds
    ``1 - min(n, R) / min(N, R)`` (``1`` when ``n`` is 0), ``N`` being the judged non-relevant
    documents; the sum is divided by ``R``. Pooled-but-unjudged documents are skipped.
    """
    n_relevant = facts.n_relevant
    if not n_relevant:
        return [0.0]
    relevant = facts.judging.relevant
    denominator = min(facts.n_nonrelevant, n_relevant)
    total = 0.0
    nonrelevant_above = 0
    for _, grade in facts.judged:
        if grade < 0:
            continue
        if relevant(grade):
            if nonrelevant_above:
                # nonrelevant_above > 0 implies denominator > 0: both count judged non-relevant.
                total += 1.0 - min(nonrelevant_above, n_relevant) / denominator
            else:
                total += 1.0
        else:
            nonrelevant_above += 1
    return [total / n_relevant]


def inferred_average_precision(facts: QueryFacts) -> list[float]:
    """Inferred AP (Yilmaz and Aslam, CIKM 2006; ``m_infap.c``).

    Precision above each relevant document is estimated from the judged documents above it;
    documents outside the pool count as non-relevant, pooled-but-unjudged ones are assumed
    relevant in the proportion of the judged ones.
    """
    n_relevant = facts.n_relevant
    relevant = facts.judging.relevant
    total = 0.0
    relevant_so_far = nonrelevant_so_far = unjudged_so_far = 0
    for position, grade in facts.judged:
        if grade < 0:
            unjudged_so_far += 1
        elif not relevant(grade):
            nonrelevant_so_far += 1
        else:
            relevant_so_far += 1
            if position == 0:
                total += 1.0
            else:
                above = float(position)
                judged_above = relevant_so_far - 1 + nonrelevant_so_far
                total += 1.0 / (above + 1.0) + (above / (above + 1.0)) * (
                    (judged_above + unjudged_so_far) / above
                ) * (
                    (relevant_so_far - 1 + INFAP_EPSILON)
                    / (relevant_so_far - 1 + nonrelevant_so_far + 2 * INFAP_EPSILON)
                )
    return [total / n_relevant if n_relevant else total]


def judged_at(facts: QueryFacts, ks: Sequence[int]) -> list[float]:
    """The share of the top k that carries a judgement of any grade, divided by k (judged@k).

    How far the judgements cover what a system returns: a low value means its scores rest on
    unjudged documents. Always divided by ``k``, even when fewer were returned (ir_measures'
    ``Judged@k`` up to 0.3.1). Any grade counts, ``0`` and negative ones included.
    """
    positions = [position for position, _ in facts.judged]
    return [count / k for count, k in zip(hits_at(positions, ks), ks, strict=True)]


FAMILIES = (
    Family(
        "bpref",
        ("bpref",),
        bpref,
        source="trec_eval m_bpref.c",
        description="how often relevant documents rank above judged non-relevant ones",
    ),
    Family(
        "gm_bpref",
        ("gm_bpref",),
        bpref,
        aggregation="geometric",
        source="trec_eval m_gm_bpref.c",
        description="bpref per query; over queries the geometric mean (floor 1e-5)",
    ),
    Family(
        "infAP",
        ("infAP",),
        inferred_average_precision,
        source="trec_eval m_infap.c",
        description="inferred average precision, for sampled judgements",
    ),
)
