"""Context metrics against ground truth: ``reference_contexts`` texts or context ids.

These judge retrieval alone, so they never read the ``response``. They follow Ragas' non-LLM
context metrics:

- ``non_llm_context_recall``: the share of the reference contexts that some retrieved context
  matches with a Levenshtein similarity **above** 0.5 (Ragas: ``score > threshold``).
- ``non_llm_context_precision_with_reference``: average precision of the retrieved contexts,
  in their order, where a retrieved context is relevant when its best similarity to a reference
  context is **at least** 0.5 (Ragas: ``score >= threshold``). Ragas divides by the number of
  relevant contexts plus ``1e-10``; the division here is exact, a difference below 1e-9.
- ``id_based_context_recall`` / ``id_based_context_precision``: set overlap of
  ``retrieved_context_ids`` and ``reference_context_ids``, ids compared as strings (``1`` and
  ``"1"`` are one id, a repeated id counts once).

Not applicable (``None``), so left out of the mean and the coverage: a sample without
``reference_contexts`` (or with an empty list) for the text metrics; a sample lacking either id
field for the id metrics, an empty ``reference_context_ids`` for recall and an empty
``retrieved_context_ids`` for precision (Ragas returns NaN for those). A missing
``retrieved_contexts`` means nothing was retrieved, as everywhere in :func:`evaluate_rag`: recall
and precision are then ``0.0`` (Ragas raises on an empty list for recall).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ef.evaluation._rag import inputs as _inputs
from ef.evaluation._rag.strings import similarity

__all__ = [
    "PRECISION_THRESHOLD",
    "RECALL_THRESHOLD",
    "average_precision",
    "id_based_context_precision",
    "id_based_context_recall",
    "non_llm_context_precision_with_reference",
    "non_llm_context_recall",
]

RECALL_THRESHOLD = 0.5
"""A reference context is recalled when its best similarity is strictly above this."""

PRECISION_THRESHOLD = 0.5
"""A retrieved context is relevant when its best similarity is at least this."""


def _best_similarity(text: str, others: Sequence[str]) -> float:
    """The best Levenshtein similarity of ``text`` to any of ``others``; 0.0 if there are none."""
    return max((similarity(text, other) for other in others), default=0.0)


def average_precision(verdicts: Sequence[bool]) -> float:
    """Σ precision@i over the relevant positions i, divided by the number relevant; 0.0 if none.

    >>> average_precision([True, False, True])
    0.8333333333333333
    >>> average_precision([False, False])
    0.0
    """
    hits = 0
    total = 0.0
    for position, relevant in enumerate(verdicts, start=1):
        if relevant:
            hits += 1
            total += hits / position
    return total / hits if hits else 0.0


def non_llm_context_recall(sample: Mapping[str, Any]) -> float | None:
    """Share of the reference contexts matched by a retrieved one (similarity > 0.5).

    >>> non_llm_context_recall({'retrieved_contexts': ['Paris is in France.'],
    ...     'reference_contexts': ['Paris is in France', 'Rome is in Italy.']})
    0.5
    """
    reference_contexts = _inputs.text_list(sample, "reference_contexts")
    if not reference_contexts:
        return None
    retrieved = _inputs.retrieved_contexts(sample)
    recalled = sum(
        _best_similarity(reference, retrieved) > RECALL_THRESHOLD
        for reference in reference_contexts
    )
    return recalled / len(reference_contexts)


def non_llm_context_precision_with_reference(sample: Mapping[str, Any]) -> float | None:
    """Average precision of the retrieved contexts, relevant at similarity ≥ 0.5 to a reference.

    >>> non_llm_context_precision_with_reference({
    ...     'retrieved_contexts': ['unrelated words here', 'Paris is in France.'],
    ...     'reference_contexts': ['Paris is in France']})
    0.5
    """
    reference_contexts = _inputs.text_list(sample, "reference_contexts")
    if not reference_contexts:
        return None
    verdicts = [
        _best_similarity(context, reference_contexts) >= PRECISION_THRESHOLD
        for context in _inputs.retrieved_contexts(sample)
    ]
    return average_precision(verdicts)


def _ids(sample: Mapping[str, Any]) -> tuple[set[str], set[str]] | None:
    retrieved = _inputs.context_ids(sample, "retrieved_context_ids")
    reference = _inputs.context_ids(sample, "reference_context_ids")
    if retrieved is None or reference is None:
        return None
    return retrieved, reference


def id_based_context_recall(sample: Mapping[str, Any]) -> float | None:
    """Share of the reference context ids that were retrieved.

    >>> id_based_context_recall({'retrieved_context_ids': [1, 'd9'],
    ...     'reference_context_ids': ['1', 'd2']})
    0.5
    """
    ids = _ids(sample)
    if ids is None or not ids[1]:
        return None
    retrieved, reference = ids
    return len(reference & retrieved) / len(reference)


def id_based_context_precision(sample: Mapping[str, Any]) -> float | None:
    """Share of the retrieved context ids that are reference ids.

    >>> id_based_context_precision({'retrieved_context_ids': ['d1', 'd9', 'd8', 'd7'],
    ...     'reference_context_ids': ['d1']})
    0.25
    """
    ids = _ids(sample)
    if ids is None or not ids[0]:
        return None
    retrieved, reference = ids
    return len(retrieved & reference) / len(retrieved)
