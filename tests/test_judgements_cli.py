"""``ef-eval pool``, ``ef-eval qrels-stats`` and ``--interval``, run as the installed script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from trectools import TrecPoolMaker, TrecRun

import in_process_cli
from ef.evaluation import (
    evaluate_run,
    pool_runs,
    qrels_statistics,
    read_trec_qrels,
    write_trec_qrels,
    write_trec_run,
)
from test_judgements import generated_qrels, generated_runs

# trectools, the oracle, sorts its frames in place, which pandas now warns about.
pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword:Warning")

EF_EVAL = shutil.which("ef-eval", path=str(Path(sys.executable).parent))
QUIET_ENV = {**os.environ, "EF_EVALUATION_PLUGINS": ""}


def ef_eval(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return in_process_cli.ef_eval(*args, env=QUIET_ENV, cwd=cwd)


def files(tmp_path: Path, seed: int = 1) -> tuple[Path, list[Path]]:
    qrels = tmp_path / "qrels.txt"
    write_trec_qrels(qrels, generated_qrels(seed))
    runs = []
    for index, run in enumerate(generated_runs(seed)):
        path = tmp_path / f"run{index}.txt"
        write_trec_run(path, run, tag=f"run{index}")
        runs.append(path)
    return qrels, runs


def test_pool_command_writes_the_trectools_pool(tmp_path):
    _, runs = files(tmp_path)
    out = tmp_path / "pool.tsv"
    done = ef_eval("pool", *runs, "--depth", 7, "--output", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    expected = TrecPoolMaker().make_pool([TrecRun(str(p)) for p in runs], "topX", topX=7).pool
    n_documents = sum(map(len, expected.values()))
    assert done.stderr == (
        f"pool of 3 runs at depth 7: {n_documents:,} documents to judge over "
        f"{len(expected)} queries\n"
    )
    graded = out.read_text(encoding="utf-8").replace("\t\n", "\t1\n")
    (tmp_path / "graded.tsv").write_text(graded, encoding="utf-8")
    qrels = read_trec_qrels(tmp_path / "graded.tsv")
    assert {q: set(docs) for q, docs in qrels.items()} == expected


def test_pool_command_to_standard_output_leaves_out_judged_documents(tmp_path):
    qrels, runs = files(tmp_path)
    done = ef_eval("pool", *runs, "--judged", qrels)
    assert done.returncode == 0, done.stderr
    pool = pool_runs(runs, judged=qrels)
    assert done.stdout == pool.to_tsv()
    assert f"{pool.left_out:,} already judged, left out" in done.stderr


def test_pool_command_refuses_to_overwrite_a_run(tmp_path):
    _, runs = files(tmp_path)
    done = ef_eval("pool", *runs, "--output", runs[0])
    assert done.returncode == 2
    assert "would replace the input" in done.stderr
    assert runs[0].read_text(encoding="utf-8").startswith("q")


def test_qrels_stats_command_json_is_the_library_statistics(tmp_path):
    qrels, runs = files(tmp_path)
    done = ef_eval("qrels-stats", qrels, *runs, "--depth", 5, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == qrels_statistics(qrels, runs, depth=5).to_dict()


def test_qrels_stats_command_table_sums_every_column(tmp_path):
    qrels, runs = files(tmp_path)
    done = ef_eval("qrels-stats", qrels, runs[0], "--format", "tsv")
    assert done.returncode == 0, done.stderr
    header, *rows = [line.split("\t") for line in done.stdout.splitlines()]
    assert header[:3] == ["query", "judged", "relevant"]
    assert header[-1] == "unjudged@10 run0.txt"
    totals = rows[-1]
    assert totals[0] == "all"
    for column in range(1, len(header)):
        assert int(totals[column]) == sum(int(row[column] or 0) for row in rows[:-1])
    stats = qrels_statistics(qrels, runs[:1])
    assert int(totals[-1]) == sum(stats.unjudged["run0.txt"].values())


def test_run_command_shows_intervals_only_when_asked(tmp_path):
    qrels, runs = files(tmp_path)
    plain = ef_eval("run", qrels, runs[0], "--k", 5, "--metrics", "ndcg", "--format", "csv")
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.splitlines()[0] == "run,ndcg@5"
    done = ef_eval(
        "run", qrels, runs[0], "--k", 5, "--metrics", "ndcg", "--format", "csv",
        "--interval", "t", "--interval-confidence", "0.9",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    header, row = [line.split(",") for line in done.stdout.splitlines()]
    assert header == ["run", "ndcg@5", "ndcg@5 low", "ndcg@5 high"]
    report = evaluate_run(
        runs[0], qrels, k_values=(5,), metrics=("ndcg",), interval="t", confidence_level=0.9,
        missing_queries="zero",
    )  # fmt: skip
    assert report.intervals is not None
    low, high = report.intervals.bounds["ndcg@5"]
    assert row == ["run0.txt", f"{report.metrics['ndcg@5']:.4f}", f"{low:.4f}", f"{high:.4f}"]


def test_run_command_refuses_a_bad_confidence_level(tmp_path):
    qrels, runs = files(tmp_path)
    done = ef_eval("run", qrels, runs[0], "--interval", "t", "--interval-confidence", "95")
    assert done.returncode == 2
    assert "expected a number between 0 and 1, got '95'" in done.stderr


def test_rag_command_shows_intervals_over_the_samples_a_metric_applied_to(tmp_path):
    samples = [
        {"user_input": f"q{i}", "response": "paris" if i % 3 else "london", "reference": "paris"}
        for i in range(12)
    ]
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    done = ef_eval("rag", path, "--metrics", "exact_match", "--interval", "t", "--format", "csv")
    assert done.returncode == 0, done.stderr
    header, row = [line.split(",") for line in done.stdout.splitlines()]
    assert header == ["metric", "mean", "samples", "low", "high"]
    values = [0.0 if i % 3 == 0 else 1.0 for i in range(12)]
    low, high = stats.t.interval(0.95, 11, loc=np.mean(values), scale=stats.sem(values))
    assert row == ["exact_match", f"{np.mean(values):.4f}", "12", f"{low:.4f}", f"{high:.4f}"]
