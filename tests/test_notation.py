"""The notations people already write for a measure: each resolves to its canonical measure.

ir_measures' ``nDCG@10``, trec_eval's ``ndcg_cut.10`` and ``ndcg_cut_10``, ef's ``ndcg@10``,
ranx's and BEIR's names: every spelling reports the same per-query values as the measure it
names, under the name as written.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence

import pytest

from ef.evaluation import (
    ParameterError,
    check_metrics,
    compare,
    evaluate_run,
    hookimpl,
    measure_catalogue,
)
from ef.evaluation._metric_names.api import lookup_metrics
from ef.evaluation.cli import main
from ef.evaluation.cli._arguments import parse_names
from ef.evaluation.testing import registered_plugin


def _inputs() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Thirty queries, grades 0-4 with some negative (pooled, unjudged), runs of 3-40 docs."""
    rng = random.Random(21)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(30):
        docs = [f"d{q}_{i}" for i in range(40)]
        judged = rng.sample(docs, 15)
        qrels[str(q)] = {doc: rng.choice([-1, 0, 0, 1, 2, 3, 4]) for doc in judged}
        qrels[str(q)][judged[0]] = rng.randint(1, 4)  # at least one relevant
        ranked = rng.sample(docs, rng.randint(3, 40))
        run[str(q)] = {doc: 100.0 - i + rng.random() / 2 for i, doc in enumerate(ranked)}
    return qrels, run


QRELS, RUN = _inputs()


def _per_query(metrics: Sequence[str], **options: object) -> dict[str, dict[str, float]]:
    report = evaluate_run(RUN, QRELS, metrics=metrics, **options)  # type: ignore[arg-type]
    return {q: dict(values) for q, values in report.per_query.items()}


# notation → (the canonical measure it names, written as ef already computes it, and options)
TABLE: list[tuple[str, str, str, dict[str, object]]] = [
    ("nDCG@10", "ndcg_cut", "ndcg_cut_10", {}),
    ("ndcg_cut.10", "ndcg_cut", "ndcg_cut_10", {}),
    ("ndcg_cut_10", "ndcg_cut", "ndcg_cut_10", {}),
    ("ndcg@10", "ndcg_cut", "ndcg_cut_10", {}),
    ("NDCG@10", "ndcg_cut", "ndcg_cut_10", {}),
    ("nDCG(dcg='log2')@10", "ndcg_cut", "ndcg_cut_10", {}),
    ("nDCG", "trec_ndcg", "trec_ndcg", {}),
    ("P@5", "P", "P_5", {}),
    ("P.5", "P", "P_5", {}),
    ("P_5", "P", "P_5", {}),
    ("precision@5", "P", "P_5", {}),
    ("P(rel=2)@5", "P", "P_5", {"relevance_level": 2}),
    ("AP", "trec_map", "trec_map", {}),
    ("AP(rel=2)", "trec_map", "trec_map", {"relevance_level": 2}),
    ("AP@10", "map_cut", "map_cut_10", {}),
    ("map_cut.10", "map_cut", "map_cut_10", {}),
    ("map@10", "map_cut", "map_cut_10", {}),
    ("RR", "recip_rank", "recip_rank", {}),
    ("RR(rel=3)", "recip_rank", "recip_rank", {"relevance_level": 3}),
    ("RR@10", "mrr", "mrr@10", {"k_values": (10,)}),
    ("mrr@10", "mrr", "mrr@10", {"k_values": (10,)}),
    ("R@100", "trec_recall", "trec_recall_100", {}),
    ("recall.100", "trec_recall", "trec_recall_100", {}),
    ("recall_100", "trec_recall", "trec_recall_100", {}),
    ("Recall@100", "trec_recall", "trec_recall_100", {}),
    ("R_cap@10", "relative_P", "relative_P_10", {}),
    ("relative_P.10", "relative_P", "relative_P_10", {}),
    ("Rprec(rel=2)", "Rprec", "Rprec", {"relevance_level": 2}),
    ("Bpref", "bpref", "bpref", {}),
    ("Bpref(rel=2)", "bpref", "bpref", {"relevance_level": 2}),
    ("infAP(rel=2)", "infAP", "infAP", {"relevance_level": 2}),
    ("SetF", "set_F", "set_F", {}),
    ("SetP", "set_P", "set_P", {}),
    ("NumRelRet", "num_rel_ret", "num_rel_ret", {}),
    ("NumRet(rel=1)", "num_rel_ret", "num_rel_ret", {}),
    ("NumRet(rel=2)", "num_rel_ret", "num_rel_ret", {"relevance_level": 2}),
    ("RPrec", "Rprec", "Rprec", {}),
    ("NumRel(rel=2)", "num_rel", "num_rel", {"relevance_level": 2}),
    ("IPrec@0.1", "iprec_at_recall", "iprec_at_recall_0.10", {}),
    ("iprec_at_recall.0.10", "iprec_at_recall", "iprec_at_recall_0.10", {}),
    ("iprec_at_recall_0.10", "iprec_at_recall", "iprec_at_recall_0.10", {}),
    ("Rprec_mult.0.20", "Rprec_mult", "Rprec_mult_0.20", {}),
    ("Success@1", "success", "success_1", {}),
    ("success.1", "success", "success_1", {}),
    ("hit_rate@1", "success", "success_1", {}),
    ("Accuracy@1", "success", "success_1", {}),
    ("judged@10", "judged", "judged@10", {"k_values": (10,)}),
]


