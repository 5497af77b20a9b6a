"""Query groups: the group input, and per-group means equal to the group evaluated alone."""

from __future__ import annotations

import gzip
import json
import os
import random
import warnings
from pathlib import Path

import anyio
import pytest
import pytrec_eval

from ef.evaluation import (
    DatasetFormatError,
    GroupResult,
    QueryGroups,
    QueryGroupsWarning,
    RetrievalEvalReport,
    evaluate_retrieval,
    evaluate_retrieval_async,
    evaluate_run,
    read_query_groups,
)

# --- the input ----------------------------------------------------------------------------


def test_a_tsv_file_names_a_query_on_a_line_per_group(tmp_path):
    path = tmp_path / "groups.tsv"
    path.write_text("query_id\tgroup\nq1\tshort\n\nq2\tlong\nq2\tquestion\nq3\tshort\n")
    groups = read_query_groups(path)
    assert groups.memberships == {"q1": ("short",), "q2": ("long", "question"), "q3": ("short",)}
    assert groups.names == ("short", "long", "question")
    assert groups.members("short") == ("q1", "q3")


def test_a_jsonl_file_takes_group_or_groups(tmp_path):
    path = tmp_path / "groups.jsonl.gz"
    lines = [
        {"query_id": "q1", "group": "navigational"},
        {"query_id": "q2", "groups": ["long", "typo"]},
        {"query_id": "q1", "group": "short"},
    ]
    path.write_bytes(gzip.compress("".join(json.dumps(x) + "\n" for x in lines).encode()))
    groups = read_query_groups(path)
    assert groups.memberships == {"q1": ("navigational", "short"), "q2": ("long", "typo")}


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("q1\tshort\nq2\n", 2, "1 columns"),
        ("q1\tshort\nq2\ta\tb\n", 2, "3 columns"),
        ("q1\t \n", 1, "empty group"),
        ("\tshort\n", 1, "query id is empty"),
        ("q1\tshort\nq2\tlong\nq1\tshort\n", 3, "already (line 1)"),
        ('{"query_id": "q1", "group": "a"}\n[1]\n', 2, "no JSON object"),
        ('{"query_id": 1, "group": "a"}\n', 1, "'query_id' is not a string"),
        ('{"group": "a"}\n', 1, "no 'query_id'"),
        ('{"query_id": "q1", "group": "a", "groups": ["b"]}\n', 1, "one of 'group' and 'groups'"),
        ('{"query_id": "q1"}\n', 1, "one of 'group' and 'groups'"),
        ('{"query_id": "q1", "groups": []}\n', 1, "not a non-empty list"),
        ('{"query_id": "q1", "groups": ["a", 2]}\n', 1, "group 2 is not a string"),
        ('{"query_id": "q1", "grup": "a"}\n', 1, "unknown key 'grup'"),
        ('{"query_id": "q1", "group": "a"}\n{"query_id": \n', 2, "JSON"),
        ("\n\n", 1, "names no query"),
        ("query_id\tgroup\n", 1, "names no query"),
    ],
)
def test_a_bad_line_is_named_by_file_and_line(tmp_path, text, line, problem):
    path = tmp_path / "groups.txt"
    path.write_text(text)
    with pytest.raises(DatasetFormatError) as caught:
        read_query_groups(path)
    assert caught.value.path == str(path)
    assert caught.value.line == line
    assert problem in caught.value.problem


def test_a_groups_fifo_is_refused_by_name_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "groups.fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=f"^{fifo}: a FIFO, not a regular file; copy it"):
        read_query_groups(fifo)


@pytest.mark.parametrize("given", [{"q00": None}, {"q1": [], "q2": None}, {}])
def test_groups_that_put_no_query_in_a_group_are_refused_as_such_a_file_is(given):
    with pytest.raises(ValueError, match="name no query in any group") as caught:
        QueryGroups(given)
    assert f"({len(given)} query id" in str(caught.value)
    with pytest.raises(ValueError, match="name no query in any group"):
        QueryGroups.from_texts({"q1": "a text"}, lambda text: None)
    with pytest.raises(ValueError, match="name no query in any group"):
        evaluate_run({"q1": ["d1"]}, QRELS, groups=given)


