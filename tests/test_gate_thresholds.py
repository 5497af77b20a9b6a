"""The gate's thresholds at their edges: a floor met exactly, a drop of exactly the tolerated
size, values a hair either side of each, and the significance rule's own edges (an improvement,
``p == alpha``).

A mean at a threshold is judged within the gate's tolerance (``TOLERANCE``, an absolute 1e-9):
binary floats make ``0.70 - 0.69`` a little more than ``0.01``, and a gate must not fail a drop
the user tolerated in decimal.
"""

from __future__ import annotations

import math

import pytest

from ef.evaluation import RetrievalEvalReport, check, evaluate_run, parse_rule
from ef.evaluation._gate.check import TOLERANCE

QRELS = {f"q{i:03}": {"d1": 1} for i in range(100)}


def _hits(n: int) -> RetrievalEvalReport:
    """A run that finds ``d1`` for the first ``n`` of the 100 queries: recall@10 is n / 100."""
    run = {q: ({"d1": 1.0} if i < n else {"other": 1.0}) for i, q in enumerate(QRELS)}
    return evaluate_run(run, QRELS, metrics=["recall@10"], k_values=(1,))


def _flat(value: float, n: int = 4) -> RetrievalEvalReport:
    """A report whose ``ndcg@10`` is ``value`` on each of ``n`` queries."""
    per_query = {f"q{i}": {"ndcg@10": value} for i in range(n)}
    return RetrievalEvalReport({"ndcg@10": value}, per_query, n, (10,))


def test_the_tolerance_is_a_small_absolute_number():
    assert TOLERANCE == 1e-9


@pytest.mark.parametrize(("before", "after", "drop"), [(70, 69, "0.01"), (80, 75, "0.05")])
def test_a_drop_equal_to_the_tolerated_one_passes(before, after, drop):
    report = check(_hits(after), _hits(before), [parse_rule(f"recall@10: max_drop = {drop}")])
    assert report.passed, report.results[0].reason
    assert report.results[0].reason == f"dropped {drop}00, within the tolerated {drop}"


def test_a_drop_one_query_more_than_tolerated_fails():
    report = check(_hits(68), _hits(70), [parse_rule("recall@10: max_drop = 0.01")])
    assert not report.passed
    assert report.results[0].reason == "dropped 0.0200, more than the tolerated 0.01"


def test_a_mean_exactly_at_the_floor_passes():
    report = check(_hits(69), _hits(70), [parse_rule("recall@10 >= 0.69")])
    assert report.passed
    assert report.results[0].reason == "0.6900 is at least the floor 0.69"


@pytest.mark.parametrize(
    ("offset", "passed"),
    [(1e-12, True), (-1e-12, True), (1e-6, True), (-1e-6, False)],
)
def test_a_floor_is_judged_within_the_tolerance(offset, passed):
    value = 0.5 + offset
    assert check(_flat(value), _flat(value), [parse_rule("ndcg@10 >= 0.5")]).passed is passed


@pytest.mark.parametrize(
    ("extra", "passed"),
    [(1e-12, True), (-1e-12, True), (1e-6, False), (-1e-6, True)],
)
def test_a_tolerated_drop_is_judged_within_the_tolerance(extra, passed):
    """A drop of 0.1 plus ``extra``: a hair over still passes, a millionth over fails."""
    rule = parse_rule("ndcg@10: max_drop = 0.1")
    assert check(_flat(0.5 - extra), _flat(0.6), [rule]).passed is passed


def test_a_floor_holds_at_exactly_the_tolerance_below_it_and_not_a_float_further():
    edge = 0.5 - TOLERANCE
    rule = parse_rule("ndcg@10 >= 0.5")
    assert check(_flat(edge, n=2), _flat(0.5, n=2), [rule]).passed
    below = math.nextafter(edge, 0.0)
    assert not check(_flat(below, n=2), _flat(0.5, n=2), [rule]).passed


def test_a_drop_holds_at_exactly_the_tolerance_past_it_and_not_a_float_further():
    # Sterbenz: 0.5 - 0.25000000100000002 and back are exact, so the drop is exactly the edge.
    edge = 0.25 + TOLERANCE
    rule = parse_rule("ndcg@10: max_drop = 0.25")
    now = 0.5 - edge
    assert 0.5 - now == edge
    assert check(_flat(now, n=2), _flat(0.5, n=2), [rule]).passed
    lower = math.nextafter(now, 0.0)
    assert not check(_flat(lower, n=2), _flat(0.5, n=2), [rule]).passed


