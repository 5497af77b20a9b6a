"""N-gram overlap of the response with the reference: ROUGE, BLEU and chrF, as Ragas scores them.

Each metric needs a ``response`` and a ``reference`` and is not applicable (``None``) to a
sample that lacks either. With a list of references, the best score over them counts (as for
:func:`ef.evaluation.exact_match`); Ragas holds one reference string per sample, where the two
agree. The scorers come from the ``rag-metrics`` extra (``rouge-score`` and ``sacrebleu``),
imported on first use.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from ef.evaluation._rag import inputs as _inputs
from ef.evaluation._rag.extra import import_extra
from ef.evaluation._rag.lcs import lcs_length

__all__ = [
    "MAX_ROUGE_L_TOKENS",
    "bleu",
    "bleu_score",
    "chrf",
    "chrf_score",
    "rouge",
    "rouge1_score",
    "rouge2_score",
    "rouge_score",
]

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
MAX_ROUGE_L_TOKENS = 50_000
"""The most tokens ROUGE-L takes per text (response or reference): its time grows with the
product of the two lengths (about 10 s at the limit); a longer text is refused."""


@functools.cache
def _rouge_scorer(rouge_type: str) -> Any:
    module = import_extra("rouge_score.rouge_scorer", "rouge-score", "rouge_score")
    return module.RougeScorer([rouge_type], use_stemmer=True)


@functools.cache
def _rouge_tokenizer() -> Any:
    module = import_extra("rouge_score.tokenizers", "rouge-score", "rouge_score")
    return module.DefaultTokenizer(use_stemmer=True)


def _rouge_l(response: str, reference: str) -> float:
    """ROUGE-L's F-measure as ``rouge-score`` computes it, from an LCS kept in linear memory."""
    tokenize = _rouge_tokenizer().tokenize
    target, prediction = tokenize(reference), tokenize(response)
    for name, tokens in (("response", prediction), ("reference", target)):
        if len(tokens) > MAX_ROUGE_L_TOKENS:
            raise ValueError(
                f"the {name} has {len(tokens):,} tokens; ROUGE-L takes at most "
                f"{MAX_ROUGE_L_TOKENS:,} per text"
            )
    if not target or not prediction:
        return 0.0
    length = lcs_length(target, prediction)
    scoring = import_extra("rouge_score.scoring", "rouge-score", "rouge_score")
    return float(scoring.fmeasure(length / len(prediction), length / len(target)))


@functools.cache
def _sacrebleu() -> Any:
    return import_extra("sacrebleu", "sacrebleu", "bleu_score/chrf_score")


def rouge(response: str, reference: str, rouge_type: str = "rougeL") -> float:
    """The ROUGE F-measure of ``response`` against ``reference``, with Porter stemming.

    What Ragas' ``RougeScore`` computes (``rouge_score.rouge_scorer.RougeScorer([rouge_type],
    use_stemmer=True)``, mode ``fmeasure``). ``rouge_type`` is ``rouge1``, ``rouge2`` or
    ``rougeL``; Ragas offers ``rouge1`` and ``rougeL``, ``rouge2`` is the same scorer's.

    ROUGE-L is computed here, with the scorer's tokenizer and F-measure, from the length of
    the longest common subsequence kept in linear memory (the scorer's own table is quadratic:
    a gigabyte at 5,000 words); the values are the scorer's. It takes at most
    :data:`MAX_ROUGE_L_TOKENS` tokens per text.

    :raises ValueError: for an unknown ``rouge_type``, or a text longer than
        :data:`MAX_ROUGE_L_TOKENS` tokens for ROUGE-L.

    >>> rouge('the cat sat on the mat', 'the cat sat on a mat', 'rouge1')
    0.8333333333333334
    >>> rouge('the cat sat on the mat', 'the cat sat on a mat')
    0.8333333333333334
    """
    if rouge_type not in ROUGE_TYPES:
        raise ValueError(f"unknown ROUGE type {rouge_type!r}; expected one of {ROUGE_TYPES}")
    if rouge_type == "rougeL":
        return _rouge_l(response, reference)
    score = _rouge_scorer(rouge_type).score(reference, response)[rouge_type]
    return float(score.fmeasure)


def bleu(response: str, reference: str) -> float:
    """sacreBLEU of ``response`` against ``reference``, on the whole texts, scaled to [0, 1].

    ``sacrebleu.corpus_bleu([response], [[reference]]).score / 100`` with sacreBLEU's defaults
    (13a tokenisation, exponential smoothing). Ragas' ``BleuScore`` splits both texts on
    ``". "`` and, as sacreBLEU reads those lists, scores only the response's first sentence
    against each reference sentence; on one-sentence texts the two are equal (to 1e-9: a
    rounding error that would put the score above 1 is clipped here).

    >>> bleu('the cat sat on the mat', 'the cat sat on the mat')
    1.0
    """
    score = float(_sacrebleu().corpus_bleu([response], [[reference]]).score) / 100
    # sacreBLEU's 100 for identical texts can come out as 100.00000000000004: kept in [0, 1].
    return min(score, 1.0)


def chrf(response: str, reference: str) -> float:
    """sacreBLEU's chrF of ``response`` against ``reference``, scaled to [0, 1].

    ``0.0`` when either text is empty or only whitespace, as in Ragas' ``ChrfScore`` (which
    says so explicitly; sacreBLEU already scores those texts 0).

    >>> chrf('the cat', '   ')
    0.0
    """
    return min(float(_sacrebleu().corpus_chrf([response], [[reference]]).score) / 100, 1.0)


def _best(sample: Mapping[str, Any], score: Callable[..., float], *args: str) -> float | None:
    """The best of ``score(response, reference, *args)`` over the references; None without."""
    response = _inputs.response(sample)
    references = _inputs.references(sample)
    if response is None or references is None:
        return None
    return max(score(response, reference, *args) for reference in references)


def rouge_score(sample: Mapping[str, Any]) -> float | None:
    """ROUGE-L F-measure of the response against the reference (Ragas' ``rouge_score``)."""
    return _best(sample, rouge, "rougeL")


def rouge1_score(sample: Mapping[str, Any]) -> float | None:
    """ROUGE-1 F-measure of the response against the reference (unigram overlap)."""
    return _best(sample, rouge, "rouge1")


def rouge2_score(sample: Mapping[str, Any]) -> float | None:
    """ROUGE-2 F-measure of the response against the reference (bigram overlap)."""
    return _best(sample, rouge, "rouge2")


def bleu_score(sample: Mapping[str, Any]) -> float | None:
    """sacreBLEU of the whole response against the reference, in [0, 1] (Ragas' ``bleu_score``)."""
    return _best(sample, bleu)


def chrf_score(sample: Mapping[str, Any]) -> float | None:
    """sacreBLEU's chrF of the response against the reference, in [0, 1] (``chrf_score``)."""
    return _best(sample, chrf)
