"""Training a supervised fusion method on judged queries: which queries, and what it learns."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ef.evaluation._fusion._entries import MethodEntry
from ef.evaluation._fusion._inputs import EMPTY, PreparedRuns
from ef.evaluation._types import Qrels

__all__ = ["train", "training_queries"]


def training_queries(qrels: Qrels) -> tuple[list[str], list[set[str]]]:
    """The judged queries with a positive grade, in ``qrels`` order, and their relevant docs.

    :raises ValueError: for a grade that is not a finite number, or if no query has one > 0.
    """
    queries: list[str] = []
    relevant: list[set[str]] = []
    for query_id, judged in qrels.items():
        for doc, grade in judged.items():
            if isinstance(grade, bool) or not isinstance(grade, int | float):
                raise ValueError(f"qrels: query {query_id!r}, doc {doc!r}: grade {grade!r}")
            if not math.isfinite(grade):
                raise ValueError(f"qrels: query {query_id!r}, doc {doc!r}: grade {grade!r}")
        positives = {doc for doc, grade in judged.items() if grade > 0}
        if positives:
            queries.append(query_id)
            relevant.append(positives)
    if not queries:
        raise ValueError("the qrels have no query with a positive grade to train on")
    return queries, relevant


def train(
    prepared: PreparedRuns, entry: MethodEntry, params: Mapping[str, Any], qrels: Qrels
) -> dict[str, Any]:
    """Train a supervised method on ``qrels``: its trained parameters (``probs``, …)."""
    assert entry.train is not None
    queries, relevant = training_queries(qrels)
    empty = [EMPTY] * prepared.n_runs
    per_query = [prepared.by_query.get(query_id, empty) for query_id in queries]
    hits = [
        [
            [1 if doc in positives else 0 for doc in rankings[run]]
            for rankings, positives in zip(per_query, relevant, strict=True)
        ]
        for run in range(prepared.n_runs)
    ]
    counts = [len(positives) for positives in relevant]
    missing = [name for name in entry.train_params if name not in params]
    if missing:
        raise ValueError(f"fusion method {entry.name!r} needs {', '.join(missing)} to train")
    options = {name: params[name] for name in entry.train_params}
    return dict(entry.train(hits, counts, **options))
