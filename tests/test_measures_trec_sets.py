"""trec_eval's further notations, each against its provider per query on generated inputs:
the multi-cutoff ``P.5,10,20`` and ``ndcg_cut.10,100`` and the named sets ``all_trec`` and
``official`` against pytrec_eval (same keys, same values), and the per-measure
``judged_only=True`` against ir_measures."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import ir_measures
import pytest
import pytrec_eval

from ef.evaluation import check_metrics, compare, evaluate_run
from ef.evaluation._scoring.order import rank_by_score
from test_cli_run_queries import ef_eval
from test_trec_measures import generated, matches, sendable
from test_trec_measures_options import scored_queries


def _ef(qrels: dict, run: dict, metrics: tuple[str, ...], **options: object) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # queries the run lacks score 0, with a warning
        report = evaluate_run(run, qrels, metrics=metrics, **options)  # type: ignore[arg-type]
    return {q: dict(values) for q, values in report.per_query.items()}


def _pytrec_eval(qrels: dict, run: dict, measures: set[str], **options: object) -> dict:
    scored = sendable(scored_queries(qrels))
    evaluator = pytrec_eval.RelevanceEvaluator(scored, measures, **options)
    return evaluator.evaluate({q: r for q, r in run.items() if q in scored and r})


def _worst(ours: dict, theirs: dict) -> float:
    """The largest difference over pytrec_eval's keys and queries; every key equal."""
    worst = 0.0
    assert theirs
    for q, values in theirs.items():
        numeric = {k: v for k, v in values.items() if k not in ("runid", "relstring")}
        assert set(numeric) == set(ours[q]), (q, set(numeric) ^ set(ours[q]))
        wrong = {k: (ours[q][k], v) for k, v in numeric.items() if not matches(k, ours[q][k], v)}
        assert not wrong, (q, wrong)
        # pytrec_eval's per-query gm_* is a logarithm (compared by ``matches``).
        plain = [abs(ours[q][k] - v) for k, v in numeric.items() if v == v and k[:3] != "gm_"]
        worst = max(worst, *plain)
    return worst


@pytest.mark.parametrize(
    "written",
    ["P.5,10,20", "ndcg_cut.10,100", "map_cut.3,7", "recall.1,2,1000", "success.1,5",
     "relative_P.2,4", "iprec_at_recall.0.1,0.55"],
)  # fmt: skip
def test_a_multi_cutoff_notation_reports_pytrec_evals_keys_and_values(written: str) -> None:
    qrels, run = generated(seed=4500)
    ours = _ef(qrels, run, (written,))
    theirs = _pytrec_eval(qrels, run, {written})
    assert _worst(ours, theirs) <= 1e-9


@pytest.mark.parametrize("name", ["all_trec", "official"])
@pytest.mark.parametrize("judged_only", [False, True], ids=["all", "J"])
def test_a_named_set_is_pytrec_evals_under_its_keys(name: str, judged_only: bool) -> None:
    qrels, run = generated(seed=4600 + judged_only)
    ours = _ef(qrels, run, (name,), judged_only=judged_only)
    theirs = _pytrec_eval(qrels, run, {name}, judged_docs_only_flag=judged_only)
    assert _worst(ours, theirs) <= 1e-9


def test_a_named_set_beside_efs_metrics_keeps_both_keys() -> None:
    qrels, run = generated(seed=4700)
    ours = _ef(qrels, run, ("official", "map", "ndcg"), k_values=(10,))
    theirs = _pytrec_eval(qrels, run, {"map", "map_cut.10", "ndcg_cut.10"})
    for q, values in theirs.items():
        assert ours[q]["map"] == pytest.approx(values["map"], abs=1e-12)
        assert ours[q]["map@10"] == pytest.approx(values["map_cut_10"], abs=1e-12)
        assert ours[q]["ndcg@10"] == pytest.approx(values["ndcg_cut_10"], abs=1e-12)


