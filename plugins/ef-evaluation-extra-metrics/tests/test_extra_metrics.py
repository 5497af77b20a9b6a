"""The example metric, rank-biased precision, alone and inside ef.evaluation."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ef.evaluation import (
    RETRIEVAL_METRICS,
    evaluate_retrieval,
    evaluate_run,
    list_plugins,
    registry,
)
from ef.evaluation.testing import registered_plugin
from hypothesis import given, settings
from hypothesis import strategies as st

import ef_evaluation_extra_metrics
from ef_evaluation_extra_metrics import PERSISTENCE, rbp

PLUGIN_NAME = "extra_metrics"  # the entry point's name in pyproject.toml
CUTOFFS = (1, 3, 10)
DOCS = [f"d{i}" for i in range(25)]

judgements = st.dictionaries(st.sampled_from(DOCS), st.integers(-2, 3), min_size=1, max_size=20)
# Rankings repeat ids and return unjudged ones ("u…"), as real retrievers do.
rankings = st.lists(st.sampled_from([*DOCS, "u1", "u2", "u3"]), max_size=40)


@pytest.fixture(scope="module")
def plugin() -> Iterator[None]:
    """The plugin, registered as ef.evaluation would load it once installed."""
    if any(info.name == PLUGIN_NAME for info in list_plugins()):
        yield
        return
    with registered_plugin(ef_evaluation_extra_metrics, name=PLUGIN_NAME):
        yield


def by_definition(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    """Moffat and Zobel's sum, written out: (1 - p) p^(rank - 1) per relevant doc in the top k."""
    seen: list[str] = []
    for doc_id in ranked:
        if doc_id not in seen:
            seen.append(doc_id)
    return sum(
        (1 - PERSISTENCE) * PERSISTENCE ** (rank - 1)
        for rank, doc_id in enumerate(seen[:k], 1)
        if relevant.get(doc_id, 0) > 0
    )


@settings(max_examples=200, deadline=None)
@given(judgements, rankings)
def test_rbp_follows_its_definition(relevant: dict[str, int], ranked: list[str]) -> None:
    for k in CUTOFFS:
        assert rbp(ranked, relevant, k) == pytest.approx(by_definition(ranked, relevant, k))
        assert 0.0 <= rbp(ranked, relevant, k) < 1.0


@settings(max_examples=100, deadline=None)
@given(judgements, rankings)
def test_the_all_cutoffs_form_equals_the_per_k_function(
    plugin: None, relevant: dict[str, int], ranked: list[str]
) -> None:
    if not any(grade > 0 for grade in relevant.values()):
        return  # evaluate_run skips a query with nothing relevant
    report = evaluate_run({"q": ranked}, {"q": relevant}, k_values=CUTOFFS, metrics=("rbp",))
    for k in CUTOFFS:
        assert report.metrics[f"rbp@{k}"] == pytest.approx(rbp(ranked, relevant, k), abs=1e-12)


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_a_bad_cutoff_is_refused(k: object) -> None:
    with pytest.raises(ValueError, match="a cutoff k must be an int >= 1"):
        rbp(["d1"], {"d1": 1}, k)  # type: ignore[arg-type]


def test_the_plugin_registers_rbp_under_its_name(plugin: None) -> None:
    assert RETRIEVAL_METRICS["rbp"] is rbp
    assert registry().metrics["rbp"].plugin == PLUGIN_NAME


def test_rbp_works_in_evaluate_retrieval_beside_the_builtins(plugin: None) -> None:
    rankings = {"alpha": ["x", "d1"], "beta": ["d2"]}
    report = evaluate_retrieval(
        lambda query, *, limit: rankings[query][:limit],
        {"q1": {"d1": 1}, "q2": {"d2": 1}},
        {"q1": "alpha", "q2": "beta"},
        k_values=(2,),
        metrics=("rbp", "hit_rate"),
    )
    assert report.metrics["rbp@2"] == pytest.approx((0.2 * 0.8 + 0.2) / 2)
    assert report.metrics["hit_rate@2"] == 1.0  # a core metric, no longer this plugin's
