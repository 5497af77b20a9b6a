"""One name, one meaning, at every entry point: evaluate_retrieval, evaluate_run, compare,
optimize_fusion's metric and the ef-eval commands all read metric names through one resolver,
so each takes every name the vocabulary takes and gives it the same value."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import in_process_cli
from ef.evaluation import compare, evaluate_retrieval, evaluate_run, optimize_fusion

QRELS = {"q1": {"d1": 2, "d2": 1, "d3": 0}, "q2": {"d4": 1, "d5": 2}, "q3": {"d6": 1}}
RUN = {
    "q1": {"d9": 5.0, "d2": 4.0, "d1": 3.0, "d3": 2.0},
    "q2": {"d5": 5.0, "x": 4.0, "d4": 1.0},
    "q3": {"y": 3.0, "z": 2.0, "d6": 1.0},
}
OTHER = {q: {d: -s for d, s in scores.items()} for q, scores in RUN.items()}
NAMES = ["P@5", "MRR@10", "MAP", "NDCG@10", "IPrec@0.5", "P(rel=2)@5", "trec_map", "P_5",
         "ndcg_cut.10", "Recall@100", "map@2", "bpref"]  # fmt: skip
EF_EVAL = shutil.which("ef-eval", path=str(Path(sys.executable).parent))


@pytest.fixture(scope="module")
def expected() -> dict[str, float]:
    return dict(evaluate_run(RUN, QRELS, metrics=NAMES).metrics)


def test_evaluate_run_reports_each_name_as_written(expected: dict[str, float]) -> None:
    assert sorted(expected) == sorted(NAMES)  # spellings of one measure are reported together


def test_evaluate_retrieval_takes_the_same_names(expected: dict[str, float]) -> None:
    ranked = {q: sorted(scores, key=scores.__getitem__, reverse=True) for q, scores in RUN.items()}
    queries = {q: q for q in QRELS}  # each query's text is its id: the retriever looks it up
    report = evaluate_retrieval(
        lambda query, limit: ranked[query], QRELS, queries, metrics=NAMES, k_values=(10,)
    )
    assert report.metrics == pytest.approx(expected)


def test_compare_takes_the_same_names(expected: dict[str, float]) -> None:
    report = compare({"a": RUN, "b": OTHER}, QRELS, baseline="a", metrics=NAMES)
    assert list(report.metrics) == NAMES  # one value each, in the order asked
    assert report.means["a"] == pytest.approx(expected)


@pytest.mark.parametrize("name", ["P@5", "MRR@10", "MAP", "IPrec@0.5", "P(rel=2)@5", "trec_map"])
def test_optimize_fusion_takes_the_same_names(name: str) -> None:
    result = optimize_fusion([RUN, OTHER], QRELS, method="wsum", metric=name)
    best = dict(result.best_params)
    fused = result.fuse([RUN, OTHER])
    assert best["weights"] and evaluate_run(fused, QRELS, metrics=[name]).metrics[name] == (
        result.best_score
    )


@pytest.mark.parametrize("name", ["ndcg", "P", "trec_recall"])
def test_a_name_for_several_values_is_refused_where_one_is_needed(name: str) -> None:
    with pytest.raises(ValueError, match=f"metric key '{name}'"):
        compare({"a": RUN, "b": OTHER}, QRELS, baseline="a", metrics=[name])
    with pytest.raises(ValueError, match=f"metric key '{name}'"):
        optimize_fusion([RUN, OTHER], QRELS, method="wsum", metric=name)


def test_the_commands_take_the_same_names(tmp_path: Path, expected: dict[str, float]) -> None:
    assert EF_EVAL is not None
    (tmp_path / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, judged in QRELS.items() for d, g in judged.items())
    )
    for name, run in (("a.txt", RUN), ("b.txt", OTHER)):
        lines = [
            f"{q} Q0 {d} {i} {s} t"
            for q, scores in run.items()
            for i, (d, s) in enumerate(sorted(scores.items(), key=lambda x: -x[1]), 1)
        ]
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    env = {**os.environ, "EF_EVALUATION_PLUGINS": ""}

    def ef_eval(*args: str) -> subprocess.CompletedProcess[str]:
        return in_process_cli.ef_eval(*args, cwd=tmp_path, env=env)

    names = ",".join(n for n in NAMES if "," not in n)
    scored = ef_eval("run", "qrels.txt", "a.txt", "--metrics", names, "--format", "json")
    assert scored.returncode == 0, scored.stderr
    means = json.loads(scored.stdout)["a.txt"]["metrics"]
    assert means == pytest.approx({n: v for n, v in expected.items() if "," not in n})
    compared = ef_eval(
        "compare", "qrels.txt", "a.txt", "b.txt", "--baseline", "a.txt", "--metrics", names,
        "--format", "json", "--permutations", "100",
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    fused = ef_eval(
        "fuse", "a.txt", "b.txt", "--method", "wsum", "--optimize", "--qrels", "qrels.txt",
        "--metric", "MRR@10", "--format", "json",
    )  # fmt: skip
    assert fused.returncode == 0, fused.stderr
    assert json.loads(fused.stdout)["metric"] == "MRR@10"


def test_compare_finds_a_reports_value_under_another_spelling(expected: dict[str, float]) -> None:
    reports = {
        name: evaluate_run(run, QRELS, metrics=("P_5", "ndcg", "map_cut"), k_values=(10,))
        for name, run in (("a", RUN), ("b", OTHER))
    }
    report = compare(reports, baseline="a", metrics=("P@5", "NDCG@10", "MAP@10"))
    assert report.means["a"]["P@5"] == reports["a"].metrics["P_5"] == expected["P@5"]
    assert report.means["a"]["NDCG@10"] == reports["a"].metrics["ndcg@10"]
    assert report.means["a"]["MAP@10"] == reports["a"].metrics["map_cut_10"]
    with pytest.raises(ValueError, match=r"system 'a' has no 'P@10'"):  # another measure
        compare(reports, baseline="a", metrics=("P@10",))
