"""Peers' further spellings of trec_eval's measures, each against its own provider per query:
``NumRet(rel=N)`` (how ir_measures prints NumRelRet) and ``RPrec`` (R-precision)."""

from __future__ import annotations

import warnings

import ir_measures
import pytest

from ef.evaluation import evaluate_run
from test_trec_measures import generated, sendable
from test_trec_measures_options import scored_queries


def per_query_of_ir_measures(measure: object, qrels: dict, run: dict) -> dict[str, float]:
    return {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}


@pytest.mark.parametrize(
    ("spelling", "oracle"),
    [
        ("NumRet(rel=1)", ir_measures.NumRet(rel=1)),
        ("NumRet(rel=2)", ir_measures.NumRet(rel=2)),
        ("RPrec", ir_measures.Rprec),
    ],
)
def test_each_spelling_is_its_providers_value_per_query(spelling: str, oracle: object) -> None:
    qrels, run = generated(seed=4400)
    scored = sendable(scored_queries(qrels))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = evaluate_run(run, scored, metrics=(spelling,))
    expected = per_query_of_ir_measures(oracle, scored, {q: r for q, r in run.items() if r})
    assert expected
    worst = max(abs(report.per_query[q][spelling] - v) for q, v in expected.items())
    assert worst <= 1e-12