def test_the_command_line_takes_multi_cutoffs_and_named_sets(tmp_path: Path) -> None:
    qrels, run = generated(seed=4800, n_queries=40)
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
    result = ef_eval("run", *files, "--metrics", "P.5,10,20,official", "--format", "json")
    assert result.returncode == 0, result.stderr
    means = json.loads(result.stdout)["run.txt"]["metrics"]
    scored = scored_queries(qrels)
    theirs = _pytrec_eval(qrels, run, {"P.5,10,20", "official"})
    for key in ("P_5", "P_10", "P_20", "map", "bpref", "iprec_at_recall_0.50"):
        expected = sum(values[key] for values in theirs.values()) / len(scored)
        assert means[key] == pytest.approx(expected, abs=1e-12), key
    assert means["num_ret"] == sum(values["num_ret"] for values in theirs.values())


def test_compare_refuses_a_multi_cutoff_key_naming_several_measures() -> None:
    qrels, run = generated(seed=4900, n_queries=10)
    with pytest.raises(ValueError, match=r"'P\.5,10' names 2 measures: name one"):
        compare({"a": run, "b": run}, qrels, metrics=("P.5,10",))


# ef's spelling → ir_measures' measure: each measure that takes judged_only there.
JUDGED_ONLY = [
    ("P(judged_only=True)@5", ir_measures.P(judged_only=True) @ 5),
    ("P(rel=2,judged_only=True)@3", ir_measures.P(rel=2, judged_only=True) @ 3),
    ("R(judged_only=True)@5", ir_measures.R(judged_only=True) @ 5),
    ("AP(judged_only=True)", ir_measures.AP(judged_only=True)),
    ("AP(judged_only=True)@5", ir_measures.AP(judged_only=True) @ 5),
    ("RR(judged_only=True)", ir_measures.RR(judged_only=True)),
    ("nDCG(judged_only=True)@5", ir_measures.nDCG(judged_only=True) @ 5),
    ("nDCG(judged_only=True)", ir_measures.nDCG(judged_only=True)),
    ("Rprec(judged_only=True)", ir_measures.Rprec(judged_only=True)),
    ("Success(judged_only=True)@2", ir_measures.Success(judged_only=True) @ 2),
    ("SetP(judged_only=True)", ir_measures.SetP(judged_only=True)),
    ("SetF(judged_only=True)", ir_measures.SetF(judged_only=True)),
    ("SetAP(judged_only=True)", ir_measures.SetAP(judged_only=True)),
    ("IPrec(judged_only=True)@0.3", ir_measures.IPrec(judged_only=True) @ 0.3),
]


@pytest.mark.parametrize(("written", "oracle"), JUDGED_ONLY, ids=[w for w, _ in JUDGED_ONLY])
def test_judged_only_for_one_measure_is_ir_measures_per_query(written: str, oracle: object) -> None:
    qrels, run = generated(seed=5000)
    scored = sendable(scored_queries(qrels))
    ours = _ef(scored, run, (written, written.replace("judged_only=True", "judged_only=False")))
    retrieved = {q: r for q, r in run.items() if r}
    theirs = {
        m.query_id: m.value for m in ir_measures.pytrec_eval.iter_calc([oracle], scored, retrieved)
    }
    assert theirs
    wrong = {
        q: (ours[q][written], v) for q, v in theirs.items() if abs(ours[q][written] - v) > 1e-9
    }
    assert not wrong
    # The switch changes the numbers on this run: the unjudged documents count without it.
    plain = written.replace("judged_only=True", "judged_only=False")
    assert any(ours[q][plain] != ours[q][written] for q in theirs)


def test_judged_only_takes_only_true_or_false() -> None:
    check_metrics(["P(judged_only=false)@5", "nDCG(judged_only=1)@10"])
    with pytest.raises(ValueError, match="'judged_only' must be True or False"):
        check_metrics(["P(judged_only=yes)@5"])
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) 'judged_only'"):
        check_metrics(["Bpref(judged_only=True)"])