@pytest.fixture(scope="module")
def written() -> dict[str, dict[str, float]]:
    """Every notation of the table, computed in one evaluation."""
    return _per_query([notation for notation, *_ in TABLE])


@pytest.mark.parametrize(("notation", "name", "key", "options"), TABLE)
def test_each_notation_reports_its_canonical_measure_per_query(
    written: dict[str, dict[str, float]],
    notation: str,
    name: str,
    key: str,
    options: dict[str, object],
) -> None:
    canonical = _per_query([name], **options)
    got = {q: values[notation] for q, values in written.items()}
    expected = {q: canonical[q][key] for q in got}
    if options.get("relevance_level"):
        # A query with nothing relevant at the level is skipped by the evaluation at that level;
        # the notation, in an evaluation at the default level, scores it.
        got = {q: value for q, value in got.items() if q in expected}
        assert set(canonical) <= set(got)
    assert got == expected


def test_the_exponential_notations_are_one_measure() -> None:
    values = _per_query(["nDCG(dcg='exp-log2')@10", "ndcg_burges@10", "nDCG@10"])
    assert all(v["nDCG(dcg='exp-log2')@10"] == v["ndcg_burges@10"] for v in values.values())
    # and not the linear-gain nDCG
    assert any(v["ndcg_burges@10"] != v["nDCG@10"] for v in values.values())


def test_every_spelling_of_one_measure_is_computed_once() -> None:
    resolved = lookup_metrics(["nDCG@10", "ndcg_cut.10", "P_5", "ndcg_cut_10", "ndcg@10"])
    assert [metric.name for metric in resolved] == ["nDCG@10", "P_5"]
    family = resolved[0].family
    assert family is not None
    assert family.keys == ("nDCG@10", "ndcg_cut.10", "ndcg_cut_10", "ndcg@10")
    # Parameters in any order, or left at their default, are one measure too.
    resolved = lookup_metrics(["RBP(rel=1,p=0.8)", "RBP(p=0.8,rel=1)", "RBP(rel=1)"])
    assert len(resolved) == 1


def test_a_name_with_a_cutoff_ignores_k_values() -> None:
    report = evaluate_run(RUN, QRELS, metrics=["nDCG@10", "ndcg", "P_7"], k_values=(3,))
    assert list(report.metrics) == ["ndcg@3", "nDCG@10", "P_7"]
    # ndcg@10 alongside ndcg at k=10 is one key, with one value.
    report = evaluate_run(RUN, QRELS, metrics=["ndcg", "ndcg@10"], k_values=(10,))
    assert list(report.metrics) == ["ndcg@10"]


