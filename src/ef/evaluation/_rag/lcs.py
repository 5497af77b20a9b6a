"""The length of the longest common subsequence of two token lists, in linear memory.

ROUGE-L needs only that length, not the subsequence, so one row of the dynamic programme is
kept instead of the whole table (the ``rouge-score`` package builds all of it: a gigabyte at
5,000 words). A row is computed from the one before in a few array operations: with ``prev``
the lengths for the tokens of ``longer`` seen so far, the next row is
``cur[j] = max(cur[j - 1], prev[j], prev[j - 1] + (token == shorter[j - 1]))``, which is the
running maximum of ``max(prev[j], prev[j - 1] + match[j])``. A token absent from ``shorter``
leaves the row as it was and is skipped. Memory: a few integers per token of the shorter list;
time: one vectorised pass over it per token of the longer list that occurs in it.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["lcs_length"]


def lcs_length(first: Sequence[str], second: Sequence[str]) -> int:
    """The length of the longest common subsequence of ``first`` and ``second``.

    Needs numpy (which ``rouge-score`` installs).

    >>> lcs_length("the cat sat on the mat".split(), "the cat lay on a mat".split())
    4
    >>> lcs_length([], ["a"])
    0
    """
    import numpy

    shorter, longer = (first, second) if len(first) <= len(second) else (second, first)
    if not shorter:
        return 0
    codes: dict[str, int] = {}
    columns = numpy.fromiter(
        (codes.setdefault(token, len(codes)) for token in shorter),
        dtype=numpy.int64,
        count=len(shorter),
    )
    row = numpy.zeros(len(shorter) + 1, dtype=numpy.int64)
    candidate = numpy.empty(len(shorter), dtype=numpy.int64)
    for token in longer:
        code = codes.get(token)
        if code is None:
            continue
        numpy.add(row[:-1], columns == code, out=candidate)
        numpy.maximum(candidate, row[1:], out=candidate)
        numpy.maximum.accumulate(candidate, out=row[1:])
    return int(row[-1])
