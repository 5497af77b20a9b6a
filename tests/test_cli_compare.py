"""ef-eval compare: runs or saved reports in, the library's comparison out, in every format."""

from __future__ import annotations

import csv
import io
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ef.evaluation import evaluate_run, read_trec_run, write_trec_qrels, write_trec_run
from ef.evaluation._compare.compare import compare
from ef.evaluation._compare.report import ComparisonReport
from ef.evaluation.cli import main

FAST = ("--permutations", "500", "--resamples", "500")


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A qrels file and three run files of unequal quality, with their in-memory forms."""
    folder = tmp_path_factory.mktemp("compare")
    rng = random.Random(5)
    qrels = {
        f"q{i}": {f"d{j}": float(rng.randint(1, 2)) for j in rng.sample(range(20), 3)}
        for i in range(25)
    }
    write_trec_qrels(folder / "qrels.txt", qrels)
    paths = {}
    for name, skill in (("bm25", 0.0), ("dense", 0.5), ("hybrid", 0.1)):
        run = {
            q: {f"d{j}": rng.random() + skill * judged.get(f"d{j}", 0.0) for j in range(20)}
            for q, judged in qrels.items()
        }
        paths[name] = folder / f"{name}.txt"
        write_trec_run(paths[name], run, tag=name)
    runs = {f"{name}.txt": read_trec_run(path) for name, path in paths.items()}
    return {"folder": folder, "qrels": qrels, "qrels_path": folder / "qrels.txt", "paths": paths,
            "runs": runs}  # fmt: skip


def ef_compare(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main(["compare", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_args(data: dict[str, Any]) -> list[object]:
    return [data["qrels_path"], *data["paths"].values()]


def test_runs_json_is_the_library_comparison(data, capsys):
    code, out, err = ef_compare(
        capsys, *run_args(data), "--baseline", "bm25.txt", "--metrics", "ndcg@10,map@100",
        "--tests", "t-test,randomization,wilcoxon,bootstrap", "--correction", "bh",
        "--seed", "3", *FAST, "--format", "json",
    )  # fmt: skip
    assert (code, err) == (0, "")
    expected = compare(
        data["runs"],
        data["qrels"],
        baseline="bm25.txt",
        metrics=("ndcg@10", "map@100"),
        tests=("t-test", "randomization", "wilcoxon", "bootstrap"),
        correction="bh",
        seed=3,
        n_permutations=500,
        n_resamples=500,
    )
    assert ComparisonReport.from_json(out) == expected


def test_saved_reports_compare_like_the_runs_they_came_from(data, capsys, tmp_path):
    saved = tmp_path / "reports.json"
    code = main(
        [
            "run",
            *map(str, run_args(data)),
            "--k",
            "10",
            "--metrics",
            "ndcg",
            "--format",
            "json",
            "-o",
            str(saved),
        ]
    )
    assert code == 0
    capsys.readouterr()
    code, out, err = ef_compare(capsys, saved, "--baseline", "bm25.txt", *FAST, "--format", "json")
    assert (code, err) == (0, "")
    from_runs = compare(
        data["runs"], data["qrels"], baseline="bm25.txt", n_permutations=500, n_resamples=500
    )
    assert ComparisonReport.from_json(out) == from_runs


def test_single_report_files_are_named_after_the_file_and_the_baseline_may_be_a_path(
    data, capsys, tmp_path
):
    paths = []
    for name in ("bm25", "dense"):
        report = evaluate_run(data["runs"][f"{name}.txt"], data["qrels"], k_values=(10,))
        path = tmp_path / f"{name}.json"
        path.write_text(report.to_json(), encoding="utf-8")
        paths.append(path)
    code, out, _ = ef_compare(capsys, *paths, "--baseline", paths[0], *FAST, "--format", "json")
    assert code == 0
    result = ComparisonReport.from_json(out)
    assert (result.baseline, result.systems) == ("bm25", ("bm25", "dense"))


@pytest.mark.parametrize("output_format", ["markdown", "latex"])
def test_markdown_and_latex_are_the_reports_renderings(data, capsys, output_format):
    code, out, _ = ef_compare(
        capsys, *run_args(data), "--baseline", "hybrid.txt", "--format", output_format, *FAST
    )
    assert code == 0
    report = compare(
        data["runs"], data["qrels"], baseline="hybrid.txt", n_permutations=500, n_resamples=500
    )
    assert out == (report.to_markdown() if output_format == "markdown" else report.to_latex())


def test_csv_has_a_full_precision_row_per_comparison(data, capsys):
    code, out, _ = ef_compare(
        capsys, *run_args(data), "--baseline", "bm25.txt", "--tests", "t-test,bootstrap",
        "--metrics", "ndcg@10,recall@5", "--correction", "none", *FAST, "--format", "csv",
    )  # fmt: skip
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    report = compare(
        data["runs"], data["qrels"], baseline="bm25.txt", metrics=("ndcg@10", "recall@5"),
        tests=("t-test", "bootstrap"), correction=None, n_permutations=500, n_resamples=500,
    )  # fmt: skip
    assert len(rows) == len(report.comparisons) == 4
    for row, expected in zip(rows, report.comparisons, strict=True):
        assert (row["system"], row["metric"]) == (expected.system, expected.metric)
        assert float(row["p_t-test"]) == expected.p_values["t-test"]
        assert float(row["p_t-test_adjusted"]) == expected.p_values["t-test"]
        assert [float(row["ci_low"]), float(row["ci_high"])] == list(expected.confidence_interval)
        assert row["significant"] == (
            "yes" if report.significant(row["system"], row["metric"]) else "no"
        )
        assert int(row["wins"]) + int(row["ties"]) + int(row["losses"]) == 25


def test_table_to_a_pipe_is_plain_text_with_the_best_marked(data, capsys):
    code, out, _ = ef_compare(capsys, *run_args(data), "--baseline", "bm25.txt", *FAST)
    assert code == 0
    assert "\x1b[" not in out and "**" not in out
    assert "bm25.txt (baseline)" in out
    lines = [line for line in out.splitlines() if line.startswith("  dense.txt ")]
    assert "★" in lines[0] and "†" in lines[0]
    assert "Holm correction over 2 comparisons per metric" in " ".join(out.split())
    assert "W/T/L" in out and all(line == line.rstrip() for line in out.splitlines())


def test_output_file_gets_the_result_and_stdout_nothing(data, capsys, tmp_path):
    target = tmp_path / "table.md"
    code, out, _ = ef_compare(
        capsys, *run_args(data), "--baseline", "bm25.txt", *FAST, "--format", "markdown",
        "-o", target,
    )  # fmt: skip
    assert (code, out) == (0, "")
    assert target.read_text(encoding="utf-8").startswith("| System | ndcg@10 |")


def test_the_same_seed_gives_the_same_output(data, capsys):
    args = [
        *run_args(data),
        "--baseline",
        "bm25.txt",
        "--tests",
        "randomization",
        "--format",
        "json",
    ]
    first = ef_compare(capsys, *args, "--permutations", "300")[1]
    assert ef_compare(capsys, *args, "--permutations", "300")[1] == first


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--baseline", "nope"], "unknown baseline 'nope'; the systems are: bm25.txt, dense.txt"),
        (["--baseline", "bm25.txt", "--tests", "z-test"], "unknown test 'z-test'"),
        (["--baseline", "bm25.txt", "--metrics", "ndgc@10"], "unknown metric 'ndgc@10'"),
        (["--baseline", "bm25.txt", "--alpha", "2"], "expected a number in (0, 1)"),
        (["--baseline", "bm25.txt", "--permutations", "0"], "expected an integer >= 1"),
    ],
)
def test_bad_command_lines_exit_2_with_one_line(data, capsys, args, message):
    paths = [data["qrels_path"], data["paths"]["bm25"], data["paths"]["dense"]]
    code, out, err = ef_compare(capsys, *paths, *args)
    assert (code, out) == (2, "")
    assert message in err and err.count("\n") == 1


def test_mixing_reports_and_run_files_is_refused(data, capsys, tmp_path):
    report = tmp_path / "r.json"
    run = {"q1": {"d1": 1.0}}
    report.write_text(evaluate_run(run, {"q1": {"d1": 1}}).to_json(), encoding="utf-8")
    code, _, err = ef_compare(capsys, data["qrels_path"], report, "--baseline", "r")
    assert code == 2 and "r.json is a report" in err and "not both" in err
    code, _, err = ef_compare(capsys, report, data["paths"]["bm25"], "--baseline", "r")
    assert code == 2 and "not both" in err


def test_reports_missing_queries_are_an_error_naming_them(data, capsys, tmp_path):
    full = evaluate_run(data["runs"]["bm25.txt"], data["qrels"], k_values=(10,))
    partial = dict(full.per_query)
    del partial["q3"], partial["q7"]
    (tmp_path / "full.json").write_text(full.to_json(), encoding="utf-8")
    cut = full.to_dict() | {"per_query": partial}
    (tmp_path / "cut.json").write_text(json.dumps(cut), encoding="utf-8")
    code, _, err = ef_compare(
        capsys, tmp_path / "full.json", tmp_path / "cut.json", "--baseline", "full"
    )
    assert code == 1
    assert "system 'cut' lacks 2 queries: 'q3', 'q7'" in err


def test_a_file_that_is_not_a_report_is_named_with_its_line(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "a": 1,\n  oops\n}', encoding="utf-8")
    code, _, err = ef_compare(capsys, bad, bad, "--baseline", "bad")
    assert code == 1 and f"{bad}:3: not JSON" in err
    other = tmp_path / "list.json"
    other.write_text("[1, 2]", encoding="utf-8")
    code, _, err = ef_compare(capsys, other, "--baseline", "list")
    assert code == 1 and "expected a report" in err


def test_the_installed_script_runs_compare(data):
    script = shutil.which("ef-eval", path=str(Path(sys.executable).parent))
    assert script is not None, "the ef-eval script is not installed: pip install -e ."
    result = subprocess.run(
        [script, "compare", *map(str, run_args(data)), "--baseline", "bm25.txt", *FAST,
         "--format", "markdown"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "EF_EVALUATION_PLUGINS": ""},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("| System | ndcg@10 |\n")
