"""The scoring core's one pass per query: where the relevant documents landed in a ranking.

The pass (:func:`summarize`) finds where the relevant documents landed — that is all the
built-in metrics depend on — so scoring a query costs about the number of relevant documents,
not the length of the ranking. Every metric then reads its values at every requested cutoff off
the same :class:`RankingSummary` (:mod:`~ef.evaluation._scoring.metric_scorer`); trec_eval's
measures read the richer :class:`~ef.evaluation._scoring.measures.summary.QueryFacts`, a
summary too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import itemgetter

from ef.evaluation._scoring.found import found
from ef.evaluation._scoring.grades import ideal_grades
from ef.evaluation._scoring.order import rank_by_score

__all__ = ["RankingSummary", "summarize"]


class RankingSummary:
    """What one pass over a query's ranking learns.

    :ivar ranked: the de-duplicated ranking (first occurrence of an id wins).
    :ivar relevant: the query's judgements, ``{doc_id: grade}``.
    :ivar positions: 0-based ranks of the retrieved relevant (grade > 0) ids, ascending.
    :ivar gains: the grades of those ids, aligned with ``positions``.
    :ivar ideal_gains: every positive grade in ``relevant``, descending (the ideal ranking).
    :ivar n_relevant: ``R``, the number of relevant ids, retrieved or not.
    """

    __slots__ = (
        "_ranked",
        "_scores",
        "_unique",
        "gains",
        "ideal_gains",
        "n_relevant",
        "positions",
        "relevant",
    )

    def __init__(
        self,
        ranked: Sequence[str] | None,
        relevant: Mapping[str, float],
        positions: list[int],
        gains: list[float],
        ideal_gains: list[float],
        *,
        unique: bool = True,
        scores: Mapping[str, float] | None = None,
    ) -> None:
        if ranked is None and scores is None:
            raise ValueError("a RankingSummary needs the ranking or the scores it comes from")
        self._ranked = ranked
        self._scores = scores
        self._unique = unique
        self.relevant = relevant
        self.positions = positions
        self.gains = gains
        self.ideal_gains = ideal_gains
        self.n_relevant = len(ideal_gains)

    @property
    def ranked(self) -> Sequence[str]:
        """The de-duplicated ranking (first occurrence of an id wins)."""
        # Ordering scores or de-duplicating reads every id: done only for the metrics that look
        # at the ranking itself; the built-in ones need only the positions.
        ranked = self._ranked
        if ranked is None:
            assert self._scores is not None  # the constructor refuses neither
            ranked = self._ranked = rank_by_score(self._scores)
        elif not self._unique:
            if len(set(ranked)) != len(ranked):
                ranked = self._ranked = list(dict.fromkeys(ranked))
            self._unique = True
        return ranked


def summarize(
    ranked: Sequence[str],
    relevant: Mapping[str, float],
    *,
    unique: bool = False,
    positives: list[tuple[str, float]] | None = None,
    ideal: list[float] | None = None,
) -> RankingSummary:
    """One pass over ``ranked``: where did the relevant ids land?

    :param ranked: doc ids, best first.
    :param relevant: ``{doc_id: grade}``; grades ``> 0`` are relevant. Without ``positives``,
        every grade must be a number (checked when planned).
    :param unique: promise that ``ranked`` holds no repeated id (skips the check).
    :param positives: :func:`~ef.evaluation._scoring.grades.relevant_grades` of
        ``relevant``, when the caller has it already.
    :param ideal: :func:`~ef.evaluation._scoring.grades.ideal_grades` of the grades, when the
        caller has it (held as it is).
    """
    if ideal is None:
        if positives is None:
            ideal = ideal_grades(relevant.values())
        else:
            ideal = ideal_grades(map(itemgetter(1), positives))
    ranked, unique, positions, gains = found(ranked, relevant, len(ideal), unique, positives)
    return RankingSummary(ranked, relevant, positions, gains, ideal, unique=unique)
