"""Where a ranking's relevant ids landed: their 0-based ranks and grades, in rank order.

All the built-in metrics depend on, found in about the number of relevant ids, not the length
of the ranking, whatever the ranking's length and the number of judgements.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

__all__ = ["found", "positions_in"]


def found(
    ranked: Sequence[str],
    relevant: Mapping[str, float],
    n_relevant: int,
    unique: bool,
    positives: list[tuple[str, float]] | None = None,
) -> tuple[Sequence[str], bool, list[int], list[float]]:
    """The ranking as scored, whether it is known free of repeated ids, and the ranks and
    grades of its relevant ids.

    A repeated id keeps its first rank and later copies are dropped: when one shifts a relevant
    id's rank, the ranking comes back de-duplicated.

    :param ranked: doc ids, best first.
    :param relevant: ``{doc_id: grade}``; grades ``> 0`` are relevant, every grade a number
        (checked when planned).
    :param n_relevant: how many grades are ``> 0``.
    :param unique: promise that ``ranked`` holds no repeated id (skips the check).
    :param positives: the ``(doc_id, grade)`` pairs with a grade ``> 0``, if the caller has
        them (else ``relevant`` is read).
    """
    n = len(ranked)
    if not n_relevant or not n:
        return ranked, unique, [], []
    if n <= _SHORT or n <= 2 * n_relevant:
        # A short ranking, or one with about as many relevant ids as ranked ones: one walk down
        # the ranking, looking each id up, finds them already in rank order.
        if not unique and len(set(ranked)) != n:  # a repeated id: positions after it shift
            ranked = list(dict.fromkeys(ranked))
        get = relevant.get
        # Grades were checked when planned: the lookup's grade is the positive one or <= 0.
        positions = [i for i, doc_id in enumerate(ranked) if (g := get(doc_id)) and g > 0]
        return ranked, True, positions, [relevant[ranked[i]] for i in positions]
    pairs, deduplicated = positions_in(
        ranked, relevant.items() if positives is None else positives, unique
    )
    if deduplicated is not None:
        ranked, unique = deduplicated, True
    return ranked, unique, [p for p, _ in pairs], [g for _, g in pairs]


# Up to this length a ranking is walked id by id (a Python loop over a few ids is cheaper than
# building a dict of them or scanning them once per relevant id).
_SHORT = 32


def positions_in(
    ranked: Sequence[str],
    judged: Collection[tuple[str, float]],
    unique: bool,
    above: float = 0.0,
) -> tuple[list[tuple[int, float]], list[str] | None]:
    """``(rank, grade)`` of the retrieved judged ids with a grade ``> above``, ascending, and the
    de-duplicated ranking when a repeated id had to be dropped (else ``None``).

    :param judged: ``(doc_id, grade)`` pairs, grades checked (finite numbers).
    :param above: the grade to exceed: ``0.0`` for the relevant ids, ``-math.inf`` for every
        judged one.
    """
    found: list[tuple[int, float]] = []
    deduplicated: list[str] | None = None
    n = len(ranked)
    if len(judged) * 16 <= n:
        # Few judged ids in a long ranking: a C-level scan per id beats a Python loop, and
        # stops at the first occurrence, the one de-duplication keeps.
        index = ranked.index
        for doc_id, grade in judged:
            if grade > above:
                try:
                    found.append((index(doc_id), grade))
                except ValueError:
                    pass
        if found and not unique:
            found.sort()
            # A repeated id shifts what follows it: only the ids above the last relevant one
            # found matter, so only they are checked (in the usual case, a short prefix).
            last = found[-1][0] + 1
            if len(set(ranked[:last])) != last:
                deduplicated = list(dict.fromkeys(ranked))
                where = dict(zip(deduplicated, range(n), strict=False))
                found = [(where[ranked[position]], grade) for position, grade in found]
    else:
        where = dict(zip(ranked, range(n), strict=False))
        if not unique and len(where) != n:  # a repeated id: positions after it shift
            deduplicated = list(dict.fromkeys(ranked))
            where = dict(zip(deduplicated, range(len(deduplicated)), strict=True))
        get = where.get
        found = [(p, g) for d, g in judged if g > above and (p := get(d)) is not None]
    found.sort()
    return found, deduplicated
