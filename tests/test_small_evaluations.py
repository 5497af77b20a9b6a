"""Small evaluations stay cheap and exact: the shortcuts taken for them change no number.

A report's manifest fingerprints its inputs with :func:`digest` (marshal, version 2, in C), the
journal keeps :func:`fingerprint` (sorted JSON, the format journals already on disk carry); the
judgements are checked in C-level passes when they are plain ``str`` → ``float``/``int`` dicts;
a short ranking is walked id by id. Each must give what the careful way gives.
"""

from __future__ import annotations

import hashlib
import math
import struct
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import evaluate_run
from ef.evaluation._metric_names.api import lookup_metrics
from ef.evaluation._scoring import grades as _grades
from ef.evaluation._scoring.metric_scorer import MetricScorer
from ef.evaluation._scoring.metrics import ndcg_at_k, positive_grades
from ef.evaluation._scoring.query_plan import DIGEST_PREFIX, digest, fingerprint
from ef.evaluation._scoring.ranked import summarize

QRELS = {"q1": {"d1": 1.0, "d2": 0.0}, "q2": {"d3": 2.0, "d1": 1.0}}


def careful_positive_grades(relevant, query_id=None):
    """The checking loop alone, as if no fast path existed."""
    return positive_grades(types.MappingProxyType(dict(relevant)), query_id)


# --- the manifest's fingerprint ---------------------------------------------------------------


def test_the_manifest_fingerprints_the_qrels_with_the_versioned_digest():
    report = evaluate_run({"q1": ["d1"], "q2": ["d3"]}, QRELS)
    assert report.manifest["fingerprints"] == {"qrels": digest(QRELS)}
    assert digest(QRELS).startswith(DIGEST_PREFIX)
    assert len(digest(QRELS)) == len(DIGEST_PREFIX) + 64


def test_the_digest_is_pinned():
    # marshal version 2, byte for byte: dict "{" … "0", str "u" + length + UTF-8, float "g" + 8
    # little-endian bytes, int "i" + 4. These bytes must never change, or every saved report
    # would look as if it came from other judgements.
    encoded = (
        b"{u\x01\x00\x00\x00q"
        b"{u\x01\x00\x00\x00d" + b"g" + struct.pack("<d", 1.0) + b"u\x01\x00\x00\x00e"
        b"i\x02\x00\x00\x0000"
    )
    expected = DIGEST_PREFIX + hashlib.sha256(encoded).hexdigest()
    assert digest({"q": {"d": 1.0, "e": 2}}) == expected


def test_the_digest_tells_apart_any_change_to_the_judgements():
    base = digest(QRELS)
    assert digest({**QRELS, "q1": {"d1": 1.0, "d2": 1.0}}) != base  # a grade
    assert digest({**QRELS, "q1": {"d9": 1.0, "d2": 0.0}}) != base  # a doc id
    assert digest({**QRELS, "q3": {}}) != base  # a query
    assert digest({"q2": QRELS["q2"], "q1": QRELS["q1"]}) != base  # the order means are summed in
    assert digest({"q": {"d": 1}}) != digest({"q": {"d": 1.0}})  # as JSON told them apart


def test_the_digest_reads_any_mapping_and_numpy_grades_as_the_plain_values():
    plain = {"q1": {"d1": 2, "d2": 0.5}}
    assert digest({"q1": types.MappingProxyType({"d1": 2, "d2": 0.5})}) == digest(plain)
    assert digest({"q1": {"d1": np.int64(2), "d2": np.float64(0.5)}}) == digest(plain)
    assert digest({"q1": {"d1": 2**70}}) != digest({"q1": {"d1": 2**70 + 1}})
    # marshal alone would write a numpy scalar as its raw bytes: these two would then collide.
    same_bytes = np.float64(1.0).view(np.int64)
    assert digest({"q1": {"d1": same_bytes}}) != digest({"q1": {"d1": np.float64(1.0)}})
    assert digest({"q1": {"d1": np.float64(1.0)}}) == digest({"q1": {"d1": 1.0}})


def test_numpy_grades_no_longer_fail_the_report():
    # The report used to fail after scoring: JSON cannot write a numpy int64.
    report = evaluate_run({"q1": ["x", "d1"]}, {"q1": {"d1": np.int64(1), "d2": np.int64(0)}})
    assert report.per_query == {
        "q1": evaluate_run({"q1": ["x", "d1"]}, {"q1": {"d1": 1}}).per_query["q1"]
    }
    assert report.manifest["fingerprints"]["qrels"] == digest({"q1": {"d1": 1, "d2": 0}})


