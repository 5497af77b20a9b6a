"""The scoring core: one pass per query, then every metric at every cutoff read off it.

The pass (:func:`summarize`) finds where the relevant documents landed in the ranking — that is
all the built-in metrics depend on — so scoring a query costs about the number of relevant
documents, not the length of the ranking. Each metric's all-cutoffs form then reads its values
at every requested cutoff off the same :class:`RankingSummary`; plugin metrics that only have a
per-k function are called once per cutoff.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import itemgetter

from ef.evaluation._report.frozen import FrozenDict
from ef.evaluation._scoring.cutoffs import average_precision_at, hits_at
from ef.evaluation._scoring.found import found
from ef.evaluation._scoring.judged import ideal_grades
from ef.evaluation._scoring.metrics import check_cutoff
from ef.evaluation._scoring.order import rank_by_score
from ef.evaluation._scoring.steps import Metric, MetricStep

__all__ = ["RankingSummary", "ScoringPlan", "relevant_grades", "summarize"]

_LOG2: list[float] = []


def log2_table(n: int) -> list[float]:
    """``[log2(2), log2(3), …]`` with at least ``n`` entries: the DCG discount of rank ``i``."""
    if len(_LOG2) < n:
        _LOG2.extend(math.log2(i + 2) for i in range(len(_LOG2), max(n, 2 * len(_LOG2))))
    return _LOG2


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


def relevant_grades(relevant: Mapping[str, float]) -> list[tuple[str, float]]:
    """The ``(doc_id, grade)`` pairs with a positive grade, in judgement order."""
    return [(doc_id, grade) for doc_id, grade in relevant.items() if grade > 0]


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
    :param positives: :func:`relevant_grades` of ``relevant``, when the caller has it already.
    :param ideal: :func:`ideal_grades` of the grades, when the caller has it (held as it is).
    """
    if ideal is None:
        if positives is None:
            ideal = ideal_grades(relevant.values())
        else:
            ideal = sorted(map(itemgetter(1), positives), reverse=True)
    ranked, unique, positions, gains = found(ranked, relevant, len(ideal), unique, positives)
    return RankingSummary(ranked, relevant, positions, gains, ideal, unique=unique)


# The built-in metrics' all-cutoffs forms. ``ks`` is ascending and de-duplicated.


def ndcg_all(summary: RankingSummary, ks: Sequence[int]) -> list[float]:
    """nDCG at every cutoff in ``ks`` (trec_eval ``ndcg_cut``).

    Gains are divided by the query's largest grade first, as :func:`ndcg_at_k` does: the same
    ratio, with no overflow for any finite grade.
    """
    ideal = summary.ideal_gains
    if not ideal:
        return [0.0] * len(ks)
    positions, gains = summary.positions, summary.gains
    # Discounts only as far as this query reaches: memory follows the rankings, never k.
    log2 = log2_table(max(positions[-1] + 1 if positions else 0, min(len(ideal), ks[-1])))
    n_found, n_ideal = len(positions), len(ideal)
    scale = ideal[0]
    out: list[float] = []
    dcg = idcg = 0.0
    j = i = 0
    for k in ks:
        while j < n_found and positions[j] < k:
            dcg += gains[j] / scale / log2[positions[j]]
            j += 1
        while i < n_ideal and i < k:
            idcg += ideal[i] / scale / log2[i]
            i += 1
        out.append(dcg / idcg)
    return out


def recall_all(summary: RankingSummary, ks: Sequence[int]) -> list[float]:
    """Recall at every cutoff in ``ks`` (trec_eval ``recall``)."""
    n_relevant = summary.n_relevant
    if n_relevant == 0:
        return [0.0] * len(ks)
    return [hits / n_relevant for hits in hits_at(summary.positions, ks)]


def precision_all(summary: RankingSummary, ks: Sequence[int]) -> list[float]:
    """Precision at every cutoff in ``ks``, always divided by k (trec_eval ``P``)."""
    return [hits / k for hits, k in zip(hits_at(summary.positions, ks), ks, strict=True)]


def mrr_all(summary: RankingSummary, ks: Sequence[int]) -> list[float]:
    """Reciprocal rank within every cutoff in ``ks`` (trec_eval ``recip_rank`` on the cut run)."""
    if not summary.positions:
        return [0.0] * len(ks)
    first = summary.positions[0]
    value = 1.0 / (first + 1)
    return [value if first < k else 0.0 for k in ks]


def map_all(summary: RankingSummary, ks: Sequence[int]) -> list[float]:
    """Average precision cut at every cutoff in ``ks``, divided by R (trec_eval ``map_cut``)."""
    return average_precision_at(summary.positions, summary.n_relevant, ks)


# What the fused step of the built-in metrics computes, keyed by the form it stands in for.
_FUSED_ORDER = ("ndcg", "recall", "precision", "mrr", "map")
_BUILTIN_FORMS: dict[object, str] = {
    ndcg_all: "ndcg",
    recall_all: "recall",
    precision_all: "precision",
    mrr_all: "mrr",
    map_all: "map",
}


