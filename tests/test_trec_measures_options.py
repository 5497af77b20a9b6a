"""trec_eval's measures through the public API: names, keys, aggregation, options, depth.

``evaluate_run``, ``evaluate_retrieval`` (sync and async) and ``compare`` with trec_eval's
measure names and the ``relevance_level`` / ``judged_only`` options, against pytrec_eval.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import pytrec_eval

from ef.evaluation import (
    RETRIEVAL_METRICS,
    PluginWarning,
    RelevanceLevelWarning,
    compare,
    evaluate_retrieval,
    evaluate_retrieval_async,
    evaluate_run,
    hookimpl,
    measure_catalogue,
    registry,
)
from ef.evaluation._scoring.order import rank_by_score
from ef.evaluation.testing import registered_plugin
from test_trec_measures import MEASURES, ef_key, generated, matches, sendable

TREC_NAMES = [
    "num_q", "num_ret", "num_rel", "num_rel_ret", "trec_map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "trec_recall", "infAP", "gm_bpref", "Rprec_mult",
    "utility", "11pt_avg", "binG", "G", "trec_ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut",
    "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
    "num_nonrel_judged_ret",
]  # fmt: skip


def scored_queries(qrels: dict) -> dict:
    """ef's scored queries: a positive grade (and text, for a retriever), at any level."""
    return {q: judged for q, judged in qrels.items() if any(g > 0 for g in judged.values())}


def below_level(qrels: dict, level: int) -> int:
    return sum(1 for judged in scored_queries(qrels).values() if max(judged.values()) < level)


@pytest.mark.parametrize("as_ranking", [False, True], ids=["scores", "rankings"])
@pytest.mark.parametrize(("level", "judged_only"), [(1, False), (2, False), (1, True), (3, True)])
def test_evaluate_run_reports_every_measure_as_pytrec_eval(
    level: int, judged_only: bool, as_ranking: bool
) -> None:
    qrels, run = generated(seed=1000 + level + 10 * judged_only)
    if as_ranking:
        run = {q: rank_by_score(scores) for q, scores in run.items()}  # type: ignore[misc]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = evaluate_run(
            run, qrels, metrics=TREC_NAMES, relevance_level=level, judged_only=judged_only
        )
    below = below_level(qrels, level)
    assert [str(w.message).split(" of ")[0] for w in caught] == [str(below)] * bool(below)
    scored = scored_queries(qrels)
    assert list(report.per_query) == list(scored)
    evaluator = pytrec_eval.RelevanceEvaluator(
        sendable(scored), MEASURES, relevance_level=level, judged_docs_only_flag=judged_only
    )
    runs = {
        q: dict(zip(r, range(len(r), 0, -1), strict=True)) if as_ranking else r
        for q, r in run.items()
    }
    expected = evaluator.evaluate({q: runs[q] for q in scored if runs[q]})
    for q, values in expected.items():
        got = report.per_query[q]
        wrong = {
            k: (got[ef_key(k)], v) for k, v in values.items() if not matches(k, got[ef_key(k)], v)
        }
        assert not wrong, (q, wrong)
    # Means over ef's scored queries, pytrec_eval's aggregation of the same per-query values.
    for key in expected[next(iter(expected))]:
        trec_values = [
            math.log(max(row[ef_key(key)], 1e-5)) if key.startswith("gm_") else row[ef_key(key)]
            for row in report.per_query.values()
        ]
        wanted = pytrec_eval.compute_aggregated_measure(key, trec_values)
        assert report.metrics[ef_key(key)] == pytest.approx(wanted, rel=1e-12, abs=1e-12), key
    assert report.metrics["num_q"] == len(scored)


