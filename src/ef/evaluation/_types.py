"""The data shapes of an evaluation: the BEIR triple and the RAG sample."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias, TypedDict

__all__ = [
    "Corpus",
    "MetricFn",
    "Qrels",
    "Queries",
    "RagMetricFn",
    "RagSample",
    "Run",
]

Qrels: TypeAlias = Mapping[str, Mapping[str, float]]
"""Graded relevance judgements — ``{query_id: {doc_id: relevance}}``.

A ``relevance`` of ``0`` means *judged non-relevant*; ``> 0`` means relevant (graded judgements
feed :func:`ndcg_at_k`, binary relevance the rest). This is the in-memory form of a BEIR
``qrels.tsv``. Negative grades are judged non-relevant too.
"""

Queries: TypeAlias = Mapping[str, str]
"""Query texts — ``{query_id: query_text}``."""

Corpus: TypeAlias = Mapping[str, str]
"""Documents — ``{doc_id: text}``."""

Run: TypeAlias = Mapping[str, Sequence[str]] | Mapping[str, Mapping[str, float]]
"""A system's output — ``{query_id: [ranked doc ids]}`` or ``{query_id: {doc_id: score}}``."""

MetricFn: TypeAlias = Callable[[Sequence[str], Mapping[str, float], int], float]
"""A retrieval metric at one cutoff: ``fn(ranked, relevant, k) -> float``."""

RagMetricFn: TypeAlias = Callable[[Mapping[str, Any]], float | None]
"""A RAG metric over one sample: ``fn(sample) -> float``, or ``None`` when not applicable."""


class RagSample(TypedDict, total=False):
    """One end-to-end RAG interaction — the unit :func:`evaluate_rag` scores.

    The field names match Ragas' ``SingleTurnSample`` exactly, so a :class:`RagSample` is the
    interchange shape ``app_ef`` / ``srag`` / ``raglab`` produce and :func:`as_ragas_dataset`
    forwards unchanged. ``ef`` itself fills only ``retrieved_contexts`` (from
    ``SourceManager.retrieve()``); ``response`` is the *caller's* LLM output — ``ef`` does not
    synthesize it.

    Keys:
        user_input: the user's question.
        response: the generated answer (the caller's LLM produced it).
        retrieved_contexts: the context passages handed to the LLM — what ``retrieve()``
            returned, as text.
        reference: the ground-truth answer, if known.
        reference_contexts: the ground-truth context passages, if known.
        retrieved_context_ids: the ids of the retrieved contexts (str or int, compared as
            strings), if known.
        reference_context_ids: the ids of the ground-truth contexts, if known.
    """

    user_input: str
    response: str
    retrieved_contexts: list[str]
    reference: str
    reference_contexts: list[str]
    retrieved_context_ids: list[str | int]
    reference_context_ids: list[str | int]
