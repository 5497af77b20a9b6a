"""The depth cap of a saved run (trec_eval's ``-M``): each query's first ``depth`` results.

The cap is applied to the run's entries before anything is scored, so every measure (built-in,
trec_eval's vocabulary or a plugin's) sees the same cut ranking: scored entries are cut in
trec_eval's order (:func:`~ef.evaluation._scoring.order.rank_by_score`), ranked entries keep
their first ``depth`` distinct doc ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ef.evaluation._scoring.order import rank_by_score

__all__ = ["cut_entry", "cut_scores"]


def cut_scores(scores: Mapping[str, float], depth: int | None) -> Mapping[str, float]:
    """``scores`` keeping only its ``depth`` best documents in trec_eval's order.

    >>> cut_scores({'d1': 0.5, 'd2': 0.9, 'd3': 0.5}, 2)
    {'d2': 0.9, 'd3': 0.5}
    >>> cut_scores({'d1': 0.5}, None)
    {'d1': 0.5}
    """
    if depth is None or len(scores) <= depth:
        return scores
    return {doc_id: scores[doc_id] for doc_id in rank_by_score(scores)[:depth]}


def cut_entry(entry: Any, depth: int | None) -> Any:
    """A run entry (a ranking or ``{doc_id: score}``) cut to its first ``depth`` documents.

    A ranking keeps its first ``depth`` distinct doc ids (a repeated id counts once, as the
    scorer counts it).

    >>> cut_entry(['d1', 'd1', 'd2', 'd3'], 2)
    ['d1', 'd2']
    """
    if depth is None or entry is None:
        return entry
    if isinstance(entry, Mapping):
        return cut_scores(entry, depth)
    if isinstance(entry, list) and len(entry) <= depth:
        return entry
    ranked = list(dict.fromkeys(entry if isinstance(entry, Iterable) else ()))
    return ranked[:depth]
