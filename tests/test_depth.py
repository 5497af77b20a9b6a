"""The depth cap (trec_eval's ``-M``): ``evaluate_run(depth=N)`` and ``ef-eval run --depth N``
score every measure as pytrec_eval scores the run cut to its first N results."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import pytrec_eval

from ef.evaluation import evaluate_run
from ef.evaluation._scoring.order import rank_by_score
from test_cli_run_queries import ef_eval
from test_trec_measures import MEASURES, ef_key, generated, matches, sendable
from test_trec_measures_options import TREC_NAMES, scored_queries


def cut(run: dict[str, dict[str, float]], depth: int) -> dict[str, dict[str, float]]:
    """The oracle's input: each query's ``depth`` best documents in trec_eval's order."""
    return {q: {d: scores[d] for d in rank_by_score(scores)[:depth]} for q, scores in run.items()}


def expected_values(qrels: dict, run: dict, depth: int, judged_only: bool) -> dict:
    scored = scored_queries(qrels)
    evaluator = pytrec_eval.RelevanceEvaluator(
        sendable(scored), MEASURES, judged_docs_only_flag=judged_only
    )
    runs = cut(run, depth)
    return evaluator.evaluate({q: runs[q] for q in scored if runs.get(q)})


def assert_equal_to_pytrec_eval(report, expected: dict) -> float:
    worst = 0.0
    for q, values in expected.items():
        got = report.per_query[q]
        wrong = {
            k: (got[ef_key(k)], v) for k, v in values.items() if not matches(k, got[ef_key(k)], v)
        }
        assert not wrong, (q, wrong)
        worst = max(
            worst,
            *(
                abs(got[ef_key(k)] - v)
                for k, v in values.items()
                if v == v and not k.startswith("gm_")
            ),
        )
    return worst


@pytest.mark.parametrize("as_ranking", [False, True], ids=["scores", "rankings"])
@pytest.mark.parametrize("judged_only", [False, True], ids=["all", "J"])
@pytest.mark.parametrize("depth", [1, 3, 7])
def test_every_measure_is_pytrec_evals_on_the_cut_run(
    depth: int, judged_only: bool, as_ranking: bool
) -> None:
    qrels, run = generated(seed=4000 + depth + 10 * judged_only)
    given = {q: rank_by_score(s) for q, s in run.items()} if as_ranking else run
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = evaluate_run(
            given, qrels, metrics=TREC_NAMES, judged_only=judged_only, depth=depth
        )
    expected = expected_values(qrels, run, depth, judged_only)
    assert assert_equal_to_pytrec_eval(report, expected) <= 1e-9
    # The cap changes the numbers: the uncut run does not give pytrec_eval's cut values.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = evaluate_run(given, qrels, metrics=("num_ret",), judged_only=judged_only)
    assert any(full.per_query[q]["num_ret"] > depth for q in expected)
    assert all(report.per_query[q]["num_ret"] <= depth for q in report.per_query)


def test_the_cap_applies_before_the_built_in_metrics() -> None:
    qrels, run = generated(seed=4100)
    report = evaluate_run(run, qrels, k_values=(5, 10), metrics=("ndcg", "map", "recall"), depth=4)
    scored = scored_queries(qrels)
    evaluator = pytrec_eval.RelevanceEvaluator(
        sendable(scored), {"ndcg_cut.5,10", "map_cut.5,10", "recall.5,10"}
    )
    runs = cut(run, 4)
    expected = evaluator.evaluate({q: runs[q] for q in scored if runs.get(q)})
    names = {"ndcg_cut": "ndcg", "map_cut": "map", "recall": "recall"}
    for q, values in expected.items():
        for key, value in values.items():
            family, k = key.rsplit("_", 1)
            assert report.per_query[q][f"{names[family]}@{k}"] == pytest.approx(value, abs=1e-12)


def test_a_streamed_run_file_is_cut_as_the_run_in_memory(tmp_path: Path) -> None:
    qrels, run = generated(seed=4200)
    path = tmp_path / "run.txt"
    path.write_text(
        "".join(
            f"{q} Q0 {d} {i} {scores[d]!r} tag\n"
            for q, scores in run.items()
            for i, d in enumerate(rank_by_score(scores), 1)
        )
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # queries with no document are not in the file
        from_file = evaluate_run(path, qrels, metrics=TREC_NAMES, depth=5)
    assert assert_equal_to_pytrec_eval(from_file, expected_values(qrels, run, 5, False)) <= 1e-9


def test_the_command_line_takes_depth(tmp_path: Path) -> None:
    qrels, run = generated(seed=4300, n_queries=30)
    (tmp_path / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, judged in qrels.items() for d, g in judged.items())
    )
    (tmp_path / "run.txt").write_text(
        "".join(
            f"{q} Q0 {d} {i} {scores[d]!r} tag\n"
            for q, scores in run.items()
            for i, d in enumerate(rank_by_score(scores), 1)
        )
    )
    files = (tmp_path / "qrels.txt", tmp_path / "run.txt")
    result = ef_eval("run", *files, "--metrics", "P,num_ret", "--depth", "3", "--format", "json")
    assert result.returncode == 0, result.stderr
    means = json.loads(result.stdout)["run.txt"]["metrics"]
    scored = scored_queries(qrels)
    evaluator = pytrec_eval.RelevanceEvaluator(sendable(scored), {"P.5", "num_ret"})
    runs = cut(run, 3)
    expected = evaluator.evaluate({q: runs[q] for q in scored if runs.get(q)})
    assert means["P_5"] == pytest.approx(
        sum(v["P_5"] for v in expected.values()) / len(scored), abs=1e-12
    )
    assert means["num_ret"] == sum(v["num_ret"] for v in expected.values())
    refused = ef_eval("run", *files, "--depth", "0")
    assert refused.returncode != 0 and "--depth" in refused.stderr


@pytest.mark.parametrize("depth", [0, -1, 2.5, True])
def test_a_depth_that_is_no_positive_integer_is_refused(depth: object) -> None:
    with pytest.raises(ValueError, match="depth must be a positive integer or None"):
        evaluate_run({"q1": ["d1"]}, {"q1": {"d1": 1}}, depth=depth)  # type: ignore[arg-type]
