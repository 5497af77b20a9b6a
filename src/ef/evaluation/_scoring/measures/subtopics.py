"""Judgements with subtopics (TREC Web track diversity qrels), as the diversity measures read them.

A diversity qrels line is ``topic subtopic doc grade``: a document is judged per subtopic (an
intent of the query). :class:`SubtopicJudgements` holds one query's: it *is* the query's
ordinary judgements (``{doc_id: grade}``, a document's grade its largest over the subtopics, as
ndeval counts a document relevant to any subtopic relevant to the query), so every other measure
reads it unchanged, and it carries the grades per subtopic for the diversity measures
(:mod:`~ef.evaluation._scoring.measures.diversity`).

Relevance per subtopic follows ndeval: a subtopic grade ``>= rel`` (ir_measures' ``rel``,
default: ``> 0``) makes the document relevant to that subtopic, in full (ndeval's judgements are
binary); subtopics no document is relevant to do not count.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ef.evaluation._scoring.measures.summary import QueryFacts

__all__ = ["Intents", "SubtopicJudgements", "intents_of", "subtopic_judgements"]


class SubtopicJudgements(dict[str, float]):
    """One query's judgements per subtopic, seen as ``{doc_id: grade}`` (the largest grade).

    :ivar by_doc: ``{doc_id: {subtopic: grade}}``, subtopics in the order first judged.
    """

    __slots__ = ("by_doc",)

    def __init__(self, by_doc: Mapping[str, Mapping[str, float]]) -> None:
        super().__init__((doc_id, max(grades.values())) for doc_id, grades in by_doc.items())
        self.by_doc: dict[str, dict[str, float]] = {
            doc_id: dict(grades) for doc_id, grades in by_doc.items()
        }

    def __reduce__(self) -> tuple[Any, ...]:
        return (SubtopicJudgements, (self.by_doc,))


def subtopic_judgements(
    qrels: Mapping[str, Mapping[str, Mapping[str, float]]],
) -> dict[str, SubtopicJudgements]:
    """Qrels with subtopics from ``{query_id: {subtopic: {doc_id: grade}}}``.

    :raises TypeError: for judgements that are no mapping, or a grade that is no number.
    :raises ValueError: for a subtopic without a judgement, or a NaN or infinite grade.

    >>> qrels = subtopic_judgements({'q1': {'1': {'d1': 1}, '2': {'d1': 0, 'd2': 1}}})
    >>> dict(qrels['q1']), qrels['q1'].by_doc['d1']
    ({'d1': 1, 'd2': 1}, {'1': 1, '2': 0})
    """
    out: dict[str, SubtopicJudgements] = {}
    for query_id, subtopics in qrels.items():
        if not isinstance(subtopics, Mapping):
            raise TypeError(
                f"query {query_id!r}: expected {{subtopic: {{doc_id: grade}}}}, got "
                f"{type(subtopics).__name__}"
            )
        by_doc: dict[str, dict[str, float]] = {}
        for subtopic, judged in subtopics.items():
            if not isinstance(judged, Mapping) or not judged:
                raise (ValueError if isinstance(judged, Mapping) else TypeError)(
                    f"query {query_id!r}, subtopic {subtopic!r}: expected a non-empty "
                    f"{{doc_id: grade}} mapping, got {judged!r:.60}"
                )
            for doc_id, grade in judged.items():
                _check_grade(query_id, subtopic, doc_id, grade)
                by_doc.setdefault(str(doc_id), {})[str(subtopic)] = grade
        out[str(query_id)] = SubtopicJudgements(by_doc)
    return out


def _check_grade(query_id: object, subtopic: object, doc_id: object, grade: object) -> None:
    where = f"query {query_id!r}, subtopic {subtopic!r}, doc {doc_id!r}"
    if isinstance(grade, bool) or not isinstance(grade, int | float):
        raise TypeError(f"{where}: grade {grade!r} is not a number")
    if grade - grade != 0:
        raise ValueError(f"{where}: grade {grade!r} is not finite")


class Intents:
    """What the diversity measures read of one query's judgements at one relevance level.

    :ivar covers: ``{doc_id: (subtopic index, ...)}`` for each document relevant to a subtopic.
    :ivar n_subtopics: the subtopics some document is relevant to (ndeval's ``actualSubtopics``).
    :ivar n_relevant: per subtopic index, how many documents are relevant to it.
    """

    __slots__ = ("covers", "ideals", "n_relevant", "n_subtopics")

    def __init__(self, judgements: SubtopicJudgements, level: float | None) -> None:
        index: dict[str, int] = {}
        covers: dict[str, tuple[int, ...]] = {}
        for doc_id, grades in judgements.by_doc.items():
            relevant = sorted(
                index.setdefault(subtopic, len(index))
                for subtopic, grade in grades.items()
                if (grade > 0 if level is None else grade >= level)
            )
            if relevant:
                covers[doc_id] = tuple(relevant)
        counts = [0] * len(index)
        for subtopics in covers.values():
            for j in subtopics:
                counts[j] += 1
        self.covers = covers
        self.n_relevant = counts
        self.n_subtopics = len(counts)
        self.ideals: dict[float, list[float]] = {}

    def ideal_gains(self, alpha: float) -> list[float]:
        """The gain at each rank of ndeval's ideal ranking: greedily, the document that adds
        the most novel gain next, a tie going to the larger doc id (ndeval's ``idealResult``)."""
        gains = self.ideals.get(alpha)
        if gains is None:
            gains = self.ideals[alpha] = _greedy(self.covers, self.n_subtopics, alpha)
        return gains


def _greedy(covers: dict[str, tuple[int, ...]], n_subtopics: int, alpha: float) -> list[float]:
    remaining = sorted(covers)  # by doc id, as ndeval scans its qrels
    weight = [1.0] * n_subtopics
    keep = 1.0 - alpha
    gains: list[float] = []
    while remaining:
        best, best_gain = 0, -1.0
        for at, doc_id in enumerate(remaining):
            gain = 0.0
            for j in covers[doc_id]:
                gain += weight[j]
            if gain >= best_gain:  # a later (larger) doc id wins a tie
                best, best_gain = at, gain
        for j in covers[remaining.pop(best)]:
            weight[j] *= keep
        gains.append(best_gain)
    return gains


def intents_of(facts: QueryFacts, measure: str) -> Intents:
    """The :class:`Intents` of the query behind ``facts``, at its relevance level.

    :raises ValueError: if the query's judgements have no subtopics (ordinary qrels), naming
        ``measure`` and how to read qrels with subtopics.
    """
    judgements = facts.relevant
    if not isinstance(judgements, SubtopicJudgements):
        raise ValueError(
            f"{measure} needs judgements per subtopic (TREC Web track diversity qrels, "
            "'topic subtopic doc grade'): read them with read_diversity_qrels(path) or build "
            "them with subtopic_judgements({query_id: {subtopic: {doc_id: grade}}})"
        )
    level = facts.judging.relevance_level
    key = ("intents", level)
    intents = facts.memo.get(key)
    if intents is None:
        intents = facts.memo[key] = Intents(judgements, level)
    assert isinstance(intents, Intents)
    return intents
