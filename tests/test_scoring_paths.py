"""The scoring core's shortcuts give exactly what the plain way gives.

``summarize`` checks for repeated ids only above the last relevant id it found, and
``summarize_scores`` ranks relevant ids by counting or bisecting scores instead of ordering the
whole run. Both must agree with the plain way — de-duplicate, then order by
:func:`rank_by_score` — on every input, ties, signed zeros, infinities and NaN included.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation._metric_names.api import lookup_metrics
from ef.evaluation._running.evaluate import evaluate_run
from ef.evaluation._scoring import scored as _scored
from ef.evaluation._scoring.metric_scorer import MetricScorer
from ef.evaluation._scoring.order import rank_by_score
from ef.evaluation._scoring.ranked import RankingSummary, summarize
from ef.evaluation._scoring.scored import summarize_scores

DOCS = [f"d{i:02d}" for i in range(30)]
GRADES = st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0])
# A few repeated values make ties common; signed zeros tie with each other.
SCORES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 2.5, -3.0, 7, 2**60 + 1, 1e308, -1e308]),
    st.floats(-10, 10, allow_nan=False),
)


def plain(
    ranked: list[str], relevant: dict[str, float]
) -> tuple[list[str], list[int], list[float]]:
    unique = list(dict.fromkeys(ranked))
    hits = [(i, relevant[d]) for i, d in enumerate(unique) if relevant.get(d, 0.0) > 0]
    return unique, [i for i, _ in hits], [g for _, g in hits]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(DOCS), max_size=120),
    st.dictionaries(st.sampled_from(DOCS), GRADES, max_size=6),
)
def test_repeated_ids_shift_positions_as_deduplication_does(ranked, relevant):
    summary = summarize(ranked, relevant)
    unique, positions, gains = plain(ranked, relevant)
    assert (summary.positions, summary.gains) == (positions, gains)
    assert list(summary.ranked) == unique


def test_a_repeat_below_the_last_relevant_id_is_still_dropped_from_ranked():
    summary = summarize(["a", "r", *[f"x{i}" for i in range(40)], "a"], {"r": 1.0})
    assert summary.positions == [1]
    assert list(summary.ranked) == ["a", "r", *[f"x{i}" for i in range(40)]]


@contextlib.contextmanager
def scan_limit(limit: int) -> Iterator[None]:
    """Force one of the two ways of ranking scored relevant ids."""
    saved = _scored._SCAN_LIMIT
    _scored._SCAN_LIMIT = limit
    try:
        yield
    finally:
        _scored._SCAN_LIMIT = saved


@pytest.mark.parametrize("limit", [0, 1000], ids=["sort", "scan"])
@settings(max_examples=300, deadline=None)
@given(
    scores=st.dictionaries(st.sampled_from(DOCS), SCORES, max_size=30),
    relevant=st.dictionaries(st.sampled_from(DOCS), GRADES, max_size=10),
)
def test_scored_positions_equal_the_trec_eval_order(limit, scores, relevant):
    with scan_limit(limit):
        summary = summarize_scores(scores, relevant)
    reference = summarize(rank_by_score(scores), relevant, unique=True)
    assert (summary.positions, summary.gains) == (reference.positions, reference.gains)
    assert summary.ideal_gains == reference.ideal_gains
    assert list(summary.ranked) == rank_by_score(scores)


@pytest.mark.parametrize("limit", [0, 1000], ids=["sort", "scan"])
@pytest.mark.parametrize("relevant", [{"a": 1.0}, {"zz": 1.0}, {"a": 1.0, "c": 2.0}])
def test_a_nan_score_anywhere_is_refused(limit, relevant):
    with scan_limit(limit), pytest.raises(ValueError, match=r"'b'.*NaN"):
        summarize_scores({"a": 1.0, "b": math.nan, "c": 0.5}, relevant)


def test_ties_put_the_larger_doc_id_first():
    summary = summarize_scores({"a": 1.0, "c": 1.0, "b": 1.0, "d": 2.0}, {"b": 1.0})
    assert summary.positions == [2]  # d, c, b, a
    assert list(summary.ranked) == ["d", "c", "b", "a"]


def test_a_summary_needs_a_ranking_or_scores():
    with pytest.raises(ValueError, match="ranking or the scores"):
        RankingSummary(None, {}, [], [], [])


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["q1", "q2", "q3"]),
        st.dictionaries(st.sampled_from(DOCS), SCORES, max_size=25),
        min_size=1,
    ),
    st.dictionaries(
        st.sampled_from(["q1", "q2", "q3"]),
        st.dictionaries(st.sampled_from(DOCS), st.sampled_from([0.0, 1.0, 2.0]), min_size=1),
        min_size=1,
    ),
)
def test_scored_runs_score_as_their_rankings(run, qrels):
    metrics = ("ndcg", "recall", "precision", "mrr", "map")
    if not any(grade > 0 for judged in qrels.values() for grade in judged.values()):
        return
    ranked = {query_id: rank_by_score(scores) for query_id, scores in run.items()}
    options = {"k_values": (1, 3, 10), "metrics": metrics, "missing_queries": "zero"}
    from_scores = evaluate_run(run, qrels, **options)
    from_rankings = evaluate_run(ranked, qrels, **options)
    assert from_scores.per_query == from_rankings.per_query
    assert from_scores.metrics == from_rankings.metrics


METRIC_NAMES = ["ndcg", "recall", "precision", "mrr", "map"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(METRIC_NAMES), min_size=1, max_size=5, unique=True),
    st.lists(st.integers(1, 60), min_size=1, max_size=5),
    st.lists(st.sampled_from(DOCS), max_size=60),
    st.dictionaries(st.sampled_from(DOCS), st.sampled_from([-1.0, 0.0, 0.5, 1.0, 3.5]), max_size=8),
)
def test_the_fused_builtin_step_gives_each_forms_values(names, ks, ranked, relevant):
    plan = MetricScorer(lookup_metrics(names), ks)
    summary = summarize(ranked, relevant)
    expected: list[float] = []
    for metric in plan.metrics:
        assert metric.all_cutoffs is not None
        expected.extend(metric.all_cutoffs(summary, plan.k_values))
    assert list(plan.score(summary).values()) == expected
    assert plan.keys == [f"{name}@{k}" for name in names for k in sorted(set(ks))]
