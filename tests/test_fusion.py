"""fuse(): trec_eval's order in the output, missing queries, refused inputs, plugins."""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ef.evaluation import (
    MissingQueriesWarning,
    PluginWarning,
    compare,
    evaluate_run,
    fuse,
    hookimpl,
    read_trec_run,
    registry,
    write_trec_run,
)
from ef.evaluation._fusion._order import in_trec_order, rank_by_score
from ef.evaluation._plugins import HOST
from ef.evaluation.testing import registered_plugin

# Each holds every query, some with an empty ranking: the rankings of runs that lack queries
# are pinned apart (test_a_query_missing_from_a_run_is_an_empty_ranking_there).
BM25 = {"q1": {"d1": 12.0, "d2": 9.5, "d3": 4.0}, "q2": {"d4": 3.0, "d5": 1.0}, "q3": {}}
DENSE = {"q1": {"d3": 0.91, "d1": 0.85}, "q2": {}, "q3": {"d9": 0.5}}


def test_each_fused_query_iterates_in_trec_eval_order():
    # d1 and d2 each top one run: equal RRF scores, so doc id descending puts d2 first.
    fused = fuse([{"q": {"d1": 1.0}}, {"q": {"d2": 1.0}}], method="rrf")
    assert list(fused["q"]) == ["d2", "d1"]
    for scores in fuse([BM25, DENSE], method="sum").values():
        pairs = list(zip(scores.values(), scores, strict=True))
        assert pairs == sorted(pairs, reverse=True)


def test_a_query_missing_from_a_run_is_an_empty_ranking_there():
    bm25 = {q: scores for q, scores in BM25.items() if scores}
    dense = {q: scores for q, scores in DENSE.items() if scores}
    with pytest.warns(MissingQueriesWarning) as caught:
        fused = fuse([bm25, dense], method="rrf")
    assert [str(w.message) for w in caught] == [
        "1 of 2 queries of run 2 are not in run 1; they are fused from run 2 alone: 'q3'",
        "1 of 2 queries of run 1 are not in run 2; they are fused from run 1 alone: 'q2'",
    ]
    assert list(fused) == ["q1", "q2", "q3"]
    assert fused["q2"] == {"d4": 1 / 61, "d5": 1 / 62}
    assert fused["q3"] == {"d9": 1 / 61}
    assert fuse([BM25, DENSE], method="rrf") == fused  # an empty ranking: the same, no warning
    empty_elsewhere = fuse([bm25, {"q2": {}}], method="rrf", missing_queries="zero")
    assert empty_elsewhere["q2"] == fused["q2"]


def test_the_default_normalisation_is_min_max_for_score_based_and_none_for_rank_based():
    assert fuse([BM25, DENSE], method="sum") == fuse([BM25, DENSE], method="sum", norm="min-max")
    assert fuse([BM25, DENSE], method="rrf") == fuse([BM25, DENSE], method="rrf", norm=None)
    assert fuse([BM25, DENSE], method="sum", norm=None) == fuse(
        [BM25, DENSE], method="sum", norm="none"
    )
    assert fuse([BM25, DENSE], method="sum", norm=None)["q1"]["d1"] == 12.85


def test_aliases_and_ranx_spellings_name_the_same_method_and_normalisation():
    assert fuse([BM25, DENSE], method="combsum") == fuse([BM25, DENSE], method="sum")
    assert fuse([BM25, DENSE], method="comb_mnz") == fuse([BM25, DENSE], method="mnz")
    assert fuse([BM25, DENSE], method="sum", norm="min_max") == fuse([BM25, DENSE], method="sum")


def test_inputs_are_not_changed():
    runs = [copy.deepcopy(BM25), copy.deepcopy(DENSE)]
    for method in ("sum", "rrf", "bordafuse", "wsum"):
        for norm in ("min-max", "borda", "zmuv"):
            fuse(runs, method=method, norm=norm)
    assert runs == [BM25, DENSE]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_score_that_is_not_finite_is_refused_naming_run_and_query(bad):
    with pytest.raises(ValueError, match=r"run 2, query 'q1': doc 'd3' has score"):
        fuse([BM25, {"q1": {"d1": 0.5, "d3": bad}}])


