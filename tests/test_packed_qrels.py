"""Packed qrels (:class:`PackedQrels`, :func:`read_packed_qrels`, what ``ef-eval run`` reads):
the judgements of :func:`read_trec_qrels` in the same order, and every evaluation against them
— values, means, manifest and fingerprint — the one against the dicts, bit for bit."""

from __future__ import annotations

import json
import marshal
import random
import subprocess
import sys
import warnings
from array import array
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval

from ef.evaluation import (
    DatasetFormatError,
    PackedQrels,
    evaluate_run,
    read_packed_qrels,
    read_trec_qrels,
)
from ef.evaluation._scoring.grades import plain_ideals
from in_process_cli import ef_eval

METRIC_SETS: list[tuple[str, ...] | None] = [
    None,  # the default set (the compiled kernel takes it)
    ("ndcg", "map", "recall", "P", "recip_rank", "bpref", "num_rel", "gm_map"),
]


def _judgements(seed: int, *, fractional: bool = True) -> list[tuple[str, str, str]]:
    """Graded lines (negative, zero and, with ``fractional``, fractional grades; queries
    without a positive one)."""
    rng = random.Random(seed)
    lines = []
    for query in rng.sample(range(400), 300):
        for doc in rng.sample(range(60), rng.randrange(1, 7)):
            grade = rng.choice(["0", "1", "2", "-1", "0.5" if fractional else "1", "3"])
            lines.append((f"q{query}", f"d{doc}", grade))
    return lines


def _write_qrels(path: Path, lines: list[tuple[str, str, str]], form: str) -> None:
    if form == "tsv":
        text = "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in lines)
    else:
        text = "".join(f"{q} 0 {d} {g}\n" for q, d, g in lines)
    path.write_text(text, encoding="ascii")


def _run(seed: int) -> dict[str, dict[str, float]]:
    rng = random.Random(seed + 1)
    return {
        f"q{query}": {
            f"d{doc}": rng.choice([1.0, 0.5, 2.25, -3.0]) for doc in rng.sample(range(60), 15)
        }
        for query in range(0, 420, 2)
    }


def _write_run(path: Path, run: dict[str, dict[str, float]]) -> None:
    with open(path, "w", encoding="ascii") as out:
        for query_id, scores in run.items():
            ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
            out.writelines(
                f"{query_id} Q0 {doc} {rank} {score} x\n"
                for rank, (doc, score) in enumerate(ranked, 1)
            )


def _quiet(call: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(*args, **kwargs)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("form", ["grouped", "ungrouped", "tsv"])
def test_packed_qrels_hold_the_judgements_the_dicts_hold_in_their_order(
    tmp_path: Path, seed: int, form: str
) -> None:
    lines = _judgements(seed)
    if form == "ungrouped":
        random.Random(seed).shuffle(lines)
    path = tmp_path / "qrels.txt"
    _write_qrels(path, lines, form)
    expected = read_trec_qrels(path)
    packed = read_packed_qrels(path)
    assert isinstance(packed, PackedQrels)
    assert len(packed) == len(expected) and list(packed) == list(expected)
    for query_id, judged in expected.items():
        assert query_id in packed
        assert list(packed[query_id].items()) == list(judged.items())
    assert dict(packed) == expected
    for absent in ["q400", "", "q1 ", 3, None]:
        assert absent not in packed
        with pytest.raises(KeyError):
            packed[absent]  # type: ignore[index]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("metrics", METRIC_SETS)
@pytest.mark.parametrize("streamed", [True, False])
def test_an_evaluation_against_packed_qrels_is_the_one_against_the_dicts(
    tmp_path: Path, seed: int, metrics: tuple[str, ...] | None, streamed: bool
) -> None:
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    _write_qrels(qrels_path, _judgements(seed, fractional=False), "grouped")  # pytrec_eval's
    run = _run(seed)
    _write_run(run_path, run)
    options: dict[str, Any] = {"k_values": (1, 5, 10)}
    if metrics is not None:
        options["metrics"] = metrics
    given: Any = str(run_path) if streamed else run
    expected = _quiet(evaluate_run, given, read_trec_qrels(qrels_path), **options)
    packed = _quiet(evaluate_run, given, read_packed_qrels(qrels_path), **options)
    assert packed == expected
    assert list(packed.per_query) == list(expected.per_query)
    assert packed.metrics == expected.metrics
    assert packed.manifest == expected.manifest  # the qrels' digest among it
    assert json.dumps(packed.to_dict()) == json.dumps(expected.to_dict())
    # And the values are pytrec_eval's (a judged query the run lacks scores 0).
    judged = read_trec_qrels(qrels_path)
    oracle = pytrec_eval.RelevanceEvaluator(
        {q: {d: int(g) for d, g in docs.items()} for q, docs in judged.items()},
        {"ndcg_cut_10", "recip_rank"},
    ).evaluate({q: scores for q, scores in run.items() if q in judged})
    for query_id, values in packed.per_query.items():
        truth = oracle.get(query_id, {"ndcg_cut_10": 0.0, "recip_rank": 0.0})
        assert values["ndcg@10"] == pytest.approx(truth["ndcg_cut_10"], abs=1e-12)
        if metrics is not None:
            assert values["recip_rank"] == pytest.approx(truth["recip_rank"], abs=1e-12)


def test_a_doc_judged_twice_is_named_by_its_lines_grouped_or_not(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 2\nq2 0 d1 1\n")
    with pytest.raises(DatasetFormatError, match=r"qrels\.txt:3: ") as grouped:
        read_packed_qrels(path)
    with pytest.raises(DatasetFormatError) as as_dicts:
        read_trec_qrels(path)
    assert str(grouped.value) == str(as_dicts.value)
    path.write_text("q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 2\n")
    with pytest.raises(DatasetFormatError, match=r"qrels\.txt:3: "):
        read_packed_qrels(path)
    path.write_text("q1 0 d1 1\nq1 0 d2 nan\n")
    with pytest.raises(DatasetFormatError, match=r"qrels\.txt:2: "):
        read_packed_qrels(path)


def test_packed_qrels_refuse_what_does_not_fit() -> None:
    with pytest.raises(ValueError, match="'q1' is given twice"):
        PackedQrels(["q1", "q1"], [1, 2], ["d1", "d2"], [1.0, 1.0])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="do not fit"):
        PackedQrels(["q1", "q2"], [1, 1], ["d1"], [1.0])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="do not fit"):
        PackedQrels(["q1"], [2], ["d1", "d2"], [1.0])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finite"):
        PackedQrels(["q1"], [1], ["d1"], [float("inf")])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be str"):
        PackedQrels(["q1"], [1], [7], [1.0])  # type: ignore[arg-type,list-item]
    empty = PackedQrels([], [], [], [])  # type: ignore[arg-type]
    assert len(empty) == 0 and dict(empty) == {}


