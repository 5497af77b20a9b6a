"""Paired tests, the bootstrap interval, Cohen's d and the corrections, against oracles.

The oracles are independent of the code under test: brute-force enumeration of every sign
swap (randomisation, Wilcoxon), the t statistic computed by hand with Student's distribution,
a numpy bootstrap of our own, the stdlib's mean and standard deviation, and the textbook
examples and step-down / step-up procedures of Holm and of Benjamini and Hochberg.
"""

from __future__ import annotations

import itertools
import math
import statistics
import sys

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats

from ef.evaluation._compare.stats import (
    adjust_p_values,
    bootstrap_interval,
    cohens_d,
    paired_t_test,
    randomization_test,
    wilcoxon_test,
)

# Multiples of 1/16: sums and differences are exact, so oracle and code see the same numbers.
grid = st.integers(0, 16).map(lambda i: i / 16)


def paired(min_size: int = 1, max_size: int = 10) -> st.SearchStrategy[tuple[list[float], ...]]:
    return st.integers(min_size, max_size).flatmap(
        lambda n: st.tuples(
            st.lists(grid, min_size=n, max_size=n), st.lists(grid, min_size=n, max_size=n)
        )
    )


def exact_randomization_p(differences: list[float]) -> float:
    """Share of all 2**n sign swaps whose |mean| reaches the observed one."""
    observed = abs(sum(differences))
    hits = sum(
        abs(sum(s * d for s, d in zip(signs, differences, strict=True))) >= observed
        for signs in itertools.product((1, -1), repeat=len(differences))
    )
    return hits / 2 ** len(differences)


# --- randomisation -----------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(paired(1, 9))
def test_randomization_is_exact_when_every_swap_fits_the_budget(pair):
    system, baseline = pair
    differences = [s - b for s, b in zip(system, baseline, strict=True)]
    p_value = randomization_test(system, baseline, n_permutations=2 ** len(system))
    assert p_value == pytest.approx(exact_randomization_p(differences), abs=1e-12)


def test_randomization_estimate_is_within_monte_carlo_error_of_the_exact_value():
    rng = np.random.default_rng(7)
    system = rng.integers(0, 17, 16) / 16
    baseline = np.clip(system - rng.integers(-3, 5, 16) / 16, 0, 1)
    signs = 1 - 2 * ((np.arange(2**16)[:, None] >> np.arange(16)) & 1)
    differences = system - baseline
    exact = np.mean(np.abs(signs @ differences) >= abs(differences.sum()))
    estimate = randomization_test(list(system), list(baseline), n_permutations=10_000, seed=3)
    # Standard error sqrt(p (1 - p) / 10_000) <= 0.005: 0.02 is four of them.
    assert estimate == pytest.approx(exact, abs=0.02)
    assert 0.0 < exact < 1.0


def test_randomization_same_seed_same_p_value_and_the_seed_matters():
    rng = np.random.default_rng(11)
    system, baseline = list(rng.random(30)), list(rng.random(30))
    first = randomization_test(system, baseline, n_permutations=2_000, seed=5)
    assert randomization_test(system, baseline, n_permutations=2_000, seed=5) == first
    assert randomization_test(system, baseline, n_permutations=2_000, seed=6) != first


def test_randomization_p_value_is_never_zero_when_estimated():
    system, baseline = [1.0] * 30, [0.0] * 30
    assert randomization_test(system, baseline, n_permutations=99) == pytest.approx(1 / 100)


# --- t-test ------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(paired(2, 12))
def test_t_test_matches_the_t_statistic_computed_by_hand(pair):
    system, baseline = pair
    differences = [s - b for s, b in zip(system, baseline, strict=True)]
    assume(len(set(differences)) > 1)
    n = len(differences)
    t = statistics.fmean(differences) / (statistics.stdev(differences) / math.sqrt(n))
    expected = 2 * stats.t.sf(abs(t), n - 1)
    assert paired_t_test(system, baseline) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_t_test_on_constant_differences_is_the_limit_of_the_test():
    assert paired_t_test([0.5, 0.5, 0.5], [0.5, 0.5, 0.5]) == 1.0
    assert paired_t_test([0.75, 0.5, 1.0], [0.5, 0.25, 0.75]) == 0.0
    assert paired_t_test([0.75], [0.5]) is None
    assert paired_t_test([0.5], [0.5]) == 1.0


