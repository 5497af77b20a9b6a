"""Custom gains and ERR's scale, each against its provider per query on generated inputs:
``nDCG(gains={...})`` against ir_measures (pytrec_eval on the regraded qrels), ``ERR(max_rel=m)``
against gdeval with its maximum judgement set to ``m`` (ir_measures' copy of gdeval.pl, run by
perl; ``m = 4`` is gdeval as it ships, through ir_measures)."""

from __future__ import annotations

import pkgutil
import random
import subprocess
from pathlib import Path

import ir_measures
import pytest

from ef.evaluation import ParameterError, check_metrics, evaluate_run


def _generated(seed: int, grades: tuple[int, ...]) -> tuple[dict, dict]:
    """Thirty queries with numeric ids (gdeval takes nothing else), at least one relevant
    document each, and runs of 1-40 documents without tied scores."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(1, 31):
        docs = [f"q{q}d{i}" for i in range(40)]
        judged = rng.sample(docs, rng.randint(2, 20))
        qrels[str(q)] = {doc: rng.choice(grades) for doc in judged}
        qrels[str(q)][judged[0]] = max(grades)
        scores = rng.sample(range(10_000), rng.randint(1, 40))
        run[str(q)] = {d: s / 9 for d, s in zip(rng.sample(docs, len(scores)), scores, strict=True)}
    return qrels, run


def _ours(run: dict, qrels: dict, name: str) -> dict[str, float]:
    report = evaluate_run(run, qrels, metrics=(name,))
    return {q: values[name] for q, values in report.per_query.items()}


def _worst(ours: dict[str, float], theirs: dict[str, float]) -> float:
    assert theirs and set(theirs) <= set(ours)
    return max(abs(ours[q] - v) for q, v in theirs.items())


GAINS = [
    ({0: 0, 1: 1, 2: 3}, "{0: 0, 1: 1, 2: 3}"),
    ({0: 0, 1: 5, 2: 1, 3: 10}, "{0:0,1:5,2:1,3:10}"),
    ({1: 0, 2: 2}, "{1: 0, 2: 2}"),  # grade 3 keeps its value: ir_measures' rule
]


@pytest.mark.parametrize(("table", "written"), GAINS, ids=[w for _, w in GAINS])
@pytest.mark.parametrize("cutoff", [None, 5, 10])
def test_ndcg_with_custom_gains_is_ir_measures_per_query(
    table: dict[int, int], written: str, cutoff: int | None
) -> None:
    qrels, run = _generated(3900, (0, 0, 1, 2, 3))
    measure = ir_measures.nDCG(gains=table)
    name = f"nDCG(gains={written})"
    if cutoff is not None:
        measure, name = measure @ cutoff, f"{name}@{cutoff}"
    theirs = {m.query_id: m.value for m in ir_measures.pytrec_eval.iter_calc([measure], qrels, run)}
    ours = _ours(run, qrels, name)
    assert _worst(ours, theirs) <= 1e-12
    # The table changes the numbers: without it, nDCG is not ir_measures' value with it.
    plain = _ours(run, qrels, "nDCG" if cutoff is None else f"nDCG@{cutoff}")
    assert _worst(plain, theirs) > 1e-3


def test_custom_gains_with_judged_only_are_ir_measures_per_query() -> None:
    qrels, run = _generated(3901, (0, 1, 2))
    run = {q: {**scores, f"u{q}": 1000.0} for q, scores in run.items()}  # unjudged on top
    measure = ir_measures.nDCG(gains={0: 0, 1: 2, 2: 7}, judged_only=True) @ 10
    theirs = {m.query_id: m.value for m in ir_measures.pytrec_eval.iter_calc([measure], qrels, run)}
    ours = _ours(run, qrels, "nDCG(gains={0: 0, 1: 2, 2: 7},judged_only=True)@10")
    assert _worst(ours, theirs) <= 1e-12


def _gdeval(qrels: dict, run: dict, k: int, max_grade: int, tmp: Path) -> dict[str, float]:
    """gdeval's per-query ERR@k, its maximum judgement set to ``max_grade``."""
    script = pkgutil.get_data("ir_measures", "bin/gdeval.pl")
    assert script is not None and b"$MAX_JUDGMENT = 4;" in script
    (tmp / "gdeval.pl").write_bytes(
        script.replace(b"$MAX_JUDGMENT = 4;", f"$MAX_JUDGMENT = {max_grade};".encode())
    )
    (tmp / "qrels").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, judged in qrels.items() for d, g in judged.items())
    )
    (tmp / "run").write_text(
        "".join(
            f"{q} Q0 {d} {i} {s!r} t\n"
            for q, scores in run.items()
            for i, (d, s) in enumerate(sorted(scores.items(), key=lambda x: -x[1]), 1)
        )
    )
    output = subprocess.run(
        ["perl", str(tmp / "gdeval.pl"), str(tmp / "qrels"), str(tmp / "run"), str(k)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = [line.split(",") for line in output.splitlines()[1:] if line]
    return {topic: float(err) for _, topic, _, err in rows if topic != "amean"}


@pytest.mark.parametrize(("max_grade", "k"), [(1, 10), (2, 5), (3, 20), (6, 10)])
def test_err_at_another_maximum_grade_is_gdevals_at_that_maximum(
    max_grade: int, k: int, tmp_path: Path
) -> None:
    qrels, run = _generated(4000 + max_grade, tuple(range(max_grade + 1)))
    theirs = _gdeval(qrels, run, k, max_grade, tmp_path)
    ours = _ours(run, qrels, f"ERR(max_rel={max_grade})@{k}")
    assert _worst(ours, theirs) <= 5.0001e-6  # gdeval prints 5 decimals, rounded
    if max_grade < 4:  # the scale changes the numbers (ERR@k refuses grades above 4)
        assert _worst(_ours(run, qrels, f"ERR@{k}"), theirs) > 1e-4


def test_err_at_gdevals_maximum_is_ir_measures_err(tmp_path: Path) -> None:
    qrels, run = _generated(4100, (0, 1, 2, 3, 4))
    theirs = {
        m.query_id: m.value
        for m in ir_measures.gdeval.iter_calc([ir_measures.ERR @ 10], qrels, run)
    }
    assert _worst(_ours(run, qrels, "ERR(max_rel=4)@10"), theirs) <= 5.0001e-6
    assert _ours(run, qrels, "ERR(max_rel=4)@10") == _ours(run, qrels, "ERR@10")


def test_a_grade_above_errs_maximum_is_refused_naming_the_query() -> None:
    with pytest.raises(ValueError, match=r"ERR takes grades 0 to 2 \(max_rel\); got 3") as caught:
        evaluate_run({"q1": ["d1"]}, {"q1": {"d1": 3}}, metrics=("ERR(max_rel=2)@5",))
    assert "for query 'q1'" in "".join(getattr(caught.value, "__notes__", []))


@pytest.mark.parametrize(
    "name",
    ["nDCG(gains={0: 0, 1: 1, 1: 2})@5", "nDCG(gains={0: x})@5", "nDCG(gains=3)@5",
     "nDCG(gains={})@5", "nDCG(gains={0: 0, 1: inf})@5", "ERR(max_rel=0)@5"],
)  # fmt: skip
def test_a_bad_gain_table_or_scale_is_a_parameter_error(name: str) -> None:
    with pytest.raises(ParameterError, match=r"parameter '(gains|max_rel)' must be"):
        check_metrics([name])
