"""pytrec_eval as the independent oracle for the retrieval metrics, shared by the tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytrec_eval

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
    at k.
    """
    cutoffs = ",".join(str(k) for k in ks)
    measures = {f"{TREC_MEASURE[m]}.{cutoffs}" for m in metrics if m in TREC_MEASURE}
    out: dict[str, dict[str, float]] = {q: {} for q in qrels}
    judged = {q: dict(rel) for q, rel in qrels.items()}
    if measures:
        evaluator = pytrec_eval.RelevanceEvaluator(judged, measures)
        run = {q: as_trec_run(rankings.get(q, [])) for q in qrels}
        values = evaluator.evaluate({q: r for q, r in run.items() if r})
        for q in qrels:
            for metric in metrics:
                if metric not in TREC_MEASURE:
                    continue
                for k in ks:
                    key = f"{TREC_MEASURE[metric]}_{k}"
                    out[q][f"{metric}@{k}"] = values.get(q, {}).get(key, 0.0)
    if "mrr" in metrics:
        evaluator = pytrec_eval.RelevanceEvaluator(judged, {"recip_rank"})
        for k in ks:
            cut = {q: as_trec_run(list(dict.fromkeys(rankings.get(q, [])))[:k]) for q in qrels}
            values = evaluator.evaluate({q: r for q, r in cut.items() if r})
            for q in qrels:
                out[q][f"mrr@{k}"] = values.get(q, {}).get("recip_rank", 0.0)
    return out