@pytest.mark.parametrize(("now", "reason"), [(0.5, "no drop"), (0.75, "no drop")])
def test_a_run_equal_to_or_better_than_its_baseline_did_not_drop(now, reason):
    rule = parse_rule("ndcg@10: max_drop = 0.25")
    assert check(_flat(now), _flat(0.5), [rule]).results[0].reason == reason


def _scattered(shift: float, n: int = 30) -> RetrievalEvalReport:
    """A report whose per-query ``ndcg@10`` varies around 0.5 + ``shift`` (a paired test on
    two of them with different shifts sees a real difference)."""
    per_query = {f"q{i}": {"ndcg@10": 0.4 + (i % 5) * 0.05 + shift} for i in range(n)}
    mean = sum(v["ndcg@10"] for v in per_query.values()) / n
    return RetrievalEvalReport({"ndcg@10": mean}, per_query, n, (10,))


SIGNIFICANTLY_WORSE = parse_rule('ndcg@10: fail_if = "significantly_worse"')


def test_a_significant_improvement_passes_the_significance_rule():
    report = check(_scattered(0.1), _scattered(0.0), [SIGNIFICANTLY_WORSE])
    [result] = report.results
    assert result.p_value is not None and result.p_value < 0.05  # significant, but better
    assert result.passed
    assert result.reason == "not worse than the baseline"


def _worse() -> RetrievalEvalReport:
    """``_scattered(0.0)`` with 3 of its 30 queries 0.2 lower: a loss a t-test finds."""
    report = _scattered(0.0)
    per_query = {
        q: {"ndcg@10": v["ndcg@10"] - (0.2 if i < 3 else 0.0)}
        for i, (q, v) in enumerate(report.per_query.items())
    }
    mean = sum(v["ndcg@10"] for v in per_query.values()) / len(per_query)
    return RetrievalEvalReport({"ndcg@10": mean}, per_query, len(per_query), (10,))


def test_a_p_value_equal_to_alpha_is_not_significant():
    """The rule is p < alpha: at p == alpha the loss is not significant, and the rule holds."""
    p = check(_worse(), _scattered(0.0), [SIGNIFICANTLY_WORSE]).results[0].p_value
    assert p is not None and 0 < p < 1
    at = check(_worse(), _scattered(0.0), [SIGNIFICANTLY_WORSE], alpha=p).results[0]
    assert at.p_value == p
    assert at.passed
    assert at.reason.startswith("lower, but not significantly")
    above = check(_worse(), _scattered(0.0), [SIGNIFICANTLY_WORSE], alpha=p * (1 + 1e-9))
    assert not above.passed


def _values(values: list[float]) -> RetrievalEvalReport:
    per_query = {f"q{i}": {"ndcg@10": value} for i, value in enumerate(values)}
    return RetrievalEvalReport(
        {"ndcg@10": sum(values) / len(values)}, per_query, len(values), (10,)
    )


def test_a_mean_difference_of_zero_is_not_worse_even_when_the_ranks_differ():
    """Sixteen queries gain 1/16 and one loses 1: the means are equal (exactly, in binary),
    while the signed-rank test finds the gains significant. A significance rule fails only
    a run that is lower."""
    baseline = _values([0.9375] * 16 + [1.0])
    current = _values([1.0] * 16 + [0.0])
    report = check(current, baseline, [SIGNIFICANTLY_WORSE], test="wilcoxon")
    result = report.results[0]
    assert result.difference == 0.0
    assert result.p_value is not None and result.p_value < 0.05
    assert report.passed
    assert result.reason == "not worse than the baseline"


@pytest.mark.parametrize("written", ["ndcg@10: max_drop = -0.01", "ndcg@10: max_drop = -0"])
def test_a_negative_tolerated_drop_is_refused(written):
    if written.endswith("-0"):  # minus zero is zero: no drop tolerated, not a negative one
        assert parse_rule(written).threshold == 0
        return
    with pytest.raises(ValueError, match=rf"^rule '{written}': max_drop of 'ndcg@10' must be 0"):
        parse_rule(written)


def test_queries_that_differ_under_equal_fingerprints_are_refused():
    baseline, current = _scattered(0.0), _scattered(0.0, n=29)
    with pytest.raises(ValueError, match=r"other queries \(1 only in the baseline, 0 only now\)"):
        check(current, baseline, [SIGNIFICANTLY_WORSE])
    allowed = check(current, baseline, [SIGNIFICANTLY_WORSE], allow_changed_qrels=True)
    assert allowed.n_queries == 29