@pytest.mark.parametrize("method", ["sum", "rrf"])
def test_zmuv_normalises_scores_near_the_float_limit_as_it_does_them_scaled_down(method):
    huge = {"q1": {"d1": 1.7e308, "d2": -1.7e308, "d3": -1.7e308}, "q2": {"d4": 1e308}, "q3": {}}
    small = {q: {d: score / 1e308 for d, score in docs.items()} for q, docs in huge.items()}
    fused = fuse([huge, DENSE], method=method, norm="zmuv")
    expected = fuse([small, DENSE], method=method, norm="zmuv")
    assert {q: list(docs) for q, docs in fused.items()} == {
        q: list(docs) for q, docs in expected.items()
    }
    for query_id, docs in expected.items():
        assert fused[query_id] == pytest.approx(docs, rel=1e-15)


@pytest.fixture(params=["installed", "pure"])
def kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Fusion as installed (a plugin's compiled kernel, if any), then by the Python path
    alone: the same outcome."""
    if request.param == "pure":
        monkeypatch.setattr(HOST, "fusion_kernel", lambda: None)
    return str(request.param)


def test_a_sum_keeps_each_signed_zero(kernel):
    # The first run's -0.0 stays as it is; a doc first met later starts at 0.0 (0.0 + -0.0).
    runs = [{"q": {"a": -0.0, "b": -1.0}}, {"q": {"c": -0.0}}, {"q": {"b": 0.0}}]
    fused = fuse(runs, method="sum", norm=None)
    assert list(fused["q"]) == ["c", "a", "b"]
    assert [math.copysign(1, s) for s in fused["q"].values()] == [1, -1, -1]


def test_a_fused_score_that_overflows_is_refused_naming_the_doc(kernel):
    runs = [{"q": {"a": 1e308, "b": 1.0}}, {"q": {"a": 1e308}}]
    with pytest.raises(ValueError, match="gave doc 'a' of query 'q' the score inf"):
        fuse(runs, method="sum", norm=None)


def test_int_scores_under_an_unnormalised_sum_add_up_as_python_ints(kernel):
    # Python adds ints exactly (and keeps them ints); floats past 2**53 would round them.
    big = 2**60 + 1
    runs = [{"q": {"a": big, "b": 2}, "r": {"a": 0.5}}, {"q": {"a": 1, "c": 3}, "r": {"b": 0.25}}]
    fused = fuse(runs, method="sum", norm=None)
    assert fused == {"q": {"a": big + 1, "c": 3, "b": 2}, "r": {"a": 0.5, "b": 0.25}}
    # A doc first met in a later run starts from 0.0: c's 3 is added to it.
    assert [type(s) for s in fused["q"].values()] == [int, float, int]


def test_a_score_that_is_not_a_number_is_refused():
    with pytest.raises(TypeError, match=r"run 1, query 'q1': score '1.0' is a str"):
        fuse([{"q1": {"d1": "1.0"}}, DENSE])


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ([0.5], "1 weights given for 2 runs"),
        ([0.5, math.nan], "weight nan is not finite"),
        ([0.5, math.inf], "weight inf is not finite"),
        ([0.5, "x"], "weight 'x' is not a number"),
        ([True, 1.0], "weight True is not a number"),
    ],
)
def test_bad_weights_are_refused(weights, message):
    with pytest.raises(ValueError, match=message):
        fuse([BM25, DENSE], method="wsum", weights=weights)


def test_weights_for_an_unweighted_method_are_refused():
    with pytest.raises(ValueError, match="fusion method 'rrf' takes no weights"):
        fuse([BM25, DENSE], method="rrf", weights=[1, 2])


def test_no_weights_means_one_for_every_run():
    assert fuse([BM25, DENSE], method="wsum") == fuse([BM25, DENSE], method="sum")


def test_an_unknown_method_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown fusion method 'rfr'; known methods: anz, ") as e:
        fuse([BM25, DENSE], method="rfr")
    assert "rrf" in str(e.value) and "combsum" in str(e.value)


def test_an_unknown_normalisation_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown normalisation 'minmax'; known.*min-max"):
        fuse([BM25, DENSE], norm="minmax")


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        ("rrf", {"phi": 0.5}, r"'rrf' does not take 'phi'; it takes: k"),
        ("sum", {"k": 1}, r"'sum' does not take 'k'; it takes: no parameters"),
        ("rbc", {}, r"'rbc' needs phi: params=\{'phi': ...\}"),
        ("gmnz", None, r"'gmnz' needs gamma"),
        ("rrf", {"k": math.nan}, r"'rrf': parameter 'k' must be a finite number > 0, got nan"),
        ("logn_isr", {"sigma": 2.0}, r"parameter 'sigma' must be a finite number in \[0, 1\]"),
        ("wsum", {"weights": [1, 1]}, "pass weights with weights="),
    ],
)
def test_bad_parameters_are_refused(method, params, message):
    with pytest.raises(ValueError, match=message):
        fuse([BM25, DENSE], method=method, params=params)


def test_a_supervised_method_needs_qrels_or_its_trained_parameters():
    with pytest.raises(ValueError, match="'posfuse' is supervised: pass qrels="):
        fuse([BM25, DENSE], method="posfuse")
    trained = fuse([BM25, DENSE], method="posfuse", qrels={"q1": {"d3": 1}})
    given = fuse([BM25, DENSE], method="posfuse", params={"probs": [[0, 0, 1], [1, 0]]})
    assert trained == given
    with pytest.raises(ValueError, match="qrels= is for training supervised methods"):
        fuse([BM25, DENSE], method="rrf", qrels={"q1": {"d3": 1}})
    with pytest.raises(ValueError, match="no query with a positive grade"):
        fuse([BM25, DENSE], method="posfuse", qrels={"q1": {"d3": 0}})
    with pytest.raises(ValueError, match="probfuse' needs n_segments to train"):
        fuse([BM25, DENSE], method="probfuse", qrels={"q1": {"d3": 1}})


def test_ranked_lists_fuse_by_rank_but_never_stand_in_for_scores():
    ranked = {"q1": ["d3", "d1"], "q2": [], "q3": []}
    scored = {"q1": {"d3": 2, "d1": 1}, "q2": {}, "q3": {}}
    assert fuse([BM25, ranked], method="rrf") == fuse([BM25, scored])
    assert fuse([BM25, ranked], method="sum", norm="rank")["q1"]["d3"] == pytest.approx(1 + 1 / 3)
    with pytest.raises(ValueError, match="run 2 gives ranked doc ids without scores"):
        fuse([BM25, ranked], method="sum")
    with pytest.raises(ValueError, match="normalisation 'zmuv' needs scores"):
        fuse([BM25, ranked], method="rrf", norm="zmuv")


@pytest.mark.parametrize(
    ("runs", "error", "message"),
    [
        ([BM25], ValueError, "at least two runs, got 1"),
        (BM25, TypeError, "runs must be a sequence of runs"),
        ([BM25, [("q1", "d1")]], TypeError, "run 2 is a list"),
        ([BM25, {"q1": "d1"}], TypeError, "run 2, query 'q1': the entry is a str"),
    ],
)
def test_runs_that_are_not_runs_are_refused(runs, error, message):
    with pytest.raises(error, match=message):
        fuse(runs)


def test_a_fused_run_evaluates_compares_and_round_trips_through_a_file(tmp_path):
    qrels = {"q1": {"d3": 1, "d2": 1}, "q2": {"d5": 1}, "q3": {"d9": 1}}
    fused = fuse([BM25, DENSE], method="rrf")
    path = tmp_path / "fused.run"
    write_trec_run(path, fused, tag="rrf")
    assert read_trec_run(path) == fused
    assert evaluate_run(read_trec_run(path), qrels).metrics == evaluate_run(fused, qrels).metrics
    report = compare(
        {"bm25": BM25, "fused": fused}, qrels, baseline="bm25", n_permutations=100, n_resamples=100
    )
    assert report.n_queries == 3


def test_condorcet_is_the_same_in_every_process():
    """ranx's Condorcet order depends on PYTHONHASHSEED (a set's order); ef's does not."""
    code = (
        "import json; from ef.evaluation import fuse\n"
        "runs = [{'q': {f'd{i}': float(i % 5) for i in range(30)}},\n"
        "        {'q': {f'd{i}': float(-i % 7) for i in range(10, 40)}}]\n"
        "print(json.dumps(fuse(runs, method='condorcet')))\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1
    assert len(json.loads(outputs.pop())["q"]) == 40


# Plugins ----------------------------------------------------------------------------------


class FusionPlugin:
    """A throwaway plugin: one fusion method and one normalisation."""

    @hookimpl
    def ef_evaluation_register_fusion_methods(self, register):
        def best_rank(rankings, *, bonus=0.0):
            fused = {}
            for ranking in rankings:
                for i, doc in enumerate(ranking):
                    fused[doc] = max(fused.get(doc, 0.0), 1 / (i + 1) + bonus)
            return fused

        def broken(rankings):
            return {"d1": math.nan}

        def raising(rankings):
            raise KeyError("split")

        register("best_rank", best_rank, rank_based=True, defaults={"bonus": 0.0})
        register("broken", broken, rank_based=True)
        register("raising", raising, rank_based=True)
        register("rrf", best_rank, rank_based=True)  # taken: the built-in keeps it

    @hookimpl
    def ef_evaluation_register_normalizations(self, register):
        def halve(rankings):
            return [{doc: score / 2 for doc, score in ranking.items()} for ranking in rankings]

        register("halve", halve, description="scores / 2")


def test_a_plugin_registers_fusion_methods_and_normalisations():
    with pytest.warns(PluginWarning, match="fusion method 'rrf' from plugin 'fusion-test'"):
        with registered_plugin(FusionPlugin(), name="fusion-test"):
            methods = registry().fusion_methods
            assert methods["best_rank"].plugin == "fusion-test"
            assert methods["rrf"].plugin == "ef.evaluation._builtins.fusion"
            assert registry().normalizations["halve"].description == "scores / 2"
            fused = fuse([BM25, DENSE], method="best_rank", params={"bonus": 1.0})
            assert fused["q1"] == {"d3": 2.0, "d1": 2.0, "d2": 1.5}
            halved = fuse([BM25, DENSE], method="sum", norm="halve")
            assert halved["q1"]["d1"] == pytest.approx((12.0 + 0.85) / 2)
            with pytest.raises(ValueError, match=r"'broken' \(plugin fusion-test\) gave doc 'd1'"):
                fuse([BM25, DENSE], method="broken")
            with pytest.raises(KeyError) as raised:
                fuse([BM25, DENSE], method="raising")
            assert "in fusion method 'raising' (plugin fusion-test)" in raised.value.__notes__[0]
    assert "best_rank" not in registry().fusion_methods


@given(
    st.dictionaries(
        st.text("abc", min_size=1, max_size=3), st.sampled_from([0.0, 0.5, 1.0, -2.0, 3.25])
    )
)
def test_fused_queries_are_ordered_exactly_as_rank_by_score_orders(scores):
    """The one-sort-then-ties shortcut gives trec_eval's order, ties and all."""
    ordered = in_trec_order(scores)
    assert list(ordered) == rank_by_score(scores)
    assert ordered == scores
