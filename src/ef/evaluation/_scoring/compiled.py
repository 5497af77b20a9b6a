"""A whole run scored by a plugin's compiled kernel (hook ``ef_evaluation_ranking_kernel``).

The ``ef-evaluation-speedups`` distribution offers one in C. It computes ef's five cutoff
measures — nDCG, recall, precision, reciprocal rank and AP, :func:`values_at`'s — at every
cutoff of a run in one call, each query's values float for float the pure path's. An evaluation
hands it a run when every key it reports is one of them: the built-in metrics (``ndcg`` …
with ``k_values``) and names of the same measures at their own cutoff with default parameters
(``nDCG@10``, ``P@5``, ``R@100``, ``RR@10``, ``AP@1000``, in any notation), over plain
judgements, with no relevance level or ``judged_only``, no ``ignore_identical_ids``, no progress
callback. A query it declines (an entry of another type, an id that is not a ``str``, a NaN
score, an int beyond ``±2**53``) is left to the pure path, which scores it or raises its own
error; so is every query when there is no kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ef.evaluation._report.frozen import FrozenDict
from ef.evaluation._scoring.cutoffs import AP, NDCG, PRECISION, RECALL, RECIPROCAL_RANK
from ef.evaluation._scoring.packed_qrels import PackedQrels
from ef.evaluation._scoring.query_plan import QueryPlan
from ef.evaluation._scoring.score_sheet import ScoreSheet

__all__ = ["RankingKernel", "kernel_plan", "score_compiled"]

RankingKernel = Callable[
    [Any, Any, Any, list[str], tuple[int, ...], tuple[int, ...], tuple[str, ...], type, bool],
    "tuple[list[dict[str, float] | None], list[int]] | None",
]
"""``kernel(run, qrels, ideals, query_ids, ks, picks, keys, frozen, distinct)`` →
``(values, depths)``: per query its values under ``keys`` in a new ``frozen`` (or ``None``
where it declines the query), and its entry's length (a ranking's distinct ids with
``distinct``); ``None`` when it declines the whole call."""

# The canonical measures that are :func:`values_at`'s, at their default parameters.
_CANON_FORMS = {"nDCG": NDCG, "R": RECALL, "P": PRECISION, "RR": RECIPROCAL_RANK, "AP": AP}
_DEFAULTS = {
    "nDCG": (("dcg", "log2"), ("gains", None), ("judged_only", False)),
    **dict.fromkeys(("R", "P", "RR", "AP"), (("rel", None), ("judged_only", False))),
}


def kernel_plan(plan: QueryPlan) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The cutoffs and picks a kernel computes ``plan``'s keys with, or ``None`` when a key is
    not one of the five measures (or an option changes what they read)."""
    if not plan.plain or plan.ignore_identical_ids or not plan.judging.is_default:
        return None
    scoring = plan.scoring
    if scoring.metrics and not scoring.builtin_only:
        return None
    measured: dict[str, tuple[int, int]] = {
        f"{metric.name}@{k}": (form, k)
        for metric, form in zip(scoring.metrics, scoring.builtin_forms, strict=True)
        for k in scoring.k_values
    }
    for family in plan.measures.families if plan.measures is not None else ():
        measure = family.measure
        if (
            measure is None
            or measure.canon not in _CANON_FORMS
            or measure.params != _DEFAULTS[measure.canon]
            or type(measure.cutoff) is not int
        ):
            return None
        # A key both give is the family's (it is the same measure): the scorer's order.
        measured.update(dict.fromkeys(family.keys, (_CANON_FORMS[measure.canon], measure.cutoff)))
    if set(plan.keys) != set(measured):
        return None
    ks = tuple(sorted({k for _, k in measured.values()}))
    at = {k: index for index, k in enumerate(ks)}
    return ks, tuple(form * len(ks) + at[k] for form, k in map(measured.__getitem__, plan.keys))


def score_compiled(
    sheet: ScoreSheet,
    run: Mapping[str, Any],
    kernel: RankingKernel | None,
    query_ids: list[str] | None = None,
) -> list[str]:
    """Score with ``kernel`` every query of ``query_ids`` (the planned ones by default) that it
    takes from ``run``, kept in ``sheet``.

    :returns: the queries left for the pure path, in their order: every one when there is no
        kernel or the evaluation is not one it takes.
    """
    plan = sheet.plan
    planned = plan.planned if query_ids is None else query_ids
    if kernel is None or sheet.reports_progress or type(run) is not dict:
        return planned
    computed = kernel_plan(plan)
    if computed is None:
        return planned
    ks, picks = computed
    # trec_eval's measures count a ranking's distinct ids as its depth; ef's metrics its length.
    distinct = plan.measures is not None
    keys = tuple(plan.keys)
    qrels = plan.qrels
    if isinstance(qrels, PackedQrels):  # the kernel reads a dict: the batch's, made for it
        qrels = qrels.batch(planned)
    result = kernel(run, qrels, plan.ideals, planned, ks, picks, keys, FrozenDict, distinct)
    if result is None:
        return planned
    values, depths = result
    per_query = sheet.per_query
    if None not in values:
        per_query.update(zip(planned, values, strict=True))  # type: ignore[arg-type]
        sheet.note_depths(depths)
        return []
    left: list[str] = []
    scored: list[int] = []
    for query_id, kept, length in zip(planned, values, depths, strict=True):
        if kept is None:
            left.append(query_id)
        else:
            per_query[query_id] = kept
            scored.append(length)
    sheet.note_depths(scored)
    return left