def test_every_key_begins_with_the_name_asked_for() -> None:
    report = evaluate_run(
        {"q1": ["d1", "x", "d2"]},
        {"q1": {"d1": 1, "d2": 1}},
        k_values=(2,),
        metrics=("map", "trec_map", "ndcg", "trec_ndcg", "recall", "trec_recall", "P"),
    )
    assert list(report.metrics) == [
        "map@2", "ndcg@2", "recall@2", "trec_map", "trec_ndcg",
        *(f"trec_recall_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
        *(f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
    ]  # fmt: skip
    assert report.metrics["trec_map"] == pytest.approx(5 / 6)  # uncut: d2 at rank 3 counts
    assert report.metrics["map@2"] == 0.5


def test_default_metrics_and_keys_are_unchanged() -> None:
    report = evaluate_run({"q1": ["d1"]}, {"q1": {"d1": 1}})
    assert list(report.metrics) == [
        f"{m}@{k}" for m in ("ndcg", "recall", "precision", "mrr", "map") for k in (1, 5, 10, 100)
    ]
    assert list(registry().metrics)[:5] == ["map", "mrr", "ndcg", "precision", "recall"]
    assert "relevance_level" not in report.manifest["parameters"]


def test_relevance_level_applies_to_efs_metrics_but_not_to_ndcg() -> None:
    qrels = {"q1": {"a": 1, "b": 2, "c": 0}}
    run = {"q1": ["a", "c", "b"]}
    report = evaluate_run(run, qrels, k_values=(1, 3), metrics=("recall", "ndcg", "mrr", "map"),
                          relevance_level=2)  # fmt: skip
    trec = pytrec_eval.RelevanceEvaluator(
        qrels, {"recall.1,3", "ndcg_cut.1,3", "map_cut.1,3"}, relevance_level=2
    ).evaluate({"q1": {"a": 3.0, "c": 2.0, "b": 1.0}})["q1"]
    assert report.metrics["recall@1"] == trec["recall_1"] == 0.0
    assert report.metrics["recall@3"] == trec["recall_3"] == 1.0
    assert report.metrics["map@3"] == pytest.approx(trec["map_cut_3"])
    assert report.metrics["mrr@3"] == pytest.approx(1 / 3)
    # nDCG ignores the level (trec_eval, and SEMANTICS): grade 1 at rank 1 still gains.
    assert report.metrics["ndcg@1"] == pytest.approx(trec["ndcg_cut_1"])
    plain = evaluate_run(run, qrels, k_values=(1, 3), metrics=("ndcg",))
    assert report.metrics["ndcg@3"] == plain.metrics["ndcg@3"]
    assert report.manifest["parameters"]["relevance_level"] == 2


def test_a_query_with_nothing_relevant_at_the_level_is_scored_as_trec_eval_with_a_warning() -> None:
    run, qrels = {"q1": ["a"], "q2": ["b"]}, {"q1": {"a": 1}, "q2": {"b": 2}}
    with pytest.warns(RelevanceLevelWarning, match=r"^1 of 2 judged queries have no grade >= "
                      r"relevance_level 2 \('q1'\): they are scored as trec_eval"):  # fmt: skip
        report = evaluate_run(run, qrels, metrics=("P_5", "ndcg_cut_5"), relevance_level=2)
    assert report.skipped == {} and list(report.per_query) == ["q1", "q2"]
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"P.5", "ndcg_cut.5"}, relevance_level=2)
    expected = trec.evaluate({"q1": {"a": 1.0}, "q2": {"b": 1.0}})
    assert report.per_query == expected
    assert report.per_query["q1"] == {"P_5": 0.0, "ndcg_cut_5": 1.0}


def test_binary_qrels_at_relevance_level_two_score_as_pytrec_eval_instead_of_raising() -> None:
    qrels = {"q1": {"d1": 1, "d2": 1, "d5": 0}, "q2": {"d3": 1}}
    run = {"q1": {"d1": 3.0, "d9": 2.0, "d2": 1.0}, "q2": {"d7": 2.0, "d3": 1.0}}
    names = ("map", "trec_map", "P_5", "ndcg_cut_3", "recip_rank")
    with pytest.warns(RelevanceLevelWarning, match="2 of 2 judged queries"):
        report = evaluate_run(run, qrels, metrics=names, k_values=(3,), relevance_level=2)
    expected = pytrec_eval.RelevanceEvaluator(
        qrels, {"map", "P.5", "ndcg_cut.3", "recip_rank", "map_cut.3"}, relevance_level=2
    ).evaluate(run)
    for q, values in expected.items():
        assert report.per_query[q]["trec_map"] == values["map"] == 0.0
        assert report.per_query[q]["map@3"] == values["map_cut_3"] == 0.0
        for key in ("P_5", "ndcg_cut_3", "recip_rank"):
            assert report.per_query[q][key] == pytest.approx(values[key], abs=1e-12), key
    assert report.metrics["ndcg_cut_3"] > 0  # nDCG ignores the level, as trec_eval's does


@pytest.mark.parametrize("level", [0, -1, 1.5, True, "2"])
def test_a_bad_relevance_level_is_refused(level: object) -> None:
    with pytest.raises(ValueError, match="relevance_level must be an int >= 1"):
        evaluate_run({"q1": ["a"]}, {"q1": {"a": 1}}, relevance_level=level)  # type: ignore[arg-type]


