"""compare(): pairing by query id, the report, edge cases, and agreement with ranx."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import MissingQueriesWarning
from ef.evaluation._compare.compare import compare
from ef.evaluation._compare.report import ComparisonReport, PairedComparison
from ef.evaluation._compare.stats import adjust_p_values, paired_t_test, randomization_test
from ef.evaluation._report.reports import QueryFailure, RetrievalEvalReport
from ef.evaluation._running.evaluate import evaluate_run

ALL_TESTS = ("t-test", "randomization", "wilcoxon", "bootstrap")


def scored(values: dict[str, float], metric: str = "ndcg@10", **options) -> RetrievalEvalReport:
    """A report holding ``values`` as the per-query values of ``metric``."""
    per_query = {query_id: {metric: value} for query_id, value in values.items()}
    mean = math.fsum(values.values()) / len(values) if values else 0.0
    return RetrievalEvalReport({metric: mean}, per_query, len(values), (10,), **options)


def random_values(seed: int, n: int = 30, shift: float = 0.0) -> dict[str, float]:
    rng = random.Random(seed)
    return {f"q{i}": min(1.0, max(0.0, rng.random() + shift)) for i in range(n)}


def no_nan(value: object) -> bool:
    if isinstance(value, float):
        return not math.isnan(value)
    if isinstance(value, dict):
        return all(no_nan(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(no_nan(v) for v in value)
    return True


# --- pairing -----------------------------------------------------------------------------


def test_values_are_paired_by_query_id_not_by_position():
    baseline, system = random_values(1), random_values(2, shift=0.1)
    reversed_system = dict(reversed(list(system.items())))
    ordered = compare({"b": scored(baseline), "s": scored(system)}, baseline="b", tests=ALL_TESTS)
    shuffled = compare(
        {"b": scored(baseline), "s": scored(reversed_system)}, baseline="b", tests=ALL_TESTS
    )
    assert shuffled == ordered
    queries = list(baseline)
    row = ordered.comparison("s", "ndcg@10")
    expected = paired_t_test([system[q] for q in queries], [baseline[q] for q in queries])
    assert row.p_values["t-test"] == pytest.approx(expected, rel=1e-12)


def test_a_system_missing_queries_is_an_error_naming_them():
    baseline = random_values(1, n=5)
    partial = {q: v for q, v in baseline.items() if q not in {"q1", "q3"}}
    with pytest.raises(ValueError, match=r"system 'dense' lacks 2 queries: 'q1', 'q3'"):
        compare({"bm25": scored(baseline), "dense": scored(partial)}, baseline="bm25")
    # The other way round too: the baseline lacks what a system has.
    with pytest.raises(ValueError, match=r"system 'bm25' lacks 2 queries: 'q1', 'q3'"):
        compare({"bm25": scored(partial), "dense": scored(baseline)}, baseline="bm25")


def test_many_missing_queries_are_listed_in_part():
    baseline = random_values(1, n=40)
    with pytest.raises(ValueError, match=r"lacks 39 queries: .* and 29 more"):
        compare({"b": scored(baseline), "s": scored({"q0": 0.5})}, baseline="b")


def test_a_report_with_failed_queries_is_not_paired_on_fewer_queries():
    values = random_values(1, n=4)
    failure = QueryFailure("q2", "TimeoutError", "timed out", 3)
    failed = scored({q: v for q, v in values.items() if q != "q2"}, failures=[failure])
    with pytest.raises(ValueError, match=r"system 'b': .*failed queries \('q2'\)"):
        compare({"a": scored(values), "b": failed}, baseline="a")
    with pytest.raises(ValueError, match="failed queries"):
        compare({"a": failed, "b": failed}, baseline="a")


def test_a_metric_missing_from_a_report_is_an_error_naming_what_it_has():
    reports = {"b": scored(random_values(1)), "s": scored(random_values(2))}
    with pytest.raises(ValueError, match=r"system 'b' has no 'map@100' .*it has: ndcg@10"):
        compare(reports, baseline="b", metrics=("map@100",))


def test_runs_are_scored_against_qrels_and_a_missing_query_scores_zero():
    qrels = {"q1": {"d1": 1.0}, "q2": {"d2": 2.0, "d3": 1.0}, "q3": {"d4": 1.0}}
    runs = {
        "bm25": {"q1": ["x", "d1"], "q2": {"d3": 2.0, "d2": 1.0}},
        "dense": {"q1": ["d1"], "q2": ["d2", "d3"], "q3": ["d4"]},
    }
    metrics = ("ndcg@10", "map@100", "recall@1")
    with pytest.warns(MissingQueriesWarning, match="1 of 3 judged queries are not in system 'bm"):
        report = compare(runs, qrels, baseline="bm25", metrics=metrics, tests=("t-test",))
    for name, run in runs.items():
        expected = evaluate_run(
            run,
            qrels,
            k_values=(1, 10, 100),
            metrics=("ndcg", "map", "recall"),
            missing_queries="zero",
        )
        for metric in metrics:
            assert report.means[name][metric] == pytest.approx(expected.metrics[metric])
    assert report.n_queries == 3
    row = report.comparison("dense", "recall@1")
    assert (row.wins, row.ties, row.losses) == (2, 1, 0)


def test_reports_and_runs_mix():
    qrels = {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}
    run = {"q1": ["d1"], "q2": ["x", "d2"]}
    report = evaluate_run(run, qrels, k_values=(10,), metrics=("ndcg",))
    result = compare(
        {"saved": report, "live": {"q1": ["d1"], "q2": ["d2"]}}, qrels, baseline="saved"
    )
    assert result.comparison("live", "ndcg@10").wins == 1
    assert result.comparison("live", "ndcg@10").ties == 1


def test_a_run_without_qrels_is_an_error():
    with pytest.raises(ValueError, match="system 'live' is a run: pass qrels="):
        compare({"saved": scored({"q1": 0.5}), "live": {"q1": ["d1"]}}, baseline="saved")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"baseline": "nope"}, "baseline 'nope' is not one of the systems"),
        ({"tests": ("z-test",)}, "unknown test 'z-test'"),
        ({"tests": ()}, "tests must be a non-empty"),
        ({"tests": "t-test"}, "tests must be a non-empty sequence"),
        ({"metrics": ()}, "metrics must be a non-empty"),
        ({"metrics": ("ndcg@ten",)}, r"unknown metric name\(s\) 'ndcg@ten'; closest: 'ndcg@10'"),
        ({"correction": "sidak"}, "unknown correction 'sidak'"),
        ({"alpha": 1.5}, "alpha must be in"),
    ],
)
def test_bad_options_are_refused(options, message):
    systems = {"bm25": {"q1": ["d1"]}, "dense": {"q1": ["d2"]}}
    arguments = {"baseline": "bm25", **options}
    with pytest.raises(ValueError, match=message):
        compare(systems, {"q1": {"d1": 1.0}}, **arguments)


def test_a_baseline_alone_and_a_foreign_object_are_refused():
    with pytest.raises(ValueError, match="at least one system besides the baseline"):
        compare({"b": scored({"q1": 0.5})}, baseline="b")
    with pytest.raises(TypeError, match="system 's': expected a RetrievalEvalReport or a run"):
        compare({"b": scored({"q1": 0.5}), "s": [0.5]}, baseline="b")  # type: ignore[dict-item]


# --- edge cases --------------------------------------------------------------------------


def test_identical_systems_give_p_one_no_nan_and_a_zero_interval():
    values = random_values(4, n=12)
    report = compare(
        {"a": scored(values), "b": scored(values)}, baseline="a", tests=ALL_TESTS, correction="bh"
    )
    row = report.comparison("b", "ndcg@10")
    assert row.p_values == {"t-test": 1.0, "randomization": 1.0, "wilcoxon": 1.0}
    assert row.adjusted_p_values == row.p_values
    assert (row.effect_size, row.confidence_interval, row.difference) == (0.0, (0.0, 0.0), 0.0)
    assert (row.wins, row.ties, row.losses) == (0, 12, 0)
    assert not any(report.significant("b", "ndcg@10", test) for test in ALL_TESTS)
    assert no_nan(report.to_dict())


def test_one_query():
    report = compare(
        {"a": scored({"q1": 0.25}), "b": scored({"q1": 0.75})}, baseline="a", tests=ALL_TESTS
    )
    row = report.comparison("b", "ndcg@10")
    assert row.p_values == {"t-test": None, "randomization": 1.0, "wilcoxon": 1.0}
    assert row.adjusted_p_values["t-test"] is None
    assert row.effect_size is None
    assert row.confidence_interval is None
    assert (row.wins, row.ties, row.losses) == (1, 0, 0)
    assert not report.significant("b", "ndcg@10")
    assert not report.significant("b", "ndcg@10", "bootstrap")
    assert no_nan(report.to_dict())


def test_all_ties_on_a_metric_that_cannot_separate_the_systems():
    qrels = {f"q{i}": {f"d{i}": 1.0} for i in range(6)}
    runs = {
        "first": {f"q{i}": [f"d{i}", "x"] for i in range(6)},
        "second": {f"q{i}": [f"d{i}", "y", "z"] for i in range(6)},
    }
    report = compare(runs, qrels, baseline="first", metrics=("mrr@10",), tests=ALL_TESTS)
    row = report.comparison("second", "mrr@10")
    assert (row.wins, row.ties, row.losses) == (0, 6, 0)
    assert set(row.p_values.values()) == {1.0}
    assert report.best("mrr@10") == ("first", "second")


def test_every_query_better_by_the_same_amount():
    report = compare(
        {"a": scored({"q1": 0.25, "q2": 0.5}), "b": scored({"q1": 0.5, "q2": 0.75})},
        baseline="a",
        tests=ALL_TESTS,
    )
    row = report.comparison("b", "ndcg@10")
    assert row.p_values["t-test"] == 0.0
    assert row.effect_size is None
    assert row.confidence_interval == (0.25, 0.25)
    assert no_nan(report.to_dict())


# --- the family of comparisons and determinism -------------------------------------------


@pytest.mark.parametrize("correction", ["holm", "bonferroni", "bh", None])
def test_corrections_run_over_the_systems_compared_with_the_baseline(correction):
    systems = {"base": scored(random_values(0))}
    systems |= {f"s{i}": scored(random_values(i, shift=0.05 * i)) for i in range(1, 5)}
    report = compare(systems, baseline="base", tests=("t-test", "wilcoxon"), correction=correction)
    for test in ("t-test", "wilcoxon"):
        rows = [report.comparison(f"s{i}", "ndcg@10") for i in range(1, 5)]
        expected = adjust_p_values([row.p_values[test] for row in rows], correction)
        assert [row.adjusted_p_values[test] for row in rows] == expected
        for row in rows:
            assert report.significant(row.system, "ndcg@10", test) == (
                row.adjusted_p_values[test] <= report.alpha
            )


def test_undefined_p_values_stay_out_of_the_family():
    systems = {
        "a": scored({"q1": 0.25}),
        "b": scored({"q1": 0.75}),
        "c": scored({"q1": 0.25}),
    }
    report = compare(systems, baseline="a", tests=("t-test",), correction="bonferroni")
    assert report.comparison("b", "ndcg@10").adjusted_p_values == {"t-test": None}
    assert report.comparison("c", "ndcg@10").adjusted_p_values == {"t-test": 1.0}


def test_the_same_seed_gives_the_same_report_and_the_seed_is_used():
    systems = {"b": scored(random_values(1, n=40)), "s": scored(random_values(2, n=40))}
    first = compare(systems, baseline="b", tests=ALL_TESTS, n_permutations=500, n_resamples=500)
    again = compare(systems, baseline="b", tests=ALL_TESTS, n_permutations=500, n_resamples=500)
    other = compare(
        systems, baseline="b", tests=ALL_TESTS, n_permutations=500, n_resamples=500, seed=1
    )
    assert again == first
    assert other.comparison("s", "ndcg@10") != first.comparison("s", "ndcg@10")
    row = first.comparison("s", "ndcg@10")
    queries = list(systems["b"].per_query)
    expected = randomization_test(
        [systems["s"].per_query[q]["ndcg@10"] for q in queries],
        [systems["b"].per_query[q]["ndcg@10"] for q in queries],
        n_permutations=500,
        seed=0,
    )
    assert row.p_values["randomization"] == expected


def test_each_comparison_draws_from_its_own_generator():
    # Adding a system must not change the random tests of the others.
    two = {"b": scored(random_values(1)), "s": scored(random_values(2))}
    three = {**two, "t": scored(random_values(3))}
    options = {"baseline": "b", "tests": ("randomization",), "correction": None}
    assert compare(three, **options).comparison("s", "ndcg@10") == compare(
        two, **options
    ).comparison("s", "ndcg@10")


# --- the report --------------------------------------------------------------------------


def test_report_shape_and_lookups():
    systems = {
        "bm25": scored(random_values(1)),
        "dense": scored(random_values(2, shift=0.3)),
        "hybrid": scored(random_values(3, shift=0.1)),
    }
    report = compare(systems, baseline="dense", tests=("wilcoxon", "bootstrap"))
    assert report.systems == ("dense", "bm25", "hybrid")
    assert [(row.system, row.metric) for row in report.comparisons] == [
        ("bm25", "ndcg@10"),
        ("hybrid", "ndcg@10"),
    ]
    for name, system in systems.items():
        assert report.means[name]["ndcg@10"] == pytest.approx(system.metrics["ndcg@10"])
    assert report.best("ndcg@10") == ("dense",)
    with pytest.raises(KeyError, match="no comparison of system 'dense'"):
        report.comparison("dense", "ndcg@10")
    with pytest.raises(KeyError, match="test 't-test' was not run"):
        report.significant("bm25", "ndcg@10", "t-test")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        report.seed = 3  # type: ignore[misc]


comparisons = st.builds(
    PairedComparison,
    system=st.text(min_size=1),
    metric=st.sampled_from(["ndcg@10", "map@100", "bpref"]),
    mean=st.floats(0, 1),
    baseline_mean=st.floats(0, 1),
    difference=st.floats(-1, 1),
    wins=st.integers(0, 50),
    ties=st.integers(0, 50),
    losses=st.integers(0, 50),
    effect_size=st.none() | st.floats(-5, 5),
    p_values=st.dictionaries(st.sampled_from(ALL_TESTS[:3]), st.none() | st.floats(0, 1)),
    adjusted_p_values=st.dictionaries(st.sampled_from(ALL_TESTS[:3]), st.none() | st.floats(0, 1)),
    confidence_interval=st.none() | st.tuples(st.floats(-1, 0), st.floats(0, 1)),
)


@settings(max_examples=50, deadline=None)
@given(st.lists(comparisons, max_size=4), st.sampled_from(["holm", "bh", "bonferroni", None]))
def test_report_round_trips_through_json(rows, correction):
    report = ComparisonReport(
        baseline="bm25",
        systems=["bm25", "dense"],
        metrics=["ndcg@10"],
        means={"bm25": {"ndcg@10": 0.25}, "dense": {"ndcg@10": 0.5}},
        comparisons=rows,
        n_queries=7,
        tests=["t-test", "bootstrap"],
        correction=correction,
        alpha=0.01,
        seed=42,
    )
    assert ComparisonReport.from_json(report.to_json()) == report


def test_computed_report_round_trips_through_json():
    systems = {"b": scored(random_values(1)), "s": scored(random_values(2))}
    report = compare(systems, baseline="b", tests=ALL_TESTS, n_permutations=200, n_resamples=200)
    assert ComparisonReport.from_json(report.to_json()) == report
    assert ComparisonReport.from_dict(report.to_dict()) == report
    assert json.loads(report.to_json()) == report.to_dict()


# --- scipy stays optional ----------------------------------------------------------------


def test_importing_the_comparison_does_not_import_scipy():
    code = (
        "import sys, ef.evaluation._compare.compare, ef.evaluation._compare.render; "
        "sys.exit('scipy' in sys.modules or 'numpy' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False, timeout=60).returncode == 0


def test_compare_without_scipy_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.stats", None)
    systems = {"b": scored({"q1": 0.5, "q2": 0.25}), "s": scored({"q1": 0.75, "q2": 0.5})}
    with pytest.raises(ImportError, match=r"pip install 'ef-evaluation\[stats\]'"):
        compare(systems, baseline="b")
