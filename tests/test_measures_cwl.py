"""cwl_eval's measures against ir_measures' cwl_eval provider, and Compat against ir_measures'
compat provider, per query, on generated graded qrels and runs.

Every ef name is ir_measures' own spelling (``str()`` of its measure). The runs have tied scores,
unjudged and negatively graded documents, empty and one-document rankings, and one ranking past
cwl_eval's horizon of 1000 ranks. Each peer breaks score ties its own way (docs/semantics.md), so
each is handed the run in ef's order: the cwl_eval provider keeps a tie's input order, so its
run lists the documents in ef's order; the compat provider breaks ties by doc id ascending (and
orders equally graded, equally scored documents of the ideal ranking as the qrels list them), so
it reads the doc ids mapped by an order-reversing bijection, which turns ef's doc id descending
into its ascending.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import ir_measures
import pytest
from ir_measures import BPM, INSQ, INST, NERR8, NERR9, NERR10, NERR11, SDCG, Compat

from ef.evaluation import ParameterError, check_metrics, evaluate_run, measure_catalogue
from ef.evaluation.cli import main

pytestmark = pytest.mark.timeout(300)

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]
SEEDS = (39, 2026, 8191)


def _generate(seed: int) -> tuple[Qrels, Run]:
    """Thirty queries, grades -1 to 3 over 1-25 of 60 documents, runs of 0-60 documents with
    scores from eight values; and a query ranking 1,200 documents, judged past rank 1000."""
    rng = random.Random(seed)
    qrels: Qrels = {}
    run: Run = {}
    for q in range(1, 31):
        docs = [f"q{q}-{i:04d}" for i in range(60)]
        judged = rng.sample(docs, rng.randint(1, 25))
        qrels[f"q{q}"] = {doc: rng.choice((-1, 0, 0, 1, 1, 2, 3)) for doc in judged}
        qrels[f"q{q}"][judged[0]] = rng.randint(1, 3)
        length = rng.choice((0, 1, 2, rng.randint(3, 60), rng.randint(3, 60)))
        run[f"q{q}"] = {doc: rng.randint(1, 8) / 4 for doc in rng.sample(docs, length)}
    docs = [f"q99-{i:04d}" for i in range(1200)]
    qrels["q99"] = {doc: rng.choice((0, 1, 2, 3)) for doc in rng.sample(docs, 300)}
    qrels["q99"][docs[0]] = 3
    run["q99"] = {doc: (1200 - i) / 3 for i, doc in enumerate(docs)}
    return qrels, run


def _in_ef_order(run: Run) -> Run:
    """The run with each query's documents listed as ef ranks them (score descending, ties by
    doc id descending): the order a stable sort by score keeps."""
    return {
        q: dict(sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True))
        for q, scores in run.items()
    }


def _flip(doc: str) -> str:
    prefix, number = doc.split("-")
    return f"{prefix}-{9999 - int(number):04d}"


def _ef(qrels: Qrels, run: Run, names: list[str]) -> dict[str, dict[str, float]]:
    report = evaluate_run(run, qrels, metrics=names)
    assert set(report.per_query) == set(qrels)  # an empty ranking is scored too
    return {name: {q: v[name] for q, v in report.per_query.items()} for name in names}


def _theirs(provider: object, measures: list[object], qrels: Qrels, run: Run) -> dict:
    out: dict[str, dict[str, float]] = {str(m): {} for m in measures}
    for metric in provider.iter_calc(measures, qrels, run):  # type: ignore[attr-defined]
        out[str(metric.measure)][metric.query_id] = float(metric.value)
    return out


def _worst(ours: dict[str, float], theirs: dict[str, float]) -> float:
    """The largest difference, over every query of the qrels (the peer scores a query without
    a ranking at its measure's default, 0)."""
    assert set(theirs) == set(ours)
    return max(abs(ours[q] - value) for q, value in theirs.items())


CWL_MEASURES = [
    NERR8(max_rel=3) @ 1, NERR8(max_rel=3) @ 10, NERR8(min_rel=1, max_rel=3) @ 20,
    NERR8(max_rel=3) @ 1500,
    NERR9(max_rel=3) @ 1, NERR9(max_rel=3) @ 10, NERR9(max_rel=4) @ 20,
    NERR10(max_rel=3), NERR10(p=0.5, max_rel=3), NERR10(p=1.0, min_rel=2, max_rel=3),
    NERR11(max_rel=3), NERR11(T=2.5, max_rel=3),
    INST(max_rel=3), INST(T=3.0, max_rel=3), INST(T=0.5, min_rel=1, max_rel=3),
    INSQ(max_rel=3), INSQ(T=2.0, max_rel=4),
    BPM(max_rel=3) @ 20, BPM(T=2.0, max_rel=3) @ 10, BPM(T=0.5, max_rel=3) @ 1,
    BPM(T=50.0, max_rel=3) @ 1200,
    SDCG(max_rel=3) @ 1, SDCG(max_rel=3) @ 10, SDCG(min_rel=1, max_rel=3) @ 20,
    SDCG(max_rel=3) @ 1100,
]  # fmt: skip
COMPAT_MEASURES = [Compat, Compat(p=0.8), Compat(p=0.5, normalize=False), Compat(normalize=False)]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_cwl_family_is_cwl_eval_per_query(seed: int) -> None:
    qrels, run = _generate(seed)
    names = [str(measure) for measure in CWL_MEASURES]
    ours = _ef(qrels, run, names)
    theirs = _theirs(ir_measures.cwl_eval, CWL_MEASURES, qrels, _in_ef_order(run))
    for name in names:
        assert _worst(ours[name], theirs[name]) <= 1e-12, name
    # The long ranking reaches past cwl_eval's horizon and scores something.
    assert ours["NERR8(max_rel=3)@1500"]["q99"] > 0


@pytest.mark.parametrize("seed", SEEDS)
def test_compat_is_ir_measures_per_query(seed: int) -> None:
    qrels, run = _generate(seed)
    names = [str(measure) for measure in COMPAT_MEASURES]
    ours = _ef(qrels, run, names)
    # The peer's qrels list each query's documents by mapped doc id, its ties' order.
    flipped_qrels = {
        q: {_flip(d): g for d, g in sorted(judged.items(), key=lambda item: _flip(item[0]))}
        for q, judged in qrels.items()
    }
    flipped_run = {q: {_flip(d): s for d, s in scores.items()} for q, scores in run.items()}
    theirs = _theirs(ir_measures.compat, COMPAT_MEASURES, flipped_qrels, flipped_run)
    for name in names:
        assert _worst(ours[name], theirs[name]) <= 1e-12, name
    assert any(0 < value < 1 for value in ours["Compat"].values())


# ef's spellings that leave out max_rel (ir_measures requires it): the scale of binary qrels.
BINARY = [
    ("NERR8@10", NERR8(max_rel=1) @ 10),
    ("NERR9@5", NERR9(max_rel=1) @ 5),
    ("NERR10", NERR10(max_rel=1)),
    ("NERR10(p=0.8)", NERR10(p=0.8, max_rel=1)),
    ("NERR11", NERR11(max_rel=1)),
    ("INST", INST(max_rel=1)),
    ("INST(T=1)", INST(T=1.0, max_rel=1)),
    ("INSQ(T=2)", INSQ(T=2.0, max_rel=1)),
    ("BPM(T=1)@20", BPM(T=1.0, max_rel=1) @ 20),
    ("BPM@5", BPM(max_rel=1) @ 5),
    ("SDCG@10", SDCG(max_rel=1) @ 10),
    ("SDCG(dcg='log2')@20", SDCG(max_rel=1) @ 20),
]


@pytest.mark.parametrize("seed", SEEDS)
def test_without_max_rel_the_scale_is_binary(seed: int) -> None:
    qrels, run = _generate(seed)
    binary = {q: {d: min(g, 1) for d, g in judged.items()} for q, judged in qrels.items()}
    ours = _ef(binary, run, [name for name, _ in BINARY])
    measures = [measure for _, measure in BINARY]
    theirs = _theirs(ir_measures.cwl_eval, measures, binary, _in_ef_order(run))
    for name, measure in BINARY:
        assert _worst(ours[name], theirs[str(measure)]) <= 1e-12, name


def test_a_grade_above_the_scale_is_refused_naming_the_query() -> None:
    qrels = {"q1": {"d1": 1}, "q2": {"d1": 2, "d2": 1}}
    run = {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}
    with pytest.raises(ValueError, match=r"grades up to max_rel=1; got 2") as caught:
        evaluate_run(run, qrels, metrics=["INST"])
    assert "for query 'q2'" in caught.value.__notes__
    assert evaluate_run(run, qrels, metrics=["INST(max_rel=2)"]).per_query["q1"]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("NERR8(min_rel=3,max_rel=3)@10", r"min_rel \(3\) must be less than max_rel \(3\)"),
        ("INST(T=0)", "parameter 'T' must be a finite number > 0"),
        ("NERR10(p=1.5)", r"parameter 'p' must be a finite number in \(0, 1\]"),
        ("SDCG(dcg='exp-log2')@10", "parameter 'dcg' must be one of 'log2'"),
        ("Compat(normalize=maybe)", "parameter 'normalize' must be True or False"),
        ("BPM(T=1)", "BPM needs a cutoff"),
        ("INSQ@10", "INSQ takes no cutoff"),
        ("NERR8(rel=1)@10", "NERR8 takes min_rel, max_rel; unknown parameter"),
    ],
)
def test_parameters_are_checked_before_anything_is_scored(name: str, message: str) -> None:
    with pytest.raises((ParameterError, ValueError), match=message):
        check_metrics([name])


