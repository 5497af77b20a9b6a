"""The built-in metrics and dataset readers, registered as an ordinary plugin."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ef.evaluation import _metrics, _scoring
from ef.evaluation._hookspecs import hookimpl
from ef.evaluation._types import Corpus, Qrels, Queries


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


@hookimpl
def ef_evaluation_register_rag_metrics(register: Callable[..., None]) -> None:
    """The deterministic, reference-based lexical RAG metrics."""
    from ef.evaluation._rag import BUILTIN_RAG_METRICS

    for name, fn in BUILTIN_RAG_METRICS.items():
        register(name, fn, description=(fn.__doc__ or "").strip().split("\n")[0])


def _read_beir(source: str | os.PathLike[str], **options: Any) -> tuple[Corpus, Queries, Qrels]:
    from ef.evaluation._beir import read_beir

    return read_beir(os.fspath(source), **options)


def _read_trec(source: str | os.PathLike[str], **options: Any) -> tuple[Corpus, Queries, Qrels]:
    from ef.evaluation._trec import read_trec_qrels

    if options:
        raise TypeError(f"the trec reader takes no options, got {', '.join(sorted(options))}")
    return {}, {}, read_trec_qrels(source)


@hookimpl
def ef_evaluation_register_dataset_readers(register: Callable[..., None]) -> None:
    """The BEIR folder reader and the TREC qrels reader."""
    register("beir", _read_beir, description="a BEIR folder: corpus.jsonl, queries.jsonl, qrels")
    register("trec", _read_trec, description="a TREC qrels file (qid iter docid grade): qrels only")
