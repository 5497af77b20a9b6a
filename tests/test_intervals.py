"""Confidence intervals of a single system's mean, against scipy and a hand resample."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from scipy import stats

from ef.evaluation import (
    MeanIntervals,
    RagEvalReport,
    RetrievalEvalReport,
    evaluate_rag,
    evaluate_retrieval,
    evaluate_run,
)
from ef.evaluation._report.intervals import mean_interval


def values(seed: int, n: int) -> list[float]:
    rng = random.Random(seed)
    return [rng.choice([0.0, 0.25, 1 / 3, 0.5, 1.0]) * rng.random() for _ in range(n)]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n", [2, 7, 300])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_t_interval_equals_scipy(seed, n, level):
    data = values(seed, n)
    expected = stats.t.interval(level, n - 1, loc=np.mean(data), scale=stats.sem(data))
    assert mean_interval(data, "t", confidence_level=level) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n", [5, 300])
def test_bootstrap_interval_equals_scipy_percentile_bootstrap(seed, n):
    data = values(seed, n)
    expected = stats.bootstrap(
        (data,),
        np.mean,
        method="percentile",
        n_resamples=2000,
        confidence_level=0.9,
        rng=np.random.default_rng(seed),
    ).confidence_interval
    got = mean_interval(data, "bootstrap", confidence_level=0.9, n_resamples=2000, seed=seed)
    assert got == pytest.approx((expected.low, expected.high), abs=1e-12)


def test_bootstrap_interval_is_the_percentiles_of_resampled_means():
    # By hand: draw the resamples as scipy does (indices from the seeded generator), take the
    # mean of each, and the 2.5th and 97.5th percentiles of those means.
    data = values(11, 40)
    rng = np.random.default_rng(3)
    indices = rng.integers(0, len(data), (4000, len(data)))
    means = np.asarray(data)[indices].mean(axis=-1)
    expected = np.percentile(means, [2.5, 97.5])
    got = mean_interval(data, "bootstrap", n_resamples=4000, seed=3)
    assert got == pytest.approx(tuple(expected), abs=1e-12)


def test_bootstrap_is_deterministic_and_the_seed_matters():
    data = values(5, 50)
    first = mean_interval(data, "bootstrap", seed=1)
    assert mean_interval(data, "bootstrap", seed=1) == first
    assert mean_interval(data, "bootstrap", seed=2) != first


def test_degenerate_values_have_a_defined_interval():
    assert mean_interval([0.3, 0.3, 0.3], "t") == (0.3, 0.3)
    assert mean_interval([0.3 - 0.2, 0.1], "bootstrap") == pytest.approx((0.1, 0.1))
    assert mean_interval([0.7], "t") is None


@pytest.mark.parametrize(
    ("method", "level", "match"),
    [
        ("normal", 0.95, "unknown interval 'normal'"),
        ("t", 1.0, "confidence_level"),
        ("t", 0, "confidence_level"),
    ],
)
def test_bad_options_are_refused(method, level, match):
    with pytest.raises(ValueError, match=match):
        mean_interval([0.1, 0.2], method, confidence_level=level)


# --- in reports ----------------------------------------------------------------------------

QRELS = {f"q{i}": {f"d{i}": 1.0, f"e{i}": 2.0} for i in range(30)}
RUN = {f"q{i}": [f"x{i}", f"d{i}"] if i % 3 else [f"e{i}", f"y{i}", f"d{i}"] for i in range(30)}


def test_evaluate_run_states_t_intervals_of_every_mean():
    report = evaluate_run(RUN, QRELS, k_values=(1, 3), interval="t", confidence_level=0.9)
    assert report.intervals is not None
    assert report.intervals.method == "t" and report.intervals.confidence_level == 0.9
    assert set(report.intervals.bounds) == set(report.metrics)
    for key, bounds in report.intervals.bounds.items():
        per_query = [row[key] for row in report.per_query.values()]
        expected = mean_interval(per_query, "t", confidence_level=0.9)
        assert bounds == expected
        assert bounds is not None and bounds[0] <= report.metrics[key] <= bounds[1]


def test_default_output_has_no_intervals_and_old_json_still_loads():
    report = evaluate_run(RUN, QRELS, k_values=(1,))
    assert report.intervals is None
    data = json.loads(report.to_json())
    del data["intervals"]  # a report saved before intervals existed
    assert RetrievalEvalReport.from_dict(data) == report


def test_bootstrap_intervals_record_their_seed_and_resamples_and_round_trip():
    report = evaluate_run(RUN, QRELS, k_values=(3,), metrics=("ndcg",), interval="bootstrap")
    assert report.intervals == MeanIntervals(
        "bootstrap",
        0.95,
        {"ndcg@3": mean_interval([r["ndcg@3"] for r in report.per_query.values()], "bootstrap")},
        n_resamples=10_000,
        seed=0,
    )
    assert RetrievalEvalReport.from_json(report.to_json()) == report
    again = report.with_intervals("bootstrap", n_resamples=500, seed=4)
    assert again.intervals is not None and again.intervals.n_resamples == 500


def test_evaluate_retrieval_takes_the_same_options():
    queries = {q: q for q in QRELS}

    def retriever(query, *, limit=10):
        return RUN[query][:limit]

    report = evaluate_retrieval(retriever, QRELS, queries, k_values=(3,), interval="t")
    assert report.intervals == evaluate_run(RUN, QRELS, k_values=(3,), interval="t").intervals


def test_a_bad_interval_is_refused_before_anything_runs():
    calls = []

    def retriever(query, *, limit=10):
        calls.append(query)
        return []

    with pytest.raises(ValueError, match="unknown interval 'wald'"):
        evaluate_retrieval(retriever, QRELS, {q: q for q in QRELS}, interval="wald")  # type: ignore[arg-type]
    assert calls == []


def test_sums_and_geometric_means_get_no_interval():
    report = evaluate_run(
        RUN, QRELS, metrics=("gm_map", "num_rel_ret", "map"), k_values=(3,), interval="t"
    )
    assert report.intervals is not None
    assert "map@3" in report.intervals.bounds
    assert "gm_map" not in report.intervals.bounds and "num_rel_ret" not in report.intervals.bounds


def test_a_single_query_has_no_interval():
    report = evaluate_run(
        {"q1": ["d1"]}, {"q1": {"d1": 1.0, "d2": 1.0}}, k_values=(1,), interval="t"
    )
    assert report.intervals is not None
    assert set(report.intervals.bounds.values()) == {None}


def test_rag_intervals_are_over_the_samples_a_metric_applied_to():
    samples = [
        {
            "user_input": f"q{i}",
            "response": "paris" if i % 3 else "london",
            "retrieved_contexts": [],
        }
        | ({"reference": "paris"} if i % 4 else {})
        for i in range(20)
    ]
    report = evaluate_rag(samples, metrics=("exact_match", "non_empty_rate"), interval="t")
    applied = [s["exact_match"] for s in report.per_sample if s["exact_match"] is not None]
    assert report.intervals is not None
    assert report.intervals.bounds["exact_match"] == pytest.approx(
        stats.t.interval(0.95, len(applied) - 1, loc=np.mean(applied), scale=stats.sem(applied)),
        abs=1e-12,
    )
    assert report.intervals.bounds["non_empty_rate"] == (0.0, 0.0)
    assert RagEvalReport.from_json(report.to_json()) == report


def test_dataframe_of_means_gains_interval_columns_only_when_asked():
    plain = evaluate_run(RUN, QRELS, k_values=(1,), metrics=("mrr",))
    assert list(plain.to_pandas(means=True).columns) == ["metric", "value"]
    frame = plain.with_intervals("t").to_pandas(means=True)
    assert list(frame.columns) == ["metric", "value", "ci_low", "ci_high"]
    low, high = plain.with_intervals("t").intervals.bounds["mrr@1"]
    assert (frame["ci_low"][0], frame["ci_high"][0]) == (low, high)


def test_resamples_drawn_in_batches_are_the_resamples_of_one_batch(monkeypatch):
    # Memory stays bounded for a large query set; the interval is the one scipy gives unbatched.
    import ef.evaluation._report.intervals as intervals

    data = values(8, 301)
    whole = mean_interval(data, "bootstrap", n_resamples=1001, seed=5)
    monkeypatch.setattr(intervals, "MAX_RESAMPLED_VALUES", 301 * 77)
    assert mean_interval(data, "bootstrap", n_resamples=1001, seed=5) == whole
    expected = stats.bootstrap(
        (data,), np.mean, method="percentile", n_resamples=1001, rng=np.random.default_rng(5)
    ).confidence_interval
    assert whole == (expected.low, expected.high)
