"""The lexical answer metrics agree with the official SQuAD v1.1 evaluation script."""

from __future__ import annotations

import re
import string
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation._rag.lexical import (
    context_precision,
    context_recall,
    exact_match,
    normalize_answer,
    token_f1,
)

# --- The oracle: the official SQuAD v1.1 ``evaluate-v1.1.py``, transcribed as published. ---


def squad_normalize_answer(s: str) -> str:
    """Lower text and remove punctuation, articles and extra whitespace."""

    def remove_articles(text: str) -> str:
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text: str) -> str:
        return " ".join(text.split())

    def remove_punc(text: str) -> str:
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text: str) -> str:
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def squad_f1_score(prediction: str, ground_truth: str) -> float:
    prediction_tokens = squad_normalize_answer(prediction).split()
    ground_truth_tokens = squad_normalize_answer(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    f1 = (2 * precision * recall) / (precision + recall)
    return f1


def squad_exact_match_score(prediction: str, ground_truth: str) -> bool:
    return squad_normalize_answer(prediction) == squad_normalize_answer(ground_truth)


def squad_metric_max_over_ground_truths(metric_fn, prediction, ground_truths):  # type: ignore[no-untyped-def]
    scores_for_ground_truths = []
    for ground_truth in ground_truths:
        score = metric_fn(prediction, ground_truth)
        scores_for_ground_truths.append(score)
    return max(scores_for_ground_truths)


# --- Strategies: text rich in what normalisation touches. ---

_WORDS = "a an the The THE A An them another theatre banana paris Paris fox Fox quick brown"
_UNICODE = "é É ß İ Σ ﬁ — – “ ” « » 。 ， ！ Ａ ａ the—end a’s l'the the_a 1 42 3.14"
_PIECES = [
    *_WORDS.split(),
    *_UNICODE.split(),
    *string.punctuation,
    *[" ", "  ", "\t", "\n", "\u00a0", "\u2003"],
]
answer_text = st.one_of(
    st.lists(st.sampled_from(_PIECES), max_size=12).map("".join),
    st.lists(st.sampled_from(_PIECES), max_size=6).map(" ".join),
    st.text(max_size=20),
)
reference_lists = st.lists(answer_text, min_size=1, max_size=4)


@given(answer_text)
def test_normalize_answer_matches_squad(text: str) -> None:
    assert normalize_answer(text) == squad_normalize_answer(text)


@given(answer_text, answer_text)
def test_exact_match_matches_squad(response: str, reference: str) -> None:
    expected = 1.0 if squad_exact_match_score(response, reference) else 0.0
    result = exact_match(response, reference)
    assert type(result) is float
    assert result == expected


@given(answer_text, answer_text)
def test_token_f1_matches_squad(response: str, reference: str) -> None:
    result = token_f1(response, reference)
    assert type(result) is float
    assert result == pytest.approx(squad_f1_score(response, reference), abs=1e-9)
    assert 0.0 <= result <= 1.0


@given(answer_text, reference_lists)
def test_list_of_references_takes_the_max_like_squad(response: str, references: list[str]) -> None:
    expected_em = squad_metric_max_over_ground_truths(squad_exact_match_score, response, references)
    expected_f1 = squad_metric_max_over_ground_truths(squad_f1_score, response, references)
    assert exact_match(response, references) == (1.0 if expected_em else 0.0)
    assert token_f1(response, references) == pytest.approx(expected_f1, abs=1e-9)
    assert token_f1(response, tuple(references)) == token_f1(response, references)


@given(answer_text)
def test_identical_texts_match_exactly(text: str) -> None:
    assert exact_match(text, text) == 1.0
    expected_f1 = 1.0 if normalize_answer(text) else 0.0
    assert token_f1(text, text) == expected_f1


@pytest.mark.parametrize(
    ("response", "reference"), [("", ""), ("the", ""), ("?!", "a an the"), (" ", "...")]
)
def test_texts_normalising_to_nothing_follow_squad(response: str, reference: str) -> None:
    # SQuAD v1.1: both empty → EM 1.0 but F1 0.0 (no common token).
    assert exact_match(response, reference) == 1.0
    assert token_f1(response, reference) == 0.0


def test_one_side_empty_scores_zero() -> None:
    assert exact_match("", "paris") == 0.0
    assert token_f1("", "paris") == 0.0
    assert token_f1("paris", "the") == 0.0


def test_no_unicode_folding() -> None:
    assert exact_match("café", "cafe") == 0.0
    assert exact_match("Ｐａｒｉｓ", "paris") == 0.0
    # Non-ASCII punctuation is kept, so it changes tokens.
    assert exact_match("“paris”", "paris") == 0.0
    assert exact_match('"paris"', "paris") == 1.0


def test_articles_are_whole_words_only() -> None:
    assert normalize_answer("The theatre and another banana") == "theatre and another banana"
    assert normalize_answer("the-end") == "theend"


@pytest.mark.parametrize("metric", [exact_match, token_f1])
def test_empty_reference_list_is_rejected(metric) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="non-empty list"):
        metric("paris", [])


