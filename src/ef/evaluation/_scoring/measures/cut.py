"""trec_eval's measures at rank cutoffs: P, recall, relative_P, success, map_cut.

Each reads the positions of the retrieved relevant documents off the query's facts, once for
all its cutoffs. ``ndcg_cut`` is in :mod:`.gains` with the other gain-based measures.
"""

from __future__ import annotations

from collections.abc import Sequence

from ef.evaluation._scoring.cutoffs import (
    AP,
    NDCG,
    PRECISION,
    RECALL,
    WHOLE,
    Values,
    hits_at,
    kept_for,
    ranking_values,
)
from ef.evaluation._scoring.measures.family import Family, cutoff_keys
from ef.evaluation._scoring.measures.summary import QueryFacts

__all__ = ["CUTOFFS", "FAMILIES", "SUCCESS_CUTOFFS", "first_hit_at"]

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
"""trec_eval's default cutoffs for P, recall, relative_P, map_cut and ndcg_cut."""
SUCCESS_CUTOFFS = (1, 5, 10)
"""trec_eval's default cutoffs for success."""
_RECURRING = frozenset({CUTOFFS, (WHOLE,)})


def values(facts: QueryFacts, ks: Sequence[int], *, ndcg: bool = False) -> Values:
    """The cutoff measures (nDCG, recall, precision, reciprocal rank, AP) of the relevant
    documents at the relevance level, at every ascending cutoff of ``ks``: one walk per query
    and set of cutoffs, whichever families read it.

    :param ndcg: whether nDCG is wanted; else its list may be empty.
    """
    key = ks if type(ks) is tuple else tuple(ks)
    found: Values | None = facts.memo.get(key)
    if found is None or (ndcg and not found[NDCG]):
        # The ideal DCGs are kept across queries for the cutoffs that recur (the defaults),
        # and then nDCG comes with the others at the cost of a look-up.
        recurring = key in _RECURRING
        found = facts.memo[key] = ranking_values(
            facts.positions,
            facts.gains,
            facts.ideal_gains,
            key,
            kept_for(key) if recurring else None,
            ndcg=ndcg or recurring,
        )
    return found


def precision(facts: QueryFacts, ks: Sequence[int] = CUTOFFS) -> list[float]:
    """Relevant documents in the top k, divided by k (``m_P.c``)."""
    return values(facts, ks)[PRECISION]


def recall(facts: QueryFacts, ks: Sequence[int] = CUTOFFS) -> list[float]:
    """Relevant documents in the top k, divided by R (``m_recall.c``); 0 when R is 0."""
    return values(facts, ks)[RECALL]


def relative_precision(facts: QueryFacts, ks: Sequence[int] = CUTOFFS) -> list[float]:
    """Relevant documents in the top k, divided by min(k, R) (``m_rel_P.c``); 0 when R is 0."""
    n_relevant = facts.n_relevant
    if not n_relevant:
        return [0.0] * len(ks)
    return [
        hits / (k if k < n_relevant else n_relevant)
        for hits, k in zip(hits_at(facts.positions, ks), ks, strict=True)
    ]


def success(facts: QueryFacts, ks: Sequence[int] = SUCCESS_CUTOFFS) -> list[float]:
    """1 if a relevant document is in the top k, else 0 (``m_success.c``)."""
    return first_hit_at(facts.positions, ks)


def first_hit_at(positions: Sequence[int], ks: Sequence[int]) -> list[float]:
    """1.0 at each cutoff in ``ks`` that the first relevant position (0-based, ascending
    ``positions``) falls within, else 0.0: ``success`` and ``hit_rate`` alike.

    >>> first_hit_at([2, 5], [1, 3, 10])
    [0.0, 1.0, 1.0]
    """
    if not positions:
        return [0.0] * len(ks)
    first = positions[0]
    return [1.0 if first < k else 0.0 for k in ks]


def average_precision_cut(facts: QueryFacts, ks: Sequence[int] = CUTOFFS) -> list[float]:
    """Average precision over the top k, divided by R (``m_map_cut.c``); 0 when R is 0."""
    return values(facts, ks)[AP]


def _trec_m_file(name: str) -> str:
    return f"trec_eval m_{name}.c"


FAMILIES = (
    Family(
        "P",
        cutoff_keys("P", CUTOFFS),
        precision,
        CUTOFFS,
        source=_trec_m_file("P"),
        description="relevant documents in the top k, divided by k",
    ),
    Family(
        "trec_recall",
        cutoff_keys("trec_recall", CUTOFFS),
        recall,
        CUTOFFS,
        source=_trec_m_file("recall"),
        description="relevant documents in the top k, divided by R (trec_eval's recall)",
    ),
    Family(
        "relative_P",
        cutoff_keys("relative_P", CUTOFFS),
        relative_precision,
        CUTOFFS,
        source=_trec_m_file("rel_P"),
        description="relevant documents in the top k, divided by min(k, R)",
    ),
    Family(
        "success",
        cutoff_keys("success", SUCCESS_CUTOFFS),
        success,
        SUCCESS_CUTOFFS,
        source=_trec_m_file("success"),
        description="1 if a relevant document is in the top k, else 0",
    ),
    Family(
        "map_cut",
        cutoff_keys("map_cut", CUTOFFS),
        average_precision_cut,
        CUTOFFS,
        source=_trec_m_file("map_cut"),
        description="average precision over the top k, divided by R",
    ),
)
