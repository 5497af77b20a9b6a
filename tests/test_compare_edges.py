"""compare() and the paired statistics at their edges: rounding noise and how metrics are named.

A system better by exactly 0.1 on every query is a constant difference, even when floating
point gives some of those differences as 0.09999999999999998: the tests must say so (p = 0,
no effect size) instead of reading the noise as variance (p ~ 1e-16, d ~ 1e15).
"""

from __future__ import annotations

import math

import pytest
from scipy import stats

from ef.evaluation import hookimpl
from ef.evaluation._compare.compare import compare
from ef.evaluation._compare.stats import (
    bootstrap_interval,
    cohens_d,
    paired_t_test,
    randomization_test,
    wilcoxon_test,
)
from ef.evaluation._report.reports import RetrievalEvalReport
from ef.evaluation._running.evaluate import evaluate_run
from ef.evaluation.testing import registered_plugin

# 0.3 - 0.2 == 0.09999999999999998 and 0.2 - 0.1 == 0.1: one difference, written two ways.
SYSTEM = [0.3, 0.2, 0.3, 0.2, 0.7]
BASELINE = [0.2, 0.1, 0.2, 0.1, 0.6]


def scored(values: list[float], metric: str = "ndcg@10") -> RetrievalEvalReport:
    per_query = {f"q{i}": {metric: value} for i, value in enumerate(values)}
    return RetrievalEvalReport(
        {metric: math.fsum(values) / len(values)}, per_query, len(values), (10,)
    )


def test_the_inputs_really_carry_float_noise():
    differences = {s - b for s, b in zip(SYSTEM, BASELINE, strict=True)}
    assert len(differences) > 1 and max(differences) - min(differences) < 1e-15


@pytest.mark.parametrize("n", [2, 5])
def test_a_constant_difference_with_float_noise_is_constant(n):
    system, baseline = SYSTEM[:n], BASELINE[:n]
    assert paired_t_test(system, baseline) == 0.0  # was 8.8e-17 for n = 2
    assert cohens_d(system, baseline) is None  # was 5.1e15 for n = 2
    low, high = bootstrap_interval(system, baseline)
    assert low == high == pytest.approx(0.1, abs=1e-15)


def test_differences_zero_up_to_float_noise_are_identical_systems():
    system, baseline = [0.1 + 0.2, 0.5, 0.25], [0.3, 0.5, 0.25]  # 0.30000000000000004 vs 0.3
    assert system != baseline
    assert paired_t_test(system, baseline) == 1.0
    assert wilcoxon_test(system, baseline) == 1.0
    assert randomization_test(system, baseline) == 1.0
    assert cohens_d(system, baseline) == 0.0
    assert bootstrap_interval(system, baseline) == (0.0, 0.0)


def test_the_tolerance_scales_with_the_largest_value():
    # Values near 1e6 (a count, say) carry noise of ~1e-10 in their differences.
    system = [1e6 + 0.1, 2e6 + 0.1, 3e6 + 0.1]
    baseline = [1e6, 2e6, 3e6]
    differences = [s - b for s, b in zip(system, baseline, strict=True)]
    assert max(differences) - min(differences) > 1e-12
    assert paired_t_test(system, baseline) == 0.0
    assert cohens_d(system, baseline) is None


def test_a_real_spread_just_above_the_tolerance_is_tested_as_scipy_does():
    system, baseline = [0.1, 0.1 + 1e-9, 0.1 - 1e-9], [0.0, 0.0, 0.0]
    expected = float(stats.ttest_rel(system, baseline).pvalue)
    assert paired_t_test(system, baseline) == expected > 0.0
    d = cohens_d(system, baseline)
    assert d is not None and d == pytest.approx(0.1 / 1e-9, rel=1e-6)


def test_compare_reports_a_noisy_constant_difference_as_constant():
    report = compare(
        {"base": scored(BASELINE), "better": scored(SYSTEM)},
        baseline="base",
        tests=("t-test", "bootstrap"),
    )
    row = report.comparison("better", "ndcg@10")
    assert row.effect_size is None
    assert row.p_values["t-test"] == 0.0
    assert row.confidence_interval == pytest.approx((0.1, 0.1), abs=1e-15)
    assert (row.wins, row.ties, row.losses) == (5, 0, 0)


# how metrics are named

QRELS = {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}
RUNS = {"a": {"q1": ["d1"], "q2": ["d9", "d2"]}, "b": {"q1": ["d9", "d1"], "q2": ["d2"]}}


def test_a_cutoff_metric_named_alone_on_runs_says_how_to_name_it():
    with pytest.raises(ValueError) as caught:
        compare(RUNS, QRELS, baseline="a", metrics=("map",))
    message = str(caught.value)
    assert message.startswith("metric key 'map': 'map' is reported at a cutoff: name it 'map@K'")
    # The placeholder cutoff the plan scored runs at is not shown as if it were a key to use.
    assert "'map@1'" not in message and "it has" not in message


def test_a_cutoff_metric_named_alone_on_reports_suggests_a_key_they_have():
    reports = {name: evaluate_run(run, QRELS, k_values=(5,)) for name, run in RUNS.items()}
    with pytest.raises(ValueError, match=r"name it 'map@K', such as 'map@5'"):
        compare(reports, baseline="a", metrics=("map",))


def test_a_missing_cutoff_on_reports_lists_what_they_have_without_a_naming_rule():
    reports = {name: evaluate_run(run, QRELS, k_values=(10,)) for name, run in RUNS.items()}
    with pytest.raises(ValueError) as caught:
        compare(reports, baseline="a", metrics=("map@5",))
    assert str(caught.value).endswith("(it has: map@10, mrr@10, ndcg@10, precision@10, recall@10)")


class CutofflessPlugin:
    @hookimpl
    def ef_evaluation_register_metrics(self, register):
        register("returned", lambda ranked, relevant: float(len(ranked)), cutoff=False)


def test_a_metric_without_cutoff_named_with_one_says_to_name_it_alone():
    with registered_plugin(CutofflessPlugin(), name="cutoffless"):
        with pytest.raises(
            ValueError,
            match=r"^metric 'returned@10': 'returned' \(plugin 'cutoffless'\) takes no cutoff "
            r"or parameters; write 'returned'$",
        ):
            compare(RUNS, QRELS, baseline="a", metrics=("returned@10",))
        report = compare(RUNS, QRELS, baseline="a", metrics=("returned",), tests=("t-test",))
    assert report.means == {"a": {"returned": 1.5}, "b": {"returned": 1.5}}