def test_groups_from_a_mapping_or_a_function_of_the_text():
    groups = QueryGroups({"q1": "a", "q2": ["b", "a", "b"], "q3": []})
    assert groups.memberships == {"q1": ("a",), "q2": ("b", "a")}
    assert len(groups) == 2 and groups.of("q3") == ()
    by_text = QueryGroups.from_texts(
        {"q1": "one two", "q2": "one two three four five six"},
        lambda text: "long" if len(text.split()) > 5 else "short",
    )
    assert by_text.memberships == {"q1": ("short",), "q2": ("long",)}
    with pytest.raises(TypeError, match="query 'q1'"):
        QueryGroups.from_texts({"q1": "x"}, lambda text: 3)  # type: ignore[arg-type, return-value]
    with pytest.raises(ValueError, match="empty group name"):
        QueryGroups({"q1": ""})
    with pytest.raises(TypeError, match="query id 1"):
        QueryGroups({1: "a"})  # type: ignore[dict-item]


# --- per-group means ------------------------------------------------------------------------


def _collection(seed: int, n_queries: int = 60, n_docs: int = 40):
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(n_docs)]
    qrels = {}
    run = {}
    for i in range(n_queries):
        q = f"q{i}"
        judged = rng.sample(docs, rng.randint(1, 12))
        qrels[q] = {d: rng.choice([0, 1, 1, 2, 3]) for d in judged}
        if i % 13 == 5:
            qrels[q] = {d: 0 for d in judged}  # no positive judgement: skipped
        if i % 11 != 3:  # a few judged queries missing from the run: they score 0
            ranked = rng.sample(docs, rng.randint(1, 30))
            run[q] = {d: float(len(ranked) - r) + rng.random() for r, d in enumerate(ranked)}
    return qrels, run


