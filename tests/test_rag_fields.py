"""RAG sample fields: a misnamed field is refused, naming the sample, the field and the metric.

A metric finds a field by its name only: Ragas 0.1's names (``question``, ``contexts``,
``answer``, ``ground_truth``) or any other misspelling used to score 0 or be skipped without a
word. Here they are refused in a list of samples, a JSON Lines file through ``ef-eval rag`` (by
file and line) and a DataFrame (by row).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ef.evaluation import EvaluationWarning, evaluate_rag
from in_process_cli import ef_eval

GOOD = {
    "user_input": "capital of France?",
    "retrieved_contexts": ["Paris is the capital of France."],
    "response": "Paris",
    "reference": "Paris",
}

RAGAS_0_1 = {
    "question": "capital of France?",
    "contexts": ["Paris is the capital of France."],
    "answer": "Paris",
    "ground_truth": "Paris",
}

OLD_NAMES = [
    ("question", "user_input"),
    ("contexts", "retrieved_contexts"),
    ("answer", "response"),
    ("ground_truth", "reference"),
    ("ground_truths", "reference"),
]


def renamed(sample: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """``sample`` with its field ``new`` under the name ``old`` (a list for ``ground_truths``)."""
    value = [sample[new]] if old == "ground_truths" else sample[new]
    return {**{key: item for key, item in sample.items() if key != new}, old: value}


@pytest.mark.parametrize(("old", "new"), OLD_NAMES)
def test_a_ragas_0_1_name_is_refused_naming_the_field_to_use(old: str, new: str) -> None:
    samples = [GOOD, renamed(GOOD, old, new)]
    expected = rf"^sample 1 \(id 'b'\): field '{old}' is Ragas 0\.1's name for '{new}'; "
    with pytest.raises(ValueError, match=expected + rf"rename it '{new}'"):
        evaluate_rag(samples, ids=["a", "b"])
    # Beside its new name, the old one is a key like any other: passed through, not read.
    both = {**renamed(GOOD, old, new), new: GOOD[new], "id": "row-7"}
    assert evaluate_rag([both]).per_sample == evaluate_rag([GOOD]).per_sample


def test_a_sample_a_metric_would_score_from_nothing_is_refused() -> None:
    answer_only = {"user_input": "2 + 2?", "response": "four", "reference": "four"}
    message = (
        r"^sample 1: metric 'non_empty_rate' reads field 'retrieved_contexts', which the "
        r"sample lacks, so it would score 0\.0 from nothing; give it \(\[\] when nothing was "
        r"retrieved\) or leave 'non_empty_rate' out of the metrics$"
    )
    with pytest.raises(ValueError, match=message):
        evaluate_rag([GOOD, answer_only])
    # Held as None or [], the field says nothing was retrieved: 0 is then a real answer.
    for nothing in (None, []):
        report = evaluate_rag([GOOD, {**answer_only, "retrieved_contexts": nothing}])
        assert report.per_sample[1]["non_empty_rate"] == 0.0
    assert evaluate_rag([answer_only], metrics=["exact_match"]).metrics == {"exact_match": 1.0}


def test_a_metric_no_sample_feeds_is_refused_naming_the_first_sample() -> None:
    misnamed = [{"user_input": f"q{i}", "output": "Paris", "gold": "Paris"} for i in range(3)]
    message = (
        r"^sample 0: metric 'token_f1' applies to no sample: it reads fields 'response' and "
        r"'reference', which no sample holds \(this one holds 'user_input', 'output', 'gold'\); "
        r"give them \(None where there is no value\) or leave 'token_f1' out of the metrics$"
    )
    with pytest.raises(ValueError, match=message):
        evaluate_rag(misnamed, metrics=["token_f1"])
    # Held by no sample, the one field missing is named even when the others are there.
    gold = [{**renamed(GOOD, "gold", "reference"), "id": i} for i in range(3)]
    with pytest.raises(
        ValueError, match=r"'exact_match' applies to no sample: it reads field 'refe"
    ):
        evaluate_rag(gold, metrics=["exact_match", "non_empty_rate"])
    # Of the default metrics, those no sample feeds are left out with a word, never silently.
    left_out = (
        r"^no sample holds 'reference' \(sample 0 holds 'user_input', 'retrieved_contexts', "
        r"'response', 'gold', 'id'\): exact_match, token_f1, context_recall, context_precision "
        r"left out; name the metrics to compute to make this an error$"
    )
    with pytest.warns(EvaluationWarning, match=left_out):
        report = evaluate_rag(gold)
    assert report.metrics == {"non_empty_rate": 1.0}
    # Held as None, the field says there is no reference: the metric applies to no sample.
    report = evaluate_rag([{**GOOD, "reference": None}], metrics=["context_recall"])
    assert report.coverage == {"context_recall": 0}
    # A metric some samples feed skips the others: answer-only beside retrieval-only samples.
    retrieval_only = {"user_input": "q9", "retrieved_contexts": ["Paris"]}
    report = evaluate_rag([GOOD, retrieval_only], metrics=["token_f1", "non_empty_rate"])
    assert report.coverage == {"token_f1": 1, "non_empty_rate": 2}


def test_answers_without_retrieval_get_the_answer_metrics_of_the_defaults() -> None:
    answers = [
        {"id": "a", "response": "Paris", "reference": "Paris"},
        {"id": "b", "response": "Rome", "reference": "Milan"},
    ]
    message = (
        r"^no sample holds 'retrieved_contexts' \(sample 0 holds 'id', 'response', "
        r"'reference'\): context_recall, context_precision, non_empty_rate left out; "
    )
    with pytest.warns(EvaluationWarning, match=message) as caught:
        report = evaluate_rag(answers)
    assert len(caught) == 1
    assert report.metrics == {"exact_match": 0.5, "token_f1": 0.5}
    assert report.coverage == {
        "exact_match": 2, "token_f1": 2, "context_recall": 0, "context_precision": 0,
        "non_empty_rate": 0,
    }  # fmt: skip
    # Chosen, a metric no sample feeds is an error, as before.
    with pytest.raises(ValueError, match=r"^sample 0: metric 'non_empty_rate' reads field "):
        evaluate_rag(answers, metrics=["exact_match", "non_empty_rate"])
    # One sample holding the field makes a lacking one an error again: it would score 0.
    with pytest.raises(ValueError, match=r"^sample 0: metric 'non_empty_rate' reads field "):
        evaluate_rag([*answers[:1], GOOD, answers[1]])


def test_ef_eval_rag_scores_answers_and_says_what_it_left_out(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "answers.jsonl",
        [{"id": "a", "response": "Paris", "reference": "Paris"}],
    )
    done = ef_eval("rag", path, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["metrics"] == {"exact_match": 1.0, "token_f1": 1.0}
    assert "no sample holds 'retrieved_contexts'" in done.stderr
    assert "context_recall, context_precision, non_empty_rate left out" in done.stderr


def write_lines(path: Path, samples: list[dict[str, Any]]) -> Path:
    """One sample a line, after a blank first line, so sample i sits on line i + 2."""
    path.write_text("\n" + "".join(json.dumps(sample) + "\n" for sample in samples))
    return path


def error_line(*args: object) -> str:
    done = ef_eval(*args)
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_ef_eval_rag_names_the_file_and_line_of_a_misnamed_sample(tmp_path: Path) -> None:
    old = write_lines(tmp_path / "ragas01.jsonl", [GOOD, RAGAS_0_1])
    assert error_line("rag", old) == (
        f"ef-eval: error: {old}:3: field 'question' is Ragas 0.1's name for 'user_input'; "
        "rename it 'user_input'"
    )
    gold = write_lines(tmp_path / "gold.jsonl", [renamed(GOOD, "gold", "reference")] * 3)
    # Found after the last sample, but about them all: named by the first one's line.
    assert error_line("rag", gold, "--metrics", "context_recall") == (
        f"ef-eval: error: {gold}:2: metric 'context_recall' applies to no sample: it reads "
        "field 'reference', which no sample holds (this one holds 'user_input', "
        "'retrieved_contexts', 'response', 'gold'); give it (None where there is no value) "
        "or leave 'context_recall' out of the metrics"
    )


def test_ef_eval_rag_names_the_line_a_metric_would_score_from_nothing(tmp_path: Path) -> None:
    lacking = {key: value for key, value in GOOD.items() if key != "retrieved_contexts"}
    path = write_lines(tmp_path / "samples.jsonl", [GOOD, GOOD, lacking])
    error = error_line("rag", path, "--metrics", "exact_match,non_empty_rate")
    assert error.startswith(f"ef-eval: error: {path}:4: metric 'non_empty_rate' reads field ")


def test_a_dataframe_in_ragas_0_1_columns_is_refused_naming_the_row() -> None:
    old = pd.DataFrame([RAGAS_0_1] * 2)
    with pytest.raises(ValueError, match=r"^sample 0: field 'question' is Ragas 0\.1's name"):
        evaluate_rag(old)
    # A missing cell is None in a column that names the field: nothing retrieved, scored 0.
    frame = pd.DataFrame([GOOD, {**GOOD, "retrieved_contexts": None}])
    assert [row["non_empty_rate"] for row in evaluate_rag(frame).per_sample] == [1.0, 0.0]
