"""Reports: the spec's constructors, the headline numbers, and a lossless JSON round trip."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ef.evaluation import QueryFailure, RagEvalReport, RetrievalEvalReport

values = st.floats(0, 1, allow_nan=False)
keys = st.sampled_from(["ndcg@10", "recall@5", "map@100", "bpref"])


@given(
    st.dictionaries(keys, values),
    st.dictionaries(st.text(min_size=1), st.dictionaries(keys, values), max_size=4),
    st.lists(st.integers(1, 100), min_size=1, max_size=4),
    st.lists(
        st.builds(QueryFailure, st.text(), st.text(), st.text(), st.integers(1, 5)), max_size=3
    ),
    st.dictionaries(st.text(), st.floats(0, 10)),
)
def test_retrieval_report_round_trips_through_json(metrics, per_query, ks, failures, latency):
    report = RetrievalEvalReport(
        metrics,
        per_query,
        len(per_query),
        tuple(ks),
        skipped={"q9": "no positive judgement"},
        short_rankings=("q1",),
        failures=failures,
        latency=latency,
        manifest={"version": "1", "parameters": {"limit": 10, "k_values": ks}},
    )
    again = RetrievalEvalReport.from_json(report.to_json())
    assert again == report
    assert hash(again) == hash(report)
    assert again.to_dict() == report.to_dict()


def test_spec_constructor_and_primary():
    report = RetrievalEvalReport(
        metrics={"ndcg@10": 0.83, "ndcg@5": 0.5}, per_query={}, n_queries=12, k_values=[10, 5]
    )
    assert report.primary == 0.83
    assert report.primary_at(5) == 0.5
    assert report.primary_at(3) is None
    assert report.k_values == (10, 5)
    assert report.failures == ()


def test_reports_are_frozen():
    report = RagEvalReport(metrics={}, coverage={}, n_samples=0)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        report.n_samples = 3  # type: ignore[misc]


def test_new_fields_are_keyword_only():
    with pytest.raises(TypeError):
        RetrievalEvalReport({}, {}, 0, (10,), {})  # type: ignore[misc]


def test_latency_summary_uses_linear_percentiles():
    latency = {f"q{i}": float(i) for i in range(1, 101)}
    report = RetrievalEvalReport({}, {}, 0, (10,), latency=latency)
    summary = report.latency_summary
    assert summary == {"p50": 50.5, "p95": pytest.approx(95.05), "max": 100.0, "mean": 50.5}
    assert RetrievalEvalReport({}, {}, 0, (10,)).latency_summary is None


def test_rag_report_round_trips_through_json():
    report = RagEvalReport(
        metrics={"exact_match": 0.5},
        coverage={"exact_match": 2},
        n_samples=3,
        per_sample=[{"exact_match": 1.0}, {"exact_match": 0.0}, {"exact_match": None}],
    )
    assert RagEvalReport.from_json(report.to_json()) == report
