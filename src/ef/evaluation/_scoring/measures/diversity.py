"""The intent-aware (diversity) measures of the TREC Web track, as ndeval computes them.

Each reads the query's judgements per subtopic (:mod:`~.subtopics`) and its ranking. A document
at rank ``i`` (0-based) gains, for each subtopic it is relevant to, ``(1 - alpha)**c`` where
``c`` counts the documents above it relevant to that subtopic: redundancy is discounted.

- ``alpha_DCG@k``: Σ gain / log2(i + 2) over the top k, divided by the same sum for an "ideal
  ideal" ranking that covers every subtopic at every rank (ndeval's collection-independent
  normalisation); ``alpha_nDCG@k``: the DCG over that of ndeval's greedy ideal ranking.
- ``ERR_IA@k``: Σ gain / (i + 1), normalised as alpha-DCG; ``nERR_IA@k`` over the ideal's.
- ``NRBP``: ``(1 - (1 - alpha) · beta) / N · Σ gain · beta**i`` over the whole ranking, ``N``
  the subtopics a document is relevant to; ``nNRBP`` over the ideal's.
- ``P_IA@k``: the (document, subtopic) relevances in the top k over ``k · N``;
  ``StRecall@k``: the subtopics covered in the top k over ``N``; ``AP_IA``: AP per subtopic,
  averaged over the ``N`` subtopics.

All are 0 for a query whose documents are relevant to no subtopic. Two deliberate differences
from ndeval, which computes only the top 20 and leaves rank 1 unnormalised: any cutoff is
computed, and ``alpha_DCG@1`` and ``ERR_IA@1`` are normalised as at every other rank (ndeval
reports them ``N`` times larger, above 1; the ratios ``alpha_nDCG@1``, ``nERR_IA@1`` agree).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ef.evaluation._scoring.measures.subtopics import Intents, intents_of
from ef.evaluation._scoring.measures.summary import QueryFacts

__all__ = [
    "alpha_dcg",
    "alpha_ndcg",
    "ap_ia",
    "err_ia",
    "nerr_ia",
    "nnrbp",
    "nrbp",
    "p_ia",
    "subtopic_recall",
]

Discount = Callable[[int], float]
_LOG2 = math.log(2.0)


def _log_discount(i: int) -> float:
    return 1.0 if i == 0 else _LOG2 / math.log(i + 2.0)


def _reciprocal(i: int) -> float:
    return 1.0 / (i + 1)


def _top(facts: QueryFacts, k: int | None) -> list[str]:
    ranked = facts.ranked
    return list(ranked if k is None else ranked[:k])


def _run_gains(facts: QueryFacts, intents: Intents, alpha: float, k: int | None) -> list[float]:
    """The novelty-discounted gain at each of the top ``k`` ranks of the query's ranking."""
    covers = intents.covers
    weight = [1.0] * intents.n_subtopics
    keep = 1.0 - alpha
    gains: list[float] = []
    for doc_id in _top(facts, k):
        gain = 0.0
        for j in covers.get(doc_id, ()):
            gain += weight[j]
            weight[j] *= keep
        gains.append(gain)
    return gains


def _discounted(gains: list[float], k: int, discount: Discount) -> float:
    total = 0.0
    for i, gain in enumerate(gains[:k]):
        total += gain * discount(i)
    return total


def _ideal_ideal(n_subtopics: int, alpha: float, k: int, discount: Discount) -> float:
    """Every subtopic covered at every rank: ndeval's collection-independent normaliser."""
    total, gain = 0.0, float(n_subtopics)
    for i in range(k):
        total += gain * discount(i)
        gain *= 1.0 - alpha
    return total


def _normalised(facts: QueryFacts, k: int, alpha: float, discount: Discount, name: str) -> float:
    intents = intents_of(facts, name)
    if not intents.n_subtopics:
        return 0.0
    run = _discounted(_run_gains(facts, intents, alpha, k), k, discount)
    return run / _ideal_ideal(intents.n_subtopics, alpha, k, discount)


def _over_ideal(facts: QueryFacts, k: int, alpha: float, discount: Discount, name: str) -> float:
    intents = intents_of(facts, name)
    if not intents.n_subtopics:
        return 0.0
    run = _discounted(_run_gains(facts, intents, alpha, k), k, discount)
    if not run:
        return 0.0
    return run / _discounted(intents.ideal_gains(alpha), k, discount)


