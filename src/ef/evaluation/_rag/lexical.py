"""Lexical answer metrics: SQuAD v1.1 normalisation, exact match, token F1, context overlap.

Every metric compares *normalised* text, exactly as the official SQuAD v1.1 evaluation script
does (``normalize_answer``): lowercase, delete the ASCII punctuation characters of
:data:`string.punctuation`, remove the words ``a`` / ``an`` / ``the``, collapse whitespace. There is
no Unicode folding: accents, non-ASCII punctuation and full-width forms are kept as they are, and
word boundaries and whitespace are Python's Unicode-aware ones, as in the official script.

:func:`exact_match` and :func:`token_f1` also accept a list of references and return the best
score over them, as every QA benchmark does; an empty list raises :class:`ValueError`.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence

__all__ = [
    "context_precision",
    "context_recall",
    "exact_match",
    "normalize_answer",
    "token_f1",
]

_PUNCTUATION = str.maketrans("", "", string.punctuation)
# Unicode-aware \b on purpose: the official script applies this very pattern to ``str``.
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def _tokens(text: str) -> list[str]:
    """The whitespace tokens of the SQuAD-normalised ``text``."""
    return _ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split()


def normalize_answer(text: str) -> str:
    """Normalise ``text`` the SQuAD v1.1 way, the form every metric here compares.

    Lowercase, delete ASCII punctuation, remove the articles ``a`` / ``an`` / ``the``, collapse
    runs of whitespace to one space (stripping both ends).

    :param text: the text to normalise.
    :returns: the normalised text.

    >>> normalize_answer('  The Eiffel-Tower, in  Paris! ')
    'eiffeltower in paris'
    """
    return " ".join(_tokens(text))


def _references(response: str, reference: str | Sequence[str]) -> Sequence[str]:
    """``reference`` as a non-empty sequence of strings (a bare string is one reference)."""
    if not isinstance(response, str):
        raise TypeError(f"response must be a string, got {type(response).__name__}")
    if isinstance(reference, str):
        return (reference,)
    if not isinstance(reference, Sequence) or not all(isinstance(r, str) for r in reference):
        raise TypeError(f"reference must be a string or a list of strings, got {reference!r:.80}")
    if not reference:
        raise ValueError("reference must be a string or a non-empty list of strings, got []")
    return reference


def exact_match(response: str, reference: str | Sequence[str]) -> float:
    """``1.0`` if ``response`` equals ``reference`` after normalization, else ``0.0``.

    Normalization is SQuAD v1.1's (:func:`normalize_answer`). Given a list of references, the
    result is the best match over them — ``1.0`` if ``response`` matches any. Following SQuAD
    v1.1, a ``response`` and a ``reference`` that both normalise to nothing (``''``, ``'the'``,
    ``'?!'``) match: ``1.0``.

    :param response: the generated answer.
    :param reference: the ground-truth answer, or a list of acceptable answers.
    :returns: ``1.0`` or ``0.0`` (a float, never a bool).
    :raises ValueError: if ``reference`` is an empty list.
    :raises TypeError: if ``response`` is not a string, or ``reference`` neither a string nor a
        list of strings.

    >>> exact_match('The Eiffel Tower', 'eiffel tower')
    1.0
    >>> exact_match('Paris', 'London')
    0.0
    """
    references = _references(response, reference)
    normalized = normalize_answer(response)
    return 1.0 if any(normalize_answer(ref) == normalized for ref in references) else 0.0


def _f1(response_counts: Counter[str], n_response: int, reference: str) -> float:
    """SQuAD v1.1 ``f1_score`` with the response already tokenised and counted."""
    reference_tokens = _tokens(reference)
    n_same = sum((response_counts & Counter(reference_tokens)).values())
    if n_same == 0:
        return 0.0
    precision = n_same / n_response
    recall = n_same / len(reference_tokens)
    return (2 * precision * recall) / (precision + recall)


def token_f1(response: str, reference: str | Sequence[str]) -> float:
    """Token-overlap F1 of ``response`` against ``reference`` (the SQuAD F1).

    The harmonic mean of token precision and recall over the normalized token bags — a graded
    credit where :func:`exact_match` is all-or-nothing.

    Precisely (SQuAD v1.1 ``f1_score``): tokens are the whitespace-separated words of the
    normalised texts, counted with multiplicity; with ``c`` common tokens (the size of the bags'
    intersection), ``precision = c / len(response_tokens)``, ``recall = c /
    len(reference_tokens)``, and the score is ``0.0`` when ``c == 0``. So, as in SQuAD v1.1, two
    texts that both normalise to nothing score ``0.0`` here although :func:`exact_match` gives
    them ``1.0``. Given a list of references, the result is the best F1 over them.

    :param response: the generated answer.
    :param reference: the ground-truth answer, or a list of acceptable answers.
    :returns: the F1 score, in ``[0, 1]``.
    :raises ValueError: if ``reference`` is an empty list.
    :raises TypeError: if ``response`` is not a string, or ``reference`` neither a string nor a
        list of strings.

    >>> token_f1('the quick brown fox', 'a quick brown fox')
    1.0
    >>> round(token_f1('quick brown fox', 'quick brown dog'), 4)
    0.6667
    """
    references = _references(response, reference)
    response_tokens = _tokens(response)
    counts = Counter(response_tokens)
    return max(_f1(counts, len(response_tokens), ref) for ref in references)


def _context_token_sets(retrieved_contexts: Iterable[str]) -> list[set[str]]:
    if isinstance(retrieved_contexts, str):
        raise TypeError(
            "retrieved_contexts must be a list of strings, got a single string (wrap it in a list)"
        )
    return [set(_tokens(context)) for context in retrieved_contexts]


def context_recall(reference: str, retrieved_contexts: Sequence[str]) -> float:
    """Lexical recall of the ``reference`` tokens by the retrieved contexts.

    The fraction of the (normalized) reference's distinct tokens that appear anywhere in
    ``retrieved_contexts`` — a deterministic *proxy* for "did retrieval surface the information
    the answer needs". For the LLM-judged context recall, use :func:`as_ragas_dataset` and
    Ragas.

    Precisely: ``|R ∩ C| / |R|`` with ``R`` the set of the reference's normalised tokens and
    ``C`` the union of the contexts' normalised tokens (whole tokens, not substrings). Edge
    cases: no contexts score ``0.0``; a reference that normalises to nothing (``''``, ``'the'``)
    has no token to recall and scores ``0.0``, like SQuAD's F1 on an empty answer.

    :param reference: the ground-truth answer.
    :param retrieved_contexts: the context passages retrieved for the question.
    :returns: the recall, in ``[0, 1]``.
    :raises TypeError: if ``retrieved_contexts`` is a single string rather than a list.

    >>> context_recall('paris france', ['Paris is the capital of France.'])
    1.0
    >>> context_recall('paris france', ['London is in England.'])
    0.0
    """
    context_sets = _context_token_sets(retrieved_contexts)
    reference_tokens = set(_tokens(reference))
    if not reference_tokens or not context_sets:
        return 0.0
    surfaced = reference_tokens.intersection(set().union(*context_sets))
    return len(surfaced) / len(reference_tokens)


def context_precision(reference: str, retrieved_contexts: Sequence[str]) -> float:
    """Fraction of the retrieved contexts that lexically overlap the ``reference``.

    A deterministic *proxy* for retrieval precision — a context counts as useful if it shares at
    least one (normalized) token with the reference answer.

    Precisely: the number of contexts whose normalised token set intersects the reference's,
    divided by the number of contexts (a repeated context counts each time). Edge cases: no
    contexts score ``0.0``; a reference that normalises to nothing overlaps no context and
    scores ``0.0``.

    :param reference: the ground-truth answer.
    :param retrieved_contexts: the context passages retrieved for the question.
    :returns: the precision, in ``[0, 1]``.
    :raises TypeError: if ``retrieved_contexts`` is a single string rather than a list.

    >>> context_precision('paris', ['Paris is in France.', 'Unrelated text.'])
    0.5
    """
    context_sets = _context_token_sets(retrieved_contexts)
    if not context_sets:
        return 0.0
    reference_tokens = set(_tokens(reference))
    useful = sum(1 for tokens in context_sets if not reference_tokens.isdisjoint(tokens))
    return useful / len(context_sets)
