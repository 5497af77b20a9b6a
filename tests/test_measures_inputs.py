"""Inputs as peers take them: a qrels file's path in ``evaluate_run`` and ``compare`` (ranx and
ir_measures take one), a DataFrame of samples in ``evaluate_rag`` (Ragas' ``from_pandas``)."""

from __future__ import annotations

import random
import warnings
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
import pytrec_eval

from ef.evaluation import DatasetFormatError, compare, evaluate_rag, evaluate_run
from test_trec_measures import generated, sendable
from test_trec_measures_options import scored_queries


def _write_trec(path: Path, qrels: dict) -> Path:
    path.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, judged in qrels.items() for d, g in judged.items())
    )
    return path


def _write_beir(path: Path, qrels: dict) -> Path:
    rows = [f"{q}\t{d}\t{g}\n" for q, judged in qrels.items() for d, g in judged.items()]
    path.write_text("query-id\tcorpus-id\tscore\n" + "".join(rows))
    return path


@pytest.mark.parametrize("form", ["trec", "beir"])
def test_evaluate_run_reads_a_qrels_path_as_pytrec_eval_reads_the_judgements(
    tmp_path: Path, form: str
) -> None:
    qrels, run = generated(seed=5100)
    qrels = sendable(qrels)
    path = (_write_trec if form == "trec" else _write_beir)(tmp_path / "qrels", qrels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = evaluate_run(run, str(path), metrics=("P.5,10", "ndcg_cut_10", "bpref"))
        from_path = evaluate_run(run, path, metrics=("P.5,10", "ndcg_cut_10", "bpref"))
    scored = scored_queries(qrels)
    evaluator = pytrec_eval.RelevanceEvaluator(scored, {"P.5,10", "ndcg_cut.10", "bpref"})
    expected = evaluator.evaluate({q: r for q, r in run.items() if q in scored and r})
    assert expected
    for q, values in expected.items():
        for key, value in values.items():
            assert report.per_query[q][key] == pytest.approx(value, abs=1e-12), (q, key)
    assert from_path.per_query == report.per_query


def test_compare_reads_a_qrels_path_once_for_every_run(tmp_path: Path) -> None:
    qrels, first = generated(seed=5200)
    _, second = generated(seed=5201)
    qrels = sendable(qrels)
    path = _write_trec(tmp_path / "qrels.txt", qrels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_path = compare({"a": first, "b": second}, path, metrics=("P_5", "bpref"))
        from_dict = compare({"a": first, "b": second}, qrels, metrics=("P_5", "bpref"))
    scored = scored_queries(qrels)
    evaluator = pytrec_eval.RelevanceEvaluator(scored, {"P.5", "bpref"})
    for name, run in (("a", first), ("b", second)):
        values = evaluator.evaluate({q: r for q, r in run.items() if q in scored and r})
        mean = sum(v["bpref"] for v in values.values()) / len(scored)
        assert from_path.means[name]["bpref"] == pytest.approx(mean, abs=1e-12)
    assert from_path.means == from_dict.means
    assert from_path.comparisons == from_dict.comparisons


def test_a_bad_qrels_path_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 1\nq1 0 d2 one\n")
    with pytest.raises(DatasetFormatError, match=r"qrels\.txt:2: grade 'one' is not a number"):
        evaluate_run({"q1": ["d1"]}, path)
    with pytest.raises(FileNotFoundError):
        evaluate_run({"q1": ["d1"]}, tmp_path / "missing.txt")


def _samples() -> list[dict[str, object]]:
    """Forty samples over a small vocabulary, so answers and contexts overlap at times; some
    lack a reference or a response."""
    rng = random.Random(39)
    words = "paris rome the capital of france italy a city river seine tiber".split()
    samples: list[dict[str, object]] = []
    for i in range(40):
        sample: dict[str, object] = {
            "user_input": f"question {i}",
            "retrieved_contexts": [
                " ".join(rng.choices(words, k=rng.randint(2, 8))) for _ in range(rng.randint(0, 3))
            ],
        }
        if i % 7:
            sample["response"] = " ".join(rng.choices(words, k=rng.randint(1, 4)))
        if i % 5:
            sample["reference"] = " ".join(rng.choices(words, k=rng.randint(1, 4)))
        samples.append(sample)
    return samples


def _ragas_samples(frame: pd.DataFrame) -> list[dict[str, object]]:
    """The frame as Ragas reads it (``EvaluationDataset.from_pandas``), fields it lacks left out."""
    from ragas import EvaluationDataset

    # Ragas wants None for a missing value where pandas filled in NaN.
    dataset = EvaluationDataset.from_pandas(frame.astype(object).where(frame.notna(), None))
    return [sample.model_dump(exclude_none=True) for sample in dataset.samples]


@pytest.mark.parametrize("library", ["pandas", "polars", "pyarrow"])
def test_evaluate_rag_takes_a_dataframe_of_samples_as_ragas_reads_it(library: str) -> None:
    samples = _samples()
    frame = pd.DataFrame(samples)
    given = {
        "pandas": frame,
        "polars": pl.DataFrame(samples),
        "pyarrow": pa.Table.from_pandas(frame),
    }[library]
    report = evaluate_rag(given)
    expected = evaluate_rag(_ragas_samples(frame))
    assert report.per_sample == expected.per_sample
    assert report.metrics == expected.metrics and report.coverage == expected.coverage
    assert report.coverage["exact_match"] < len(samples)  # a missing value is a lacking field
    assert report.sample_ids == tuple(f"question {i}" for i in range(40))


def test_a_dataframe_with_a_field_of_the_wrong_type_is_refused_naming_the_sample() -> None:
    frame = pd.DataFrame([{"user_input": "q", "response": 3, "reference": "a"}])
    with pytest.raises(TypeError, match="sample 0: field 'response' must be a string"):
        evaluate_rag(frame)
