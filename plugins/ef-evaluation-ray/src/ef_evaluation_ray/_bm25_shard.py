"""BM25 over one shard of a corpus, scored with the whole collection's statistics.

A document's BM25 score depends on the collection through three numbers per query term: how
many documents hold the term (its document frequency), how many documents there are, and their
average length. bm25s computes them inside ``index()`` from what it is given; a shard scored
that way would rank by its own statistics, not the corpus's. So each shard first reports its
local statistics (:func:`shard_statistics`), the driver adds them up
(:meth:`CollectionStatistics.combine`), and every shard builds its score matrix from the sums
with bm25s's own scoring functions (:func:`global_bm25_shard`) — each (term, document) weight is
then the one bm25s computes on the whole corpus, and a query's scores are summed in the same
order, so the scores are equal to the last bit.

No Ray here: the actors in :mod:`ef_evaluation_ray._actors` call these.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from ef.evaluation.extending import Bm25Index, bm25_engine, bm25_tokenizer
from ef.segments import Segment

__all__ = ["CollectionStatistics", "global_bm25_shard", "shard_statistics"]


@attrs.frozen
class CollectionStatistics:
    """What BM25 needs to know of a collection, keyed by stemmed term (the shards' token ids
    differ; their stems do not).

    :ivar document_frequencies: how many documents hold each term.
    :ivar documents: how many documents there are.
    :ivar tokens: how many tokens they hold in all (their lengths' sum).
    """

    document_frequencies: dict[str, int]
    documents: int
    tokens: int

    @classmethod
    def combine(cls, parts: Iterable[CollectionStatistics]) -> CollectionStatistics:
        """The statistics of the union of disjoint shards."""
        frequencies: Counter[str] = Counter()
        documents = tokens = 0
        for part in parts:
            frequencies.update(part.document_frequencies)
            documents += part.documents
            tokens += part.tokens
        return cls(dict(frequencies), documents, tokens)

    def average_length(self) -> Any:
        """The mean document length as bm25s computes it: ``numpy.mean`` of the lengths, which
        sums integers exactly in float64 and divides once."""
        numpy = importlib.import_module("numpy")
        return numpy.float64(self.tokens) / self.documents


def _tokenized(texts: Sequence[str]) -> tuple[Any, list[list[int]], list[str]]:
    """The tokenizer, every text's token ids, and each id's stem."""
    tokenizer = bm25_tokenizer()
    # Every text may add to the vocabulary (bm25s's default only lets the first call add).
    ids = tokenizer.tokenize(list(texts), update_vocab=True, show_progress=False, return_as="ids")
    stems = [""] * len(tokenizer.stem_to_sid)
    for stem, sid in tokenizer.stem_to_sid.items():
        stems[sid] = stem
    return tokenizer, ids, stems


def _local_frequencies(ids: Sequence[Sequence[int]], vocabulary: int) -> dict[int, int]:
    frequencies = dict.fromkeys(range(vocabulary), 0)
    for document in ids:
        for token in set(document):
            frequencies[token] += 1
    return frequencies


def shard_statistics(texts: Sequence[str]) -> CollectionStatistics:
    """The BM25 statistics of one shard's texts, tokenized as the built-in index tokenizes."""
    _, ids, stems = _tokenized(texts)
    frequencies = _local_frequencies(ids, len(stems))
    return CollectionStatistics(
        {stems[token]: count for token, count in frequencies.items() if count},
        len(ids),
        sum(map(len, ids)),
    )


def global_bm25_shard(
    segments: Sequence[Segment], statistics: CollectionStatistics, *, name: str = "bm25"
) -> Bm25Index:
    """The built-in BM25 index over one shard, its scores those of the whole collection.

    Searching it (``search(query, limit=..., per_document=True)``) gives the hits the whole
    corpus's index gives for the documents of this shard, with equal scores; the driver merges
    the shards' hits by score.

    :param segments: this shard's documents.
    :param statistics: the whole collection's statistics (:meth:`CollectionStatistics.combine`).
    :param name: how the index describes itself.
    :raises ValueError: when ``statistics`` count a term in fewer documents than this shard holds.
    """
    segments = list(segments)
    tokenizer, ids, stems = _tokenized([segment.text for segment in segments])
    engine = bm25_engine()
    if segments:
        _score(engine, ids, stems, statistics)
    return Bm25Index.from_engine(segments, tokenizer, engine, name=name)


def _score(
    engine: Any, ids: list[list[int]], stems: list[str], statistics: CollectionStatistics
) -> None:
    """Fill ``engine`` with the scores of the documents ``ids`` under the collection's
    ``statistics``, as bm25s's ``index()`` fills it with the documents' own."""
    scoring = importlib.import_module("bm25s.scoring")
    local = _local_frequencies(ids, len(stems))
    frequencies = statistics.document_frequencies
    missing = [
        stem
        for stem, count in zip(stems, local.values(), strict=True)
        if count and frequencies.get(stem, 0) < count
    ]
    if missing:
        raise ValueError(
            f"the collection statistics do not cover this shard: term {missing[0]!r} is "
            "counted in fewer documents than this shard alone holds"
        )
    idf = scoring._build_idf_array(
        doc_frequencies={token: frequencies.get(stems[token], 0) for token in local},
        n_docs=statistics.documents,
        compute_idf_fn=scoring._select_idf_scorer(engine.idf_method),
        dtype=engine.dtype,
    )
    # As bm25s's build_index_from_ids, with the collection's idf and average length; the
    # local frequencies only size the arrays (one entry per document and term it holds).
    data, rows, columns = scoring._build_scores_and_indices_for_matrix(
        corpus_token_ids=ids,
        idf_array=idf,
        avg_doc_len=statistics.average_length(),
        doc_frequencies=local,
        k1=engine.k1,
        b=engine.b,
        delta=engine.delta,
        nonoccurrence_array=None,
        method=engine.method,
        dtype=engine.dtype,
        int_dtype=engine.int_dtype,
        show_progress=False,
    )
    shape = (len(ids), len(stems))
    if engine.csc_backend == "scipy":
        matrix = importlib.import_module("scipy.sparse").csc_matrix(
            (data, (rows, columns)), shape=shape, dtype=engine.dtype
        )
        data, indices, indptr = matrix.data, matrix.indices, matrix.indptr
    else:
        data, indices, indptr = engine._np_csc(data=data, rows=rows, cols=columns, shape=shape)
        data = data.astype(engine.dtype)
    engine.scores = {"data": data, "indices": indices, "indptr": indptr, "num_docs": len(ids)}
    engine.nonoccurrence_array = None
    engine.vocab_dict = {token: token for token in local}
    engine.unique_token_ids_set = set(local)