def test_the_catalogue_and_the_command_line_list_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalogue = measure_catalogue(notations=True)
    for name in ("NERR8", "NERR9", "NERR10", "NERR11", "INST", "INSQ", "BPM", "SDCG", "Compat"):
        assert catalogue[name].source and catalogue[name].notations, name
    assert "cwl_eval" in catalogue["INST"].source and "compat" in catalogue["Compat"].source
    assert any(option.startswith("max_rel=1:") for option in catalogue["SDCG"].options)
    assert main(["metrics", "--format", "json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert "T=1.0: the gain the user wants" in rows["INST"]["parameters"][0]
    # Scored from the command line, under the names as written.
    qrels, run = _generate(SEEDS[0])
    (tmp_path / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, judged in qrels.items() for d, g in judged.items())
    )
    (tmp_path / "run.txt").write_text(
        "".join(f"{q} Q0 {d} 0 {s} t\n" for q, scores in run.items() for d, s in scores.items())
    )
    names = ["NERR10(p=0.8,max_rel=3)", "BPM(T=2,max_rel=3)@10", "Compat(p=0.8)"]
    args = [str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "--metrics", ",".join(names)]
    assert main(["run", *args, "--missing-queries", "zero", "--format", "json"]) == 0
    means = json.loads(capsys.readouterr().out)["run.txt"]["metrics"]
    expected = evaluate_run(run, qrels, metrics=names).metrics
    assert means == pytest.approx(expected, abs=1e-12) and list(means) == names
