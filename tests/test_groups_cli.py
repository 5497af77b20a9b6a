"""``--groups FILE`` on ``ef-eval run``, ``retrieval``, ``compare`` and ``rag``."""

from __future__ import annotations

import json
import os
import random
import warnings
from pathlib import Path
from typing import Any

import pytest

from ef.evaluation import (
    ComparisonReport,
    RetrievalEvalReport,
    compare,
    evaluate_rag,
    evaluate_retrieval,
    evaluate_run,
    read_dataset,
    read_query_groups,
    write_trec_qrels,
    write_trec_run,
)
from ef.evaluation._io.builtin_datasets import resolve_builtin
from ef.evaluation.cli import main
from ef.source_manager import ingest
from in_process_cli import ef_eval


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("groups_cli")
    rng = random.Random(4)
    docs = [f"d{i}" for i in range(30)]
    qrels = {f"q{i}": {d: rng.choice([1, 2]) for d in rng.sample(docs, 3)} for i in range(40)}
    runs = {
        name: {q: {d: float(30 - r) for r, d in enumerate(rng.sample(docs, 20))} for q in qrels}
        for name in ("bm25", "dense")
    }
    paths: dict[str, Any] = {"qrels": folder / "qrels.txt", "runs": {}}
    write_trec_qrels(paths["qrels"], qrels)
    for name, run in runs.items():
        paths["runs"][name] = folder / f"{name}.txt"
        write_trec_run(paths["runs"][name], run, tag=name)
    groups = folder / "groups.tsv"
    lines = [f"q{i}\t{'even' if i % 2 == 0 else 'odd'}\n" for i in range(36)]
    lines += ["q0\tfirst\n", "q1\tfirst\n"]
    groups.write_text("".join(lines))
    return {**paths, "groups": groups, "qrels_value": qrels, "runs_value": runs}


