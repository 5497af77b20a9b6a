"""The evaluation options are declared once: the entry points' keywords are its fields."""

from __future__ import annotations

import inspect
import json

import attrs
import pytest

from ef.evaluation import evaluate_retrieval, evaluate_retrieval_async, evaluate_run
from ef.evaluation._running.options import (
    EvaluationOptions,
    RunnerOptions,
    RunOptions,
    ScoringOptions,
    role,
)
from ef.evaluation._scoring.query_plan import fingerprint

QRELS = {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}
QUERIES = {"q1": "alpha", "q2": "beta"}


def retriever(query: str, *, limit: int = 10) -> list[str]:
    return {"alpha": ["d1", "d2"], "beta": ["d2"]}[query][:limit]


INTERVAL_KEYWORDS = {"interval": None, "confidence_level": 0.95}


def keywords(function) -> dict[str, object]:
    return {
        name: parameter.default
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    }


@pytest.mark.parametrize("function", [evaluate_retrieval, evaluate_retrieval_async])
def test_the_retrieval_entry_points_take_exactly_the_keyword_options(function):
    # Besides them, only what is done with the report once the evaluation is done: where to save
    # the rankings, the intervals of the means (recorded in report.intervals) and the query
    # groups whose means it keeps (report.groups).
    assert keywords(function) == {
        **EvaluationOptions.keywords(),
        "save_run": None,
        "groups": None,
        **INTERVAL_KEYWORDS,
    }


def test_evaluate_run_takes_exactly_the_scoring_options():
    # Besides them, only how to read a run given as a file path, and what a judged query the
    # run lacks does (a retriever is asked every judged query: no such option there); and the
    # intervals of the means and the query groups' means, computed from the report.
    assert keywords(evaluate_run) == {
        **RunOptions.keywords(),
        "run_format": None,
        "groups": None,
        **INTERVAL_KEYWORDS,
    }
    assert RunOptions.keywords() == {
        **ScoringOptions.keywords(),
        "missing_queries": "warn",
        "depth": None,
    }
    assert "missing_queries" not in EvaluationOptions.keywords()


def test_the_options_join_scoring_and_running_each_declared_once():
    names = [field.name for field in attrs.fields(EvaluationOptions)]
    assert len(names) == len(set(names))
    assert {f.name for f in attrs.fields(ScoringOptions)} <= set(names)
    assert {f.name for f in attrs.fields(RunnerOptions)} <= set(names)
    assert issubclass(EvaluationOptions, RunnerOptions)  # what the runner takes


def test_a_new_field_is_a_keyword_recorded_in_the_manifest_by_default():
    @attrs.frozen(kw_only=True, slots=False)
    class Extended(ScoringOptions):
        cutoff_weight: int = attrs.field(default=1, metadata=role())

    assert Extended.keywords()["cutoff_weight"] == 1
    options = Extended.from_keywords({**ScoringOptions.keywords(), "cutoff_weight": 2})
    assert options.recorded() == {"cutoff_weight": 2}
    with pytest.raises(KeyError, match="cutoff_weight"):
        Extended.from_keywords(ScoringOptions.keywords())  # not in the signature yet: loud


def test_a_bad_option_is_refused_by_its_field_whichever_entry_point():
    with pytest.raises(ValueError, match="retries must be a non-negative integer, got -1"):
        evaluate_retrieval(retriever, QRELS, QUERIES, retries=-1)
    with pytest.raises(ValueError, match="on_error must be 'raise' or 'record'"):
        evaluate_retrieval(retriever, QRELS, QUERIES, on_error="ignore")  # type: ignore[arg-type]


def test_the_manifest_records_the_resolved_runner_options():
    report = evaluate_retrieval(
        retriever, QRELS, QUERIES, k_values=(1, 2), retries=2, retry_on=KeyError
    )
    parameters = report.manifest["parameters"]
    assert parameters == {
        "k_values": [1, 2],
        "metrics": ["ndcg", "recall", "precision", "mrr", "map"],
        "ignore_identical_ids": False,
        "limit": 2,
        "max_concurrency": None,
        "timeout": None,
        "retries": 2,
        "retry_on": ["builtins.KeyError"],
        "on_error": "raise",
        "rate_limit": None,
    }
    assert report.manifest["retriever"] == f"{__name__}.retriever"


def test_evaluate_run_records_only_what_scoring_decides():
    report = evaluate_run({"q1": ["d1"], "q2": ["d2"]}, QRELS, k_values=(1,))
    recorded = {"k_values", "metrics", "ignore_identical_ids", "depth"}  # depth: the run's cap
    assert set(report.manifest["parameters"]) == recorded
    assert report.manifest["parameters"]["depth"] is None


def test_the_journal_fingerprint_is_unchanged_by_the_options_object(tmp_path):
    # Journals written before the options object must still resume: same keys, same hash.
    path = tmp_path / "journal.jsonl"
    report = evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(1, 2), journal=path)
    header = json.loads(path.read_text().splitlines()[0])
    # The journal keeps sorted-JSON fingerprints of its inputs (the manifest's digests differ).
    inputs = {"qrels": fingerprint(QRELS), "queries": fingerprint(QUERIES)}
    assert report.manifest["fingerprints"].keys() == inputs.keys()
    expected = fingerprint({**inputs, "retriever": f"{__name__}.retriever", "limit": 2})
    assert header["fingerprint"] == expected
    assert EvaluationOptions(limit=2, retriever_id="r").journal_keys() == {
        "limit": 2,
        "retriever": "r",
    }


def test_the_judging_options_are_scoring_fields_recorded_by_the_plan_never_journal_keys():
    fields = {field.name: field for field in attrs.fields(ScoringOptions)}
    assert {"relevance_level", "judged_only"} <= fields.keys()
    options = EvaluationOptions(relevance_level=2, judged_only=True, limit=3, retriever_id="r")
    assert options.journal_keys() == {"limit": 3, "retriever": "r"}
    assert options.judging.relevance_level == 2 and options.judging.judged_only
    report = evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(1, 2), relevance_level=1)
    assert report.manifest["parameters"]["relevance_level"] == 1
    assert report.manifest["parameters"]["judged_only"] is False
