"""The per-query facts trec_eval's measures read, gathered once per query.

trec_eval turns a query's run into a list of relevance values, one per retrieved document
(``form_res_rels.c``), and each measure walks that list. Almost every entry of it is an
unjudged document, which no measure counts except as a rank, so :class:`QueryFacts` keeps only
where the *judged* documents landed, and how many documents were retrieved: a query costs about
its number of judgements, not the length of its ranking. The facts are built only when a
trec_eval measure, ``relevance_level`` or ``judged_only`` is asked for.

Relevance follows trec_eval, with ef's fractional grades kept:

- a retrieved document whose grade is ``>= relevance_level`` is relevant; with the default
  ``relevance_level=None``, any grade ``> 0`` is (ef's rule, trec_eval's ``-l1`` on integer
  grades);
- a grade ``>= 0`` that is not relevant is judged non-relevant;
- a *negative* grade marks a document as pooled but unjudged (trec_eval's ``RELVALUE_UNJUDGED``):
  bpref and infAP tell it apart from a non-relevant one, every other measure counts it as not
  relevant;
- ``judged_only`` (trec_eval ``-J``) drops every retrieved document without a grade ``>= 0``
  before anything is ranked, so ranks count judged documents only.

The gain-based measures (nDCG, G, ndcg_rel, Rndcg) take each document's grade as its gain and
ignore ``relevance_level``, as trec_eval does.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import attrs

from ef.evaluation._scoring.found import positions_in
from ef.evaluation._scoring.grades import ideal_grades, positive_grades
from ef.evaluation._scoring.order import rank_by_score
from ef.evaluation._scoring.ranked import RankingSummary
from ef.evaluation._scoring.scored import scored_positions

__all__ = [
    "Judging",
    "QueryFacts",
    "at_level",
    "facts_for",
    "facts_from_ranking",
    "facts_from_scores",
]


# Up to this many scored judged ids, one scan of the scores per id beats sorting them.
def _check_level(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"relevance_level must be an int >= 1 or None, got {value!r}")
    return value


@attrs.frozen
class Judging:
    """How judgements are read: trec_eval's ``-l`` and ``-J``.

    :param relevance_level: the smallest grade that counts as relevant (trec_eval ``-l``);
        ``None`` counts every grade ``> 0``, fractional ones included.
    :param judged_only: rank only the judged documents (trec_eval ``-J``): a retrieved document
        without a grade ``>= 0`` is dropped before ranks are counted.
    :raises ValueError: for a relevance level that is not an ``int >= 1``.
    """

    relevance_level: int | None = attrs.field(default=None, converter=_check_level)
    judged_only: bool = attrs.field(default=False, converter=bool)

    @property
    def is_default(self) -> bool:
        """True when judgements are read as ef always has: the facts are then optional."""
        return self.relevance_level is None and not self.judged_only

    def relevant(self, grade: float) -> bool:
        """Whether ``grade`` counts as relevant."""
        level = self.relevance_level
        return grade > 0 if level is None else grade >= level


DEFAULT_JUDGING = Judging()


class QueryFacts(RankingSummary):
    """What trec_eval's measures need of one query, on top of the core's summary.

    The inherited fields describe the *relevant* documents at the relevance level, so the core's
    metrics read their values off these facts unchanged: ``positions`` and ``gains`` of the
    retrieved relevant ids, ``ideal_gains`` of every relevant id (``n_relevant`` is trec_eval's
    ``num_rel``).

    :ivar num_ret: how many documents were retrieved (after ``judged_only``, if set).
    :ivar judged: ``(position, grade)`` of every retrieved judged document, by position; negative
        grades (pooled, unjudged) included.
    :ivar graded: ``(position, grade)`` of the retrieved documents with a positive grade (the
        gain-based measures' view, which ignores the relevance level).
    :ivar all_gains: every positive grade in the judgements, descending (their ideal ranking).
    :ivar n_nonrelevant: judged non-relevant documents in the judgements (grade ``>= 0``, not
        relevant), retrieved or not.
    :ivar judging: the :class:`Judging` the facts were built with.
    """

    __slots__ = (
        "all_gains",
        "graded",
        "judged",
        "judging",
        "memo",
        "n_nonrelevant",
        "num_ret",
    )

    def __init__(
        self,
        ranked: Sequence[str] | None,
        relevant: Mapping[str, float],
        judged: list[tuple[int, float]],
        num_ret: int,
        judging: Judging,
        *,
        scores: Mapping[str, float] | None = None,
        positives: list[tuple[str, float]] | None = None,
    ) -> None:
        if positives is None:
            positives = positive_grades(relevant)
        is_relevant = judging.relevant
        level = judging.relevance_level
        graded = [(p, g) for p, g in judged if g > 0]
        all_gains = ideal_grades(g for _, g in positives)
        if level is None:
            rel_hits, ideal = graded, all_gains
        else:
            rel_hits = [(p, g) for p, g in graded if g >= level]
            ideal = [g for g in all_gains if g >= level]
        n_nonrelevant = sum(1 for g in relevant.values() if g >= 0 and not is_relevant(g))
        super().__init__(
            ranked,
            relevant,
            [p for p, _ in rel_hits],
            [g for _, g in rel_hits],
            ideal,
            unique=True,
            scores=scores,
        )
        self.num_ret = num_ret
        self.judged = judged
        self.graded = graded
        self.all_gains = all_gains
        self.n_nonrelevant = n_nonrelevant
        self.judging = judging
        # What several families read (the cutoff measures at a set of cutoffs, the ideal DCG
        # prefix, interpolated precision), computed once per query, by what it is of.
        self.memo: dict[Hashable, Any] = {}


def _dedupe(ranked: Sequence[str]) -> Sequence[str]:
    if len(set(ranked)) != len(ranked):
        return list(dict.fromkeys(ranked))
    return ranked


def facts_from_ranking(
    ranked: Sequence[str],
    relevant: Mapping[str, float],
    judging: Judging = DEFAULT_JUDGING,
    *,
    unique: bool = False,
    positives: list[tuple[str, float]] | None = None,
) -> QueryFacts:
    """The facts of one ranking: where its judged documents landed.

    :param ranked: doc ids, best first; a repeated id keeps its first position.
    :param relevant: the query's judgements, ``{doc_id: grade}``.
    :param judging: the relevance level and ``judged_only``.
    :param unique: promise that ``ranked`` holds no repeated id (skips the check).
    :param positives: ``positive_grades(relevant)``, when the caller has it already.
    :raises ValueError: for a NaN or infinite grade (naming the doc).
    :raises TypeError: for a grade that is not a number, or a doc id that is not a string.

    >>> facts = facts_from_ranking(['d1', 'x', 'n1', 'd2'], {'d1': 2, 'd2': 1, 'n1': 0})
    >>> facts.num_ret, facts.judged, facts.positions, facts.n_relevant
    (4, [(0, 2), (2, 0), (3, 1)], [0, 3], 2)
    """
    if positives is None:
        positives = positive_grades(relevant)
    if not unique:
        ranked = _dedupe(ranked)
    if judging.judged_only:
        get = relevant.get
        ranked = [doc_id for doc_id in ranked if (grade := get(doc_id)) is not None and grade >= 0]
    n = len(ranked)
    judged: list[tuple[int, float]] = []
    if n and relevant:  # every judged id, whatever its grade
        judged, _ = positions_in(ranked, relevant.items(), True, -math.inf)
    return QueryFacts(ranked, relevant, judged, n, judging, positives=positives)


def facts_from_scores(
    scores: Mapping[str, float],
    relevant: Mapping[str, float],
    judging: Judging = DEFAULT_JUDGING,
    *,
    positives: list[tuple[str, float]] | None = None,
) -> QueryFacts:
    """The facts of ``{doc_id: score}``, ranked as trec_eval orders it, without ordering it.

    A judged document's rank is the number of documents scored above it (score descending, ties
    by doc id descending, as :func:`~ef.evaluation._scoring.order.rank_by_score` orders them).

    :raises ValueError: if a score is NaN (as ``rank_by_score``).
    :raises TypeError: if a score is not a number.
    """
    if positives is None:
        positives = positive_grades(relevant)
    try:
        total = sum(scores.values())
    except TypeError:  # not numbers: the careful order says what is wrong, or ranks them
        return facts_from_ranking(rank_by_score(scores), relevant, judging, unique=True)
    if total != total:  # a NaN, or infinities of both signs
        rank_by_score(scores)  # raises, naming the doc whose score is NaN
    if judging.judged_only:
        scores = {
            doc_id: score
            for doc_id, grade in relevant.items()
            if grade >= 0 and (score := scores.get(doc_id)) is not None
        }
    judged = scored_positions(scores, list(relevant.items()))
    if judged is None:  # a NaN score: rank_by_score raises, naming its doc
        return facts_from_ranking(rank_by_score(scores), relevant, judging, unique=True)
    return QueryFacts(
        None, relevant, judged, len(scores), judging, scores=scores, positives=positives
    )


def facts_for(summary: RankingSummary, judging: Judging = DEFAULT_JUDGING) -> QueryFacts:
    """The facts behind ``summary``: itself when it is facts, else built from its ranking."""
    if isinstance(summary, QueryFacts):
        return summary
    return facts_from_ranking(summary.ranked, summary.relevant, judging, unique=True)


def at_level(facts: QueryFacts, level: int) -> QueryFacts:
    """The same facts with grades ``>= level`` relevant: ir_measures' ``rel=level``.

    Only the relevance level changes; the ranking, the judgements and ``judged_only`` stay.

    >>> facts = facts_from_ranking(['d1', 'x', 'd2'], {'d1': 1, 'd2': 2})
    >>> at_level(facts, 2).positions, at_level(facts, 2).n_relevant
    ([2], 1)
    """
    judging = Judging(level, facts.judging.judged_only)
    return QueryFacts(
        facts._ranked,
        facts.relevant,
        facts.judged,
        facts.num_ret,
        judging,
        scores=facts._scores,
    )
