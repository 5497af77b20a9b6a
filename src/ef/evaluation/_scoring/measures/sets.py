"""trec_eval's set measures and counts: the retrieved documents as a set, order ignored.

``set_P``, ``set_recall``, ``set_relative_P``, ``set_map``, ``set_F``, ``utility`` and the
``num_*`` counts (summed over queries, not averaged).
"""

from __future__ import annotations

from ef.evaluation._scoring.cutoffs import RECALL, WHOLE
from ef.evaluation._scoring.measures.cut import values
from ef.evaluation._scoring.measures.family import Family
from ef.evaluation._scoring.measures.summary import QueryFacts

__all__ = ["FAMILIES", "f_measure"]


def set_precision(facts: QueryFacts) -> list[float]:
    """Relevant retrieved / retrieved (``m_set_P.c``); 0 when nothing was retrieved."""
    num_ret = facts.num_ret
    return [len(facts.positions) / num_ret if num_ret else 0.0]


def set_recall(facts: QueryFacts) -> list[float]:
    """Relevant retrieved / R (``m_set_recall.c``): recall of the whole ranking; 0 when R is 0."""
    return values(facts, (WHOLE,))[RECALL]


def set_relative_precision(facts: QueryFacts) -> list[float]:
    """Relevant retrieved / min(retrieved, R) (``m_set_rel_P.c``); 0 when either is 0."""
    smaller = min(facts.num_ret, facts.n_relevant)
    return [len(facts.positions) / smaller if smaller else 0.0]


def set_average_precision(facts: QueryFacts) -> list[float]:
    """Relevant retrieved² / (retrieved × R) (``m_set_map.c``): set precision × set recall."""
    num_ret, n_relevant = facts.num_ret, facts.n_relevant
    if not (num_ret and n_relevant):
        return [0.0]
    found = len(facts.positions)
    return [(found * found) / (num_ret * n_relevant)]


def f_measure(precision: float, recall: float) -> float:
    """The harmonic mean of a precision and a recall, β = 1; 0 when either is 0."""
    if not (precision and recall):
        return 0.0
    return 2.0 * precision * recall / (precision + recall)


def set_f(facts: QueryFacts) -> list[float]:
    """The harmonic mean of set precision and set recall, β = 1 (``m_set_F.c``)."""
    return [f_measure(set_precision(facts)[0], set_recall(facts)[0])]


def utility(facts: QueryFacts) -> list[float]:
    """``1 × relevant retrieved − 1 × other retrieved`` (``m_utility.c``, default weights)."""
    found = len(facts.positions)
    return [float(found) - float(facts.num_ret - found)]


def num_q(facts: QueryFacts) -> list[float]:
    """1 per query; summed, the number of queries scored."""
    return [1.0]


def num_ret(facts: QueryFacts) -> list[float]:
    """How many documents were retrieved."""
    return [float(facts.num_ret)]


def num_rel(facts: QueryFacts) -> list[float]:
    """R: how many documents are relevant, retrieved or not."""
    return [float(facts.n_relevant)]


def num_rel_ret(facts: QueryFacts) -> list[float]:
    """How many relevant documents were retrieved."""
    return [float(len(facts.positions))]


def num_nonrel_judged_ret(facts: QueryFacts) -> list[float]:
    """How many retrieved documents were judged (grade >= 0) but not relevant."""
    relevant = facts.judging.relevant
    return [float(sum(1 for _, grade in facts.judged if grade >= 0 and not relevant(grade)))]


def _set(name: str, compute: object, description: str, *, source: str = "") -> Family:
    return Family(
        name,
        (name,),
        compute,  # type: ignore[arg-type]
        source=source or f"trec_eval m_{name}.c",
        description=description,
    )


def _count(name: str, compute: object, description: str) -> Family:
    return Family(
        name,
        (name,),
        compute,  # type: ignore[arg-type]
        aggregation="sum",
        source=f"trec_eval m_{name}.c",
        description=description,
    )


FAMILIES = (
    _set("set_P", set_precision, "relevant retrieved / retrieved"),
    _set("set_recall", set_recall, "relevant retrieved / R"),
    _set(
        "set_relative_P",
        set_relative_precision,
        "relevant retrieved / min(retrieved, R)",
        source="trec_eval m_set_rel_P.c",
    ),
    _set("set_map", set_average_precision, "relevant retrieved² / (retrieved × R)"),
    _set("set_F", set_f, "harmonic mean of set precision and set recall"),
    _set("utility", utility, "relevant retrieved − non-relevant retrieved (weights 1, −1, 0, 0)"),
    _count("num_q", num_q, "queries scored (summed)"),
    _count("num_ret", num_ret, "documents retrieved (summed)"),
    _count("num_rel", num_rel, "relevant documents, retrieved or not (summed)"),
    _count("num_rel_ret", num_rel_ret, "relevant documents retrieved (summed)"),
    _count(
        "num_nonrel_judged_ret",
        num_nonrel_judged_ret,
        "judged non-relevant documents retrieved (summed)",
    ),
)
