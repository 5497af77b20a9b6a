"""trec_eval's measures of the whole ranking: map, gm_map, Rprec, recip_rank, and the
interpolated-precision family (iprec_at_recall, 11pt_avg, Rprec_mult).

"Whole" is the ranking as retrieved: these measures have no cutoff, so their value depends on how
deep the retriever was asked to go; the report says how deep the rankings were.
"""

from __future__ import annotations

from collections.abc import Sequence

from ef.evaluation._scoring.cutoffs import AP, PRECISION, RECIPROCAL_RANK, WHOLE
from ef.evaluation._scoring.measures.cut import values
from ef.evaluation._scoring.measures.family import Family, fraction_keys
from ef.evaluation._scoring.measures.summary import QueryFacts

__all__ = ["FAMILIES", "RECALL_LEVELS", "R_MULTIPLES"]

RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""trec_eval's default recall levels for iprec_at_recall and 11pt_avg."""
R_MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
"""trec_eval's default multiples of R for Rprec_mult."""


def average_precision(facts: QueryFacts) -> list[float]:
    """Average precision over the whole ranking, divided by R (``m_map.c``)."""
    return values(facts, (WHOLE,))[AP]


def r_precision(facts: QueryFacts) -> list[float]:
    """Relevant documents in the top R, divided by R (``m_Rprec.c``): precision at R; 0 when
    R is 0."""
    n_relevant = facts.n_relevant
    if not n_relevant:
        return [0.0]
    return values(facts, (n_relevant,))[PRECISION]


def reciprocal_rank(facts: QueryFacts) -> list[float]:
    """1 / rank of the first relevant document; 0 if none (``m_recip_rank.c``)."""
    return values(facts, (WHOLE,))[RECIPROCAL_RANK]


def recall_cutoff(fraction: float, n_relevant: int) -> int:
    """How many relevant documents a fraction of R stands for, rounded as trec_eval 9.0.7
    (pytrec_eval's) rounds it: ``(long)(fraction * R + 0.9)``.

    trec_eval 9.0.8 changed ``iprec_at_recall`` and ``11pt_avg`` to ``lround(fraction * R)``;
    pytrec_eval, the reference here, still rounds the older way for every family.
    """
    return int(fraction * n_relevant + 0.9)


def _interpolated(facts: QueryFacts, levels: Sequence[float]) -> list[float | None]:
    """Interpolated precision at each recall level; ``None`` where trec_eval sets nothing.

    ``Int_Prec(X) = max Prec(Y) for Y >= X``; the maximum is reached at a relevant document's
    rank or at the end of the ranking, so only those are visited (``m_iprec_at_recall.c``).
    Computed once per query and levels (iprec_at_recall and 11pt_avg both read it).
    """
    key = ("interpolated precision", tuple(levels))
    found: list[float | None] | None = facts.memo.get(key)
    if found is None:
        found = facts.memo[key] = _interpolate(facts, levels)
    return found


def _interpolate(facts: QueryFacts, levels: Sequence[float]) -> list[float | None]:
    positions, num_ret = facts.positions, facts.num_ret
    found = len(positions)
    if not num_ret:
        return [0.0] * len(levels)
    best = found / num_ret
    interpolated = [0.0] * (found + 1)
    for j in range(found, 0, -1):
        precision = j / (positions[j - 1] + 1)
        if precision > best:
            best = precision
        interpolated[j] = best
    n_relevant = facts.n_relevant
    out: list[float | None] = []
    for level in levels:
        cut = recall_cutoff(level, n_relevant)
        if cut > found:
            out.append(None)
        elif cut == 0:
            out.append(best if found else 0.0)
        else:
            out.append(interpolated[cut])
    return out


def iprec_at_recall(facts: QueryFacts, levels: Sequence[float] = RECALL_LEVELS) -> list[float]:
    """Interpolated precision at each recall level (``m_iprec_at_recall.c``)."""
    return [0.0 if value is None else value for value in _interpolated(facts, levels)]


def eleven_point_average(facts: QueryFacts) -> list[float]:
    """Interpolated precision averaged over the 11 recall levels (``m_11pt_avg.c``)."""
    total = 0.0
    for value in reversed(_interpolated(facts, RECALL_LEVELS)):  # trec_eval's order of summing
        if value is not None:
            total += value
    return [total / len(RECALL_LEVELS)]


def r_precision_multiples(
    facts: QueryFacts, multiples: Sequence[float] = R_MULTIPLES
) -> list[float]:
    """Precision at each multiple of R, rounded as trec_eval does (``m_Rprec_mult.c``); 0 at a
    multiple that rounds to no document."""
    cuts = [recall_cutoff(multiple, facts.n_relevant) for multiple in multiples]
    ranks = [cut for cut in cuts if cut > 0]
    # The multiples ascend, so do the cuts: those that round to 0 come first.
    at = values(facts, ranks)[PRECISION] if ranks else []
    return [0.0] * (len(cuts) - len(ranks)) + at


FAMILIES = (
    Family(
        "trec_map",
        ("trec_map",),
        average_precision,
        source="trec_eval m_map.c",
        description="average precision over the whole ranking, divided by R (trec_eval's map)",
    ),
    Family(
        "gm_map",
        ("gm_map",),
        average_precision,
        aggregation="geometric",
        source="trec_eval m_gm_map.c",
        description="average precision per query; over queries the geometric mean (floor 1e-5)",
    ),
    Family(
        "Rprec",
        ("Rprec",),
        r_precision,
        source="trec_eval m_Rprec.c",
        description="relevant documents in the top R, divided by R",
    ),
    Family(
        "recip_rank",
        ("recip_rank",),
        reciprocal_rank,
        source="trec_eval m_recip_rank.c",
        description="1 / rank of the first relevant document over the whole ranking",
    ),
    Family(
        "iprec_at_recall",
        fraction_keys("iprec_at_recall", RECALL_LEVELS),
        iprec_at_recall,
        RECALL_LEVELS,
        source="trec_eval m_iprec_at_recall.c",
        description="interpolated precision at each recall level",
    ),
    Family(
        "11pt_avg",
        ("11pt_avg",),
        eleven_point_average,
        source="trec_eval m_11pt_avg.c",
        description="interpolated precision averaged over the 11 recall levels",
    ),
    Family(
        "Rprec_mult",
        fraction_keys("Rprec_mult", R_MULTIPLES),
        r_precision_multiples,
        R_MULTIPLES,
        source="trec_eval m_Rprec_mult.c",
        description="precision at each multiple of R",
    ),
)
