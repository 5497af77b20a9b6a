"""Grades and metric values are finite numbers: never a NaN, an overflow or a coerced string.

Judgements given in Python (or by a reader plugin) are checked before anything runs; nDCG
scales grades by the query's largest one, so no finite grade overflows it; a plugin metric's
value must be a finite int or float (not a bool), and every error names the metric, its plugin
and the query.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import (
    IncompleteEvaluationWarning,
    compare,
    dcg_at_k,
    evaluate_rag,
    evaluate_retrieval,
    evaluate_retrieval_async,
    evaluate_run,
    hookimpl,
    ndcg_at_k,
    read_dataset,
)
from ef.evaluation.testing import registered_plugin
from oracle import PRIMITIVES, trec_eval_values

QRELS = {"q1": {"d1": 1.0}, "q2": {"d2": 1.0, "d3": 0.0}}
QUERIES = {"q1": "one", "q2": "two"}
RUN = {"q1": ["d1", "x"], "q2": ["x", "d2"]}


def never_called(query: str) -> list[str]:
    raise AssertionError("the judgements should be refused before retrieval starts")


# --- grades -------------------------------------------------------------------------------

BAD_GRADES = [
    pytest.param(math.nan, ValueError, "is nan; grades must be finite numbers", id="nan"),
    pytest.param(math.inf, ValueError, "is inf; grades must be finite numbers", id="inf"),
    pytest.param(-math.inf, ValueError, "is -inf; grades must be finite numbers", id="-inf"),
    pytest.param(10**400, ValueError, "grades must be finite numbers", id="huge int"),
    pytest.param("1", TypeError, "is '1' (a str); grades must be finite numbers", id="str"),
    pytest.param(None, TypeError, "is None (a NoneType)", id="None"),
    pytest.param(Decimal("1"), TypeError, "(a Decimal)", id="Decimal"),
]


def with_grade(grade: object) -> dict[str, dict[str, Any]]:
    return {"q1": {"d1": 1.0}, "q2": {"d2": 1.0, "d3": grade}}


@pytest.mark.parametrize(("grade", "error", "message"), BAD_GRADES)
def test_a_grade_that_is_no_finite_number_is_refused_naming_query_and_doc(grade, error, message):
    expected = re.escape("grade of doc 'd3' for query 'q2' ") + ".*" + re.escape(message)
    with pytest.raises(error, match=expected):
        evaluate_run(RUN, with_grade(grade))
    with pytest.raises(error, match=expected):
        evaluate_retrieval(never_called, with_grade(grade), QUERIES)
    with pytest.raises(error, match=expected):
        compare({"a": RUN, "b": RUN}, with_grade(grade), baseline="a", metrics=("ndcg@10",))


@pytest.mark.anyio
@pytest.mark.parametrize(("grade", "error", "message"), BAD_GRADES)
async def test_a_bad_grade_is_refused_before_an_async_evaluation_runs(grade, error, message):
    async def retriever(query):
        raise AssertionError("the judgements should be refused before retrieval starts")

    expected = re.escape("grade of doc 'd3' for query 'q2' ") + ".*" + re.escape(message)
    with pytest.raises(error, match=expected):
        await evaluate_retrieval_async(retriever, with_grade(grade), QUERIES, on_error="record")


def test_a_nan_grade_is_not_silently_non_relevant_in_the_primitives():
    for fn in PRIMITIVES.values():
        with pytest.raises(ValueError, match=r"grade of doc 'd1' is nan"):
            fn(["d1"], {"d1": math.nan}, 1)
        with pytest.raises(ValueError, match=r"grade of doc 'd2' is inf"):
            fn(["d1"], {"d1": 1.0, "d2": math.inf}, 1)


def test_judgements_must_map_string_doc_ids_to_grades():
    with pytest.raises(TypeError, match=r"doc id 3 for query 'q2' is not a string"):
        evaluate_run(RUN, {"q1": {"d1": 1}, "q2": {3: 1}})
    with pytest.raises(
        TypeError, match=r"judgements of query 'q2' are a list; expected a \{query_id"
    ):
        evaluate_run(RUN, {"q1": {"d1": 1}, "q2": ["d2"]})


class InfiniteReader:
    """A dataset reader plugin whose qrels carry an infinite grade."""

    @hookimpl
    def ef_evaluation_register_dataset_readers(self, register):
        register(
            "infinite",
            lambda source, **options: ({}, QUERIES, {"q1": {"d1": 1.0, "d9": math.inf}}),
        )


def test_an_infinite_grade_from_a_reader_plugin_is_refused():
    with registered_plugin(InfiniteReader(), name="infinite-reader"):
        _, queries, qrels = read_dataset("anything", reader="infinite")
    with pytest.raises(ValueError, match=r"grade of doc 'd9' for query 'q1' is inf"):
        evaluate_retrieval(never_called, qrels, queries)


def test_booleans_and_numpy_numbers_are_grades():
    run = {"q1": ["x", "d1"]}
    expected = evaluate_run(run, {"q1": {"d1": 1.0, "d2": 0.0}}).per_query
    assert evaluate_run(run, {"q1": {"d1": True, "d2": False}}).per_query == expected
    assert ndcg_at_k(["x", "d1"], {"d1": np.int64(2), "d2": np.float32(0)}, 2) == ndcg_at_k(
        ["x", "d1"], {"d1": 2, "d2": 0}, 2
    )


# --- huge grades ----------------------------------------------------------------------------

DOCS = [f"d{i}" for i in range(10)]
HUGE = 2.0**1020  # 3 * 2**1020 is still below the largest float; scaling by it is exact


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(st.sampled_from(DOCS), st.sampled_from([-1, 0, 1, 2, 3]), max_size=8),
    st.lists(st.sampled_from([*DOCS, "u"]), max_size=12),
    st.lists(st.integers(1, 12), min_size=1, max_size=3, unique=True),
)
def test_huge_grades_give_trec_eval_ndcg_of_the_same_grades_scaled_down(relevant, ranked, ks):
    huge = {doc: grade * HUGE for doc, grade in relevant.items()}
    if not any(grade > 0 for grade in relevant.values()):
        return
    expected = trec_eval_values({"q": ranked}, {"q": relevant}, ["ndcg"], ks)["q"]
    report = evaluate_run({"q": ranked}, {"q": huge}, k_values=ks, metrics=("ndcg",))
    for k in ks:
        value = report.per_query["q"][f"ndcg@{k}"]
        assert value == pytest.approx(expected[f"ndcg@{k}"], abs=1e-9)
        # Dividing by the largest grade undoes an exact power-of-two scaling exactly.
        assert value == ndcg_at_k(ranked, huge, k) == ndcg_at_k(ranked, relevant, k)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(DOCS),
        st.floats(min_value=-1e308, max_value=1.7976931348623157e308, allow_nan=False),
        max_size=8,
    ),
    st.lists(st.sampled_from([*DOCS, "u"]), max_size=12),
    st.integers(1, 12),
)
def test_ndcg_stays_a_number_in_the_unit_interval_for_any_finite_grades(relevant, ranked, k):
    value = ndcg_at_k(ranked, relevant, k)
    assert 0.0 <= value <= 1.0 + 1e-12
    if any(grade > 0 for grade in relevant.values()):
        core = evaluate_run({"q": ranked}, {"q": relevant}, k_values=(k,), metrics=("ndcg",))
        assert core.per_query["q"][f"ndcg@{k}"] == value  # core and primitive, exactly


def test_the_largest_grades_give_a_perfect_ranking_one():
    relevant = {"d1": 1.7e308, "d2": 1.7e308, "d3": 1e308}
    assert ndcg_at_k(["d1", "d2", "d3"], relevant, 3) == 1.0
    report = evaluate_run({"q1": ["d3", "d1", "d2"]}, {"q1": relevant}, k_values=(1, 3))
    assert report.per_query["q1"]["ndcg@1"] == pytest.approx(1e308 / 1.7e308)
    assert math.isfinite(report.metrics["ndcg@3"])


def test_huge_grades_in_the_all_cutoffs_form_used_beside_a_plugin_metric():
    # With a plugin metric in the plan, nDCG comes from its all-cutoffs form, not the fused step.
    relevant = {"d1": 1.7e308, "d2": 1e308}
    run = {"q1": ["d2", "x", "d1"]}
    fused = evaluate_run(run, {"q1": relevant}, k_values=(1, 3), metrics=("ndcg",))
    with registered_plugin(metric_plugin(0.0, "per-k"), name="odd-plugin"):
        mixed = evaluate_run(run, {"q1": relevant}, k_values=(1, 3), metrics=("ndcg", "odd"))
    assert mixed.per_query["q1"]["ndcg@3"] == fused.per_query["q1"]["ndcg@3"]
    assert 0.0 < fused.per_query["q1"]["ndcg@3"] < 1.0


def test_a_dcg_beyond_the_float_range_is_an_overflow_error_not_inf():
    with pytest.raises(OverflowError, match="exceeds the range of a float"):
        dcg_at_k(["d1", "d2"], {"d1": 1.7e308, "d2": 1.7e308}, 2)


# --- plugin metric values -------------------------------------------------------------------


def metric_plugin(value: Any, form: str) -> object:
    """A throwaway plugin registering metric 'odd', returning ``value`` in the given form."""

    def per_k(ranked, relevant, k):
        return value

    class Plugin:
        @hookimpl
        def ef_evaluation_register_metrics(self, register):
            if form == "per-k":
                register("odd", per_k)
            elif form == "all-cutoffs":
                register("odd", per_k, all_cutoffs=lambda summary, ks: [value for _ in ks])
            else:
                register("odd", lambda ranked, relevant: value, cutoff=False)

    return Plugin()


FORMS = ["per-k", "all-cutoffs", "no-cutoff"]
BAD_VALUES = [
    pytest.param(math.nan, ValueError, "nan", id="nan"),
    pytest.param(math.inf, ValueError, "inf", id="inf"),
    pytest.param(-math.inf, ValueError, "-inf", id="-inf"),
    pytest.param(10**400, ValueError, "1000000", id="huge int"),
    pytest.param(None, TypeError, "None", id="None"),
    pytest.param("0.5", TypeError, "'0.5'", id="str"),
    pytest.param(True, TypeError, "True", id="True"),
    pytest.param(False, TypeError, "False", id="False"),
    pytest.param(np.bool_(True), TypeError, "True", id="numpy bool"),
    pytest.param(Decimal("0.5"), TypeError, "Decimal('0.5')", id="Decimal"),
    pytest.param(1j, TypeError, "1j", id="complex"),
    pytest.param([0.5], TypeError, "[0.5]", id="list"),
]


def named(form: str) -> str:
    at = "" if form == "no-cutoff" else " at k=1"
    return re.escape(f"metric 'odd' from plugin 'odd-plugin' for query 'q1'{at} returned ") + ".*"


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("value", "error", "shown"), BAD_VALUES)
def test_a_bad_metric_value_is_refused_naming_metric_plugin_and_query(form, value, error, shown):
    with registered_plugin(metric_plugin(value, form), name="odd-plugin"):
        with pytest.raises(error, match=named(form) + re.escape(shown)):
            evaluate_run(RUN, QRELS, k_values=(1, 5), metrics=("ndcg", "odd"))


@pytest.mark.anyio
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("value", "error", "shown"), BAD_VALUES)
async def test_a_bad_metric_value_stops_an_async_evaluation_even_in_record_mode(
    form, value, error, shown
):
    async def retriever(query, *, limit):
        return {"one": RUN["q1"], "two": RUN["q2"]}[query][:limit]

    with registered_plugin(metric_plugin(value, form), name="odd-plugin"):
        with pytest.raises(error, match=named(form) + re.escape(shown)):
            await evaluate_retrieval_async(
                retriever, QRELS, QUERIES, k_values=(1, 5), metrics=("odd",), on_error="record"
            )


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(
    "value",
    [42, -3.5, 1e6, 0.0, np.float64(0.25), np.int64(7), np.float32(0.5)],
    ids=["count", "negative log", "large", "zero", "numpy float64", "numpy int64", "float32"],
)
def test_any_finite_number_is_a_metric_value_even_outside_zero_one(form, value):
    with registered_plugin(metric_plugin(value, form), name="odd-plugin"):
        report = evaluate_run(RUN, QRELS, k_values=(1, 5), metrics=("odd",))
    for row in report.per_query.values():
        assert all(type(v) is float and v == float(value) for v in row.values())
    assert all(v == float(value) for v in report.metrics.values())


def all_cutoffs_plugin(all_cutoffs: Any) -> object:
    class Plugin:
        @hookimpl
        def ef_evaluation_register_metrics(self, register):
            register("odd", lambda ranked, relevant, k: 0.0, all_cutoffs=all_cutoffs)

    return Plugin()


@pytest.mark.parametrize(
    ("all_cutoffs", "error", "message"),
    [
        (lambda s, ks: [0.5], ValueError, "returned 1 values for the 2 cutoffs [1, 5]"),
        (lambda s, ks: [0.5] * 3, ValueError, "returned 3 values for the 2 cutoffs [1, 5]"),
        (lambda s, ks: 0.5, TypeError, "its all-cutoffs form returned 0.5; expected a list"),
        (lambda s, ks: "05", TypeError, "its all-cutoffs form returned '05'; expected a list"),
        (lambda s, ks: None, TypeError, "its all-cutoffs form returned None; expected a list"),
    ],
    ids=["too few", "too many", "a float", "a string", "None"],
)
def test_an_all_cutoffs_form_must_give_one_value_per_cutoff(all_cutoffs, error, message):
    with registered_plugin(all_cutoffs_plugin(all_cutoffs), name="odd-plugin"):
        with pytest.raises(error, match=re.escape(message)) as raised:
            evaluate_run(RUN, QRELS, k_values=(1, 5), metrics=("odd",))
    assert "metric 'odd' from plugin 'odd-plugin' for query 'q1'" in str(raised.value)


def test_an_all_cutoffs_form_may_return_any_sequence_or_a_generator():
    for form in (lambda s, ks: tuple(0.5 for _ in ks), lambda s, ks: (0.5 for _ in ks)):
        with registered_plugin(all_cutoffs_plugin(form), name="odd-plugin"):
            report = evaluate_run(RUN, QRELS, k_values=(1, 5), metrics=("odd",))
        assert report.metrics == {"odd@1": 0.5, "odd@5": 0.5}


@pytest.mark.parametrize("form", FORMS)
def test_a_metric_that_raises_is_named_with_its_plugin_and_the_query(form):
    def broken(*args):
        raise ZeroDivisionError("boom")

    class Plugin:
        @hookimpl
        def ef_evaluation_register_metrics(self, register):
            if form == "all-cutoffs":
                register("odd", broken, all_cutoffs=broken)
            else:
                register("odd", broken, cutoff=form == "per-k")

    with registered_plugin(Plugin(), name="odd-plugin"):
        with pytest.raises(ZeroDivisionError, match="boom") as raised:
            evaluate_run(RUN, QRELS, k_values=(1,), metrics=("odd",))
    assert raised.value.__notes__ == [
        "while computing metric 'odd' from plugin 'odd-plugin' for query 'q1'"
    ]


@pytest.mark.anyio
async def test_a_metric_that_raises_stops_an_async_evaluation_with_the_note():
    async def retriever(query):
        return ["d1"]

    class Plugin:
        @hookimpl
        def ef_evaluation_register_metrics(self, register):
            register("odd", lambda ranked, relevant, k: 1 / 0)

    with registered_plugin(Plugin(), name="odd-plugin"):
        with pytest.raises(ZeroDivisionError) as raised:
            await evaluate_retrieval_async(retriever, QRELS, QUERIES, metrics=("odd",))
    assert "from plugin 'odd-plugin' for query" in raised.value.__notes__[0]


# --- RAG metric values ------------------------------------------------------------------------


def rag_plugin(fn: Any) -> object:
    class Plugin:
        @hookimpl
        def ef_evaluation_register_rag_metrics(self, register):
            register("odd", fn)

    return Plugin()


SAMPLES = [{"user_input": "q", "response": "a", "reference": "a", "retrieved_contexts": []}]


@pytest.mark.parametrize(
    ("value", "error", "shown"), [p for p in BAD_VALUES if p.values[0] is not None]
)
def test_a_bad_rag_metric_value_is_refused_naming_metric_and_plugin(value, error, shown):
    with registered_plugin(rag_plugin(lambda sample: value), name="odd-rag"):
        with pytest.raises(
            error, match="RAG metric 'odd' returned .*" + re.escape(shown)
        ) as raised:
            evaluate_rag(SAMPLES, metrics=("odd",))
    assert "for sample 0 (plugin 'odd-rag')" in str(raised.value)


def test_rag_metric_values_may_be_any_finite_number_or_none():
    values = iter([3, None, np.float64(-2.5)])
    with registered_plugin(rag_plugin(lambda sample: next(values)), name="odd-rag"):
        report = evaluate_rag(SAMPLES * 3, metrics=("odd",))
    assert report.metrics == {"odd": 0.25}
    assert report.coverage == {"odd": 2}


def test_a_rag_metric_that_raises_is_named_with_its_plugin():
    with registered_plugin(rag_plugin(lambda sample: 1 / 0), name="odd-rag"):
        with pytest.raises(ZeroDivisionError) as raised:
            evaluate_rag(SAMPLES, metrics=("odd",))
    assert raised.value.__notes__ == [
        "while computing RAG metric 'odd' on sample 0 (plugin 'odd-rag')"
    ]


def test_builtin_metrics_mixed_with_a_plugin_metric_keep_their_values():
    with registered_plugin(metric_plugin(2, "per-k"), name="odd-plugin"):
        mixed = evaluate_run(RUN, QRELS, k_values=(1, 5), metrics=("ndcg", "odd", "map"))
    alone = evaluate_run(RUN, QRELS, k_values=(1, 5), metrics=("ndcg", "map"))
    for query_id, row in alone.per_query.items():
        assert {key: mixed.per_query[query_id][key] for key in row} == row


def test_warning_free_record_mode_with_a_good_plugin_metric():
    with registered_plugin(metric_plugin(1, "no-cutoff"), name="odd-plugin"):
        with pytest.warns(IncompleteEvaluationWarning):
            report = evaluate_retrieval(
                lambda q: None if q == "one" else ["d2"],
                QRELS,
                QUERIES,
                metrics=("odd",),
                on_error="record",
            )
    assert report.metrics == {"odd": 1.0}
