"""Which judged queries a run holds: the one check of query ids, and a guess at a mismatch.

Every scored run passes :func:`check_run_queries` with the ids it holds, whatever its form (a
mapping, a DataFrame, a streamed file, one run among those fused or compared): no judged query
in the run is a :class:`MissingQueriesError` naming both sides with example ids and the likely
cause (a prefix such as ``q1`` against ``1``, zero padding, letter case, whitespace), since a
run that shares no id with its qrels would otherwise score 0.0 everywhere; some judged queries
missing is one :class:`MissingQueriesWarning` with the counts and the first ids (they score 0,
as trec_eval ``-c`` counts them). ``missing_queries`` changes the rule: ``"zero"`` scores every
missing query 0 without a word, ``"error"`` refuses a run that misses any.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Collection, Sequence
from itertools import combinations, islice
from typing import Literal

import attrs

from ef.evaluation._exceptions import MissingQueriesError, MissingQueriesWarning

__all__ = [
    "MISSING_QUERIES",
    "MissingQueries",
    "QueryCoverage",
    "check_missing_queries",
    "check_run_queries",
    "likely_cause",
    "shown_ids",
]

MissingQueries = Literal["zero", "warn", "error"]
MISSING_QUERIES: tuple[MissingQueries, ...] = ("zero", "warn", "error")
"""The rules for judged queries a run lacks, as ``missing_queries=`` names them."""

_SHOWN = 5
_SAMPLE = 2000  # ids per side a guess looks at: enough to see a pattern, cheap on any run


@attrs.frozen
class QueryCoverage:
    """How many judged queries there are, how many of them the run holds, and the rule applied.

    :ivar judged: the judged queries (those scored: with a relevant judgement).
    :ivar found: the judged queries the run holds.
    :ivar missing_queries: the rule for the others.
    """

    judged: int
    found: int
    missing_queries: MissingQueries

    def as_manifest(self) -> dict[str, int | str]:
        """The counts and the rule as the report's manifest records them (under ``run``).

        >>> QueryCoverage(300, 180, "warn").as_manifest()
        {'judged_queries': 300, 'judged_queries_in_run': 180, 'missing_queries': 'warn'}
        """
        return {
            "judged_queries": self.judged,
            "judged_queries_in_run": self.found,
            "missing_queries": self.missing_queries,
        }


def check_missing_queries(value: object) -> MissingQueries:
    """``value`` if it is one of :data:`MISSING_QUERIES`, else a :class:`ValueError`.

    >>> check_missing_queries("skip")
    Traceback (most recent call last):
    ...
    ValueError: missing_queries must be 'zero', 'warn' or 'error', got 'skip'
    """
    if not isinstance(value, str) or value not in MISSING_QUERIES:
        raise ValueError(f"missing_queries must be 'zero', 'warn' or 'error', got {value!r}")
    return value


def shown_ids(ids: Sequence[str], total: int | None = None) -> str:
    """The first few ``ids`` quoted, and how many more there are.

    >>> shown_ids(['1', '2'])
    "'1', '2'"
    >>> shown_ids([str(i) for i in range(8)])
    "'0', '1', '2', '3', '4' and 3 more"
    """
    total = len(ids) if total is None else total
    listed = ", ".join(repr(i) for i in ids[:_SHOWN])
    more = total - min(len(ids), _SHOWN)
    return listed + (f" and {more} more" if more > 0 else "")


def check_run_queries(
    judged: Sequence[str],
    present: Collection[str],
    *,
    missing_queries: MissingQueries,
    run: str = "the run",
    qrels: str = "the qrels",
    noun: str = "judged queries",
    consequence: str = "they score 0",
    stacklevel: int = 2,
) -> QueryCoverage:
    """Check that the run holds the judged queries, by the rule ``missing_queries``.

    :param judged: the queries that are scored, in order.
    :param present: the query ids the run holds (a set or a mapping's keys: looked up).
    :param missing_queries: ``"warn"``, ``"zero"`` or ``"error"`` (see the module).
    :param run: the run, as the messages name it (``"the run"``, ``"system 'bm25'"``, a file).
    :param qrels: what the judged queries come from, as the messages name it.
    :param noun: what ``judged`` holds, in the plural.
    :param consequence: what becomes of a missing query.
    :param stacklevel: the warning's, counted from the caller of this function.
    :returns: the counts, for the manifest.
    :raises MissingQueriesError: when the run holds none of the judged queries (unless
        ``missing_queries="zero"``), or misses any under ``"error"``.

    >>> check_run_queries(['1', '2'], {'q1': [], 'q2': []}, missing_queries='warn')
    Traceback (most recent call last):
    ...
    ef.evaluation.MissingQueriesError: none of the judged queries (2) is in the run, \
which has 2 queries (the qrels: '1', '2'; the run: 'q1', 'q2'); likely cause: a prefix ('q1' in \
the run is '1' in the qrels)
    """
    mode = check_missing_queries(missing_queries)
    missing = [query_id for query_id in judged if query_id not in present]
    coverage = QueryCoverage(len(judged), len(judged) - len(missing), mode)
    if not missing or mode == "zero":
        return coverage
    if coverage.found == 0:
        sizes = "no query at all" if not present else _queries(len(present))
        held = f"; {run}: {shown_ids(list(islice(present, _SHOWN)), len(present))}"
        raise MissingQueriesError(
            f"none of the {noun} ({len(judged)}) is in {run}, which has {sizes} "
            f"({qrels}: {shown_ids(judged)}{held if present else ''})"
            + _cause_note(judged, present, run, qrels, always=bool(present))
        )
    judged_set = set(judged)
    extra = list(islice((q for q in present if q not in judged_set), _SAMPLE))
    cause = _cause_note(missing, extra, run, qrels, always=False)
    counted = f"{len(missing)} of {len(judged)} {noun} are not in {run}"
    if mode == "error":
        raise MissingQueriesError(
            f"{counted}: {shown_ids(missing)}{cause} (refused under missing_queries='error')"
        )
    warnings.warn(
        f"{counted}; {consequence}: {shown_ids(missing)}{cause}",
        MissingQueriesWarning,
        stacklevel=stacklevel + 1,
    )
    return coverage


def _queries(count: int) -> str:
    return "1 query" if count == 1 else f"{count} queries"


def _cause_note(
    judged: Sequence[str], present: Collection[str], run: str, qrels: str, *, always: bool
) -> str:
    found = likely_cause(list(islice(judged, _SAMPLE)), list(islice(present, _SAMPLE)))
    if found is not None:
        cause, (in_qrels, in_run) = found
        return f"; likely cause: {cause} ({in_run!r} in {run} is {in_qrels!r} in {qrels})"
    if not always:
        return ""
    return (
        "; no prefix, suffix, zero padding, letter case or whitespace relates their ids: "
        "are they of different datasets or splits?"
    )


_Key = Callable[[str], str]


def _common_prefix(ids: Sequence[str]) -> str:
    """The start every id shares, up to its first digit, and shorter than every id."""
    first, last = min(ids), max(ids)  # what these two share, every id between them shares
    pairs = enumerate(zip(first, last, strict=False))
    shared = next((i for i, (a, b) in pairs if a != b), len(first))
    prefix = re.split(r"\d", first[:shared], maxsplit=1)[0]
    return "" if any(len(i) <= len(prefix) for i in ids) else prefix


def _common_suffix(ids: Sequence[str]) -> str:
    reversed_ids = [i[::-1] for i in ids]
    return _common_prefix(reversed_ids)[::-1]


_DIGITS = re.compile(r"\d+")


def _unpadded(text: str) -> str:
    return _DIGITS.sub(lambda m: m.group().lstrip("0") or "0", text)


def _steps(ids: Sequence[str]) -> list[tuple[str, _Key]]:
    """What may tell one side's ids from the other's, each with the key that undoes it."""
    # Cut by length: neither has a digit, so the steps before them never change their length.
    prefix, suffix = len(_common_prefix(ids)), len(_common_suffix(ids))
    return [
        ("whitespace", str.strip),
        ("letter case", str.casefold),
        ("zero padding", _unpadded),
        ("a prefix", lambda i: i[prefix:]),
        ("a suffix", lambda i: i[: len(i) - suffix]),
    ]


def likely_cause(
    judged: Sequence[str], present: Sequence[str]
) -> tuple[str, tuple[str, str]] | None:
    """Why ``present`` does not hold ``judged`` ids, if a simple difference explains it.

    Tries each difference (a prefix, a suffix, zero padding, letter case, whitespace), then
    pairs and triples of them, and keeps the fewest that match at least half of the smaller
    side's ids. Returns the cause in words and an example ``(judged id, run id)``, or ``None``.

    >>> likely_cause(['1', '2', '3'], ['Q001', 'Q002', 'Q003'])
    ('zero padding and a prefix', ('1', 'Q001'))
    >>> likely_cause(['1', '2'], ['a', 'b']) is None
    True
    """
    if not judged or not present:
        return None
    sides = (_steps(judged), _steps(present))
    needed = max(1, min(len(judged), len(present)) // 2)
    for size in range(1, 4):
        best: tuple[int, str, tuple[str, str]] | None = None
        for chosen in combinations(range(len(sides[0])), size):
            keys = [[side[index][1] for index in chosen] for side in sides]
            by_key = {_apply(keys[1], run_id): run_id for run_id in present}
            matched = [(q, by_key[k]) for q in judged if (k := _apply(keys[0], q)) in by_key]
            if len(matched) >= needed and (best is None or len(matched) > best[0]):
                names = [sides[0][index][0] for index in chosen]
                words = ", ".join(names[:-1]) + " and " + names[-1] if size > 1 else names[0]
                best = (len(matched), words, matched[0])
        if best is not None:
            return best[1], best[2]
    return None


def _apply(keys: Sequence[_Key], query_id: str) -> str:
    for key in keys:
        query_id = key(query_id)
    return query_id