def test_the_journal_fingerprint_keeps_its_format():
    # Journals already written carry this value in their header: it must not move.
    assert fingerprint({"qrels": {"q": {"d": 1.0}}, "limit": 10}) == (
        "sha256:" + hashlib.sha256(b'{"limit":10,"qrels":{"q":{"d":1.0}}}').hexdigest()
    )
    assert fingerprint({"q": {"d": np.int64(1)}}) == fingerprint({"q": {"d": 1}})


# --- the judgements' fast check ---------------------------------------------------------------

GRADE = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**1030), max_value=2**1030),
    st.sampled_from([1e308, -1e308, True, False]),
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(max_size=3), GRADE, max_size=6))
def test_the_fast_check_accepts_and_refuses_what_the_loop_does(relevant):
    try:
        expected = careful_positive_grades(relevant, "q")
    except (TypeError, ValueError) as error:
        with pytest.raises(type(error)) as raised:
            positive_grades(relevant, "q")
        assert str(raised.value) == str(error)
    else:
        got = positive_grades(relevant, "q")
        assert got == expected
        assert [type(grade) for _, grade in got] == [type(grade) for _, grade in expected]


@pytest.mark.parametrize(
    ("relevant", "plain"),
    [
        ({"a": 1.0, "b": 2}, True),
        ({"a": 1e308, "b": 1e308}, False),  # the sum overflows: the loop decides (and accepts)
        ({"a": math.nan}, False),
        ({"a": 2**1024}, False),
        ({"a": 1.0, "b": 2**1024}, False),
        ({1: 1.0}, False),
        ({"a": True}, False),
    ],
)
def test_the_fast_check_takes_only_plain_finite_judgements(relevant, plain):
    assert _grades._plain_and_finite(relevant) is plain


# --- short rankings -------------------------------------------------------------------------

DOCS = [f"d{i}" for i in range(12)]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(DOCS), max_size=40),
    st.dictionaries(st.sampled_from(DOCS), st.sampled_from([-1.0, 0.0, 0.5, 1, 2.0]), max_size=12),
    st.booleans(),
)
def test_a_short_ranking_is_summarized_as_deduplication_says(ranked, relevant, promise):
    if promise:  # the caller's promise holds only for a ranking without repeats
        ranked = list(dict.fromkeys(ranked))
    summary = summarize(ranked, relevant, unique=promise)
    unique = list(dict.fromkeys(ranked))
    hits = [(i, relevant[d]) for i, d in enumerate(unique) if relevant.get(d, 0) > 0]
    assert summary.positions == [i for i, _ in hits]
    assert summary.gains == [g for _, g in hits]
    assert summary.ideal_gains == sorted((g for g in relevant.values() if g > 0), reverse=True)
    assert list(summary.ranked) == unique


# --- the fused step's ideal DCG, kept per distinct grades across the queries of one plan -----

BUILTINS = ["ndcg", "recall", "precision", "mrr", "map"]
QUERY = st.tuples(
    st.lists(st.sampled_from(DOCS), max_size=20),
    st.dictionaries(st.sampled_from(DOCS), st.sampled_from([0.0, 0.5, 1, 1.0, 2.0]), max_size=8),
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["ndcg", "recall", "precision", "mrr", "map"]), min_size=1, unique=True
    ),
    st.lists(st.integers(1, 30), min_size=1, max_size=4),
    st.lists(QUERY, min_size=2, max_size=12),
)
def test_one_plan_scores_every_query_as_its_forms_do(names, ks, queries):
    plan = MetricScorer(lookup_metrics(names), ks)
    for ranked, relevant in queries:  # one plan for all: what it keeps between queries
        summary = summarize(ranked, relevant)
        expected: list[float] = []
        for metric in plan.metrics:
            assert metric.all_cutoffs is not None
            expected.extend(metric.all_cutoffs(summary, plan.k_values))
        assert list(plan.score(summary).values()) == expected


def test_queries_with_as_many_relevant_ids_but_other_grades_keep_their_own_ideal():
    plan = MetricScorer(lookup_metrics(["ndcg"]), (2,))
    first = plan.score(summarize(["a", "b"], {"a": 1.0, "b": 1.0}))
    second = plan.score(summarize(["a", "b"], {"a": 1.0, "b": 2.0}))
    assert first == {"ndcg@2": 1.0}
    assert second == {"ndcg@2": ndcg_at_k(["a", "b"], {"a": 1.0, "b": 2.0}, 2)} != first
