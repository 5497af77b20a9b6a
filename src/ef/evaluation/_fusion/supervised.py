"""The supervised fusion methods: trained on judged queries, then applied query by query.

Training sees *hit lists*: for each run and each training query, ``1`` or ``0`` at each rank as
the doc there is relevant (grade > 0) or not. The training queries are the judged queries with
a positive judgement (the queries ``evaluate_run`` scores); a run that misses one has an empty
hit list for it. What training returns is an ordinary parameter of the method (``probs``,
``log_odds``, ``map_scores``), so a model trained on one set of queries fuses another.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

from ef.evaluation._fusion._inputs import Ranking
from ef.evaluation._fusion.methods import combine_sum
from ef.evaluation._scoring.cutoffs import AP, WHOLE, values_at

__all__ = [
    "BAYES_CUTOFFS",
    "SEGFUSE_BOUNDS",
    "HitLists",
    "bayesfuse",
    "mapfuse",
    "posfuse",
    "probfuse",
    "segfuse",
    "slidefuse",
    "train_bayesfuse",
    "train_mapfuse",
    "train_position_probs",
    "train_probfuse",
    "train_segfuse",
]

HitLists = Sequence[Sequence[Sequence[int]]]
"""``hits[run][query]``: 1 or 0 per rank of that run's ranking of that training query."""


def _check_probs(name: str, probs: Any, n_runs: int) -> list[list[float]]:
    if not isinstance(probs, Sequence) or len(probs) != n_runs:
        raise ValueError(f"{name} must hold one sequence of numbers per run ({n_runs} runs)")
    checked = [[float(p) for p in run_probs] for run_probs in probs]
    if not all(math.isfinite(p) for run_probs in checked for p in run_probs):
        raise ValueError(f"{name} must be finite numbers")
    return checked


# ProbFuse ---------------------------------------------------------------------------------


def train_probfuse(hits: HitLists, *, n_segments: int) -> dict[str, Any]:
    """Per run, the mean over queries of the share of relevant docs in each of ``n_segments``
    equal segments of the query's ranking (Lillis et al., 2006)."""
    probs: list[list[float]] = []
    for run_hits in hits:
        segment_probs = [0.0] * n_segments
        for hit_list in run_hits:
            size = math.ceil(len(hit_list) / n_segments)
            for k in range(n_segments):
                segment = hit_list[k * size : (k + 1) * size]
                if segment:
                    segment_probs[k] += sum(segment) / len(segment)
        probs.append([p / len(run_hits) if run_hits else 0.0 for p in segment_probs])
    return {"probs": probs}