def _random_groups(qrels, seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    names = ["navigational", "informational", "long", "typo"]
    groups: dict[str, list[str]] = {}
    for q in qrels:
        chosen = [n for n in names if rng.random() < 0.35]
        if chosen:
            groups[q] = chosen
    return groups


METRICS = ("ndcg", "map", "recall", "P", "mrr", "gm_map", "num_rel", "num_rel_ret", "bpref")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_group_equals_its_queries_evaluated_alone_bit_for_bit(seed):
    qrels, run = _collection(seed)
    groups = _random_groups(qrels, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = evaluate_run(run, qrels, k_values=(1, 5, 10), metrics=METRICS, groups=groups)
    assert set(report.groups) == {n for names in groups.values() for n in names}
    for name, result in report.groups.items():
        members = [q for q in qrels if name in groups.get(q, ())]
        alone_qrels = {q: qrels[q] for q in members}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            alone = evaluate_run(run, alone_qrels, k_values=(1, 5, 10), metrics=METRICS)
        assert result.n_queries == alone.n_queries
        assert result.metrics == alone.metrics  # bit for bit: floats compared with ==
        assert set(result.metrics) == set(report.metrics)
        assert result.unscored == tuple(q for q in members if q in alone.skipped)
    scored_in_groups = {q for q in report.per_query if q in groups}
    assert set(report.query_groups) == scored_in_groups
    assert set(report.ungrouped) == set(report.per_query) - scored_in_groups


def test_each_group_mean_is_pytrec_evals_mean_over_its_queries():
    qrels, run = _collection(7)
    groups = _random_groups(qrels, 7)
    measures = {"ndcg_cut.10", "trec_map", "recip_rank", "P.5", "bpref"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = evaluate_run(run, qrels, metrics=sorted(measures), groups=groups)
    measures = {"ndcg_cut.10", "map", "recip_rank", "P.5", "bpref"}
    judged = {q: r for q, r in qrels.items() if any(g > 0 for g in r.values())}
    oracle = pytrec_eval.RelevanceEvaluator(judged, measures).evaluate(
        {q: run.get(q, {}) for q in judged if run.get(q)}
    )
    keys = {"ndcg_cut.10": "ndcg_cut_10", "trec_map": "map", "recip_rank": "recip_rank"}
    keys |= {"P.5": "P_5", "bpref": "bpref"}
    for name, result in report.groups.items():
        members = [q for q in judged if name in groups.get(q, ())]
        assert result.n_queries == len(members)
        for ours, theirs in keys.items():
            expected = sum(oracle.get(q, {}).get(theirs, 0.0) for q in members) / len(members)
            assert result.metrics[ours] == pytest.approx(expected, abs=1e-12)


def _retriever(query: str, *, limit: int = 10) -> list[str]:
    return {"alpha beta": ["d1", "d2"], "gamma": ["d3"], "one two three four five six": ["d9"]}[
        query
    ][:limit]


QRELS = {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}, "q3": {"d3": 1.0}}
QUERIES = {"q1": "alpha beta", "q2": "one two three four five six", "q3": "gamma"}


def _by_length(text: str) -> str:
    return "long" if len(text.split()) > 5 else "short"


def test_a_function_of_the_query_text_groups_a_retrieval(anyio_backend):
    report = evaluate_retrieval(_retriever, QRELS, QUERIES, k_values=(1,), groups=_by_length)

    async def evaluate() -> RetrievalEvalReport:
        return await evaluate_retrieval_async(
            _retriever, QRELS, QUERIES, k_values=(1,), groups=_by_length
        )

    parity = anyio.run(evaluate, backend=anyio_backend)
    assert report.groups == parity.groups
    assert report.query_groups == {"q1": ("short",), "q2": ("long",), "q3": ("short",)}
    assert report.groups["short"].metrics["ndcg@1"] == 1.0
    assert report.groups["long"].metrics["ndcg@1"] == 0.0
    assert report.groups["short"].n_queries == 2


def test_a_function_needs_query_texts():
    with pytest.raises(TypeError, match=r"QueryGroups\.from_texts"):
        evaluate_run({"q1": ["d1"]}, QRELS, groups=_by_length)


def test_a_group_member_not_scored_is_listed_and_warned_about():
    qrels = {**QRELS, "q4": {"d4": 0.0}}  # q4 has no positive judgement: skipped
    groups = {"q1": "a", "q4": "a", "q9": ["a", "b"], "q2": "b"}
    with pytest.warns(QueryGroupsWarning, match=r"group 'a': 2 \('q4', 'q9'\)"):
        report = evaluate_run(
            {"q1": ["d1"], "q2": ["x"]},
            qrels,
            k_values=(1,),
            groups=groups,
            missing_queries="zero",
        )
    assert report.groups["a"].n_queries == 1
    assert report.groups["a"].unscored == ("q4", "q9")
    assert report.groups["a"].metrics["ndcg@1"] == 1.0
    assert report.groups["b"].unscored == ("q9",)
    assert report.ungrouped == ("q3",)


def test_groups_that_name_no_scored_query_are_refused():
    with pytest.raises(ValueError, match="likely cause"):
        evaluate_run(
            {"1": ["d1"], "2": []}, {"1": {"d1": 1.0}, "2": {"d2": 1.0}}, groups={"q1": "a"}
        )


def test_a_grouped_report_round_trips_and_an_old_one_still_loads():
    report = evaluate_run(
        {"q1": ["d1"], "q2": ["d2"], "q3": []}, QRELS, k_values=(1,), groups={"q1": "a"}
    )
    assert RetrievalEvalReport.from_json(report.to_json()) == report
    data = report.to_dict()
    for key in ("groups", "query_groups"):
        del data[key]
    old = RetrievalEvalReport.from_dict(data)
    assert old.groups == {} and old.ungrouped == ()
    data = report.to_dict()
    data["groups"]["a"]["n_queries"] = -1
    with pytest.raises(ValueError, match=r"groups\['a'\]\.n_queries"):
        RetrievalEvalReport.from_dict(data)
    assert isinstance(report.groups["a"], GroupResult)


def test_a_groups_file_path_is_taken_as_it_is(tmp_path: Path):
    path = tmp_path / "groups.tsv"
    path.write_text("q1\tx\nq3\tx\n")
    report = evaluate_run({"q1": ["d1"], "q2": ["d2"], "q3": []}, QRELS, groups=path)
    assert report.groups["x"].n_queries == 2
    assert report.groups["x"].metrics["ndcg@10"] == 0.5


def test_a_report_whose_every_query_failed_keeps_its_empty_groups():
    def failing(query: str) -> list[str]:
        raise OSError("down")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = evaluate_retrieval(
            failing, QRELS, QUERIES, on_error="record", groups={"q1": "a", "q2": "a"}
        )
    assert report.n_queries == 0
    assert report.groups["a"] == GroupResult({}, 0, unscored=("q1", "q2"))
    assert any(issubclass(w.category, QueryGroupsWarning) for w in caught)
