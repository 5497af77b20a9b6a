"""evaluate_rag: means, coverage and per-sample values, and the errors it raises."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation._rag import evaluate as _rag
from ef.evaluation._rag import lexical as _lexical
from ef.evaluation._rag.evaluate import evaluate_rag
from ef.evaluation._rag.sample_metrics import BUILTIN_RAG_METRICS, sample_exact_match
from ef.evaluation._report.reports import RagEvalReport

DEFAULT_METRICS = ("exact_match", "token_f1", "context_recall", "context_precision")

words = st.sampled_from(["paris", "Paris", "the", "france", "rome", "capital", "of", "?", ""])
text = st.lists(words, max_size=5).map(" ".join)
reference = st.one_of(st.none(), text, st.lists(text, min_size=1, max_size=3))


@st.composite
def samples(draw: st.DrawFn) -> dict[str, Any]:
    sample: dict[str, Any] = {"user_input": draw(text), "response": draw(text)}
    sample["retrieved_contexts"] = draw(st.one_of(st.none(), st.lists(text, max_size=3)))
    sample["reference"] = draw(reference)
    return sample


def direct_values(sample: Mapping[str, Any]) -> dict[str, float | None]:
    """Each built-in metric computed straight from the lexical functions."""
    contexts = sample.get("retrieved_contexts") or []
    values: dict[str, float | None] = {"non_empty_rate": 1.0 if contexts else 0.0}
    ref = sample.get("reference")
    refs = None if ref is None else ([ref] if isinstance(ref, str) else ref)
    if refs is None:
        values.update(dict.fromkeys(DEFAULT_METRICS))
    else:
        response = sample["response"]
        values["exact_match"] = max(_lexical.exact_match(response, r) for r in refs)
        values["token_f1"] = max(_lexical.token_f1(response, r) for r in refs)
        values["context_recall"] = max(_lexical.context_recall(r, contexts) for r in refs)
        values["context_precision"] = max(_lexical.context_precision(r, contexts) for r in refs)
    return values


@settings(max_examples=60)
@given(st.lists(samples(), min_size=1, max_size=6))
def test_report_matches_a_direct_computation(batch: list[dict[str, Any]]) -> None:
    report = evaluate_rag(batch)
    expected = [direct_values(sample) for sample in batch]
    assert report.n_samples == len(batch)
    assert len(report.per_sample) == len(batch)
    for row, want in zip(report.per_sample, expected, strict=True):
        assert list(row) == list(BUILTIN_RAG_METRICS)
        for name, value in want.items():
            assert row[name] == pytest.approx(value) if value is not None else row[name] is None
    for name in BUILTIN_RAG_METRICS:
        applicable = [row[name] for row in expected if row[name] is not None]
        assert report.coverage[name] == len(applicable)
        if applicable:
            assert report.metrics[name] == pytest.approx(math.fsum(applicable) / len(applicable))
        else:
            assert name not in report.metrics
    assert report.coverage["non_empty_rate"] == len(batch)


def test_spec_example() -> None:
    batch = [
        {
            "user_input": "capital of France?",
            "response": "Paris",
            "reference": "Paris",
            "retrieved_contexts": ["Paris is the capital of France."],
        },
        {"user_input": "2 + 2?", "response": "five", "reference": "four", "retrieved_contexts": []},
    ]
    report = evaluate_rag(batch)
    assert report.metrics == {
        "exact_match": 0.5,
        "token_f1": 0.5,
        "context_recall": 0.5,
        "context_precision": 0.5,
        "non_empty_rate": 0.5,
    }
    assert report.coverage == dict.fromkeys(BUILTIN_RAG_METRICS, 2)


def test_builtins_are_in_the_default_order() -> None:
    assert list(BUILTIN_RAG_METRICS) == [*DEFAULT_METRICS, "non_empty_rate"]
    assert BUILTIN_RAG_METRICS["exact_match"] is sample_exact_match


def test_samples_without_reference_are_not_covered() -> None:
    batch = [
        {"response": "Paris", "reference": "paris", "retrieved_contexts": ["Paris"]},
        {"response": "Rome", "retrieved_contexts": []},
        {"response": "Rome", "reference": None, "retrieved_contexts": None},
    ]
    report = evaluate_rag(batch)
    assert report.coverage["exact_match"] == 1
    assert report.metrics["exact_match"] == 1.0
    assert report.coverage["non_empty_rate"] == 3
    assert report.metrics["non_empty_rate"] == pytest.approx(1 / 3)
    assert report.per_sample[1]["token_f1"] is None


def test_a_metric_that_applies_to_no_sample_has_no_mean() -> None:
    report = evaluate_rag([{"response": "x", "reference": None}], metrics=["exact_match"])
    assert report.metrics == {}
    assert report.coverage == {"exact_match": 0}
    assert report.per_sample == ({"exact_match": None},)


def test_list_reference_takes_the_best_answer() -> None:
    references = ["Tour Eiffel", "Eiffel tower"]
    contexts = ["The Eiffel tower in Paris", "Arc de Triomphe"]
    sample = {
        "response": "the Eiffel Tower",
        "reference": references,
        "retrieved_contexts": contexts,
    }
    row = evaluate_rag([sample]).per_sample[0]
    assert row["exact_match"] == 1.0
    assert row["token_f1"] == 1.0
    recalls = [_lexical.context_recall(r, contexts) for r in references]
    assert recalls[0] < recalls[1]  # the second reference is the better one here
    assert row["context_recall"] == recalls[1]
    # One sample per reference: the list scores as the best of them.
    singles = evaluate_rag([{**sample, "reference": r} for r in references]).per_sample
    for name, value in row.items():
        assert value == max(single[name] for single in singles)  # type: ignore[type-var]


def test_metrics_subset_keeps_the_requested_order_without_duplicates() -> None:
    report = evaluate_rag(
        [{"response": "a", "reference": "a", "retrieved_contexts": []}],
        metrics=("non_empty_rate", "exact_match", "non_empty_rate"),
    )
    assert list(report.metrics) == ["non_empty_rate", "exact_match"]
    assert list(report.per_sample[0]) == ["non_empty_rate", "exact_match"]


def test_samples_may_be_a_generator() -> None:
    report = evaluate_rag(
        {"response": r, "reference": "paris", "retrieved_contexts": []} for r in ["Paris", "Rome"]
    )
    assert report.n_samples == 2
    assert report.metrics["exact_match"] == 0.5


def test_report_round_trips_through_json() -> None:
    samples = [{"response": "Paris", "reference": "paris"}, {"response": "x"}]
    report = evaluate_rag([{**sample, "retrieved_contexts": []} for sample in samples])
    assert RagEvalReport.from_json(report.to_json()) == report


def test_unknown_metric_lists_the_available_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown RAG metric\(s\) 'bleu'.*available: .*token_f1"):
        evaluate_rag([{"response": "x"}], metrics=["exact_match", "bleu"])


def test_metric_names_must_be_a_sequence_of_names() -> None:
    with pytest.raises(TypeError, match="sequence of names"):
        evaluate_rag([{"response": "x"}], metrics="exact_match")
    with pytest.raises(ValueError, match="at least one metric"):
        evaluate_rag([{"response": "x"}], metrics=[])


@pytest.mark.parametrize("empty", [[], (), iter([])])
def test_empty_samples_are_rejected(empty: Any) -> None:
    with pytest.raises(ValueError, match="samples is empty"):
        evaluate_rag(empty)


@pytest.mark.parametrize(
    ("bad", "error", "pattern"),
    [
        ("not a mapping", TypeError, r"sample 1: expected a mapping"),
        ({"response": 3}, TypeError, r"sample 1: field 'response' must be a string"),
        ({"response": "x", "user_input": ["q"]}, TypeError, r"sample 1: field 'user_input'"),
        ({"response": "x", "retrieved_contexts": "ctx"}, TypeError, r"'retrieved_contexts'"),
        ({"response": "x", "retrieved_contexts": ["ok", 2]}, TypeError, r"'retrieved_contexts'"),
        ({"response": "x", "reference_contexts": "c"}, TypeError, r"'reference_contexts'"),
        ({"response": "x", "reference": 4}, TypeError, r"sample 1: field 'reference'"),
        ({"response": "x", "reference": ["a", 1]}, TypeError, r"sample 1: field 'reference'"),
        (
            {"response": "x", "reference": []},
            ValueError,
            r"sample 1: field 'reference' is an empty",
        ),
    ],
)
def test_bad_samples_are_reported_with_index_and_field(
    bad: Any, error: type[Exception], pattern: str
) -> None:
    with pytest.raises(error, match=pattern):
        evaluate_rag([{"response": "fine", "reference": "fine", "retrieved_contexts": []}, bad])


def test_metrics_are_looked_up_in_the_plugin_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    def answer_length(sample: Mapping[str, Any]) -> float | None:
        return float(len(sample["response"]))

    registry = {**BUILTIN_RAG_METRICS, "answer_length": answer_length}
    monkeypatch.setattr(_rag, "rag_metric_functions", lambda: registry)
    report = evaluate_rag([{"response": "ab"}, {"response": "abcd"}], metrics=["answer_length"])
    assert report.metrics == {"answer_length": 3.0}


def test_builtin_metrics_come_from_the_real_registry() -> None:
    available = _rag.rag_metric_functions()
    for name, fn in BUILTIN_RAG_METRICS.items():
        assert available[name] is fn


def test_a_metric_returning_a_non_number_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_rag, "rag_metric_functions", lambda: {"bad": lambda sample: "high"})
    with pytest.raises(TypeError, match=r"RAG metric 'bad' returned 'high' for sample 0"):
        evaluate_rag([{"response": "x"}], metrics=["bad"])


def test_a_failing_metric_says_where_it_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(sample: Mapping[str, Any]) -> float:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(_rag, "rag_metric_functions", lambda: {"broken": broken})
    with pytest.raises(ZeroDivisionError, match="boom") as raised:
        evaluate_rag([{"response": "x"}], metrics=["broken"])
    assert "while computing RAG metric 'broken' on sample 0" in raised.value.__notes__


# a lone surrogate is refused where the sample enters, naming it


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("response", "Par\udc80is", "'response'"),
        ("user_input", "\ud800", "'user_input'"),
        ("reference", ["ok", "b\udfff"], "'reference[1]'"),
        ("retrieved_contexts", ["\ud83d"], "'retrieved_contexts[0]'"),
        ("retrieved_context_ids", ["d1", "d\ud800"], "'retrieved_context_ids[1]'"),
    ],
)
def test_a_lone_surrogate_in_a_sample_is_refused_naming_it(
    field: str, value: object, named: str
) -> None:
    samples = [{"response": "fine", "reference": "fine"}, {"response": "x", field: value}]
    with pytest.raises(ValueError, match=rf"^sample 1: field {re.escape(named)} holds a lone"):
        evaluate_rag(samples, metrics=["exact_match"])


def test_a_lone_surrogate_in_an_id_is_refused_naming_it() -> None:
    samples = [{"response": "a", "reference": "a"}, {"response": "b", "reference": "b"}]
    with pytest.raises(ValueError, match=r"^ids\[1\] holds a lone UTF-16 surrogate \(\\udc00\)"):
        evaluate_rag(samples, metrics=["exact_match"], ids=["one", "two\udc00"])


def test_a_page_refuses_samples_with_a_lone_surrogate_before_writing(tmp_path: Path) -> None:
    samples = [{"response": "a", "reference": "a"}]
    report = evaluate_rag(samples, metrics=["exact_match"])
    page = tmp_path / "page.html"
    with pytest.raises(ValueError, match=r"samples\[0\] \('0'\): field 'response' holds a lone"):
        report.to_html(page, samples=[{"response": "a\ud800", "reference": "a"}])
    assert not page.exists()
    report.to_html(page, samples=samples)
    assert page.read_text(encoding="utf-8").startswith("<!doctype html>")