def test_judged_only_drops_unjudged_documents_before_ranking() -> None:
    qrels = {"q1": {"a": 1, "n": 0}}
    run = {"q1": ["x", "y", "a", "n"]}
    plain = evaluate_run(run, qrels, k_values=(1,), metrics=("precision", "recip_rank"))
    judged = evaluate_run(
        run, qrels, k_values=(1,), metrics=("precision", "recip_rank"), judged_only=True
    )
    assert (plain.metrics["precision@1"], plain.metrics["recip_rank"]) == (0.0, 1 / 3)
    assert (judged.metrics["precision@1"], judged.metrics["recip_rank"]) == (1.0, 1.0)


def test_the_report_says_how_deep_the_rankings_were() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    report = evaluate_run(
        {"q1": ["a", "x", "y"], "q2": {"b": 1.0}}, qrels, metrics=("num_rel_ret",)
    )
    assert report.manifest["ranking_depth"] == {"shallowest": 1, "deepest": 3}
    assert report.metrics["num_rel_ret"] == 2.0  # summed, not averaged


def retriever(query: str, *, limit: int) -> list[str]:
    return {"alpha": ["x", "d1", "n1", "d2"], "beta": ["d3", "y"]}[query][:limit]


async def async_retriever(query: str, *, limit: int) -> list[str]:
    return retriever(query, limit=limit)


QRELS = {"q1": {"d1": 1, "d2": 2, "n1": 0}, "q2": {"d3": 2, "z": 1}}
QUERIES = {"q1": "alpha", "q2": "beta"}


def test_evaluate_retrieval_takes_the_options_and_agrees_with_evaluate_run() -> None:
    options = {"metrics": ("P", "bpref", "gm_map", "ndcg"), "relevance_level": 2,
               "judged_only": True, "k_values": (1, 2)}  # fmt: skip
    report = evaluate_retrieval(retriever, QRELS, QUERIES, limit=4, **options)  # type: ignore[arg-type]
    run = {q: retriever(text, limit=4) for q, text in QUERIES.items()}
    assert report.per_query == evaluate_run(run, QRELS, **options).per_query  # type: ignore[arg-type]
    assert report.manifest["ranking_depth"] == {"shallowest": 1, "deepest": 3}


@pytest.mark.anyio
async def test_evaluate_retrieval_async_takes_the_options() -> None:
    report = await evaluate_retrieval_async(
        async_retriever, QRELS, QUERIES, limit=4, metrics=("set_F", "infAP"), relevance_level=2
    )
    run = {q: retriever(text, limit=4) for q, text in QUERIES.items()}
    expected = evaluate_run(run, QRELS, metrics=("set_F", "infAP"), relevance_level=2)
    assert report.per_query == expected.per_query


def test_compare_pairs_trec_eval_keys_at_a_relevance_level() -> None:
    pytest.importorskip("scipy")
    qrels = {f"q{i}": {"d1": 2, "d2": 1} for i in range(4)}
    runs = {
        "a": {q: ["d2", "d1"] for q in qrels},
        "b": {q: ["d1", "d2"] for q in qrels},
    }
    report = compare(runs, qrels, baseline="a", metrics=("P_5", "recip_rank"),
                     tests=("t-test",), relevance_level=2)  # fmt: skip
    assert report.comparison("b", "recip_rank").difference == pytest.approx(0.5)
    assert report.comparison("b", "P_5").difference == 0.0


def test_retrieval_metrics_hold_each_family_at_its_default_parameters() -> None:
    ranked, relevant = ["x", "d1", "d2"], {"d1": 1, "d2": 1}
    assert RETRIEVAL_METRICS["P"](ranked, relevant, 5) == 0.4
    # Half of R = 2 is 1 relevant doc (trec_eval: (long)(0.5 * 2 + 0.9)); the best precision
    # from there on is 2/3, at rank 3.
    assert RETRIEVAL_METRICS["iprec_at_recall"](ranked, relevant, 0.5) == 2 / 3
    assert RETRIEVAL_METRICS["trec_map"](ranked, relevant) == pytest.approx((1 / 2 + 2 / 3) / 2)
    with pytest.raises(ValueError, match="default parameters"):
        RETRIEVAL_METRICS["P"](ranked, relevant, 7)


