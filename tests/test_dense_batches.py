"""The built-in indexes' batch form: ``search_batch`` gives the hits ``search`` gives, ties
included, and an evaluation in batches reports what one query at a time reports."""

from __future__ import annotations

import hashlib
import random
from typing import Any

import numpy as np
import pytest

from ef._bm25_index import Bm25Index
from ef._dense_index import DenseIndex
from ef.evaluation import evaluate_retrieval, read_beir
from ef.segments import Segment


class HashModel:
    """A stand-in encoder: each text's vector comes from its hash, whatever the batch, so the
    index's own arithmetic is all that could tell a batch from a single query."""

    def __init__(self, dimensions: int = 16) -> None:
        self.dimensions = dimensions
        self.calls: list[int] = []

    def encode(self, texts: list[str], **_: Any) -> Any:
        self.calls.append(len(texts))
        rows = []
        for text in texts:
            # Few distinct words, so many segments share a vector: exact ties in the scores.
            word = text.split()[0] if text.split() else ""
            seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
            vector = np.random.default_rng(seed).standard_normal(self.dimensions)
            rows.append(vector / np.linalg.norm(vector))
        return np.array(rows, dtype=np.float32)


SEGMENTS = [Segment(f"d{i % 40}", f"w{i % 7} filler {i}") for i in range(120)]
QUERIES = [f"w{i % 9} query {i}" for i in range(50)]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("per_document", [False, True])
def test_dense_search_batch_gives_the_hits_of_search_ties_included(
    dtype: str, per_document: bool
) -> None:
    model = HashModel()
    index = DenseIndex(SEGMENTS, model=model, dtype=dtype, batch_size=8)
    model.calls.clear()
    batched = index.search_batch(QUERIES, limit=15, per_document=per_document)
    assert max(model.calls) == 8  # encoded in batches
    single = [index.search(q, limit=15, per_document=per_document) for q in QUERIES]
    assert batched == single
    # The ties are real: several hits of one query share a score.
    scores = [hit.score for hit in single[0]]
    assert len(set(scores)) < len(scores)


def test_a_query_ranks_alike_whatever_else_is_in_its_batch() -> None:
    index = DenseIndex(SEGMENTS, model=HashModel(), batch_size=8)
    whole = dict(zip(QUERIES, index.search_batch(QUERIES, limit=10), strict=True))
    order = random.Random(3).sample(QUERIES, len(QUERIES))
    for size in (1, 2, 3, 7, 16, 50):  # each query at other places, beside other queries
        for first in range(0, len(order), size):
            block = order[first : first + size]
            assert index.search_batch(block, limit=10) == [whole[query] for query in block]
    assert index.search_batch([], limit=10) == []


def test_dense_batched_evaluation_reports_what_one_at_a_time_does() -> None:
    corpus = {f"d{i}": f"w{i % 7} filler {i}" for i in range(40)}
    queries = {f"q{i}": f"w{i % 9} query {i}" for i in range(30)}
    qrels = {f"q{i}": {f"d{(i * 3) % 40}": 1.0, f"d{i % 7}": 2.0} for i in range(30)}
    index = DenseIndex([Segment(d, t) for d, t in corpus.items()], model=HashModel())
    single = evaluate_retrieval(index, qrels, queries, batch_size=1)
    batched = evaluate_retrieval(index, qrels, queries, batch_size=7)
    assert batched.per_query == single.per_query and batched.metrics == single.metrics


def test_bm25_batches_match_one_query_at_a_time_on_the_bundled_dataset() -> None:
    corpus, queries, qrels = read_beir("builtin:stdlib-docs")
    index = Bm25Index([Segment(doc_id, text) for doc_id, text in corpus.items()])
    texts = [*queries.values(), "", "zzzz unseen words"]
    assert index.search_batch(texts, limit=20) == [index.search(t, limit=20) for t in texts]
    single = evaluate_retrieval(index, qrels, queries, batch_size=1)
    batched = evaluate_retrieval(index, qrels, queries, batch_size=16)
    assert batched.per_query == single.per_query and batched.metrics == single.metrics
