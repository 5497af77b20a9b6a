"""Statistics of a set of judgements: how much is judged, at which grades, and what runs miss.

A document is *judged* for a query when the qrels give it a grade, whatever the grade (0 and
negative grades are judged non-relevant, as everywhere in the library; trectools drops negative
grades on reading, so it counts them as unjudged). *Relevant* is a grade above 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ef.evaluation._judgements.inputs import (
    RunsArg,
    check_depth,
    checked_qrels,
    named_runs,
    top_documents,
)
from ef.evaluation._report.fields import JsonReport, checked, count, mapping_of
from ef.evaluation._report.frozen import FrozenDict, frozen_dict, frozen_dict_of_dicts

__all__ = ["QrelsStatistics", "grade_label", "qrels_statistics"]


def grade_label(grade: float) -> str:
    """A grade as the key of :attr:`QrelsStatistics.grades`: whole grades without a point.

    >>> grade_label(2.0), grade_label(0.5), grade_label(-1)
    ('2', '0.5', '-1')
    """
    value = float(grade)
    return str(int(value)) if value.is_integer() else repr(value)


@attrs.frozen
class QrelsStatistics(JsonReport):
    """What a set of judgements holds, per query, and how much of each run's top it covers.

    :param judged: ``{query_id: documents judged}``, in the qrels' order.
    :param relevant: ``{query_id: documents with a grade above 0}``.
    :param grades: ``{query_id: {grade: documents}}``, grades as text (``"0"``, ``"1"``,
        ``"0.5"``), ascending.
    :param depth: the depth of each run's ranking that ``unjudged`` looked at.
    :param unjudged: ``{run: {query_id: documents without a grade among its first depth}}``,
        for every query the run answers (a query the qrels do not hold at all counts every
        document it ranks).
    :param retrieved: ``{run: {query_id: documents among its first depth}}`` (fewer than
        ``depth`` when the run ranks fewer): the denominator of ``unjudged``.

    >>> stats = qrels_statistics({"q1": {"d1": 2, "d2": 0}}, {"bm25": {"q1": ["d1", "d9"]}})
    >>> stats.judged["q1"], stats.relevant["q1"], stats.grades["q1"]
    (2, 1, {'0': 1, '2': 1})
    >>> stats.unjudged["bm25"]["q1"], stats.retrieved["bm25"]["q1"]
    (1, 2)
    """

    judged: FrozenDict[str, int] = attrs.field(
        converter=frozen_dict, metadata=checked(mapping_of(count))
    )
    relevant: FrozenDict[str, int] = attrs.field(
        converter=frozen_dict, metadata=checked(mapping_of(count))
    )
    grades: FrozenDict[str, FrozenDict[str, int]] = attrs.field(
        converter=frozen_dict_of_dicts, metadata=checked(mapping_of(mapping_of(count)))
    )
    depth: int = attrs.field(default=10, kw_only=True, metadata=checked(count))
    unjudged: FrozenDict[str, FrozenDict[str, int]] = attrs.field(
        factory=FrozenDict,
        converter=frozen_dict_of_dicts,
        kw_only=True,
        metadata=checked(mapping_of(mapping_of(count))),
    )
    retrieved: FrozenDict[str, FrozenDict[str, int]] = attrs.field(
        factory=FrozenDict,
        converter=frozen_dict_of_dicts,
        kw_only=True,
        metadata=checked(mapping_of(mapping_of(count))),
    )

    def grade_totals(self) -> dict[str, int]:
        """Documents per grade over every query, grades ascending.

        >>> qrels_statistics({"q1": {"d1": 1}, "q2": {"d1": 1, "d2": 0}}).grade_totals()
        {'0': 1, '1': 2}
        """
        totals: dict[str, int] = {}
        for per_grade in self.grades.values():
            for label, number in per_grade.items():
                totals[label] = totals.get(label, 0) + number
        return dict(sorted(totals.items(), key=lambda item: float(item[0])))

    def unjudged_share(self, run: str) -> float | None:
        """The share of ``run``'s top-``depth`` documents, over all its queries, without a
        grade; ``None`` when it ranks nothing.

        :raises KeyError: for a run the statistics do not hold.
        """
        retrieved = sum(self.retrieved[run].values())
        return sum(self.unjudged[run].values()) / retrieved if retrieved else None


def _grades(judgements: Mapping[str, float]) -> dict[str, int]:
    numbers: dict[float, int] = {}
    for grade in judgements.values():
        numbers[float(grade)] = numbers.get(float(grade), 0) + 1
    return {grade_label(grade): numbers[grade] for grade in sorted(numbers)}


def qrels_statistics(
    qrels: Any, runs: RunsArg | None = None, *, depth: int = 10
) -> QrelsStatistics:
    """Count what ``qrels`` judge, per query and grade, and what each run's top ``depth`` lacks.

    The counts trectools gives one at a time: judged documents per query, documents per grade
    (``TrecQrel.get_number_of(grade)`` per query), and for each run the documents of its first
    ``depth`` that carry no grade (``depth`` minus ``TrecRun.check_qrel_coverage(qrels,
    topX=depth)``, where the run ranks that many). Rankings follow trec_eval's order, as
    everywhere in the library.

    :param qrels: the judgements: a mapping, a DataFrame or a qrels file's path.
    :param runs: ``{name: run}`` or a list of runs (mappings, DataFrames or run files' paths)
        whose top ``depth`` to check, or ``None``.
    :param depth: how deep into each run's ranking to look.
    :returns: a :class:`QrelsStatistics`.
    :raises ValueError: for ``depth < 1``, or a grade or score that is not finite.
    :raises TypeError: for a grade that is no number, or a run that is no run.
    """
    check_depth(depth)
    table = checked_qrels(qrels)
    unjudged: dict[str, dict[str, int]] = {}
    retrieved: dict[str, dict[str, int]] = {}
    for name, run in ({} if runs is None else named_runs(runs)).items():
        unjudged[name], retrieved[name] = {}, {}
        for query_id, entry in run.items():
            top = top_documents(query_id, entry, depth)
            grades = table.get(query_id, {})
            unjudged[name][query_id] = sum(doc_id not in grades for doc_id in top)
            retrieved[name][query_id] = len(top)
    return QrelsStatistics(
        judged={query_id: len(judgements) for query_id, judgements in table.items()},
        relevant={
            query_id: sum(grade > 0 for grade in judgements.values())
            for query_id, judgements in table.items()
        },
        grades={query_id: _grades(judgements) for query_id, judgements in table.items()},
        depth=depth,
        unjudged=unjudged,
        retrieved=retrieved,
    )
