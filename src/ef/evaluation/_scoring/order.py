"""trec_eval's ranking order: how scored documents become a ranking.

trec_eval orders a query's documents by score, highest first, ties broken by doc id in
*descending* byte order, and ignores a run file's rank column: :func:`rank_by_score` reproduces
that order, so metrics computed over its rankings agree with trec_eval's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import islice
from operator import gt

__all__ = ["as_ranking", "rank_by_score", "rank_query"]


def rank_by_score(scores: Mapping[str, float]) -> list[str]:
    """Order scored doc ids as trec_eval does: score descending, ties by doc id descending.

    trec_eval breaks ties with ``strcmp`` on the doc ids, reversed: byte-wise order on their
    UTF-8 encoding, which is the order Python uses for ``str`` (by code point). Scores already in
    that order (the usual case for a run file) are detected in one pass and not re-sorted.

    :param scores: ``{doc_id: score}``.
    :returns: the doc ids, best first.
    :raises ValueError: if a score is NaN, which has no place in an order.

    >>> rank_by_score({'d1': 0.5, 'd2': 0.9, 'd3': 0.5})
    ['d2', 'd3', 'd1']
    >>> rank_by_score({'d1': float('nan')})
    Traceback (most recent call last):
    ...
    ValueError: score of 'd1' is NaN; expected a number
    """
    values = list(scores.values())
    # No NaN passes ``>``, so a NaN fails this test unless it is the only score.
    if all(map(gt, values, islice(values, 1, None))) and (
        len(values) != 1 or values[0] == values[0]
    ):
        return list(scores)
    if any(map(math.isnan, values)):
        doc_id = next(doc for doc, score in scores.items() if math.isnan(score))
        raise ValueError(f"score of {doc_id!r} is NaN; expected a number")
    ids = list(scores)
    # Tuples compare score first, then doc id: in order iff each pair is strictly above the next.
    pairs = zip(values, ids, strict=True)
    if all(map(gt, pairs, zip(islice(values, 1, None), islice(ids, 1, None), strict=True))):
        return ids
    # Two stable sorts: doc id descending, then score descending keeps that order among ties.
    ids.sort(reverse=True)
    ids.sort(key=scores.__getitem__, reverse=True)
    return ids


def rank_query(qid: str, scores: Mapping[str, float]) -> list[str]:
    """:func:`rank_by_score`, with the query named in its error."""
    try:
        return rank_by_score(scores)
    except ValueError as exc:
        raise ValueError(f"query {qid!r}: {exc}") from None


def as_ranking(qid: str, result: Sequence[str]) -> Sequence[str]:
    """Refuse a bare string, which is a sequence of one-letter ids, not a ranking."""
    if isinstance(result, str):
        raise TypeError(f"query {qid!r}: got a string; expected a list of doc ids or a dict")
    return result