def test_a_bare_trec_family_yields_its_default_cutoffs() -> None:
    report = evaluate_run(RUN, QRELS, metrics=["ndcg_cut"])
    assert list(report.metrics) == [
        f"ndcg_cut_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)
    ]


@pytest.mark.parametrize("key", ["nDCG@10", "ndcg_cut.10", "ndcg_cut_10", "NDCG@10"])
def test_primary_reads_ndcg_at_10_in_any_spelling(key: str) -> None:
    report = evaluate_run(RUN, QRELS, metrics=[key])
    assert report.primary == report.metrics[key]
    assert report.primary_at(10) == report.metrics[key]
    assert report.primary_at(5) is None


def test_compare_resolves_any_spelling() -> None:
    other = {q: {doc: -score for doc, score in ranked.items()} for q, ranked in RUN.items()}
    metrics = ["nDCG@10", "P(rel=2)@5", "ndcg_cut_10", "RBP(rel=1,p=0.8)", "P_10", "ndcg@10"]
    result = compare({"a": RUN, "b": other}, qrels=QRELS, baseline="a", metrics=metrics)
    found = {c.metric for c in result.comparisons}
    assert set(metrics) <= found


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("nDGC@10", r"unknown metric name\(s\) 'nDGC@10'; closest: 'nDCG@10'"),
        ("ndcg_cutt.10", r"closest: 'ndcg_cut\.10'"),
        ("P(rel=0)@5", r"'P\(rel=0\)@5' \(P\): parameter 'rel' must be an int >= 1, got '0'"),
        ("RBP(p=1.5)", r"parameter 'p' must be a finite number in \(0, 1\), got '1.5'"),
        ("RBP(p=1)", r"parameter 'p' must be a finite number in \(0, 1\), got '1'"),
        ("nDCG(dcg='exp')@10", r"parameter 'dcg' must be one of 'log2', 'exp-log2', got 'exp'"),
        ("P(foo=1)@5", r"P takes rel, judged_only; unknown parameter\(s\) 'foo'"),
        ("ERR", r"ERR needs a cutoff, such as 'ERR@20'"),
        ("Rprec@10", r"Rprec takes no cutoff"),
        ("P@0", r"parameter 'cutoff' must be an int in \[1, 2\*\*63 - 1\], got '0'"),
        ("P@0.5", r"parameter 'cutoff' must be an int in \[1, 2\*\*63 - 1\], got '0.5'"),
        (
            "nDCG@" + "9" * 5000,
            r"^metric 'nDCG@9{34}… \(5007 characters\) \(nDCG\): parameter "
            r"'cutoff' must be an int in \[1, 2\*\*63 - 1\], got '9{39}… \(5002 characters\)$",
        ),
        ("P@9223372036854775808", r"'P@9223372036854775808' \(P\): parameter 'cutoff' must"),
        (
            "IPrec@5",
            r"'IPrec@5' \(IPrec\): parameter 'recall level' must be a finite number in "
            r"\[0, 1\], got '5'",
        ),
        ("IPrec@1.5", r"parameter 'recall level' must be a finite number in \[0, 1\]"),
        ("iprec_at_recall.2", r"'iprec_at_recall.2' \(IPrec\): parameter 'recall level'"),
        ("iprec_at_recall_1.01", r"parameter 'recall level' must be a finite number in \[0, 1\]"),
        ("P(rel=1,rel=2)@5", r"'P\(rel=1,rel=2\)@5': parameter 'rel' is given twice"),
        ("RBP(p=0.5,p=0.5)", r"parameter 'p' is given twice"),
        ("judged(p=1)@10", r"'judged' of plugin .* takes no parameters"),
        ("bpref@10", r"'bpref' .* takes no cutoff or parameters"),
    ],
)
def test_a_bad_name_is_an_error_naming_it(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_metrics([name])
    with pytest.raises(ValueError, match=message):
        evaluate_run(RUN, QRELS, metrics=[name])


@pytest.mark.parametrize(
    "name", ["IPrec@5", "P(rel=1,rel=2)@5", "RBP(p=2)", "nDCG@" + "9" * 5000, "P@0"]
)
def test_a_parameter_outside_its_domain_is_a_parameter_error(name: str) -> None:
    with pytest.raises(ParameterError):
        evaluate_run(RUN, QRELS, metrics=[name])


@pytest.mark.parametrize(("name", "level"), [("IPrec@0", 0.0), ("IPrec@1", 1.0),
                                             ("iprec_at_recall.0.50", 0.5)])  # fmt: skip
def test_a_recall_level_in_zero_one_is_trec_evals_value(name: str, level: float) -> None:
    report = evaluate_run(RUN, QRELS, metrics=[name, "iprec_at_recall"])
    assert report.metrics[name] == report.metrics[f"iprec_at_recall_{level:.2f}"]


def test_err_refuses_a_grade_above_gdevals_scale_naming_the_query() -> None:
    with pytest.raises(ValueError, match="ERR takes grades 0 to 4") as caught:
        evaluate_run({"q": ["a"]}, {"q": {"a": 5}}, metrics=["ERR@10"])
    assert "for query 'q'" in caught.value.__notes__


class ParamPlugin:
    """A third-party metric declaring a parameter: ``weighted(w=2.0)@k``."""

    @hookimpl
    def ef_evaluation_register_metrics(self, register: Callable[..., None]) -> None:
        def weighted(
            ranked: Sequence[str], relevant: Mapping[str, float], k: int, w: float = 2.0
        ) -> float:
            return w * sum(1 for doc in ranked[:k] if relevant.get(doc, 0) > 0)

        register("weighted", weighted, parameters={"w": 2.0}, description="w × hits")


def test_a_plugin_metric_declares_its_parameters_for_the_same_parser() -> None:
    run, qrels = {"q": ["a", "x", "b"]}, {"q": {"a": 1, "b": 1}}
    with registered_plugin(ParamPlugin()):
        report = evaluate_run(
            run, qrels, metrics=["weighted", "weighted@3", "weighted(w=0.5)@3"], k_values=(1,)
        )
        assert dict(report.metrics) == {
            "weighted@1": 2.0,
            "weighted@3": 4.0,
            "weighted(w=0.5)@3": 1.0,
        }
        with pytest.raises(ValueError, match=r"takes w; unknown parameter\(s\) 'p'"):
            check_metrics(["weighted(p=1)@3"])
        with pytest.raises(ValueError, match=r"parameter 'w' must be a finite number"):
            check_metrics(["weighted(w=nan)@3"])
        info = measure_catalogue(notations=True)["weighted"]
        assert info.notations == ("weighted", "weighted@K", "weighted(w=2.0)@K")


def test_a_plugin_parameter_without_a_usable_default_is_refused() -> None:
    class Bad:
        @hookimpl
        def ef_evaluation_register_metrics(self, register: Callable[..., None]) -> None:
            register("bad", lambda ranked, relevant, k, w: 0.0, parameters={"w": None})

    with pytest.warns(Warning, match="needs a default int, float or str"):
        with registered_plugin(Bad()):
            assert "bad" not in measure_catalogue()


def test_the_cli_splits_metrics_on_commas_outside_parentheses_and_quotes() -> None:
    assert parse_names("nDCG@10,RBP(rel=1,p=0.8), nDCG(dcg='exp-log2')@10,P_5") == (
        "nDCG@10",
        "RBP(rel=1,p=0.8)",
        "nDCG(dcg='exp-log2')@10",
        "P_5",
    )


def test_ef_eval_run_accepts_every_notation(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from pathlib import Path

    base = Path(str(tmp_path))
    qrels_path, run_path = base / "qrels.txt", base / "run.txt"
    qrels_path.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items())
    )
    run_path.write_text(
        "".join(
            f"{q} Q0 {d} {i} {s} sys\n"
            for q, docs in RUN.items()
            for i, (d, s) in enumerate(docs.items())
        )
    )
    names = "nDCG@10,RBP(rel=1,p=0.8),P(rel=2)@5,ndcg_cut_10"
    assert (
        main(["run", str(qrels_path), str(run_path), "--metrics", names, "--format", "json"]) == 0
    )
    report = json.loads(capsys.readouterr().out)["run.txt"]
    assert list(report["metrics"]) == ["nDCG@10", "ndcg_cut_10", "RBP(rel=1,p=0.8)", "P(rel=2)@5"]
    assert main(["run", str(qrels_path), str(run_path), "--metrics", "nDGC@10"]) == 2
    assert "unknown metric 'nDGC@10'; closest: 'nDCG@10'" in capsys.readouterr().err
    assert main(["run", str(qrels_path), str(run_path), "--metrics", "P(rel=0)@5"]) == 2
    assert "parameter 'rel' must be an int >= 1" in capsys.readouterr().err