def probfuse(
    rankings: Sequence[Ranking], *, probs: Sequence[Sequence[float]], n_segments: int | None = None
) -> dict[str, float]:
    """ProbFuse: Σ P(relevant | segment k) / (k + 1), each ranking cut into as many equal
    segments as the run has probabilities."""
    checked = _check_probs("probs", probs, len(rankings))
    scored: list[Ranking] = []
    for ranking, segment_probs in zip(rankings, checked, strict=True):
        n = len(ranking)
        if not segment_probs:
            raise ValueError("probs must hold at least one segment probability per run")
        size = math.ceil(n / len(segment_probs)) if n else 1
        scored.append(
            {doc: segment_probs[i // size] / (i // size + 1) for i, doc in enumerate(ranking)}
        )
    return combine_sum(scored)


# SegFuse ----------------------------------------------------------------------------------

SEGFUSE_BOUNDS = (0, 5, 15, 35, 75, 155, 315, 635, 1275, 2555, 5115)
"""Segment k of SegFuse holds ranks [bounds[k], bounds[k+1]): sizes 10 · 2^(k-1) - 5 apart."""


def train_segfuse(hits: HitLists) -> dict[str, Any]:
    """Per run and segment, the mean over queries of relevant docs / the segment's size
    (Shokouhi, 2007)."""
    probs: list[list[float]] = []
    n_segments = len(SEGFUSE_BOUNDS) - 1
    for run_hits in hits:
        segment_probs = [0.0] * n_segments
        for hit_list in run_hits:
            for k in range(n_segments):
                start, end = SEGFUSE_BOUNDS[k], SEGFUSE_BOUNDS[k + 1]
                segment_probs[k] += sum(hit_list[start:end]) / (end - start)
        probs.append([p / len(run_hits) if run_hits else 0.0 for p in segment_probs])
    return {"probs": probs}


def segfuse(rankings: Sequence[Ranking], *, probs: Sequence[Sequence[float]]) -> dict[str, float]:
    """SegFuse: Σ P(relevant | segment of the doc's rank) × (score + 1); 0 past rank 5,115."""
    checked = _check_probs("probs", probs, len(rankings))
    scored: list[Ranking] = []
    for ranking, segment_probs in zip(rankings, checked, strict=True):
        by_rank = [0.0] * len(ranking)
        for k, prob in enumerate(segment_probs[: len(SEGFUSE_BOUNDS) - 1]):
            start, end = SEGFUSE_BOUNDS[k], min(SEGFUSE_BOUNDS[k + 1], len(ranking))
            by_rank[start:end] = [prob] * max(end - start, 0)
        scored.append(
            {doc: by_rank[i] * (score + 1) for i, (doc, score) in enumerate(ranking.items())}
        )
    return combine_sum(scored)


# Position probabilities: SlideFuse and PosFuse ---------------------------------------------


def train_position_probs(hits: HitLists) -> dict[str, Any]:
    """Per run and rank, the share of the queries ranked that deep whose doc there is relevant
    (Lillis et al., 2008 and 2010)."""
    probs: list[list[float]] = []
    for run_hits in hits:
        depth = max(map(len, run_hits), default=0)
        relevant = [0] * depth
        ranked = [0] * depth
        for hit_list in run_hits:
            for i, hit in enumerate(hit_list):
                ranked[i] += 1
                relevant[i] += hit
        probs.append([r / n for r, n in zip(relevant, ranked, strict=True)])
    return {"probs": probs}


def slidefuse(
    rankings: Sequence[Ranking], *, probs: Sequence[Sequence[float]], w: int
) -> dict[str, float]:
    """SlideFuse: Σ the mean of the position probabilities within ``w`` ranks of the doc's.

    Ranks deeper than the training saw count as probability 0 in the window, as in ranx.
    """
    checked = _check_probs("probs", probs, len(rankings))
    scored: list[Ranking] = []
    for ranking, position_probs in zip(rankings, checked, strict=True):
        n = len(ranking)
        prefix = [0.0]
        for p in position_probs:
            prefix.append(prefix[-1] + p)
        top = len(position_probs)
        values: dict[str, float] = {}
        for p, doc in enumerate(ranking):
            a, b = max(p - w, 0), min(p + w, n - 1)
            values[doc] = (prefix[min(b + 1, top)] - prefix[min(a, top)]) / (b - a + 1)
        scored.append(values)
    return combine_sum(scored)


def posfuse(rankings: Sequence[Ranking], *, probs: Sequence[Sequence[float]]) -> dict[str, float]:
    """PosFuse: Σ P(relevant | the doc's rank); 0 past the deepest rank training saw."""
    checked = _check_probs("probs", probs, len(rankings))
    scored = [
        dict(
            zip(
                ranking, position_probs + [0.0] * (len(ranking) - len(position_probs)), strict=False
            )
        )
        for ranking, position_probs in zip(rankings, checked, strict=True)
    ]
    return combine_sum(scored)


# BayesFuse --------------------------------------------------------------------------------

BAYES_CUTOFFS = (0, 5, 10, 15, 20, 30, 100, 200, 500, 1000)
"""BayesFuse estimates one probability per rank band [cutoffs[j], cutoffs[j+1])."""
_MIN_ODDS = math.log(0.001 / 0.999)


def train_bayesfuse(hits: HitLists) -> dict[str, Any]:
    """Per run and rank band, log(p / (1 - p)) of the mean precision p within the band over the
    queries, p kept within [0.001, 0.999] (Aslam and Montague, 2001)."""
    log_odds: list[list[float]] = []
    for run_hits in hits:
        odds: list[float] = []
        for start, end in itertools.pairwise(BAYES_CUTOFFS):
            precision = 0.0
            for hit_list in run_hits:
                precision += sum(hit_list[start:end]) / (end - start) / len(run_hits)
            if precision == 0:
                precision += 0.001
            complement = 1 - precision
            if complement == 0:
                complement += 0.001
            odds += [math.log(precision / complement)] * (end - start)
        log_odds.append(odds)
    return {"log_odds": log_odds}


def bayesfuse(
    rankings: Sequence[Ranking], *, log_odds: Sequence[Sequence[float]]
) -> dict[str, float]:
    """BayesFuse: Σ the log odds of relevance at the doc's rank; a run that did not retrieve the
    doc, or ranked it deeper than its table, adds log(0.001 / 0.999)."""
    checked = _check_probs("log_odds", log_odds, len(rankings))
    fused: dict[str, float] = {}
    tables = [
        dict(zip(ranking, odds + [_MIN_ODDS] * (len(ranking) - len(odds)), strict=False))
        for ranking, odds in zip(rankings, checked, strict=True)
    ]
    for table in tables:
        for doc in table:
            if doc not in fused:
                fused[doc] = sum(other.get(doc, _MIN_ODDS) for other in tables)
    return fused


# MAPFuse ----------------------------------------------------------------------------------


def _average_precision(hit_list: Sequence[int], n_relevant: int) -> float:
    """trec_eval's AP of one hit list, over ``n_relevant``: the scoring core's."""
    positions = [i for i, hit in enumerate(hit_list) if hit]
    units = [1.0] * len(positions)
    return values_at(positions, units, 1.0, n_relevant, None, (WHOLE,))[AP][0]


def train_mapfuse(hits: HitLists, relevant_counts: Sequence[int]) -> dict[str, Any]:
    """Per run, its MAP over the training queries (trec_eval's AP: divided by all relevant)."""
    map_scores = [
        math.fsum(map(_average_precision, run_hits, relevant_counts)) / len(run_hits)
        if run_hits
        else 0.0
        for run_hits in hits
    ]
    return {"map_scores": map_scores}


def mapfuse(rankings: Sequence[Ranking], *, map_scores: Sequence[float]) -> dict[str, float]:
    """MAPFuse: Σ the run's MAP / (i + 1) (Lillis et al., 2010)."""
    if not isinstance(map_scores, Sequence) or len(map_scores) != len(rankings):
        raise ValueError(f"map_scores must hold one number per run ({len(rankings)} runs)")
    scored = [
        {doc: float(score) / (i + 1) for i, doc in enumerate(ranking)}
        for ranking, score in zip(rankings, map_scores, strict=True)
    ]
    return combine_sum(scored)
