"""The metric primitives against pytrec_eval (trec_eval's C code) on generated inputs."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import (
    average_precision,
    dcg_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)
from oracle import PRIMITIVES, trec_eval_values

DOCS = [f"d{i}" for i in range(12)]

grades = st.sampled_from([-1, 0, 0, 1, 1, 2, 3])
judgements = st.dictionaries(st.sampled_from(DOCS), grades, max_size=8)
rankings = st.lists(st.sampled_from([*DOCS, "u1", "u2"]), max_size=16)
cutoffs = st.lists(st.integers(1, 20), min_size=1, max_size=4, unique=True)


@settings(max_examples=300, deadline=None)
@given(judgements, rankings, cutoffs)
def test_every_primitive_matches_trec_eval_at_every_cutoff(relevant, ranked, ks):
    expected = trec_eval_values({"q": ranked}, {"q": relevant}, list(PRIMITIVES), ks)["q"]
    for name, fn in PRIMITIVES.items():
        for k in ks:
            assert fn(ranked, relevant, k) == pytest.approx(expected[f"{name}@{k}"], abs=1e-9), (
                name,
                k,
            )


@settings(max_examples=200, deadline=None)
@given(judgements, rankings)
def test_uncut_average_precision_and_reciprocal_rank_match_trec_eval(relevant, ranked):
    k = max(len(ranked), 1)
    expected = trec_eval_values({"q": ranked}, {"q": relevant}, ["map", "mrr"], [k])["q"]
    assert average_precision(ranked, relevant) == pytest.approx(expected[f"map@{k}"], abs=1e-9)
    assert reciprocal_rank(ranked, relevant) == pytest.approx(expected[f"mrr@{k}"], abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(judgements, rankings, st.integers(1, 20))
def test_metrics_stay_in_unit_interval(relevant, ranked, k):
    for fn in PRIMITIVES.values():
        assert 0.0 <= fn(ranked, relevant, k) <= 1.0


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(DOCS), st.integers(1, 3), min_size=1))
def test_the_ideal_ranking_scores_one(relevant):
    ideal = sorted(relevant, key=lambda d: -relevant[d])
    k = len(ideal)
    assert ndcg_at_k(ideal, relevant, k) == pytest.approx(1.0)
    assert recall_at_k(ideal, relevant, k) == 1.0
    assert average_precision(ideal, relevant) == 1.0
    assert reciprocal_rank(ideal, relevant) == 1.0


def test_seed_values_from_the_semantics():
    assert average_precision(["d1", "x", "d2"], {"d1": 1, "d2": 1}) == 0.8333333333333333
    assert round(ndcg_at_k(["x", "d1"], {"d1": 1}, 2), 4) == 0.6309
    assert average_precision(["d1"], {"d1": 1, "d2": 1}) == 0.5


def test_a_repeated_id_keeps_its_first_position():
    assert precision_at_k(["d1", "d1", "d1"], {"d1": 1.0}, 3) == pytest.approx(1 / 3)
    assert dcg_at_k(["x", "d1", "x", "d1"], {"d1": 1.0}, 4) == 1 / math.log2(3)
    assert ndcg_at_k(["d1", "d1"], {"d1": 1.0, "d2": 1.0}, 2) <= 1.0


def test_precision_divides_by_k_even_for_short_rankings():
    assert precision_at_k(["d1"], {"d1": 1.0}, 10) == 0.1


def test_fractional_grades_are_relevant_and_used_as_gains():
    relevant = {"d1": 0.5, "d2": 2.0}
    assert recall_at_k(["d1"], relevant, 1) == 0.5
    assert dcg_at_k(["d1", "d2"], relevant, 2) == 0.5 + 2.0 / math.log2(3)


def test_non_positive_grades_are_judged_non_relevant():
    relevant = {"d1": 0.0, "d2": -1.0}
    for fn in PRIMITIVES.values():
        assert fn(["d1", "d2"], relevant, 2) == 0.0


@pytest.mark.parametrize("k", [0, -1, 1.5, "3", True, None])
def test_a_bad_cutoff_is_a_value_error(k):
    for name, fn in PRIMITIVES.items():
        if k is None and name in ("mrr", "map"):
            continue  # k is optional for these two
        with pytest.raises(ValueError, match="cutoff"):
            fn(["d1"], {"d1": 1.0}, k)
