"""A whole run scored by a plugin's compiled kernel (hook ``ef_evaluation_ranking_kernel``).

The ``ef-evaluation-speedups`` distribution offers one in C. It takes what the lean path takes —
plain judgements, ef's built-in cutoff metrics only, no relevance level, no measure of
trec_eval's vocabulary, no progress callback — and scores every query of a run in one call, each
query's values float for float the pure path's (:mod:`.found`, :mod:`.scored`,
:func:`~ef.evaluation._scoring.cutoffs.values_at`). A query it declines (an entry of another
type, an id that is not a ``str``, a NaN score, an int beyond ``±2**53``) is left to the pure
path, which scores it or raises its own error; so is every query when there is no kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ef.evaluation._report.frozen import FrozenDict
from ef.evaluation._scoring.score_sheet import ScoreSheet

__all__ = ["RankingKernel", "score_compiled"]

RankingKernel = Callable[
    [Any, Any, Any, list[str], tuple[int, ...], tuple[int, ...], tuple[str, ...], type],
    "tuple[list[dict[str, float] | None], list[int]] | None",
]
"""``kernel(run, qrels, ideals, query_ids, ks, forms, keys, frozen)`` → ``(values, depths)``:
per query its values under ``keys`` in a new ``frozen`` (or ``None`` where it declines the
query), and its entry's length; ``None`` when it declines the whole call."""


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
    if kernel is None or not sheet.lean or type(run) is not dict:
        return planned
    scoring = plan.scoring
    result = kernel(
        run,
        plan.qrels,
        plan.ideals,
        planned,
        scoring.k_values,
        scoring.builtin_forms,
        tuple(scoring.keys),
        FrozenDict,
    )
    if result is None:
        return planned
    values, depths = result
    per_query, depth = sheet.per_query, sheet.depth
    if None not in values:
        per_query.update(zip(planned, values, strict=True))  # type: ignore[arg-type]
        depth.update(zip(planned, depths, strict=True))
        return []
    left: list[str] = []
    for query_id, kept, length in zip(planned, values, depths, strict=True):
        if kept is None:
            left.append(query_id)
        else:
            per_query[query_id] = kept
            depth[query_id] = length
    return left
