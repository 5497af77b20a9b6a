"""The order in which pages list queries.

Query ids are text. When every id of a page is an integer (``1``, ``2``, ``10``, ``100``, as in
SciFact or MS MARCO), they are listed by number, not as text (``1``, ``10``, ``100``, ``2``).
Otherwise they are listed naturally: runs of digits inside an id compare as numbers, so ``q2``
comes before ``q10``; ids that read the same as numbers (``q01``, ``q1``) are then ordered as
text. The per-query table of a page can still be sorted by any column with a click.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["query_order"]

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DIGITS = re.compile(r"([0-9]+)")


def _natural(query_id: str) -> tuple[tuple[str | int, ...], str]:
    # re.split with a group alternates text and digits, text first: the positions of a key
    # hold the same type in every key, so any two keys compare.
    parts = _DIGITS.split(query_id)
    return tuple(int(part) if i % 2 else part for i, part in enumerate(parts)), query_id


def query_order(query_ids: Iterable[str]) -> list[str]:
    """``query_ids`` in the order a page lists them: by number when all are integers, else
    naturally (``q2`` before ``q10``).

    >>> query_order(["100", "2", "1012", "1"])
    ['1', '2', '100', '1012']
    >>> query_order(["q10", "q2", "doc-1b", "q1", "q01"])
    ['doc-1b', 'q01', 'q1', 'q2', 'q10']
    """
    ids = list(query_ids)
    if ids and all(_INTEGER.fullmatch(query_id) for query_id in ids):
        return sorted(ids, key=lambda query_id: (int(query_id), query_id))
    return sorted(ids, key=_natural)
