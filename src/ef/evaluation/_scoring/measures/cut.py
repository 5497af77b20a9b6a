"""trec_eval's measures at rank cutoffs: P, recall, relative_P, success, map_cut.

Each reads the positions of the retrieved relevant documents off the query's facts, once for
all its cutoffs. ``ndcg_cut`` is in :mod:`.gains` with the other gain-based measures.
"""

from __future__ import annotations

from collections.abc import Sequence

from ef.evaluation._scoring.cutoffs import average_precision_at, hits_at
from ef.evaluation._scoring.measures.family import Family, cutoff_keys
from ef.evaluation._scoring.measures.summary import QueryFacts

__all__ = ["CUTOFFS", "FAMILIES", "SUCCESS_CUTOFFS"]

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
"""trec_eval's default cutoffs for P, recall, relative_P, map_cut and ndcg_cut."""
SUCCESS_CUTOFFS = (1, 5, 10)
"""trec_eval's default cutoffs for success."""


def precision(facts: QueryFacts, ks: Sequence[int] = CUTOFFS) -> list[float]:
    """Relevant documents in the top k, divided by k (``m_P.c``)."""
    return [hits / k for hits, k in zip(hits_at(facts.positions, ks), ks, strict=True)]


def recall(facts: QueryFacts, ks: Sequence[int] = CUTOFFS) -> list[float]:
    """Relevant documents in the top k, divided by R (``m_recall.c``); 0 when R is 0."""
    n_relevant = facts.n_relevant
    if not n_relevant:
        return [0.0] * len(ks)
    return [hits / n_relevant for hits in hits_at(facts.positions, ks)]


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
    positions = facts.positions
    if not positions:
        return [0.0] * len(ks)
    first = positions[0]
    return [1.0 if first < k else 0.0 for k in ks]


def average_precision_cut(facts: QueryFacts, ks: Sequence[int] = CUTOFFS) -> list[float]:
    """Average precision over the top k, divided by R (``m_map_cut.c``); 0 when R is 0."""
    return average_precision_at(facts.positions, facts.n_relevant, ks)


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
