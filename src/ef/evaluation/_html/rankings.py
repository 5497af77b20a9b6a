"""The parts of a page read from a run and its qrels: drill-downs and the precision-recall curve.

A report holds metric values, not rankings, so these exist only when the caller hands over the
run and the qrels. A ranking is ordered as everywhere else in the library (a list as given, its
first occurrence of a repeated id kept; scores as trec_eval orders them). Everything here is
pure: plain data in, JSON-ready data out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ef.evaluation._scoring.measures.family import fraction_keys
from ef.evaluation._scoring.measures.summary import facts_from_ranking
from ef.evaluation._scoring.measures.uncut import RECALL_LEVELS, iprec_at_recall
from ef.evaluation._scoring.order import rank_by_score

__all__ = [
    "DRILL_DEPTH",
    "QUERY_TEXT_LENGTH",
    "SNIPPET_LENGTH",
    "curve_from_metrics",
    "drilldown",
    "drilldowns",
    "precision_recall",
    "query_texts",
    "ranking",
    "snippet",
    "snippets",
]

DRILL_DEPTH = 20
"""How many of a query's top documents its drill-down embeds."""
SNIPPET_LENGTH = 200
"""The most characters of a document's text a page embeds."""
QUERY_TEXT_LENGTH = 500
"""The most characters of a query's text a page embeds (a 20 MB query made a 31 MB page)."""


def ranking(entry: Sequence[str] | Mapping[str, float]) -> list[str]:
    """One query's ranked doc ids, best first, each id once.

    >>> ranking(['d2', 'd1', 'd2'])
    ['d2', 'd1']
    >>> ranking({'d1': 0.5, 'd2': 0.9})
    ['d2', 'd1']
    """
    if isinstance(entry, Mapping):
        return rank_by_score(entry)
    return list(dict.fromkeys(entry))


def snippet(text: str, length: int = SNIPPET_LENGTH) -> str:
    """``text`` with its whitespace collapsed, cut to ``length`` characters (an ellipsis marks a
    cut).

    >>> snippet('a  long\\ntext', 8)
    'a long …'
    """
    flat = " ".join(text.split())
    return flat if len(flat) <= length else flat[: length - 2].rstrip() + " …"


def query_texts(query_ids: Iterable[str], queries: Mapping[str, str] | None) -> dict[str, str]:
    """The text a page shows of each of ``query_ids`` that has one, cut as snippets are, to
    :data:`QUERY_TEXT_LENGTH` characters.

    >>> query_texts(['q1', 'q2'], {'q1': 'what  is\\nit?', 'q3': 'unused'})
    {'q1': 'what is it?'}
    """
    if not queries:
        return {}
    return {q: snippet(queries[q], QUERY_TEXT_LENGTH) for q in query_ids if q in queries}


def _grade(grades: Mapping[str, float], doc: str) -> float | None:
    grade = grades.get(doc)
    return None if grade is None else float(grade)


def drilldown(
    ranked: Sequence[str], grades: Mapping[str, float], depth: int = DRILL_DEPTH
) -> dict[str, Any]:
    """One query's drill-down: its top ``depth`` documents with their grades (``None``:
    unjudged), and each relevant document outside them with its rank (``None``: not retrieved).

    >>> page = drilldown(['d1', 'd2', 'd3'], {'d3': 2, 'd4': 1, 'd1': 0}, depth=2)
    >>> page['ranked'], page['missed'], page['retrieved']
    ([['d1', 0.0], ['d2', None]], [['d3', 2.0, 3], ['d4', 1.0, None]], 3)
    """
    shown = ranked[:depth]
    shown_set = set(shown)
    positions = {doc: rank for rank, doc in enumerate(ranked, 1) if doc in grades}
    missed = [
        [doc, float(grade), positions.get(doc)]
        for doc, grade in grades.items()
        if grade > 0 and doc not in shown_set
    ]
    # Closest misses first, the ones never retrieved last.
    missed.sort(key=lambda row: (row[2] is None, row[2] or 0, str(row[0])))
    return {
        "ranked": [[doc, _grade(grades, doc)] for doc in shown],
        "missed": missed,
        "retrieved": len(ranked),
    }


def drilldowns(
    query_ids: Iterable[str],
    run: Mapping[str, Sequence[str] | Mapping[str, float]],
    qrels: Mapping[str, Mapping[str, float]],
    depth: int = DRILL_DEPTH,
) -> dict[str, dict[str, Any]]:
    """The drill-down of every query in ``query_ids`` (a query missing from the run has an empty
    ranking)."""
    return {
        query: drilldown(ranking(run.get(query, ())), qrels.get(query, {}), depth)
        for query in query_ids
    }


def snippets(
    pages: Iterable[Mapping[str, Any]], corpus: Mapping[str, str] | None
) -> dict[str, str]:
    """A snippet of each document the drill-downs in ``pages`` show, and of no other."""
    if corpus is None:
        return {}
    shown: dict[str, str] = {}
    for page in pages:
        for row in (*page["ranked"], *page["missed"]):
            doc = row[0]
            if doc not in shown and doc in corpus:
                shown[doc] = snippet(corpus[doc])
    return shown


def precision_recall(
    query_ids: Iterable[str],
    run: Mapping[str, Sequence[str] | Mapping[str, float]],
    qrels: Mapping[str, Mapping[str, float]],
) -> list[dict[str, float]]:
    """The interpolated precision-recall curve: trec_eval's ``iprec_at_recall`` at its 11 recall
    levels, averaged over ``query_ids``.

    >>> curve = precision_recall(['q1'], {'q1': ['d1', 'd9', 'd2']}, {'q1': {'d1': 1, 'd2': 1}})
    >>> [(point['recall'], round(point['precision'], 3)) for point in curve][::5]
    [(0.0, 1.0), (0.5, 1.0), (1.0, 0.667)]
    """
    totals = [0.0] * len(RECALL_LEVELS)
    n_queries = 0
    for query in query_ids:
        facts = facts_from_ranking(ranking(run.get(query, ())), qrels.get(query, {}))
        for index, value in enumerate(iprec_at_recall(facts)):
            totals[index] += value
        n_queries += 1
    if not n_queries:
        return []
    return [
        {"recall": level, "precision": total / n_queries}
        for level, total in zip(RECALL_LEVELS, totals, strict=True)
    ]


def curve_from_metrics(metrics: Mapping[str, float]) -> list[dict[str, float]]:
    """The same curve from a report's own ``iprec_at_recall_*`` means, when it holds all 11.

    >>> keys = {f'iprec_at_recall_{level:.2f}': 1 - level for level in RECALL_LEVELS}
    >>> curve_from_metrics(keys)[10]
    {'recall': 1.0, 'precision': 0.0}
    """
    keys = fraction_keys("iprec_at_recall", RECALL_LEVELS)
    if not all(key in metrics and math.isfinite(metrics[key]) for key in keys):
        return []
    return [
        {"recall": level, "precision": float(metrics[key])}
        for level, key in zip(RECALL_LEVELS, keys, strict=True)
    ]
