"""Scoring ``{doc_id: score}`` runs without ordering them.

trec_eval orders a query's scored documents by score, highest first, ties by doc id descending
(:func:`rank_by_score`). The built-in metrics need only where the relevant ids land in that
order, and a relevant id's rank is the number of ids scored above it: counted with one scan of
the scores per relevant id when there are few, or by bisecting the sorted bare scores when there
are many. Sorting bare floats is much cheaper than ordering ids by score, and the common case —
one or two relevant ids among a thousand scores — needs no sort at all.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping

from ef.evaluation._scoring.grades import ideal_grades, relevant_grades
from ef.evaluation._scoring.order import rank_by_score
from ef.evaluation._scoring.ranked import RankingSummary, summarize

__all__ = ["summarize_scores"]

# Up to this many scored relevant ids, counting the scores above each (one scan apiece) beats
# sorting them all.
_SCAN_LIMIT = 4


def summarize_scores(
    scores: Mapping[str, float],
    relevant: Mapping[str, float],
    *,
    positives: list[tuple[str, float]] | None = None,
) -> RankingSummary:
    """:func:`summarize` for ``{doc_id: score}``, ranked as trec_eval orders it.

    The ranking itself is never built (:attr:`RankingSummary.ranked` orders it on demand): a
    relevant id's rank is the number of ids scored above it — score descending, ties by doc id
    descending, :func:`rank_by_score`'s order. With few relevant ids, one scan of the scores per
    id counts them; with many, the bare scores are sorted once and bisected.

    :param scores: ``{doc_id: score}``.
    :param relevant: ``{doc_id: grade}``; grades ``> 0`` are relevant.
    :param positives: :func:`relevant_grades` of ``relevant``, when the caller has it already.
    :raises ValueError: if a score is NaN (as :func:`rank_by_score`).
    """
    if positives is None:
        positives = relevant_grades(relevant)
    if positives:
        try:
            found = scored_positions(scores, positives)
        except TypeError:  # scores that are not numbers: let the careful way say what is wrong
            found = None
        if found is None:
            return summarize(rank_by_score(scores), relevant, unique=True, positives=positives)
    else:
        found = []
    ideal = ideal_grades(grade for _, grade in positives)
    return RankingSummary(
        None, relevant, [p for p, _ in found], [g for _, g in found], ideal, scores=scores
    )


def scored_positions(
    scores: Mapping[str, float], positives: list[tuple[str, float]]
) -> list[tuple[int, float]] | None:
    """``(rank, grade)`` of the scored ids of ``positives`` (``(doc_id, grade)`` pairs), ascending
    by rank; ``None`` if a score is NaN."""
    get = scores.get
    hits = [
        (score, doc_id, grade) for doc_id, grade in positives if (score := get(doc_id)) is not None
    ]
    values = scores.values()
    if not hits:
        return None if [v for v in values if v != v] else []
    found: list[tuple[int, float]] = []
    if len(hits) <= _SCAN_LIMIT:
        for score, doc_id, grade in hits:
            if score != score:
                return None
            # What is not below: the ids at or above this one, and any NaN (NaN never compares).
            upper = [v for v in values if not v < score]
            if [v for v in upper if v != v]:
                return None
            tied = upper.count(score)
            position = len(upper) - tied
            if tied > 1:
                position += _tied_above(scores, score, doc_id)
            found.append((position, grade))
    else:
        if [v for v in values if v != v]:
            return None
        ascending = sorted(values)
        n = len(ascending)
        for score, doc_id, grade in hits:
            at_or_below = bisect_right(ascending, score)
            position = n - at_or_below
            if at_or_below - bisect_left(ascending, score) > 1:
                position += _tied_above(scores, score, doc_id)
            found.append((position, grade))
    found.sort()
    return found


def _tied_above(scores: Mapping[str, float], score: float, doc_id: str) -> int:
    """How many ids share ``score`` and rank above ``doc_id`` (trec_eval: larger ids first)."""
    return sum(1 for d, v in scores.items() if v == score and d > doc_id)
