"""The built-in metrics, as a hook module: ef's five, then every trec_eval measure."""

from __future__ import annotations

from collections.abc import Callable

from ef.evaluation._builtins.trec_measures import register_measures
from ef.evaluation._plugins.hookspecs import hookimpl
from ef.evaluation._scoring import metric_scorer as _scoring
from ef.evaluation._scoring import metrics as _metrics


@hookimpl
def ef_evaluation_register_metrics(register: Callable[..., None]) -> None:
    """The five trec_eval metrics, each with its all-cutoffs form for the one-pass core."""
    register(
        "map",
        _metrics.average_precision,
        all_cutoffs=_scoring.map_all,
        description="average precision cut at k, divided by R (trec_eval map_cut)",
    )
    register(
        "mrr",
        _metrics.reciprocal_rank,
        all_cutoffs=_scoring.mrr_all,
        description="reciprocal rank of the first relevant doc within k (recip_rank)",
    )
    register(
        "ndcg",
        _metrics.ndcg_at_k,
        all_cutoffs=_scoring.ndcg_all,
        description="normalised DCG at k, linear gain (trec_eval ndcg_cut)",
    )
    register(
        "precision",
        _metrics.precision_at_k,
        all_cutoffs=_scoring.precision_all,
        description="relevant docs in the top k / k (trec_eval P)",
    )
    register(
        "recall",
        _metrics.recall_at_k,
        all_cutoffs=_scoring.recall_all,
        description="relevant docs in the top k / R (trec_eval recall)",
    )
    register_measures(register)
