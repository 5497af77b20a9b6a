"""The built-in RAG metrics, each scoring one sample: ``fn(sample) -> float | None``.

``None`` means *not applicable* (a reference-based metric on a sample without a ``reference``,
an answer metric on one without a ``response``), so the sample is left out of that metric's mean
and coverage. Each is the public lexical
function of the same name (``exact_match(response, reference)``, …) applied to a sample's
fields; ``_builtins`` registers them under those names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ef.evaluation._rag import inputs as _inputs
from ef.evaluation._rag import lexical as _lexical
from ef.evaluation._types import RagMetricFn

__all__ = [
    "BUILTIN_RAG_METRICS",
    "sample_context_precision",
    "sample_context_recall",
    "sample_exact_match",
    "sample_non_empty_rate",
    "sample_token_f1",
]


def sample_exact_match(sample: Mapping[str, Any]) -> float | None:
    """Exact match of the response with the reference (the best over a list); None lacking either.

    See :func:`ef.evaluation.exact_match`.

    >>> sample_exact_match({'response': 'Paris', 'reference': ['paris', 'Paris, France']})
    1.0
    """
    references = _inputs.references(sample)
    response = _inputs.response(sample)
    if references is None or response is None:
        return None
    return _lexical.exact_match(response, references)


def sample_token_f1(sample: Mapping[str, Any]) -> float | None:
    """Token F1 of the response against the reference (the best over a list); None lacking either.

    See :func:`ef.evaluation.token_f1`.

    >>> sample_token_f1({'response': 'Paris', 'retrieved_contexts': []}) is None
    True
    """
    references = _inputs.references(sample)
    response = _inputs.response(sample)
    if references is None or response is None:
        return None
    return _lexical.token_f1(response, references)


def sample_context_recall(sample: Mapping[str, Any]) -> float | None:
    """Lexical recall of the reference tokens by the retrieved contexts; None without a reference.

    See :func:`ef.evaluation.context_recall`. With a list of references, the best over them.

    >>> sample_context_recall({'reference': 'paris', 'retrieved_contexts': ['Paris, France']})
    1.0
    """
    references = _inputs.references(sample)
    if references is None:
        return None
    contexts = _inputs.retrieved_contexts(sample)
    return max(_lexical.context_recall(ref, contexts) for ref in references)


def sample_context_precision(sample: Mapping[str, Any]) -> float | None:
    """Share of the retrieved contexts that overlap the reference; None without a reference.

    See :func:`ef.evaluation.context_precision`. With a list of references, the best over them.

    >>> sample_context_precision({'reference': 'paris', 'retrieved_contexts': ['Paris', 'Rome']})
    0.5
    """
    references = _inputs.references(sample)
    if references is None:
        return None
    contexts = _inputs.retrieved_contexts(sample)
    return max(_lexical.context_precision(ref, contexts) for ref in references)


def sample_non_empty_rate(sample: Mapping[str, Any]) -> float:
    """1.0 if the sample retrieved any context, else 0.0; applies to every sample.

    Averaged over the samples, this is the share of questions for which retrieval returned
    something.

    >>> sample_non_empty_rate({'response': 'x', 'retrieved_contexts': []})
    0.0
    """
    return 1.0 if _inputs.retrieved_contexts(sample) else 0.0


BUILTIN_RAG_METRICS: dict[str, RagMetricFn] = {
    "exact_match": sample_exact_match,
    "token_f1": sample_token_f1,
    "context_recall": sample_context_recall,
    "context_precision": sample_context_precision,
    "non_empty_rate": sample_non_empty_rate,
}
"""The built-in RAG metrics, by the name used in ``metrics=`` and in report keys."""
