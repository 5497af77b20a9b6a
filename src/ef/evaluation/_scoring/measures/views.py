"""One query's facts seen another way, for one measure: judged documents only, or regraded.

A parameter that changes what a measure reads — ``judged_only=True`` (trec_eval's ``-J`` for
one measure, ir_measures' ``P(judged_only=True)@5``) or ``gains={0: 0, 1: 1, 2: 3}`` (ir_measures'
``nDCG(gains=...)``) — gets the query's facts rebuilt from its ranking (or scores), once per
query and view: the measures of the evaluation that do not take such a parameter read the facts
as they are.
"""

from __future__ import annotations

from ef.evaluation._scoring.measures.param_domains import Gains
from ef.evaluation._scoring.measures.summary import (
    Judging,
    QueryFacts,
    facts_from_ranking,
    facts_from_scores,
)

__all__ = ["judged_only_view", "regraded"]


def _rebuilt(facts: QueryFacts, relevant: dict[str, float] | None, judging: Judging) -> QueryFacts:
    judgements = facts.relevant if relevant is None else relevant
    scores = facts._scores
    if facts._ranked is None and scores is not None:
        return facts_from_scores(scores, judgements, judging)
    return facts_from_ranking(facts.ranked, judgements, judging, unique=True)


def judged_only_view(facts: QueryFacts) -> QueryFacts:
    """``facts`` with every retrieved document without a grade ``>= 0`` dropped before ranks
    are counted (trec_eval's ``-J``); the relevance level stays.

    >>> facts = facts_from_ranking(['x', 'd1', 'n1', 'y', 'd2'], {'d1': 1, 'd2': 1, 'n1': 0})
    >>> judged_only_view(facts).positions, judged_only_view(facts).num_ret
    ([0, 2], 3)
    """
    if facts.judging.judged_only:
        return facts
    key = ("judged_only",)
    view = facts.memo.get(key)
    if view is None:
        judging = Judging(facts.judging.relevance_level, True)
        view = facts.memo[key] = _rebuilt(facts, None, judging)
    assert isinstance(view, QueryFacts)
    return view


def regraded(facts: QueryFacts, gains: Gains) -> QueryFacts:
    """``facts`` with each grade found in ``gains`` replaced by its gain (ir_measures' rule: a
    grade the table does not name keeps its value); ranking and judging stay.

    >>> facts = facts_from_ranking(['d2', 'd1'], {'d1': 1, 'd2': 2})
    >>> regraded(facts, ((1, 1), (2, 3))).gains
    [3, 1]
    """
    key = ("gains", gains)
    view = facts.memo.get(key)
    if view is None:
        table = dict(gains)
        relevant = {doc_id: table.get(grade, grade) for doc_id, grade in facts.relevant.items()}
        view = facts.memo[key] = _rebuilt(facts, relevant, facts.judging)
    assert isinstance(view, QueryFacts)
    return view