def test_finite_grades_whose_sum_overflows_are_packed() -> None:
    # Each grade is checked: their sum, once checked instead, is infinite here.
    packed = PackedQrels(["q1", "q2"], [2, 3], ["d1", "d2", "d2"], array("d", [1.7e308] * 3))
    assert dict(packed) == {"q1": {"d1": 1.7e308, "d2": 1.7e308}, "q2": {"d2": 1.7e308}}
    with pytest.raises(ValueError, match="finite"):
        PackedQrels(["q1"], [2], ["d1", "d2"], array("d", [1.0, float("nan")]))


def test_ef_eval_run_scores_grades_whose_sum_overflows(tmp_path: Path) -> None:
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("q1 0 d1 1.7e308\nq1 0 d2 1.7e308\nq2 0 d2 1\n")
    run_path.write_text("q1 Q0 d1 1 2 x\nq1 Q0 d2 2 1 x\nq2 Q0 d2 1 1 x\n")
    shown = ef_eval("run", qrels_path, run_path, "--format", "json", "--k", "2")
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)["run.txt"]
    assert report["metrics"]["ndcg@2"] == 1.0
    expected = _quiet(evaluate_run, str(run_path), read_trec_qrels(qrels_path), k_values=(2,))
    assert report["per_query"] == expected.to_dict()["per_query"]


def test_ef_eval_run_reports_what_the_dicts_give(tmp_path: Path) -> None:
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    _write_qrels(qrels_path, _judgements(5), "grouped")
    run = _run(5)
    _write_run(run_path, run)
    shown = subprocess.run(
        [sys.executable, "-m", "ef.evaluation.cli", "run", str(qrels_path), str(run_path),
         "--format", "json"],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    report = json.loads(shown.stdout)["run.txt"]
    expected = _quiet(evaluate_run, str(run_path), read_trec_qrels(qrels_path)).to_dict()
    assert report["per_query"] == expected["per_query"]
    assert report["metrics"] == expected["metrics"]
    assert report["manifest"]["fingerprints"] == expected["manifest"]["fingerprints"]


@pytest.mark.parametrize("seed", range(5))
def test_the_grades_and_bytes_planning_reads_are_those_of_the_dicts(seed: int) -> None:
    rng = random.Random(seed)
    ids = [f"q{query}" for query in range(rng.randrange(0, 60))]
    ends: list[int] = []
    docs: list[str] = []
    grades: list[float] = []
    for _ in ids:
        for doc in rng.sample(range(20), rng.choice([1, 1, 1, 2, 5, 12])):
            docs.append(f"d{doc}")
            grades.append(rng.choice([0.0, -0.0, -1.0, 0.5, 1.0, 2.0, 3.0]))
        ends.append(len(docs))
    packed = PackedQrels(ids, ends, docs, array("d", grades))
    as_dicts = dict(packed)
    assert packed.ideals() == plain_ideals(as_dicts)
    assert b"".join(packed.marshalled(2)) == marshal.dumps(as_dicts, 2)
