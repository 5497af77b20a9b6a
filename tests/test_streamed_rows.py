"""A streamed run keeps each judged query's values at its place in the qrels order, not in a
dict keyed by query id: whatever the order of the file, the report is the in-memory path's, bit
for bit (values, order, means, manifest, hash, pickle, JSON), and the values are pytrec_eval's.
"""

from __future__ import annotations

import json
import pickle
import random
import warnings
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval

from ef.evaluation import MissingQueriesWarning, evaluate_run, read_trec_run
from ef.evaluation._running.streamed import _Planned

METRICS = ("ndcg", "map", "recall", "P", "recip_rank", "bpref")


def _inputs(order: str) -> tuple[dict[str, dict[str, float]], list[tuple[str, dict[str, float]]]]:
    """Graded qrels (some queries with no positive grade) and a run's queries in ``order``:
    some judged queries missing, unjudged ones among them."""
    rng = random.Random(11)
    qrels: dict[str, dict[str, float]] = {}
    for query in rng.sample(range(3000), 2500):  # the qrels in no sorted order
        docs = rng.sample(range(40), rng.randrange(1, 6))
        grades = [0.0] * len(docs) if query % 17 == 0 else [rng.choice([0.0, 1.0, 2.0])]
        qrels[f"q{query}"] = {f"d{doc}": rng.choice(grades) for doc in docs}
    queries = [f"q{query}" for query in range(3000) if query % 11 != 0]
    run = [
        (
            query_id,
            {f"d{doc}": rng.choice([0.5, 1.0, 2.25, -3.0]) for doc in rng.sample(range(40), 12)},
        )
        for query_id in queries
    ]
    places = {query_id: place for place, query_id in enumerate(qrels)}
    if order == "qrels":  # the qrels order, unjudged queries first
        run.sort(key=lambda item: places.get(item[0], -1))
    elif order == "judged in qrels order":  # the file follows the plan throughout
        run = sorted((item for item in run if item[0] in places), key=lambda i: places[i[0]])
    elif order == "reversed":
        run.reverse()
    elif order == "shuffled":
        rng.shuffle(run)
    elif order == "text":
        run.sort()
    return qrels, run  # "numbers": q0, q1, q2, …


def _write(path: Path, run: list[tuple[str, dict[str, float]]]) -> None:
    with open(path, "w", encoding="ascii") as out:
        for query_id, scores in run:
            ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
            out.writelines(
                f"{query_id} Q0 {doc} {rank} {score} x\n"
                for rank, (doc, score) in enumerate(ranked, 1)
            )


def _report(run: Any, qrels: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MissingQueriesWarning)
        report = evaluate_run(run, qrels, metrics=METRICS, k_values=(1, 10))
    return report, [str(warning.message) for warning in caught]


@pytest.mark.parametrize(
    "order", ["judged in qrels order", "qrels", "reversed", "shuffled", "text", "numbers"]
)
def test_a_run_file_in_any_order_reports_what_the_run_in_memory_reports(
    trec_run_parser, tmp_path, order
):
    qrels, run = _inputs(order)
    path = tmp_path / "run.txt"
    _write(path, run)
    streamed, streamed_warnings = _report(path, qrels)
    in_memory, in_memory_warnings = _report(read_trec_run(path), qrels)
    assert streamed == in_memory
    assert list(streamed.per_query) == list(in_memory.per_query)
    assert [list(row.items()) for row in streamed.per_query.values()] == [
        list(row.items()) for row in in_memory.per_query.values()
    ]
    assert streamed.metrics == in_memory.metrics and streamed.manifest == in_memory.manifest
    assert hash(streamed) == hash(in_memory)
    assert pickle.loads(pickle.dumps(streamed)) == in_memory
    assert json.dumps(streamed.to_dict()) == json.dumps(in_memory.to_dict())
    # Each judged query the run lacks is named alike (the file's name aside).
    assert [m.replace(str(path), "the run") for m in streamed_warnings] == in_memory_warnings
    judged = [q for q, docs in qrels.items() if any(grade > 0 for grade in docs.values())]
    held = {query_id for query_id, _ in run}
    assert streamed.manifest["run"] == {
        "queries": len(held),
        "judged_queries": len(judged),
        "judged_queries_in_run": len(held.intersection(judged)),
        "missing_queries": "warn",
    }
    # The values, against pytrec_eval: a judged query missing from the run scores 0.
    oracle = pytrec_eval.RelevanceEvaluator(
        {q: {d: int(g) for d, g in docs.items()} for q, docs in qrels.items()},
        {"ndcg_cut_10", "recip_rank"},
    )
    expected = oracle.evaluate(dict(run))
    assert list(streamed.per_query) == judged
    for query_id, values in streamed.per_query.items():
        truth = expected.get(query_id, {"ndcg_cut_10": 0.0, "recip_rank": 0.0})
        assert values["ndcg@10"] == pytest.approx(truth["ndcg_cut_10"], abs=1e-12)
        assert values["recip_rank"] == pytest.approx(truth["recip_rank"], abs=1e-12)


def test_a_place_is_found_in_order_out_of_order_and_never_for_an_id_not_planned():
    class Id(str):
        __slots__ = ()

    planned = _Planned(["q3", "q1", 7, Id("q2"), "q10"])  # type: ignore[list-item]
    assert planned.rows == [None] * 5
    assert [planned.place(q) for q in ["q3", "q1", "q2", "q10"]] == [0, 1, 3, 4]  # in order
    assert planned.place("q3") == 0  # out of order: looked up
    assert planned.place("q1") == 1  # and the order is followed again from there
    for query_id in ["7", "q4", "", "q", "q100", "q0"]:
        assert planned.place(query_id) is None
    assert [planned.place(q) for q in ["q10", "q2", "q1", "q3"]] == [4, 3, 1, 0]
    assert _Planned([]).place("q1") is None