# --- Wilcoxon ----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(1, 16), min_size=1, max_size=10, unique=True),
    st.lists(st.booleans(), min_size=10, max_size=10),
)
def test_wilcoxon_matches_the_exact_signed_rank_distribution(magnitudes, negative):
    # Distinct non-zero magnitudes: no ties, no zeros, so the exact distribution applies.
    differences = [
        (-m if neg else m) / 16
        for m, neg in zip(magnitudes, negative[: len(magnitudes)], strict=True)
    ]
    n = len(differences)
    ranks = {abs(d): rank for rank, d in enumerate(sorted(differences, key=abs), start=1)}
    r_plus = sum(ranks[abs(d)] for d in differences if d > 0)
    r_minus = n * (n + 1) // 2 - r_plus
    lowest = min(r_plus, r_minus)
    at_most = sum(
        sum(rank for rank, s in zip(range(1, n + 1), signs, strict=True) if s) <= lowest
        for signs in itertools.product((True, False), repeat=n)
    )
    expected = min(1.0, 2 * at_most / 2**n)
    baseline = [0.0] * n
    assert wilcoxon_test(differences, baseline) == pytest.approx(expected, abs=1e-12)


def test_wilcoxon_of_identical_systems_is_one():
    assert wilcoxon_test([0.25, 0.5], [0.25, 0.5]) == 1.0


# --- bootstrap ---------------------------------------------------------------------------


def test_bootstrap_interval_agrees_with_an_independent_percentile_bootstrap():
    rng = np.random.default_rng(21)
    system, baseline = rng.random(40), rng.random(40) * 0.8
    differences = system - baseline
    picks = np.random.default_rng(99).integers(0, 40, size=(20_000, 40))
    expected = np.quantile(differences[picks].mean(axis=1), [0.025, 0.975])
    low, high = bootstrap_interval(list(system), list(baseline), n_resamples=10_000, seed=4)
    # The Monte-Carlo error of each end is about 0.0015 here.
    assert low == pytest.approx(expected[0], abs=0.01)
    assert high == pytest.approx(expected[1], abs=0.01)
    assert low < differences.mean() < high


def test_bootstrap_interval_widens_with_the_confidence_level_and_repeats_with_the_seed():
    rng = np.random.default_rng(5)
    system, baseline = list(rng.random(25)), list(rng.random(25))
    narrow = bootstrap_interval(system, baseline, confidence_level=0.8, seed=1)
    wide = bootstrap_interval(system, baseline, confidence_level=0.99, seed=1)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]
    assert bootstrap_interval(system, baseline, confidence_level=0.8, seed=1) == narrow


def test_bootstrap_interval_of_constant_differences_is_that_difference():
    assert bootstrap_interval([0.5, 0.5], [0.5, 0.5]) == (0.0, 0.0)
    assert bootstrap_interval([0.75, 1.0], [0.5, 0.75]) == (0.25, 0.25)
    assert bootstrap_interval([0.5], [0.5]) == (0.0, 0.0)
    assert bootstrap_interval([0.75], [0.5]) is None


@pytest.mark.parametrize(
    ("options", "message"),
    [({"n_resamples": 0}, "n_resamples"), ({"confidence_level": 1.0}, "confidence_level")],
)
def test_bootstrap_rejects_bad_options(options, message):
    with pytest.raises(ValueError, match=message):
        bootstrap_interval([0.1, 0.2], [0.3, 0.1], **options)


# --- Cohen's d ---------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(paired(2, 12))
def test_cohens_d_is_the_mean_difference_over_its_standard_deviation(pair):
    system, baseline = pair
    differences = [s - b for s, b in zip(system, baseline, strict=True)]
    assume(len(set(differences)) > 1)
    expected = statistics.fmean(differences) / statistics.stdev(differences)
    assert cohens_d(system, baseline) == pytest.approx(expected, rel=1e-12)


def test_cohens_d_edge_cases():
    assert cohens_d([0.5, 0.5], [0.5, 0.5]) == 0.0
    assert cohens_d([0.75], [0.5]) is None
    assert cohens_d([0.75, 1.0], [0.5, 0.75]) is None


# --- properties common to the tests ------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(paired(1, 8))
def test_p_values_are_probabilities_and_symmetric_in_the_two_systems(pair):
    system, baseline = pair
    for test in (paired_t_test, wilcoxon_test):
        forward, backward = test(system, baseline), test(baseline, system)
        assert forward == backward or forward == pytest.approx(backward, rel=1e-12)
        assert forward is None or 0.0 <= forward <= 1.0
    forward = randomization_test(system, baseline, n_permutations=256)
    assert forward == randomization_test(baseline, system, n_permutations=256)
    assert 0.0 < forward <= 1.0