def _ef(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(arg) for arg in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_run_reports_each_group_as_the_library_does(files, capsys):
    code, out, _ = _ef(
        capsys, "run", files["qrels"], files["runs"]["bm25"], "--groups", files["groups"],
        "--format", "json",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    expected = evaluate_run(
        files["runs"]["bm25"], files["qrels"], groups=read_query_groups(files["groups"])
    )
    shown = RetrievalEvalReport.from_dict(data["bm25.txt"])
    assert shown.groups == expected.groups
    assert shown.query_groups == expected.query_groups
    code, out, _ = _ef(
        capsys, "run", files["qrels"], files["runs"]["bm25"], "--groups", files["groups"],
        "--format", "markdown",
    )  # fmt: skip
    rows = [line for line in out.splitlines() if line.startswith("| bm25.txt")]
    assert [row.split(" | ")[1:3] for row in rows] == [
        ["(all)", "40"], ["even", "18"], ["first", "2"], ["odd", "18"], ["(no group)", "4"]
    ]  # fmt: skip
    even = expected.groups["even"].metrics["ndcg@10"]
    assert f"| {even:.4f} |" in rows[1]
    code, out, _ = _ef(
        capsys, "run", files["qrels"], files["runs"]["bm25"], "--groups", files["groups"],
        "--format", "csv", "--per-query",
    )  # fmt: skip
    lines = out.splitlines()
    assert lines[0].startswith("run,query,groups,")
    assert lines[1].startswith('bm25.txt,q0,"even, first",')
    assert lines[-1].startswith("bm25.txt,q39,,")


def test_a_bad_groups_file_is_a_usage_error_naming_the_line(files, capsys, tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("q1\teven\nq2 odd\n")
    code, _, err = _ef(capsys, "run", files["qrels"], files["runs"]["bm25"], "--groups", bad)
    assert code == 2
    assert f"{bad}:2: 1 columns" in err


def test_a_groups_fifo_is_a_usage_error_naming_it_without_waiting(files, tmp_path):
    fifo = tmp_path / "groups.fifo"
    os.mkfifo(fifo)
    result = ef_eval("run", files["qrels"], files["runs"]["bm25"], "--groups", fifo)
    assert result.returncode == 2
    assert f"{fifo}: a FIFO, not a regular file; copy it to a file first" in result.stderr
    assert "Traceback" not in result.stderr


def test_compare_runs_its_tests_per_group(files, capsys):
    code, out, _ = _ef(
        capsys, "compare", files["qrels"], files["runs"]["bm25"], files["runs"]["dense"],
        "--baseline", "bm25.txt", "--groups", files["groups"], "--format", "json",
    )  # fmt: skip
    assert code == 0
    shown = ComparisonReport.from_json(out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = compare(
            {"bm25.txt": files["runs_value"]["bm25"], "dense.txt": files["runs_value"]["dense"]},
            files["qrels_value"],
            baseline="bm25.txt",
            groups=read_query_groups(files["groups"]),
        )
    assert shown.group_comparisons == expected.group_comparisons
    assert shown.group_counts == {"even": 18, "first": 2, "odd": 18}
    code, out, _ = _ef(
        capsys, "compare", files["qrels"], files["runs"]["bm25"], files["runs"]["dense"],
        "--baseline", "bm25.txt", "--groups", files["groups"],
    )  # fmt: skip
    assert code == 0
    assert "Holm over 1 system × 3 groups for each metric and test" in " ".join(out.split())


def test_rag_reports_each_group(capsys, tmp_path):
    samples = [
        {"user_input": "capital of France?", "response": "Paris", "reference": "Paris"},
        {"user_input": "largest planet?", "response": "Mars", "reference": "Jupiter"},
        {"user_input": "author of the Odyssey?", "response": "Homer", "reference": "Homer"},
    ]
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(sample) + "\n" for sample in samples))
    groups = tmp_path / "groups.jsonl"
    groups.write_text(
        '{"query_id": "capital of France?", "groups": ["geography", "easy"]}\n'
        '{"query_id": "largest planet?", "group": "science"}\n'
    )
    code, out, _ = _ef(capsys, "rag", path, "--groups", groups, "--metrics", "exact_match")
    assert code == 0
    expected = evaluate_rag(samples, metrics=["exact_match"], groups=read_query_groups(groups))
    code, out, _ = _ef(
        capsys, "rag", path, "--groups", groups, "--metrics", "exact_match", "--format", "json"
    )
    assert json.loads(out)["groups"] == expected.to_dict()["groups"]
    code, out, _ = _ef(
        capsys, "rag", path, "--groups", groups, "--metrics", "exact_match", "--format", "csv"
    )
    assert out.splitlines() == [
        "group,samples,exact_match",
        "(all),3,0.6667",
        "geography,1,1.0000",
        "easy,1,1.0000",
        "science,1,0.0000",
        "(no group),1,",
    ]


def test_retrieval_on_the_bundled_dataset_reports_each_group(capsys, tmp_path):
    _, queries, qrels = read_dataset(resolve_builtin("builtin:stdlib-docs"))
    groups = tmp_path / "groups.tsv"
    groups.write_text(
        "".join(
            f"{q}\t{'long' if len(text.split()) > 7 else 'short'}\n" for q, text in queries.items()
        )
    )
    code, out, _ = _ef(
        capsys, "retrieval", "builtin:stdlib-docs", "--retriever", "bm25", "--groups", groups,
        "--format", "json", "--no-progress",
    )  # fmt: skip
    assert code == 0
    shown = RetrievalEvalReport.from_json(out)
    corpus, _, _ = read_dataset(resolve_builtin("builtin:stdlib-docs"))
    expected = evaluate_retrieval(
        ingest(corpus), qrels, queries, groups=lambda t: "long" if len(t.split()) > 7 else "short"
    )
    assert shown.groups == expected.groups
    assert sum(result.n_queries for result in shown.groups.values()) == 40


def test_groups_file_path_of_a_run_is_given_to_the_page(files, capsys, tmp_path):
    page = tmp_path / "page.html"
    code, _, _ = _ef(
        capsys, "run", files["qrels"], files["runs"]["bm25"], "--groups", files["groups"],
        "--html", page,
    )  # fmt: skip
    assert code == 0
    assert 'id="groups"' in Path(page).read_text(encoding="utf-8")


@pytest.mark.parametrize("format_", ["csv", "tsv"])
def test_compare_writes_each_groups_comparisons_as_rows(files, capsys, format_):
    import csv
    import io

    arguments = [files["qrels"], files["runs"]["bm25"], files["runs"]["dense"]]
    arguments += ["--baseline", "bm25.txt", "--groups", files["groups"]]
    code, out, _ = _ef(capsys, "compare", *arguments, "--format", "json")
    assert code == 0
    report = ComparisonReport.from_json(out)
    code, out, _ = _ef(capsys, "compare", *arguments, "--format", format_)
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out), delimiter="," if format_ == "csv" else "\t"))
    expected = [*report.comparisons, *report.group_comparisons]
    assert len(rows) == len(expected) and len(report.group_comparisons) > 0
    for row, comparison in zip(rows, expected, strict=True):
        assert row["group"] == (comparison.group or "")
        assert (row["system"], row["metric"]) == (comparison.system, comparison.metric)
        assert float(row["mean"]) == comparison.mean
        assert float(row["baseline_mean"]) == comparison.baseline_mean
        p_value = comparison.adjusted_p_values["t-test"]
        assert float(row["p_t-test_adjusted"]) == pytest.approx(p_value, rel=1e-15)
        assert row["significant"] == ("yes" if p_value <= report.alpha else "no")
