"""String metrics of the response against the reference: similarity, presence, raw equality.

Each needs a ``response`` and a ``reference`` and is not applicable (``None``) to a sample that
lacks either; with a list of references, the best over them counts. None of them normalises
the text (unlike :func:`ef.evaluation.exact_match`): they compare the strings as Ragas does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from ef.evaluation._rag import inputs as _inputs
from ef.evaluation._rag.extra import import_extra

__all__ = [
    "DISTANCE_MEASURES",
    "non_llm_string_similarity",
    "non_llm_string_similarity_hamming",
    "non_llm_string_similarity_jaro",
    "non_llm_string_similarity_jaro_winkler",
    "raw_exact_match",
    "similarity",
    "string_present",
]

DISTANCE_MEASURES = {
    "levenshtein": "Levenshtein",
    "hamming": "Hamming",
    "jaro": "Jaro",
    "jaro_winkler": "JaroWinkler",
}
"""Ragas' ``DistanceMeasure`` values → the ``rapidfuzz.distance`` class that computes each."""


@functools.cache
def _distance(measure: str) -> Any:
    if measure not in DISTANCE_MEASURES:
        raise ValueError(
            f"unknown distance measure {measure!r}; expected one of {', '.join(DISTANCE_MEASURES)}"
        )
    module = import_extra("rapidfuzz.distance", "rapidfuzz", "non_llm_string_similarity")
    return getattr(module, DISTANCE_MEASURES[measure])


def similarity(a: str, b: str, measure: str = "levenshtein") -> float:
    """``1 - normalized_distance(a, b)`` of ``rapidfuzz``, as Ragas' ``NonLLMStringSimilarity``.

    >>> similarity('kitten', 'sitting')
    0.5714285714285714
    >>> similarity('', '')
    1.0
    """
    return 1.0 - float(_distance(measure).normalized_distance(a, b))


def _best(sample: Mapping[str, Any], score: Callable[[str, str], float]) -> float | None:
    response = _inputs.response(sample)
    references = _inputs.references(sample)
    if response is None or references is None:
        return None
    return max(score(response, reference) for reference in references)


def non_llm_string_similarity(sample: Mapping[str, Any]) -> float | None:
    """Levenshtein similarity of the response and the reference (Ragas' default measure).

    >>> non_llm_string_similarity({'response': 'kitten', 'reference': 'sitting'})
    0.5714285714285714
    """
    return _best(sample, lambda response, reference: similarity(reference, response))


def non_llm_string_similarity_jaro_winkler(sample: Mapping[str, Any]) -> float | None:
    """Jaro-Winkler similarity of the response and the reference."""
    return _best(sample, lambda response, ref: similarity(ref, response, "jaro_winkler"))


def non_llm_string_similarity_jaro(sample: Mapping[str, Any]) -> float | None:
    """Jaro similarity of the response and the reference."""
    return _best(sample, lambda response, ref: similarity(ref, response, "jaro"))


def non_llm_string_similarity_hamming(sample: Mapping[str, Any]) -> float | None:
    """Hamming similarity of the response and the reference (the shorter one padded)."""
    return _best(sample, lambda response, ref: similarity(ref, response, "hamming"))


def string_present(sample: Mapping[str, Any]) -> float | None:
    """1.0 if the reference occurs in the response verbatim (case-sensitive), else 0.0.

    >>> string_present({'response': 'It is Paris.', 'reference': 'Paris'})
    1.0
    >>> string_present({'response': 'It is paris.', 'reference': 'Paris'})
    0.0
    """
    return _best(sample, lambda response, reference: float(reference in response))


def raw_exact_match(sample: Mapping[str, Any]) -> float | None:
    """1.0 if the response equals the reference character for character, else 0.0.

    Ragas' ``ExactMatch`` (named ``raw_exact_match`` here, since ``exact_match`` is the SQuAD
    metric that normalises case, punctuation and articles first).

    >>> raw_exact_match({'response': 'Paris', 'reference': 'paris'})
    0.0
    """
    return _best(sample, lambda response, reference: float(reference == response))
