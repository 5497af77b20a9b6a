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

from ef.evaluation._scoring.cutoffs import (
    NDCG,
    WHOLE,
    dcg_at,
    ideal_dcg_at,
    ndcg_at,
    ranking_values,
)
from ef.evaluation._scoring.measures.cut import CUTOFFS, values
from ef.evaluation._scoring.measures.family import Family, cutoff_keys
from ef.evaluation._scoring.measures.summary import QueryFacts

__all__ = ["FAMILIES", "ndcg_cut"]

_log2 = math.log2


def _graded(facts: QueryFacts) -> tuple[list[int], list[float]]:
    """Where the documents with a positive grade landed, and their grades (at any level)."""
    if facts.judging.relevance_level is None:  # the relevant ones are the graded ones
        return facts.positions, facts.gains
    graded = facts.graded
    return [p for p, _ in graded], [g for _, g in graded]


_PREFIXES: dict[tuple[float, ...], list[float]] = {}
"""sorted grades → their ideal DCG prefix: a pure function's values, kept for the queries and
evaluations that follow (grades repeat: binary judgements give only R) up to a bound."""
_PREFIXES_KEPT = 4096  # distinct grade lists, each prefix as long as its list


def _ideal_prefix(facts: QueryFacts) -> list[float]:
    """``prefix[t]``: the ideal DCG of the first ``t`` ideal documents (every positive grade,
    descending), summed in rank order; kept across queries."""
    ideal = facts.all_gains
    key = tuple(ideal)
    prefix = _PREFIXES.get(key)
    if prefix is None:
        if len(_PREFIXES) >= _PREFIXES_KEPT:
            _PREFIXES.clear()
        prefix = _PREFIXES[key] = [0.0, *ideal_dcg_at(ideal, range(1, len(ideal) + 1))]
    return prefix


def ndcg(facts: QueryFacts) -> list[float]:
    """DCG of the whole ranking / the ideal DCG of every positive grade (``m_ndcg.c``): nDCG
    at a cutoff past the ranking."""
    return ndcg_cut(facts, (WHOLE,))


def ndcg_cut(facts: QueryFacts, ks: Sequence[int] = CUTOFFS) -> list[float]:
    """nDCG of the top k at each cutoff (``m_ndcg_cut.c``); the same as ef's ``ndcg@k``."""
    if facts.judging.relevance_level is None:  # the relevant documents are the graded ones
        return values(facts, ks, ndcg=True)[NDCG]
    positions, gains = _graded(facts)
    return ranking_values(positions, gains, facts.all_gains, ks)[NDCG]


def ndcg_rel(facts: QueryFacts) -> list[float]:
    """nDCG averaged over the relevant documents (``m_ndcg_rel.c``).

    At each retrieved document with a gain, nDCG at its rank; every relevant document not
    retrieved adds nDCG at the end of the ranking; the sum is divided by the number of documents
    with a positive grade.
    """
    ideal = facts.all_gains
    if not ideal:
        return [0.0]
    prefix = _ideal_prefix(facts)
    n_ideal = len(ideal)
    positions, gains = _graded(facts)
    # The DCG at each graded document's rank, then of the whole ranking.
    dcgs = dcg_at(positions, gains, ideal[0], [*(p + 1 for p in positions), WHOLE])
    total = 0.0
    for position, dcg in zip(positions, dcgs, strict=False):
        total += dcg / prefix[min(position + 1, n_ideal)]
    total += (n_ideal - len(positions)) * dcgs[-1] / prefix[n_ideal]
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
    n_ideal = len(ideal)
    bounds = [t for t in range(1, n_ideal) if ideal[t] != ideal[t - 1]] + [n_ideal]
    if n_ideal + 1 < facts.num_ret:
        bounds.append(WHOLE)
    positions, gains = _graded(facts)
    prefix = _ideal_prefix(facts)
    ideal_dcgs = [prefix[min(bound, n_ideal)] for bound in bounds]
    total = 0.0
    for value in ndcg_at(positions, gains, ideal[0], ideal_dcgs, bounds):
        total += value
    return [total / len(bounds)]


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
