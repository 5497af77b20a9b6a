"""The one-pass scoring core gives exactly the primitives' values."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation._metric_names.api import lookup_metrics
from ef.evaluation._scoring.metric_scorer import MetricScorer
from ef.evaluation._scoring.ranked import summarize
from oracle import PRIMITIVES

DOCS = [f"d{i}" for i in range(40)]


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(DOCS), st.sampled_from([-1, 0, 0.5, 1, 2, 3.5]), max_size=30),
    st.lists(st.sampled_from([*DOCS, "x"]), max_size=60),
    st.lists(st.integers(1, 70), min_size=1, max_size=5),
)
def test_core_equals_primitives_exactly(relevant, ranked, ks):
    # Long rankings with few relevant ids take the index path, the others the dict path.
    plan = MetricScorer(lookup_metrics(list(PRIMITIVES)), ks)
    values = plan.score(summarize(ranked, relevant))
    assert list(values) == [f"{m}@{k}" for m in PRIMITIVES for k in sorted(set(ks))]
    for name, fn in PRIMITIVES.items():
        for k in set(ks):
            assert values[f"{name}@{k}"] == fn(ranked, relevant, k), (name, k)


def test_summary_records_where_relevant_ids_landed():
    summary = summarize(["a", "b", "a", "c", "d"], {"c": 2.0, "a": 1.0, "z": 3.0, "b": 0.0})
    assert summary.ranked == ["a", "b", "c", "d"]
    assert summary.positions == [0, 2]
    assert summary.gains == [1.0, 2.0]
    assert summary.ideal_gains == [3.0, 2.0, 1.0]
    assert summary.n_relevant == 3


def test_plan_deduplicates_and_sorts_cutoffs():
    plan = MetricScorer(lookup_metrics(["recall"]), [10, 1, 10])
    assert plan.k_values == (1, 10)
    assert plan.keys == ["recall@1", "recall@10"]