def test_token_f1_counts_token_multiplicity() -> None:
    # Bags, not sets: one common 'paris' out of two in the response.
    assert token_f1("paris paris", "paris") == pytest.approx(squad_f1_score("paris paris", "paris"))
    assert token_f1("paris paris", "paris") == pytest.approx(2 * 0.5 * 1.0 / 1.5)


# --- context_recall / context_precision: token-set overlap with the normalised reference. ---


def oracle_context_recall(reference: str, contexts: list[str]) -> float:
    wanted = set(squad_normalize_answer(reference).split())
    if not wanted or not contexts:
        return 0.0
    seen: set[str] = set()
    for context in contexts:
        seen.update(squad_normalize_answer(context).split())
    return len(wanted & seen) / len(wanted)


def oracle_context_precision(reference: str, contexts: list[str]) -> float:
    if not contexts:
        return 0.0
    wanted = set(squad_normalize_answer(reference).split())
    useful = [c for c in contexts if wanted & set(squad_normalize_answer(c).split())]
    return len(useful) / len(contexts)


context_lists = st.lists(answer_text, max_size=5)


@given(answer_text, context_lists)
def test_context_metrics_match_the_token_set_definition(
    reference: str, contexts: list[str]
) -> None:
    recall = context_recall(reference, contexts)
    precision = context_precision(reference, contexts)
    assert type(recall) is float
    assert type(precision) is float
    assert recall == pytest.approx(oracle_context_recall(reference, contexts), abs=1e-12)
    assert precision == pytest.approx(oracle_context_precision(reference, contexts), abs=1e-12)
    assert 0.0 <= recall <= 1.0
    assert 0.0 <= precision <= 1.0


@settings(max_examples=50)
@given(answer_text, context_lists, answer_text)
def test_context_recall_never_drops_when_a_context_is_added(
    reference: str, contexts: list[str], extra: str
) -> None:
    assert context_recall(reference, [*contexts, extra]) >= context_recall(reference, contexts)


@given(answer_text)
def test_the_reference_itself_recalls_everything(reference: str) -> None:
    expected = 1.0 if normalize_answer(reference) else 0.0
    assert context_recall(reference, [reference]) == expected
    assert context_precision(reference, [reference, reference]) == expected


def test_context_metric_edge_cases() -> None:
    assert context_recall("paris", []) == 0.0
    assert context_precision("paris", []) == 0.0
    # A reference with no tokens left has nothing to recall or overlap: 0.0, not 0/0.
    assert context_recall("the", ["the capital"]) == 0.0
    assert context_precision("", ["the capital"]) == 0.0
    # Whole tokens, not substrings.
    assert context_recall("par", ["Paris"]) == 0.0
    # Each copy of a repeated context counts.
    assert context_precision("paris", ["Paris", "Paris", "Rome"]) == pytest.approx(2 / 3)
    # Recall counts distinct reference tokens.
    assert context_recall("paris paris rome", ["Paris!"]) == 0.5


@pytest.mark.parametrize("metric", [context_recall, context_precision])
def test_a_bare_string_of_contexts_is_rejected(metric) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError, match="list of strings"):
        metric("paris", "Paris is in France.")


@pytest.mark.parametrize("metric", [exact_match, token_f1])
def test_non_string_answers_are_rejected(metric) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError, match="response must be a string"):
        metric(None, "paris")
    with pytest.raises(TypeError, match="reference must be a string or a list of strings"):
        metric("paris", None)
    with pytest.raises(TypeError, match="reference must be a string or a list of strings"):
        metric("paris", ["paris", 3])