def test_ef_eval_metrics_lists_every_measure(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics", "--format", "json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    for name in ("nDCG", "ERR", "RBP", "F1", "Hits", "R_cap", "Unjudged", "Judged", "ndcg_cut"):
        assert rows[name]["notations"] and rows[name]["description"] and rows[name]["source"]
    assert "ndcg_cut.X" in rows["ndcg_cut"]["notations"]
    assert (
        rows["RBP"]["parameters"][1] == "p=0.8: the user's persistence, a finite number in (0, 1)"
    )
    assert rows["NumRelRet"]["aggregation"] == "sum"
    # Every notation listed is accepted.
    check_metrics([n.replace("@K", "@10") for row in rows.values() for n in row["notations"]
                   if ".X" not in n and "_X" not in n])  # fmt: skip


def test_the_docs_table_is_generated_from_the_registry_view() -> None:
    from pathlib import Path

    from ef.evaluation.cli.metrics import docs_table, measures

    page = (Path(__file__).parents[1] / "docs" / "metrics.md").read_text(encoding="utf-8")
    start = page.index("-->\n", page.index("<!-- generated by")) + 4
    table = page[start : page.index("<!-- end of generated table -->")]
    builtin = [row for row in measures() if row["plugin"].startswith("ef.evaluation.")]
    assert table == docs_table(builtin) + "\n"


def test_a_retriever_is_asked_for_as_many_documents_as_a_named_cutoff_reads() -> None:
    from ef.evaluation import evaluate_retrieval

    limits: list[int] = []
    ranking = [f"d{i}" for i in range(30)]

    def retriever(query: str, *, limit: int = 10) -> list[str]:
        limits.append(limit)
        return ranking[:limit]

    qrels = {"q": {"d25": 1}}
    report = evaluate_retrieval(
        retriever, qrels, {"q": "text"}, metrics=["R@30", "ndcg"], k_values=(5,)
    )
    assert limits == [30]
    assert report.metrics["R@30"] == 1.0


def test_the_example_plugins_rbp_and_the_core_rbp_are_two_names_for_one_number() -> None:
    # The installed ef-evaluation-extra-metrics keeps its lower-case rbp; the core's is RBP.
    assert measure_catalogue()["rbp"].plugin != "ef.evaluation._builtins"
    values = _per_query(["rbp@10", "RBP(rel=1,p=0.8)@10", "RBP(rel=1,p=0.8)"])
    for per_query in values.values():
        assert per_query["rbp@10"] == pytest.approx(per_query["RBP(rel=1,p=0.8)@10"], abs=1e-12)
    assert any(v["RBP(rel=1,p=0.8)@10"] != v["RBP(rel=1,p=0.8)"] for v in values.values())


def test_optimize_fusion_reads_any_spelling_of_its_metric() -> None:
    from ef.evaluation import optimize_fusion

    other = {q: {doc: -score for doc, score in ranked.items()} for q, ranked in RUN.items()}
    results = [
        optimize_fusion([RUN, other], QRELS, method="wsum", metric=metric)
        for metric in ("ndcg@10", "nDCG@10", "ndcg_cut_10")
    ]
    assert results[0].best_params == results[1].best_params == results[2].best_params
    assert results[0].best_score == results[1].best_score == results[2].best_score
