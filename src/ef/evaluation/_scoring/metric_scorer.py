"""Scoring one query with the registered metrics: ef's built-in five together, plugins one by one.

The built-in metrics (ndcg, recall, precision, mrr, map) read their values off one walk over
where the relevant documents landed (:func:`~ef.evaluation._scoring.cutoffs.values_at`); their
all-cutoffs forms below are that walk, one measure picked. A :class:`MetricScorer` walks once per
query for all the built-in metrics it holds (the fused step), with the ideal DCGs kept across
queries and evaluations, and calls every other metric through its
:class:`~ef.evaluation._scoring.steps.MetricStep`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ef.evaluation._report.frozen import FrozenDict
from ef.evaluation._scoring.cutoffs import (
    AP,
    NDCG,
    PRECISION,
    RECALL,
    RECIPROCAL_RANK,
    Values,
    kept_for,
    kept_ideal_dcgs,
    ranking_values,
    values_at,
)
from ef.evaluation._scoring.metrics import check_cutoff
from ef.evaluation._scoring.ranked import RankingSummary
from ef.evaluation._scoring.steps import Metric, MetricStep

__all__ = [
    "MetricScorer",
    "map_all",
    "mrr_all",
    "ndcg_all",
    "precision_all",
    "recall_all",
]

# The built-in metrics' all-cutoffs forms. ``ks`` is ascending and de-duplicated.


def values_of(summary: RankingSummary, ks: Sequence[int]) -> Values:
    """The five cutoff measures of ``summary`` at every cutoff in ``ks``."""
    return ranking_values(summary.positions, summary.gains, summary.ideal_gains, ks)


def ndcg_all(summary: RankingSummary, ks: Sequence[int]) -> list[float]:
    """nDCG at every cutoff in ``ks`` (trec_eval ``ndcg_cut``)."""
    return values_of(summary, ks)[NDCG]


def recall_all(summary: RankingSummary, ks: Sequence[int]) -> list[float]:
    """Recall at every cutoff in ``ks`` (trec_eval ``recall``)."""
    return values_of(summary, ks)[RECALL]


def precision_all(summary: RankingSummary, ks: Sequence[int]) -> list[float]:
    """Precision at every cutoff in ``ks``, always divided by k (trec_eval ``P``)."""
    return values_of(summary, ks)[PRECISION]


def mrr_all(summary: RankingSummary, ks: Sequence[int]) -> list[float]:
    """Reciprocal rank within every cutoff in ``ks`` (trec_eval ``recip_rank`` on the cut run)."""
    return values_of(summary, ks)[RECIPROCAL_RANK]


def map_all(summary: RankingSummary, ks: Sequence[int]) -> list[float]:
    """Average precision cut at every cutoff in ``ks``, divided by R (trec_eval ``map_cut``)."""
    return values_of(summary, ks)[AP]


# Which of the walk's measures each built-in form is.
_BUILTIN_FORMS: dict[object, int] = {
    ndcg_all: NDCG,
    recall_all: RECALL,
    precision_all: PRECISION,
    mrr_all: RECIPROCAL_RANK,
    map_all: AP,
}

FusedStep = Callable[[list[int], list[float], Sequence[float]], list[float]]


class MetricScorer:
    """Which values to compute for each query, and computing them: compiled once per evaluation.

    :param metrics: the metrics to compute, in report order.
    :param k_values: the cutoffs; validated, de-duplicated and sorted.
    """

    def __init__(self, metrics: Sequence[Metric], k_values: Iterable[int]) -> None:
        self.k_values = tuple(sorted({check_cutoff(k) for k in k_values}))
        if not self.k_values:
            raise ValueError("k_values is empty: give at least one cutoff")
        self.metrics = tuple(metrics)
        self.keys: list[str] = []
        # None: a built-in metric, whose values the fused step gives.
        self._steps: list[MetricStep | None] = []
        builtin: list[int] = []
        for metric in self.metrics:
            if not metric.cutoff:
                self.keys.append(metric.name)
                self._steps.append(MetricStep(metric, self.k_values, trusted=False))
                continue
            self.keys.extend(f"{metric.name}@{k}" for k in self.k_values)
            form = _BUILTIN_FORMS.get(metric.all_cutoffs)
            if form is None:
                self._steps.append(MetricStep(metric, self.k_values, trusted=False))
            else:
                builtin.append(form)
                self._steps.append(None)
        self.builtin_forms = tuple(builtin)
        """Which of the walk's measures the built-in metrics are, in report order."""
        self._fused = _fused_step(builtin, self.k_values) if builtin else None
        # No other code reads the summaries: the fused step's inputs are all it takes.
        self.builtin_only = bool(builtin) and len(builtin) == len(self.metrics)

    def score(self, summary: RankingSummary, query_id: str | None = None) -> dict[str, float]:
        """Every key of the scorer for one query.

        :param query_id: the query, named in errors.
        :raises TypeError: a plugin metric returned something other than a number.
        :raises ValueError: a plugin metric returned NaN or an infinity, or its all-cutoffs
            form returned a value count other than the number of cutoffs.
        """
        fused: list[float] = []
        if self._fused is not None:
            fused = self._fused(summary.positions, summary.gains, summary.ideal_gains)
            if self.builtin_only:
                # Read-only from the start: the report keeps them as they are, with no copy.
                return FrozenDict(zip(self.keys, fused, strict=True))
        values: list[float] = []
        n, at = len(self.k_values), 0
        for step in self._steps:
            if step is None:
                values.extend(fused[at : at + n])
                at += n
            else:
                values.extend(step.run(summary, query_id))
        return FrozenDict(zip(self.keys, values, strict=True))

    def score_found(
        self, positions: list[int], gains: list[float], ideal: Sequence[float]
    ) -> dict[str, float]:
        """:meth:`score` from what :func:`~ef.evaluation._scoring.ranked.summarize` finds, with
        no summary made: for a scorer of built-in metrics only (:attr:`builtin_only`)."""
        assert self._fused is not None
        return FrozenDict(zip(self.keys, self._fused(positions, gains, ideal), strict=True))


def _fused_step(forms: Sequence[int], ks: tuple[int, ...]) -> FusedStep:
    """The values of the built-in metrics ``forms`` (indexes into what
    :func:`~ef.evaluation._scoring.cutoffs.values_at` returns) for one query, from its
    summary's ``positions``, ``gains`` and ``ideal_gains``, concatenated in that order.

    One walk for all of them, and no work at all for a query whose relevant ids were not
    retrieved (every built-in metric is then 0).
    """
    zeros = [0.0] * (len(ks) * len(forms))
    kept = kept_for(ks)
    single = forms[0] if len(forms) == 1 else None

    def step(positions: list[int], gains: list[float], ideal: Sequence[float]) -> list[float]:
        if not positions:
            return zeros
        idcgs = kept.get(tuple(ideal)) or kept_ideal_dcgs(kept, ideal, ks)
        # Positions found imply a positive grade: R is never 0 here.
        values = values_at(positions, gains, ideal[0], len(ideal), idcgs, ks)
        if single is not None:
            return values[single]
        out: list[float] = []
        for form in forms:
            out += values[form]
        return out

    return step