def alpha_dcg(facts: QueryFacts, k: int, alpha: float) -> float:
    """alpha-DCG@k (Clarke et al., SIGIR 2008), ndeval's normalisation."""
    return _normalised(facts, k, alpha, _log_discount, "alpha_DCG")


def alpha_ndcg(facts: QueryFacts, k: int, alpha: float) -> float:
    """alpha-nDCG@k (Clarke et al., SIGIR 2008): alpha-DCG over that of the ideal ranking.

    >>> from ef.evaluation._scoring.measures.summary import facts_from_ranking
    >>> from ef.evaluation._scoring.measures.subtopics import subtopic_judgements
    >>> qrels = subtopic_judgements({'q': {'1': {'a': 1, 'b': 1}, '2': {'c': 1}}})
    >>> round(alpha_ndcg(facts_from_ranking(['a', 'c', 'b'], qrels['q']), 3, 0.5), 6)
    1.0
    >>> round(alpha_ndcg(facts_from_ranking(['a', 'b', 'c'], qrels['q']), 3, 0.5), 6)
    0.965195
    """
    return _over_ideal(facts, k, alpha, _log_discount, "alpha_nDCG")


def err_ia(facts: QueryFacts, k: int, alpha: float) -> float:
    """Intent-aware ERR@k (Chapelle et al., CIKM 2009), ndeval's normalisation."""
    return _normalised(facts, k, alpha, _reciprocal, "ERR_IA")


def nerr_ia(facts: QueryFacts, k: int, alpha: float) -> float:
    """Intent-aware ERR@k over that of the ideal ranking."""
    return _over_ideal(facts, k, alpha, _reciprocal, "nERR_IA")


def _rbp_sum(gains: list[float], beta: float) -> float:
    total, decay = 0.0, 1.0
    for gain in gains:
        total += gain * decay
        decay *= beta
    return total


def nrbp(facts: QueryFacts, alpha: float, beta: float) -> float:
    """Novelty- and rank-biased precision (Clarke et al., ICTIR 2009), over the whole ranking."""
    intents = intents_of(facts, "NRBP")
    if not intents.n_subtopics:
        return 0.0
    total = _rbp_sum(_run_gains(facts, intents, alpha, None), beta)
    return total * ((1.0 - (1.0 - alpha) * beta) / intents.n_subtopics)


def nnrbp(facts: QueryFacts, alpha: float, beta: float) -> float:
    """NRBP over that of the ideal ranking."""
    intents = intents_of(facts, "nNRBP")
    if not intents.n_subtopics:
        return 0.0
    run = _rbp_sum(_run_gains(facts, intents, alpha, None), beta)
    return run / _rbp_sum(intents.ideal_gains(alpha), beta)


def p_ia(facts: QueryFacts, k: int) -> float:
    """Intent-aware precision@k: relevances to subtopics in the top k, over ``k · N``."""
    intents = intents_of(facts, "P_IA")
    if not intents.n_subtopics:
        return 0.0
    covers = intents.covers
    count = 0
    for doc_id in _top(facts, k):
        count += len(covers.get(doc_id, ()))
    return count / (k * intents.n_subtopics)


def subtopic_recall(facts: QueryFacts, k: int) -> float:
    """Subtopic recall@k: the subtopics covered by the top k, over ``N``."""
    intents = intents_of(facts, "StRecall")
    if not intents.n_subtopics:
        return 0.0
    covers = intents.covers
    seen: set[int] = set()
    for doc_id in _top(facts, k):
        seen.update(covers.get(doc_id, ()))
    return len(seen) / intents.n_subtopics


def ap_ia(facts: QueryFacts) -> float:
    """Intent-aware AP: each subtopic's average precision, averaged over the ``N`` subtopics."""
    intents = intents_of(facts, "AP_IA")
    if not intents.n_subtopics:
        return 0.0
    covers = intents.covers
    found = [0] * intents.n_subtopics
    totals = [0.0] * intents.n_subtopics
    for i, doc_id in enumerate(facts.ranked):
        for j in covers.get(doc_id, ()):
            found[j] += 1
            totals[j] += found[j] / (i + 1)
    total = 0.0
    for j, relevant in enumerate(intents.n_relevant):
        if relevant:
            total += totals[j] / relevant
    return total / intents.n_subtopics
