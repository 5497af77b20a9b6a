"""Pooling and qrels statistics, against trectools on generated runs and qrels.

trectools reads runs and qrels from files, so each generated run is written as a TREC run file
(distinct scores per query: trectools breaks ties by doc id ascending, trec_eval descending)
and read back by both sides.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from trectools import TrecPoolMaker, TrecQrel, TrecRun

from ef.evaluation import (
    DatasetFormatError,
    JudgementPool,
    QrelsStatistics,
    pool_runs,
    qrels_statistics,
    read_trec_qrels,
    write_trec_qrels,
    write_trec_run,
)

# trectools, the oracle, sorts its frames in place, which pandas now warns about.
pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword:Warning")


def generated_runs(
    seed: int, n_runs: int = 3, n_queries: int = 12
) -> list[dict[str, dict[str, float]]]:
    """Runs over a shared pool of 60 documents, of different lengths, with distinct scores."""
    rng = random.Random(seed)
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in range(1, n_queries + 1):
            if rng.random() < 0.1:
                continue  # a query this run does not answer
            docs = rng.sample([f"d{i}" for i in range(60)], rng.randint(1, 30))
            scores = rng.sample(range(1, 10_000), len(docs))
            run[f"q{q}"] = {doc: score / 100 for doc, score in zip(docs, scores, strict=True)}
        runs.append(run)
    return runs


def generated_qrels(seed: int, n_queries: int = 12) -> dict[str, dict[str, float]]:
    rng = random.Random(seed)
    return {
        f"q{q}": {
            doc: float(rng.choice([0, 0, 1, 2]))
            for doc in rng.sample([f"d{i}" for i in range(60)], 25)
        }
        for q in range(1, n_queries + 1)
        if q != 5  # a query no one judged
    }


def run_files(tmp_path: Path, runs: list[dict[str, dict[str, float]]]) -> list[Path]:
    paths = []
    for index, run in enumerate(runs):
        path = tmp_path / f"run{index}.txt"
        write_trec_run(path, run, tag=f"run{index}")
        paths.append(path)
    return paths


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("depth", [1, 5, 10, 100])
def test_pool_equals_trectools_top_x(tmp_path, seed, depth):
    paths = run_files(tmp_path, generated_runs(seed))
    expected = TrecPoolMaker().make_pool([TrecRun(str(p)) for p in paths], "topX", topX=depth).pool
    pool = pool_runs(paths, depth=depth)
    assert {q: set(docs) for q, docs in pool.documents.items()} == expected
    assert pool.n_documents == sum(map(len, expected.values()))
    assert pool.runs == ("run0.txt", "run1.txt", "run2.txt")


def test_pool_of_mappings_equals_pool_of_their_files(tmp_path):
    runs = generated_runs(7)
    from_files = pool_runs(run_files(tmp_path, runs), depth=10)
    from_mappings = pool_runs({f"run{i}.txt": run for i, run in enumerate(runs)}, depth=10)
    assert from_mappings == from_files


def test_pool_breaks_score_ties_as_trec_eval_does():
    # Four documents tied at one score: trec_eval ranks them by doc id descending.
    run = {"q1": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0}}
    assert pool_runs({"tied": run}, depth=2).documents == {"q1": ("c", "d")}


def test_pool_of_ranked_lists_keeps_a_repeated_document_at_its_first_rank():
    assert pool_runs([{"q1": ["a", "a", "b", "c"]}], depth=2).documents == {"q1": ("a", "b")}


def test_pool_leaves_out_what_is_judged():
    runs = {"x": {"q1": ["d1", "d2", "d3"]}, "y": {"q1": ["d3", "d4"], "q2": ["d1"]}}
    pool = pool_runs(runs, depth=2, judged={"q1": {"d1": 0.0, "d3": 2.0}, "q2": {"d1": 1.0}})
    assert pool.documents == {"q1": ("d2", "d4")}
    assert pool.left_out == 3


def test_pool_file_reads_back_as_qrels_once_graded(tmp_path):
    pool = pool_runs(run_files(tmp_path, generated_runs(3)), depth=5)
    path = tmp_path / "pool.tsv"
    pool.write(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "query-id\tcorpus-id\tscore"
    assert all(line.endswith("\t") for line in lines[1:])
    with pytest.raises(DatasetFormatError, match=r"pool\.tsv:2: score '' is not a number"):
        read_trec_qrels(path)  # a row left blank is never read as a grade
    graded = "\n".join([lines[0], *(line + "1" for line in lines[1:])]) + "\n"
    path.write_text(graded, encoding="utf-8")
    qrels = read_trec_qrels(path)
    assert {q: set(docs) for q, docs in qrels.items()} == {
        q: set(docs) for q, docs in pool.documents.items()
    }


def test_pool_write_replaces_a_file_only_when_complete(tmp_path):
    path = tmp_path / "pool.tsv"
    path.write_text("old\n", encoding="utf-8")
    bad = JudgementPool({"q1": ("ok", "bad\tid")}, depth=1, runs=("x",))
    with pytest.raises(ValueError, match="tab or a line break"):
        bad.write(path)
    assert path.read_text(encoding="utf-8") == "old\n"


def test_pool_round_trips_through_json():
    pool = pool_runs({"x": {"q1": ["d2", "d1"]}}, depth=5)
    assert JudgementPool.from_json(pool.to_json()) == pool
    assert json.loads(pool.to_json())["documents"] == {"q1": ["d1", "d2"]}


@pytest.mark.parametrize(
    ("runs", "depth", "error", "match"),
    [
        ({"q1": ["d1"]}, 10, TypeError, "that is one run"),
        ({}, 10, ValueError, "no runs"),
        ([{"q1": ["d1"]}], 0, ValueError, "depth must be an integer >= 1"),
        ([{"q1": {"d1": float("nan")}}], 10, ValueError, "query 'q1'"),
        ([{"q1": "d1"}], 10, TypeError, "query 'q1'"),
    ],
)
def test_pool_refuses_bad_input(runs, depth, error, match):
    with pytest.raises(error, match=match):
        pool_runs(runs, depth=depth)


# --- statistics ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_statistics_equal_trectools_counts(tmp_path, seed):
    qrels = generated_qrels(seed)
    qrels_path = tmp_path / "qrels.txt"
    write_trec_qrels(qrels_path, qrels)
    trec_qrels = TrecQrel(str(qrels_path))
    stats = qrels_statistics(qrels_path)
    for query_id, judgements in qrels.items():
        assert stats.judged[query_id] == len(judgements)
        for grade in (0, 1, 2):
            expected = int(trec_qrels.get_number_of(grade, topics=[query_id]))
            assert stats.grades[query_id].get(str(grade), 0) == expected
        assert stats.relevant[query_id] == sum(
            int(trec_qrels.get_number_of(g, topics=[query_id])) for g in (1, 2)
        )
    totals = stats.grade_totals()
    assert {g: totals.get(str(g), 0) for g in (0, 1, 2)} == {
        g: int(trec_qrels.get_number_of(g)) for g in (0, 1, 2)
    }


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("depth", [1, 10, 20])
def test_unjudged_in_each_runs_top_equals_trectools_coverage(tmp_path, seed, depth):
    runs = generated_runs(seed)
    paths = run_files(tmp_path, runs)
    qrels_path = tmp_path / "qrels.txt"
    write_trec_qrels(qrels_path, generated_qrels(seed + 100))
    stats = qrels_statistics(qrels_path, paths, depth=depth)
    trec_qrels = TrecQrel(str(qrels_path))
    for path in paths:
        trec_run = TrecRun(str(path))
        topics = sorted(trec_run.topics())
        covered = trec_run.check_qrel_coverage(trec_qrels, topX=depth)
        ranked = [len(trec_run.get_top_documents(t, n=depth)) for t in topics]
        expected = {t: n - c for t, n, c in zip(topics, ranked, covered, strict=True)}
        assert dict(stats.unjudged[path.name]) == expected
        assert dict(stats.retrieved[path.name]) == dict(zip(topics, ranked, strict=True))


def test_statistics_count_negative_grades_as_judged():
    stats = qrels_statistics({"q1": {"d1": -1, "d2": 0.5, "d3": 2}})
    assert stats.judged["q1"] == 3 and stats.relevant["q1"] == 2
    assert stats.grades["q1"] == {"-1": 1, "0.5": 1, "2": 1}


def test_unjudged_share_over_every_query():
    stats = qrels_statistics({"q1": {"d1": 1}}, {"r": {"q1": ["d1", "d2"], "q9": ["d3"]}}, depth=5)
    assert stats.unjudged["r"] == {"q1": 1, "q9": 1}
    assert stats.unjudged_share("r") == 2 / 3


def test_statistics_round_trip_through_json():
    stats = qrels_statistics({"q1": {"d1": 1, "d2": 0}}, {"r": {"q1": ["d1", "d3"]}}, depth=2)
    assert QrelsStatistics.from_json(stats.to_json()) == stats


@pytest.mark.parametrize(
    ("qrels", "error", "match"),
    [
        ({"q1": {"d1": float("inf")}}, ValueError, "query 'q1': doc 'd1' has grade inf"),
        ({"q1": {"d1": "1"}}, TypeError, "query 'q1': doc 'd1' has grade '1'"),
        ({"q1": {"d1"}}, TypeError, "judgements of query 'q1' are a set"),
    ],
)
def test_statistics_refuse_bad_grades(qrels, error, match):
    with pytest.raises(error, match=match):
        qrels_statistics(qrels)