@pytest.mark.parametrize("test", [paired_t_test, wilcoxon_test, cohens_d, randomization_test])
def test_unpaired_or_empty_values_are_refused(test):
    with pytest.raises(ValueError, match="same length"):
        test([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="at least one query"):
        test([], [])


def test_randomization_rejects_no_permutations():
    with pytest.raises(ValueError, match="n_permutations"):
        randomization_test([0.1], [0.2], n_permutations=0)


def test_missing_scipy_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.stats", None)
    with pytest.raises(ImportError, match=r"ef-evaluation\[stats\]"):
        paired_t_test([0.1, 0.2, 0.4], [0.3, 0.1, 0.1])


# --- corrections -------------------------------------------------------------------------


def test_holm_textbook_example():
    # Holm (1979) as usually taught: four hypotheses at alpha = 0.05; H1 and H4 are rejected.
    p_values = [0.01, 0.04, 0.03, 0.005]
    adjusted = adjust_p_values(p_values, "holm")
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert [p <= 0.05 for p in adjusted] == [True, False, False, True]
    assert adjust_p_values(p_values, "bonferroni") == pytest.approx([0.04, 0.16, 0.12, 0.02])


# Benjamini and Hochberg (1995), section 4.1: fifteen p-values from a clinical trial.
BH_1995 = [
    0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344,
    0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0000,
]  # fmt: skip


def test_benjamini_hochberg_textbook_example():
    # At q = 0.05 the FDR procedure rejects the four smallest; Bonferroni and Holm only three.
    rejected = {
        method: sum(p <= 0.05 for p in adjust_p_values(BH_1995, method))
        for method in ("bh", "holm", "bonferroni")
    }
    assert rejected == {"bh": 4, "holm": 3, "bonferroni": 3}
    shuffled = BH_1995[::-1]
    assert adjust_p_values(shuffled, "bh") == adjust_p_values(BH_1995, "bh")[::-1]


def step_down_holm(p_values: list[float], alpha: float) -> set[int]:
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected: set[int] = set()
    for rank, index in enumerate(order):
        if p_values[index] * (len(p_values) - rank) > alpha:
            break
        rejected.add(index)
    return rejected


def step_up_bh(p_values: list[float], alpha: float) -> set[int]:
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    m = len(p_values)
    largest = max(
        (rank for rank in range(1, m + 1) if p_values[order[rank - 1]] * m <= alpha * rank),
        default=0,
    )
    return set(order[:largest])


p_lists = st.lists(st.floats(0, 1), min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(p_lists, st.floats(0.001, 0.5))
def test_adjusted_p_values_apply_the_textbook_procedures(p_values, alpha):
    m = len(p_values)
    # Keep clear of exact boundaries, where rounding decides either way.
    for p in p_values:
        for k in range(1, m + 1):
            assume(abs(p * m / k - alpha) > 1e-9 and abs(p * k - alpha) > 1e-9)
    holm = adjust_p_values(p_values, "holm")
    bh = adjust_p_values(p_values, "bh")
    assert {i for i, p in enumerate(holm) if p <= alpha} == step_down_holm(p_values, alpha)
    assert {i for i, p in enumerate(bh) if p <= alpha} == step_up_bh(p_values, alpha)


@settings(max_examples=200, deadline=None)
@given(p_lists)
def test_adjusted_p_values_are_monotone_capped_and_ordered_by_strength(p_values):
    adjusted = {m: adjust_p_values(p_values, m) for m in ("bh", "holm", "bonferroni", None)}
    assert adjusted[None] == p_values
    for values in adjusted.values():
        for raw, adj in zip(p_values, values, strict=True):
            assert raw <= adj + 1e-15 and adj <= 1.0
        for i, j in itertools.permutations(range(len(p_values)), 2):
            if p_values[i] <= p_values[j]:
                assert values[i] <= values[j] + 1e-15
    for bh, holm, bonferroni in zip(
        adjusted["bh"], adjusted["holm"], adjusted["bonferroni"], strict=True
    ):
        assert bh <= holm + 1e-15 and holm <= bonferroni


def test_adjust_rejects_unknown_methods_and_impossible_p_values():
    with pytest.raises(ValueError, match="unknown correction 'sidak'"):
        adjust_p_values([0.1], "sidak")
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        adjust_p_values([1.5], "holm")
    assert adjust_p_values([], "bh") == []