class ScoringPlan:
    """Which values to compute for each query, compiled once per evaluation.

    :param metrics: the metrics to compute, in report order.
    :param k_values: the cutoffs; validated, de-duplicated and sorted.
    """

    def __init__(self, metrics: Sequence[Metric], k_values: Iterable[int]) -> None:
        self.k_values = tuple(sorted({check_cutoff(k) for k in k_values}))
        if not self.k_values:
            raise ValueError("k_values is empty: give at least one cutoff")
        self.metrics = tuple(metrics)
        self.keys: list[str] = []
        self._steps: list[MetricStep] = []
        for metric in self.metrics:
            if not metric.cutoff:
                self.keys.append(metric.name)
                self._steps.append(MetricStep(metric, self.k_values, trusted=False))
            else:
                self.keys.extend(f"{metric.name}@{k}" for k in self.k_values)
                # Our own all-cutoffs forms always give one finite float per cutoff.
                trusted = metric.all_cutoffs in _BUILTIN_FORMS
                self._steps.append(MetricStep(metric, self.k_values, trusted=trusted))
        self._fused = _builtin_step(self.metrics, self.k_values)
        self.builtin_only = self._fused is not None  # no other code reads the summaries

    def score(self, summary: RankingSummary, query_id: str | None = None) -> dict[str, float]:
        """Every key of the plan for one query.

        :param query_id: the query, named in errors.
        :raises TypeError: a plugin metric returned something other than a number.
        :raises ValueError: a plugin metric returned NaN or an infinity, or its all-cutoffs
            form returned a value count other than the number of cutoffs.
        """
        # Read-only from the start: the report keeps them as they are, with no copy.
        if self._fused is not None:
            fused = self._fused(summary.positions, summary.gains, summary.ideal_gains)
            return FrozenDict(zip(self.keys, fused, strict=True))
        values: list[float] = []
        for step in self._steps:
            values.extend(step.run(summary, query_id))
        return FrozenDict(zip(self.keys, values, strict=True))

    def score_found(
        self, positions: list[int], gains: list[float], ideal: Sequence[float]
    ) -> dict[str, float]:
        """:meth:`score` from what :func:`summarize` finds, with no summary made: for a plan of
        built-in metrics only (:attr:`builtin_only`)."""
        assert self._fused is not None
        return FrozenDict(zip(self.keys, self._fused(positions, gains, ideal), strict=True))


_IDEAL_DCGS: dict[tuple[int, ...], dict[tuple[float, ...], list[float]]] = {}
"""cutoffs → sorted grades → the ideal DCG at each cutoff: a pure function's values, kept for
the evaluations that follow (another run against the same qrels) up to a bound."""
_IDEAL_DCGS_KEPT = 100_000
_IDEAL_DCGS_CUTOFFS = 16


def _builtin_step(
    metrics: Sequence[Metric], ks: tuple[int, ...]
) -> Callable[[list[int], list[float], Sequence[float]], list[float]] | None:
    """One step for a plan made only of built-in cutoff metrics, or ``None``: the values of a
    query from its summary's ``positions``, ``gains`` and ``ideal_gains``.

    The same arithmetic as their all-cutoffs forms, in the same order, so the same floats — but
    one walk over the positions for all of them, and no work at all for a query whose relevant
    ids were not retrieved (every built-in metric is then 0).
    """
    names = [_BUILTIN_FORMS.get(metric.all_cutoffs) for metric in metrics]
    if not names or not all(metric.cutoff for metric in metrics):
        return None
    order: list[str] = []
    for name in names:
        if name is None:
            return None
        order.append(name)
    indexes = [_FUSED_ORDER.index(name) for name in order]
    zeros = [0.0] * (len(ks) * len(order))
    largest_k = ks[-1]
    # The ideal DCG at every cutoff depends only on the query's sorted grades, which repeat
    # across queries (binary judgements: only R) and across evaluations with the same qrels:
    # summed once per distinct grades and cutoffs, in the same order as ndcg_all, so the same
    # floats.
    if ks not in _IDEAL_DCGS and len(_IDEAL_DCGS) >= _IDEAL_DCGS_CUTOFFS:
        _IDEAL_DCGS.clear()
    ideal_dcgs = _IDEAL_DCGS.setdefault(ks, {})

    def ideal_at(ideal: Sequence[float]) -> list[float]:
        n_ideal = len(ideal)
        scale = ideal[0]
        log2 = log2_table(min(n_ideal, largest_k))
        out: list[float] = []
        idcg = 0.0
        i = 0
        for k in ks:
            while i < n_ideal and i < k:
                idcg += ideal[i] / scale / log2[i]
                i += 1
            out.append(idcg)
        return out

    def step(positions: list[int], gains: list[float], ideal: Sequence[float]) -> list[float]:
        if not positions:
            return zeros
        n_relevant = len(ideal)  # positions found imply a positive grade: never 0
        n_found = len(positions)
        first = positions[0]
        reciprocal = 1.0 / (first + 1)
        scale = ideal[0]
        key = tuple(ideal)
        idcgs = ideal_dcgs.get(key)
        if idcgs is None:
            if len(ideal_dcgs) >= _IDEAL_DCGS_KEPT:
                ideal_dcgs.clear()
            idcgs = ideal_dcgs[key] = ideal_at(ideal)
        # Discounts only as far as this query reaches: memory follows the rankings, never k.
        log2 = log2_table(positions[-1] + 1)
        ndcg: list[float] = []
        recall: list[float] = []
        precision: list[float] = []
        mrr: list[float] = []
        average: list[float] = []
        dcg = total = 0.0
        j = 0
        for k, idcg in zip(ks, idcgs, strict=True):
            while j < n_found and positions[j] < k:
                position = positions[j]
                dcg += gains[j] / scale / log2[position]
                j += 1
                total += j / (position + 1)
            ndcg.append(dcg / idcg)
            recall.append(j / n_relevant)
            precision.append(j / k)
            mrr.append(reciprocal if first < k else 0.0)
            average.append(total / n_relevant)
        if single is not None:
            return (ndcg, recall, precision, mrr, average)[single]
        forms = (ndcg, recall, precision, mrr, average)
        out: list[float] = []
        for index in indexes:
            out += forms[index]
        return out

    single = indexes[0] if len(indexes) == 1 else None
    return step
