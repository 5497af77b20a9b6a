"""trec_eval's gain-based measures: ndcg, ndcg_cut, ndcg_rel, Rndcg, G and binG.

trec_eval's gain map (``gain_init.c``) gives a document the gain of its grade; a negative grade
or no judgement gains nothing. The ideal ranking is every positive grade, descending. These
measures ignore the relevance level (trec_eval's ``-l``), except binG, which counts relevant
documents, and Rndcg, which is 0 when nothing is relevant at the level.

trec_eval walks every rank of the ranking; here only the ranks where something changes are
visited — the retrieved documents with a gain, and the points where the ideal ranking's gain
drops — with the same sums in the same order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import accumulate

from ef.evaluation._scoring.measures.cut import CUTOFFS
from ef.evaluation._scoring.measures.family import Family, cutoff_keys
from ef.evaluation._scoring.measures.summary import QueryFacts

__all__ = ["FAMILIES", "ndcg_cut"]

_log2 = math.log2


def _ideal_prefix(ideal: Sequence[float], scale: float) -> list[float]:
    """``prefix[t]``: the ideal DCG of the first ``t`` ideal documents, summed in rank order."""
    prefix = [0.0]
    total = 0.0
    for t, gain in enumerate(ideal):
        total += gain / scale / _log2(t + 2)
        prefix.append(total)
    return prefix


def ndcg(facts: QueryFacts) -> list[float]:
    """DCG of the whole ranking / the ideal DCG of every positive grade (``m_ndcg.c``).

    Gains are divided by the query's largest grade first, as ef's ``ndcg@k`` does: the same ratio,
    with no overflow for any finite grade.
    """
    ideal = facts.all_gains
    if not ideal:
        return [0.0]
    scale = ideal[0]
    dcg = 0.0
    for position, gain in facts.graded:
        dcg += gain / scale / _log2(position + 2)
    return [dcg / _ideal_prefix(ideal, scale)[-1]]


def ndcg_cut(facts: QueryFacts, ks: Sequence[int] = CUTOFFS) -> list[float]:
    """nDCG of the top k at each cutoff (``m_ndcg_cut.c``); the same as ef's ``ndcg@k``."""
    ideal = facts.all_gains
    if not ideal:
        return [0.0] * len(ks)
    scale = ideal[0]
    prefix = _ideal_prefix(ideal, scale)
    graded = facts.graded
    out: list[float] = []
    dcg = 0.0
    j, n = 0, len(graded)
    for k in ks:
        while j < n and graded[j][0] < k:
            position, gain = graded[j]
            dcg += gain / scale / _log2(position + 2)
            j += 1
        out.append(dcg / prefix[min(k, len(ideal))])
    return out


def ndcg_rel(facts: QueryFacts) -> list[float]:
    """nDCG averaged over the relevant documents (``m_ndcg_rel.c``).

    At each retrieved document with a gain, nDCG at its rank; every relevant document not
    retrieved adds nDCG at the end of the ranking; the sum is divided by the number of documents
    with a positive grade.
    """
    ideal = facts.all_gains
    if not ideal:
        return [0.0]
    scale = ideal[0]
    prefix = _ideal_prefix(ideal, scale)
    n_ideal = len(ideal)
    total = dcg = 0.0
    for position, gain in facts.graded:
        dcg += gain / scale / _log2(position + 2)
        total += dcg / prefix[min(position + 1, n_ideal)]
    total += (n_ideal - len(facts.graded)) * dcg / prefix[n_ideal]
    return [total / n_ideal if total > 0.0 else 0.0]


def rndcg(facts: QueryFacts) -> list[float]:
    """nDCG averaged at the points where the ideal ranking's gain drops (``m_Rndcg.c``).

    With 5 documents of grade 3, 3 of grade 2 and 10 of grade 1, the points are ranks 5, 8 and
    18, plus, when the ranking goes on past the ideal one, its end; 0 when nothing is relevant
    at the relevance level.
    """
    ideal = facts.all_gains
    if not facts.n_relevant or not ideal:
        return [0.0]
    scale = ideal[0]
    prefix = _ideal_prefix(ideal, scale)
    n_ideal = len(ideal)
    bounds = [t for t in range(1, n_ideal) if ideal[t] != ideal[t - 1]] + [n_ideal]
    graded = facts.graded
    total = dcg = 0.0
    count = j = 0
    for bound in bounds:
        while j < len(graded) and graded[j][0] < bound:
            position, gain = graded[j]
            dcg += gain / scale / _log2(position + 2)
            j += 1
        total += dcg / prefix[bound]
        count += 1
    if n_ideal + 1 < facts.num_ret:
        for position, gain in graded[j:]:
            dcg += gain / scale / _log2(position + 2)
        total += dcg / prefix[n_ideal]
        count += 1
    return [total / count]


def gain_g(facts: QueryFacts) -> list[float]:
    """G: each document's gain over log2(2 + what an ideal ranking had gained more by then)
    (``m_G.c``), summed and divided by the ideal total gain.

    The ideal's "cost" of a rank is its gain, at least 1; past the ideal ranking, 1 per rank.
    """
    ideal = facts.all_gains
    if not ideal:
        return [0.0]
    n_ideal = len(ideal)
    cost = list(accumulate((gain if gain >= 1.0 else 1.0 for gain in ideal), initial=0.0))
    total_ideal = 0.0
    for gain in ideal:
        total_ideal += gain
    gained = value = 0.0
    for position, gain in facts.graded:
        gained += gain
        rank = position + 1
        spent = cost[rank] if rank <= n_ideal else cost[n_ideal] + (rank - n_ideal)
        value += gain / _log2(2 + spent - gained)
    return [value / total_ideal]


def binary_g(facts: QueryFacts) -> list[float]:
    """binG: each relevant document adds 1 / log2(2 + non-relevant documents above it), divided
    by R (``m_binG.c``)."""
    positions = facts.positions
    if not positions:
        return [0.0]
    total = 0.0
    for j, position in enumerate(positions, 1):
        total += 1.0 / _log2(3 + position - j)
    return [total / facts.n_relevant]


FAMILIES = (
    Family(
        "trec_ndcg",
        ("trec_ndcg",),
        ndcg,
        source="trec_eval m_ndcg.c",
        description="nDCG of the whole ranking with trec_eval's gain map (trec_eval's ndcg)",
    ),
    Family(
        "ndcg_cut",
        cutoff_keys("ndcg_cut", CUTOFFS),
        ndcg_cut,
        CUTOFFS,
        source="trec_eval m_ndcg_cut.c",
        description="nDCG of the top k",
    ),
    Family(
        "ndcg_rel",
        ("ndcg_rel",),
        ndcg_rel,
        source="trec_eval m_ndcg_rel.c",
        description="nDCG averaged over the relevant documents",
    ),
    Family(
        "Rndcg",
        ("Rndcg",),
        rndcg,
        source="trec_eval m_Rndcg.c",
        description="nDCG averaged where the ideal ranking's gain drops",
    ),
    Family(
        "G",
        ("G",),
        gain_g,
        source="trec_eval m_G.c",
        description="normalised gain, discounted by how far behind the ideal ranking it falls",
    ),
    Family(
        "binG",
        ("binG",),
        binary_g,
        source="trec_eval m_binG.c",
        description="binary G: 1 / log2(2 + non-relevant above) per relevant document, over R",
    ),
)
