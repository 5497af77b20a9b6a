"""What keeps a streamed run's memory small changes no number and no byte of the output.

A streamed run shares one dict between queries whose values are the same, and the qrels reader
shares one float between judgements whose grade is written alike; the JSON ``ef-eval run``
writes is compared, byte for byte, with the JSON of the same run read whole (``--html`` reads
it into memory), and per-query values with pytrec_eval's.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
import pytrec_eval

from ef.evaluation import DatasetFormatError, evaluate_run, read_trec_qrels, read_trec_run
from ef.evaluation.cli import main


def _write_inputs(directory: Path, *, seed: int = 3) -> tuple[Path, Path]:
    """A grouped run (ties, unjudged and missing queries) and graded qrels, generated."""
    rng = random.Random(seed)
    run_lines, qrels_lines = [], []
    for query in range(400):
        docs = rng.sample(range(60), rng.randrange(1, 15))
        if query % 9 != 0:  # every ninth judged query is missing from the run
            for rank, doc in enumerate(docs, 1):
                score = rng.choice(["1", "0.5", "2.25", "-3", "0"])
                run_lines.append(f"q{query} Q0 d{doc} {rank} {score} x\n")
        if query % 13 != 0:  # every thirteenth query in the run is not judged
            for doc in rng.sample(range(60), rng.randrange(1, 5)):
                grade = rng.choice(["0", "1", "2", "1.0", "01", "-1"])
                qrels_lines.append(f"q{query} 0 d{doc} {grade}\n")
    run, qrels = directory / "run.txt", directory / "qrels.txt"
    run.write_text("".join(run_lines), encoding="ascii")
    qrels.write_text("".join(qrels_lines), encoding="ascii")
    return run, qrels


def test_the_streamed_json_is_byte_identical_to_the_json_of_the_run_read_whole(tmp_path):
    run, qrels = _write_inputs(tmp_path)
    common = ["run", str(qrels), str(run), "--format", "json", "--missing-queries", "zero"]
    streamed, whole = tmp_path / "streamed.json", tmp_path / "whole.json"
    assert main([*common, "-o", str(streamed)]) == 0
    assert main([*common, "-o", str(whole), "--html", str(tmp_path / "page.html")]) == 0
    assert streamed.read_bytes() == whole.read_bytes()


def test_streamed_per_query_values_are_pytrec_evals_and_equal_rows_share_a_dict(tmp_path):
    run, qrels_path = _write_inputs(tmp_path, seed=5)
    qrels = read_trec_qrels(qrels_path)
    report = evaluate_run(
        run, qrels, metrics=("ndcg", "map"), k_values=(10,), missing_queries="zero"
    )
    judged = {q: {d: int(g) for d, g in docs.items()} for q, docs in qrels.items()}
    scores = read_trec_run(run)
    oracle = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut_10", "map_cut_10"})
    expected = oracle.evaluate({q: scores.get(q, {}) for q in report.per_query})
    for query_id, values in report.per_query.items():
        truth = expected.get(query_id, {"ndcg_cut_10": 0.0, "map_cut_10": 0.0})
        assert values["ndcg@10"] == pytest.approx(truth["ndcg_cut_10"], abs=1e-12)
        assert values["map@10"] == pytest.approx(truth["map_cut_10"], abs=1e-12)
    rows = list(report.per_query.values())
    assert len({id(row) for row in rows}) < len(rows)  # missing queries' zeros at least
    for row in rows:
        for other in rows:
            if row == other:
                assert row is other


def test_rows_differing_only_in_the_sign_of_a_zero_are_not_shared():
    from ef.evaluation._running.streamed import _Rows

    rows = _Rows()
    positive, negative = {"a": 0.0, "b": 1.0}, {"a": -0.0, "b": 1.0}
    assert rows.shared(positive) is positive
    assert rows.shared(negative) is negative
    assert rows.shared(dict(positive)) is positive
    assert rows.shared({"b": 1.0, "a": 0.0}) is not positive  # other keys' order: other row
    assert rows.shared({"a": 0, "b": 1.0}) is not positive  # an int is written otherwise


def test_qrels_grades_written_alike_share_one_float_with_the_same_values(tmp_path):
    path = tmp_path / "qrels.txt"
    grades = ["1", "01", "1.0", "-0", "0", "2", "1e0", "-1"]
    path.write_text("".join(f"q{i} 0 d{i} {g}\n" for i, g in enumerate(grades * 3)))
    qrels = read_trec_qrels(path)
    values = [qrels[f"q{i}"][f"d{i}"] for i in range(len(grades) * 3)]
    assert values == [float(g) for g in grades * 3]
    assert [math.copysign(1.0, v) for v in values] == [
        math.copysign(1.0, float(g)) for g in grades * 3
    ]
    assert all(values[i] is values[i + len(grades)] for i in range(len(grades)))


@pytest.mark.parametrize("grade", ["nan", "1_0", "inf", "x", "١"])
def test_a_bad_grade_after_good_ones_is_still_refused_naming_its_line(tmp_path, grade):
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 1\nq1 0 d2 1\nq2 0 d1 1\n" + f"q2 0 d2 {grade}\n")
    with pytest.raises(DatasetFormatError) as caught:
        read_trec_qrels(path)
    assert caught.value.line == 4
