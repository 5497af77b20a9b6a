"""pytrec_eval as the independent oracle for the retrieval metrics, shared by the tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytrec_eval

from ef.evaluation import (
    average_precision,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)

PRIMITIVES = {
    "ndcg": ndcg_at_k,
    "recall": recall_at_k,
    "precision": precision_at_k,
    "mrr": reciprocal_rank,
    "map": average_precision,
}
"""The public primitives by metric name, in the default report order."""

TREC_MEASURE = {"ndcg": "ndcg_cut", "recall": "recall", "precision": "P", "map": "map_cut"}


def as_trec_run(ranked: Sequence[str]) -> dict[str, float]:
    """A ranking as trec_eval scores: first occurrence kept, strictly decreasing scores."""
    unique = list(dict.fromkeys(ranked))
    return {doc_id: float(len(unique) - i) for i, doc_id in enumerate(unique)}


def trec_eval_values(
    rankings: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Mapping[str, int]],
    metrics: Sequence[str],
    ks: Sequence[int],
) -> dict[str, dict[str, float]]:
    """Per-query values keyed like ef's reports (``ndcg@10``), computed by pytrec_eval.

    A query whose ranking is empty gets no values from trec_eval; it scores 0 (trec_eval -c),
    so those are filled with 0.0. ``mrr@k`` is trec_eval's ``recip_rank`` on the ranking cut
    at k. Queries without a positive grade are not sent (pytrec_eval 0.5.11 can crash on them;
    every metric is 0.0 for them by definition) and get 0.0.
    """
    cutoffs = ",".join(str(k) for k in ks)
    measures = {f"{TREC_MEASURE[m]}.{cutoffs}" for m in metrics if m in TREC_MEASURE}
    out = {q: {f"{m}@{k}": 0.0 for m in metrics for k in ks} for q in qrels}
    judged = {q: dict(rel) for q, rel in qrels.items() if any(g > 0 for g in rel.values())}
    if not judged:
        return out
    if measures:
        evaluator = pytrec_eval.RelevanceEvaluator(judged, measures)
        run = {q: as_trec_run(rankings.get(q, [])) for q in judged}
        values = evaluator.evaluate({q: r for q, r in run.items() if r})
        for q, measured in values.items():
            for metric in metrics:
                if metric in TREC_MEASURE:
                    for k in ks:
                        out[q][f"{metric}@{k}"] = measured[f"{TREC_MEASURE[metric]}_{k}"]
    if "mrr" in metrics:
        evaluator = pytrec_eval.RelevanceEvaluator(judged, {"recip_rank"})
        for k in ks:
            cut = {q: as_trec_run(list(dict.fromkeys(rankings.get(q, [])))[:k]) for q in judged}
            values = evaluator.evaluate({q: r for q, r in cut.items() if r})
            for q, measured in values.items():
                out[q][f"mrr@{k}"] = measured["recip_rank"]
    return out
