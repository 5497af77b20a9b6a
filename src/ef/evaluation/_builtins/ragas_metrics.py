"""Ragas' deterministic RAG metrics, as a hook module: a built-in plugin of its own.

The metrics live in :mod:`ef.evaluation._rag` (``overlap``, ``strings`` and ``contexts``).
"""

from __future__ import annotations

from collections.abc import Callable

from ef.evaluation._plugins.hookspecs import hookimpl
from ef.evaluation._rag import contexts, overlap, strings
from ef.evaluation._types import RagMetricFn

__all__ = ["RAG_METRICS", "ef_evaluation_register_rag_metrics"]

RAG_METRICS: dict[str, RagMetricFn] = {
    "rouge_score": overlap.rouge_score,
    "rouge1_score": overlap.rouge1_score,
    "rouge2_score": overlap.rouge2_score,
    "bleu_score": overlap.bleu_score,
    "chrf_score": overlap.chrf_score,
    "non_llm_string_similarity": strings.non_llm_string_similarity,
    "non_llm_string_similarity_jaro_winkler": strings.non_llm_string_similarity_jaro_winkler,
    "non_llm_string_similarity_jaro": strings.non_llm_string_similarity_jaro,
    "non_llm_string_similarity_hamming": strings.non_llm_string_similarity_hamming,
    "string_present": strings.string_present,
    "raw_exact_match": strings.raw_exact_match,
    "non_llm_context_recall": contexts.non_llm_context_recall,
    "non_llm_context_precision_with_reference": contexts.non_llm_context_precision_with_reference,
    "id_based_context_recall": contexts.id_based_context_recall,
    "id_based_context_precision": contexts.id_based_context_precision,
}
"""Ragas' deterministic metrics, by the name used in ``metrics=`` and in report keys."""


@hookimpl
def ef_evaluation_register_rag_metrics(register: Callable[..., None]) -> None:
    """Ragas' deterministic RAG metrics: n-gram overlap, string and context matching."""
    for name, fn in RAG_METRICS.items():
        register(name, fn, description=(fn.__doc__ or "").strip().split("\n")[0])
