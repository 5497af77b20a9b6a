"""The depth cap in comparisons: ``compare(..., depth=N)`` and ``ef-eval compare --depth N``
pair the values pytrec_eval gives the runs cut to their first N results (trec_eval's order), and
the comparison's manifest records N."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import pytrec_eval

from ef.evaluation import ComparisonReport, compare, evaluate_run
from ef.evaluation._scoring.order import rank_by_score
from ef.evaluation.cli import main

# ef's key → pytrec_eval's
KEYS = {"P_5": "P_5", "AP": "map", "ndcg_cut_10": "ndcg_cut_10", "recip_rank": "recip_rank"}
KEYS |= {"bpref": "bpref", "num_rel_ret": "num_rel_ret"}


def _generated(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, dict]]]:
    """Forty queries graded 0-3 (each with a relevant document), and two runs of 1-40
    documents per query with tied scores."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, dict[str, float]]] = {"bm25": {}, "dense": {}}
    for q in range(40):
        docs = [f"d{i}" for i in range(60)]
        judged = rng.sample(docs, rng.randint(2, 20))
        qrels[f"q{q}"] = {doc: rng.choice((0, 0, 1, 2, 3)) for doc in judged}
        qrels[f"q{q}"][judged[0]] = rng.randint(1, 3)
        for run in runs.values():
            ranked = rng.sample(docs, rng.randint(1, 40))
            run[f"q{q}"] = {doc: rng.randint(1, 30) / 4 for doc in ranked}
    return qrels, runs


def _cut(run: dict[str, dict[str, float]], depth: int) -> dict[str, dict[str, float]]:
    return {q: {d: scores[d] for d in rank_by_score(scores)[:depth]} for q, scores in run.items()}


def _pytrec_eval(qrels: dict, run: dict) -> dict[str, dict[str, float]]:
    measures = {"P.5", "map", "ndcg_cut.10", "recip_rank", "bpref", "num_rel_ret"}
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)  # type: ignore[no-any-return]


def _equal_to_cut_runs(report: ComparisonReport, qrels: dict, runs: dict, depth: int) -> None:
    for name, run in runs.items():
        theirs = _pytrec_eval(qrels, _cut(run, depth))
        ours = report.per_query[name]
        assert set(ours) == set(theirs) == set(qrels)
        for q, values in theirs.items():
            for key, trec_key in KEYS.items():
                assert ours[q][key] == pytest.approx(values[trec_key], abs=1e-12), (name, q, key)


@pytest.mark.parametrize("depth", [1, 3, 10])
def test_compare_scores_the_runs_cut_to_depth(depth: int) -> None:
    qrels, runs = _generated(3900 + depth)
    report = compare(
        runs, qrels, baseline="bm25", metrics=list(KEYS), tests=("randomization",), depth=depth
    )
    _equal_to_cut_runs(report, qrels, runs, depth)
    assert report.manifest["parameters"]["depth"] == depth
    assert ComparisonReport.from_json(report.to_json()).manifest == report.manifest
    # The cap is the one evaluate_run applies, and it changes the numbers.
    alone = evaluate_run(runs["dense"], qrels, metrics=list(KEYS), depth=depth)
    assert report.per_query["dense"] == alone.per_query
    uncut = compare(runs, qrels, baseline="bm25", metrics=list(KEYS), tests=("randomization",))
    assert uncut.manifest["parameters"]["depth"] is None
    assert uncut.means["dense"]["num_rel_ret"] > report.means["dense"]["num_rel_ret"]


def test_ef_eval_compare_takes_depth(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, runs = _generated(3950)
    (tmp_path / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, judged in qrels.items() for d, g in judged.items())
    )
    paths = []
    for name, run in runs.items():
        path = tmp_path / name
        path.write_text(
            "".join(
                f"{q} Q0 {d} 0 {s} {name}\n" for q, scores in run.items() for d, s in scores.items()
            )
        )
        paths.append(str(path))
    args = [str(tmp_path / "qrels.txt"), *paths, "--metrics", ",".join(KEYS), "--depth", "3"]
    assert main(["compare", *args, "--baseline", "bm25", "--format", "json"]) == 0
    report = ComparisonReport.from_json(capsys.readouterr().out)
    assert report.manifest["parameters"]["depth"] == 3
    _equal_to_cut_runs(report, qrels, runs, 3)
    assert main(["compare", *args[:-2], "--depth", "0"]) == 2
    assert "--depth" in capsys.readouterr().err


def test_reports_scored_at_another_depth_are_refused() -> None:
    qrels, runs = _generated(3960)
    at_5 = {name: evaluate_run(run, qrels, metrics=["P_5"], depth=5) for name, run in runs.items()}
    same = compare(at_5, baseline="bm25", metrics=["P_5"], tests=("randomization",), depth=5)
    assert same.manifest["parameters"]["depth"] == 5
    # Without depth=, the reports' own depth is recorded.
    assert compare(at_5, metrics=["P_5"], tests=("t-test",)).manifest["parameters"]["depth"] == 5
    with pytest.raises(ValueError, match=r"'bm25' at 5, 'dense' at 5 \(depth=3 asked\)"):
        compare(at_5, metrics=["P_5"], tests=("t-test",), depth=3)
    mixed = {"bm25": at_5["bm25"], "dense": runs["dense"]}
    with pytest.raises(ValueError, match="'bm25' at 5, 'dense' at every result"):
        compare(mixed, qrels, metrics=["P_5"], tests=("t-test",))
    with pytest.raises(ValueError, match="depth must be an int >= 1"):
        compare(runs, qrels, metrics=["P_5"], depth=0)