def test_the_catalogue_lists_keys_parameters_aggregation_and_source() -> None:
    catalogue = measure_catalogue()
    assert set(TREC_NAMES) <= set(catalogue)
    assert catalogue["Rprec_mult"].keys[0] == "Rprec_mult_0.20"  # type: ignore[index]
    assert catalogue["Rprec_mult"].parameters[0] == 0.2
    assert {n for n, info in catalogue.items() if info.aggregation != "mean"} == {
        "gm_map", "gm_bpref", "num_q", "num_ret", "num_rel", "num_rel_ret",
        "num_nonrel_judged_ret",
    }  # fmt: skip
    assert catalogue["ndcg"].keys is None and catalogue["ndcg"].source == "ef.evaluation._builtins"
    assert catalogue["hit_rate"].keys is None
    assert catalogue["r_precision"].keys == ("r_precision",)


def test_moved_metrics_keep_their_names_and_values() -> None:
    qrels = {"q1": {"d1": 1, "d2": 1, "n1": 0, "n2": 0}}
    run = {"q1": ["d1", "n1", "x", "d2"]}
    report = evaluate_run(run, qrels, k_values=(1, 4),
                          metrics=("hit_rate", "judged", "r_precision", "bpref"))  # fmt: skip
    assert report.per_query["q1"] == {
        "hit_rate@1": 1.0, "hit_rate@4": 1.0, "judged@1": 1.0, "judged@4": 0.75,
        "r_precision": 0.5, "bpref": 0.75,
    }  # fmt: skip


def test_a_plugin_metric_named_like_a_trec_measure_warns_and_is_ignored() -> None:
    class Clash:
        @hookimpl
        def ef_evaluation_register_metrics(self, register):  # type: ignore[no-untyped-def]
            register("bpref", lambda ranked, relevant: 0.0, cutoff=False)

    with pytest.warns(PluginWarning, match="'bpref'.*is ignored"):
        with registered_plugin(Clash(), name="clash"):
            assert registry().metrics["bpref"].family is not None


def ef_eval(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ef.evaluation.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_cli_takes_relevance_level_and_judged_only_as_trec_eval_does(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 2\nq1 0 n 0\nq2 0 c 2\n", encoding="utf-8")
    run = tmp_path / "run.txt"
    run.write_text(
        "q1 Q0 x 1 4.0 t\nq1 Q0 a 2 3.0 t\nq1 Q0 n 3 2.0 t\nq1 Q0 b 4 1.0 t\nq2 Q0 c 1 1.0 t\n",
        encoding="utf-8",
    )
    result = ef_eval(
        "run", qrels, run, "--metrics", "P,recip_rank,bpref", "--relevance-level", "2",
        "--judged-only", "--format", "json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [report] = json.loads(result.stdout).values()  # one run, keyed by its file's name
    trec = pytrec_eval.RelevanceEvaluator(
        {"q1": {"a": 1, "b": 2, "n": 0}, "q2": {"c": 2}},
        {"P", "recip_rank", "bpref"},
        relevance_level=2,
        judged_docs_only_flag=True,
    ).evaluate({"q1": {"x": 4.0, "a": 3.0, "n": 2.0, "b": 1.0}, "q2": {"c": 1.0}})
    for q, values in trec.items():
        for key, value in values.items():
            assert report["per_query"][q][key] == pytest.approx(value, abs=1e-12), (q, key)
    assert report["manifest"]["parameters"]["relevance_level"] == 2
    bad = ef_eval("run", qrels, run, "--relevance-level", "0")
    assert bad.returncode != 0 and "expected an integer >= 1" in bad.stderr


def test_ef_eval_scores_binary_qrels_at_level_two_with_a_warning(tmp_path: Path) -> None:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 1\nq2 0 c 1\n", encoding="utf-8")
    run.write_text("q1 Q0 x 1 3.0 t\nq1 Q0 a 2 2.0 t\nq2 Q0 c 1 1.0 t\n", encoding="utf-8")
    result = ef_eval(
        "run", qrels, run, "--metrics", "map@10,P_5,ndcg_cut_10", "--relevance-level", "2",
        "--format", "json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "warning: 2 of 2 judged queries have no grade >= relevance_level 2" in result.stderr
    [report] = json.loads(result.stdout).values()
    expected = pytrec_eval.RelevanceEvaluator(
        {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}, {"map_cut.10", "P.5", "ndcg_cut.10"},
        relevance_level=2,
    ).evaluate({"q1": {"x": 3.0, "a": 2.0}, "q2": {"c": 1.0}})  # fmt: skip
    for q, values in expected.items():
        assert report["per_query"][q]["map@10"] == values["map_cut_10"] == 0.0
        assert report["per_query"][q]["P_5"] == values["P_5"] == 0.0
        assert report["per_query"][q]["ndcg_cut_10"] == pytest.approx(values["ndcg_cut_10"])
