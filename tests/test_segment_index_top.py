"""``top``: the best hits of a score vector, checked against a plain sort on generated scores.

BM25 scores most of a corpus 0 for a query; the positive-only selection skips those, and must
give exactly the hits of sorting everything (score descending, ties by the tie key ascending,
then by position) and dropping what is not positive.
"""

from __future__ import annotations

import random

import numpy
import pytest

from ef._segment_index import top


def _by_sorting(scores, limit, ties, positive_only):
    order = sorted(range(len(scores)), key=lambda i: (-float(scores[i]), int(ties[i]), i))[:limit]
    return [(i, float(scores[i])) for i in order if not positive_only or float(scores[i]) > 0]


def _scores(rng: random.Random, n: int, dtype) -> numpy.ndarray:
    kind = rng.randrange(4)
    if kind == 0:  # mostly zeros, a few distinct positives (BM25 on a large corpus)
        values = [
            0.0 if rng.random() < 0.95 else rng.choice([0.5, 1.25, 2.0, 3.5]) for _ in range(n)
        ]
    elif kind == 1:  # every value tied
        values = [rng.choice([0.0, 1.0])] * n
    elif kind == 2:  # negatives, zeros and positives (a dense index's cosine)
        values = [round(rng.uniform(-1, 1), 1) for _ in range(n)]
    else:
        values = [rng.random() for _ in range(n)]
    return numpy.array(values, dtype=dtype)


@pytest.mark.parametrize("positive_only", [True, False])
@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_top_gives_the_hits_of_sorting_every_score(positive_only, dtype):
    rng = random.Random(f"{positive_only}{dtype}")
    for _ in range(300):
        n = rng.randrange(0, 60)
        scores = _scores(rng, n, dtype)
        ties = numpy.array([rng.randrange(5) for _ in range(n)], dtype=numpy.int64)
        limit = rng.randrange(-1, n + 3)
        got = top(scores, limit, ties=ties, positive_only=positive_only)
        assert got == (_by_sorting(scores, limit, ties, positive_only) if limit > 0 else [])


def test_a_mostly_zero_vector_keeps_only_its_positive_hits_in_order():
    scores = numpy.zeros(100_000, dtype=numpy.float32)
    scores[[7, 70_000, 99_999, 5]] = [1.5, 2.5, 1.5, 0.25]
    ties = numpy.arange(100_000)[::-1].copy()  # later positions win ties
    assert top(scores, 10, ties=ties, positive_only=True) == [
        (70_000, 2.5),
        (99_999, 1.5),
        (7, 1.5),
        (5, 0.25),
    ]
    assert top(scores, 2, ties=ties, positive_only=True) == [(70_000, 2.5), (99_999, 1.5)]
    assert len(top(scores, 10, ties=ties, positive_only=False)) == 10
