"""``ef-eval run``, ``compare`` and ``fuse`` check a run's query ids, through real processes.

A run sharing no query id with the qrels (``q1`` against ``1``) exits 1 with one error line
naming both sides and the likely cause; a partial run prints one warning line and exits 0;
``--missing-queries error|zero`` chooses another rule.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import in_process_cli

EF_EVAL = shutil.which("ef-eval", path=str(Path(sys.executable).parent))
QUIET_ENV = {**os.environ, "EF_EVALUATION_PLUGINS": ""}


def ef_eval(*args: object) -> subprocess.CompletedProcess[str]:
    return in_process_cli.ef_eval(*args, env=QUIET_ENV)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "qrels": "1 0 d1 1\n2 0 d2 1\n3 0 d3 1\n",
        "prefixed": "q1 Q0 d1 1 1.0 x\nq2 Q0 d2 1 1.0 x\nq3 Q0 d3 1 1.0 x\n",
        "partial": "1 Q0 d1 1 1.0 x\n2 Q0 d9 1 1.0 x\n",
        "full": "1 Q0 d1 1 1.0 x\n2 Q0 d2 1 1.0 x\n3 Q0 d3 1 1.0 x\n",
    }
    for name, text in paths.items():
        (tmp_path / f"{name}.txt").write_text(text)
    return {name: tmp_path / f"{name}.txt" for name in paths}


def _one_line(result: subprocess.CompletedProcess[str], kind: str) -> str:
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ef-eval: {kind}: "), result.stderr
    return lines[0].removeprefix(f"ef-eval: {kind}: ")


def test_run_refuses_a_run_sharing_no_query_id_naming_both_sides_and_the_cause(files):
    result = ef_eval("run", files["qrels"], files["prefixed"])
    assert result.returncode == 1 and result.stdout == ""
    run = files["prefixed"]
    assert _one_line(result, "error") == (
        f"none of the judged queries (3) is in {run}, which has 3 queries (the qrels: '1', "
        f"'2', '3'; {run}: 'q1', 'q2', 'q3'); likely cause: a prefix ('q1' in {run} is '1' in "
        "the qrels)"
    )


def test_run_warns_of_a_partial_run_on_stderr_and_exits_0(files):
    result = ef_eval("run", files["qrels"], files["partial"], "--k", "1", "--format", "json")
    assert result.returncode == 0
    assert _one_line(result, "warning") == (
        f"1 of 3 judged queries are not in {files['partial']}; they score 0: '3'"
    )
    report = json.loads(result.stdout)["partial.txt"]
    assert report["metrics"]["ndcg@1"] == pytest.approx(1 / 3)
    assert report["manifest"]["run"] == {
        "queries": 2,
        "judged_queries": 3,
        "judged_queries_in_run": 2,
        "missing_queries": "warn",
    }


def test_run_with_missing_queries_error_refuses_a_partial_run(files):
    result = ef_eval("run", files["qrels"], files["partial"], "--missing-queries", "error")
    assert result.returncode == 1 and result.stdout == ""
    assert _one_line(result, "error") == (
        f"1 of 3 judged queries are not in {files['partial']}: '3' "
        "(refused under missing_queries='error')"
    )
    full = ef_eval("run", files["qrels"], files["full"], "--missing-queries", "error")
    assert (full.returncode, full.stderr) == (0, "")


def test_run_with_missing_queries_zero_scores_them_0_without_a_word(files):
    for run in ("partial", "prefixed"):
        result = ef_eval(
            "run", files["qrels"], files[run], "--k", "1", "--missing-queries", "zero",
            "--format", "json",
        )  # fmt: skip
        assert (result.returncode, result.stderr) == (0, ""), result.stderr
        report = json.loads(result.stdout)[f"{run}.txt"]
        assert report["manifest"]["run"]["missing_queries"] == "zero"
    assert report["metrics"]["ndcg@1"] == 0.0  # the prefixed run: every judged query scores 0


def test_an_unknown_rule_is_a_usage_error(files):
    result = ef_eval("run", files["qrels"], files["full"], "--missing-queries", "skip")
    assert result.returncode == 2
    assert "--missing-queries" in result.stderr and "invalid choice: 'skip'" in result.stderr


def test_run_with_a_page_names_the_file_it_read(files, tmp_path):
    page = tmp_path / "page.html"
    result = ef_eval("run", files["qrels"], files["partial"], "--html", page)
    assert result.returncode == 0 and page.exists()
    assert _one_line(result, "warning") == (
        f"{files['partial']}: 1 of 3 judged queries are not in the run; they score 0: '3'"
    )


def test_compare_names_the_system_and_takes_the_rule(files):
    args = ["compare", files["qrels"], files["full"], files["prefixed"], "--baseline", "full.txt"]
    result = ef_eval(*args)
    assert result.returncode == 1 and result.stdout == ""
    assert "none of the judged queries (3) is in system 'prefixed.txt'" in _one_line(
        result, "error"
    )
    args[3] = files["partial"]
    warned = ef_eval(*args, "--tests", "t-test")
    assert warned.returncode == 0, warned.stderr
    assert _one_line(warned, "warning") == (
        "1 of 3 judged queries are not in system 'partial.txt'; they score 0: '3'"
    )
    refused = ef_eval(*args, "--missing-queries", "error")
    assert refused.returncode == 1
    assert "not in system 'partial.txt': '3'" in _one_line(refused, "error")
    silent = ef_eval(*args, "--tests", "t-test", "--missing-queries", "zero")
    assert (silent.returncode, silent.stderr) == (0, "")


def test_fuse_refuses_runs_sharing_no_query_and_warns_of_a_partial_one(files, tmp_path):
    fused = tmp_path / "fused.txt"
    result = ef_eval("fuse", files["full"], files["prefixed"], "-o", fused)
    assert result.returncode == 1 and not fused.exists()
    assert _one_line(result, "error").endswith(
        "likely cause: a prefix ('1' in run 1 is 'q1' in run 2)"
    )
    warned = ef_eval("fuse", files["full"], files["partial"], "-o", fused)
    assert warned.returncode == 0 and fused.exists()
    wrote = f"wrote {fused}: 3 queries, rrf of 2 runs\n"  # what fuse says once it is written
    assert warned.stderr.endswith(wrote)
    warned.stderr = warned.stderr.removesuffix(wrote)
    assert _one_line(warned, "warning") == (
        "1 of 3 queries of run 1 are not in run 2; they are fused from run 1 alone: '3'"
    )
    fused.unlink()
    refused = ef_eval(
        "fuse", files["full"], files["partial"], "-o", fused, "--missing-queries", "error"
    )
    assert refused.returncode == 1 and not fused.exists()
    silent = ef_eval(
        "fuse", files["full"], files["prefixed"], "-o", fused, "--missing-queries", "zero"
    )
    assert silent.returncode == 0 and fused.exists()
    written = {line.split()[0] for line in fused.read_text().splitlines()}  # '1'…'3', 'q1'…'q3'
    assert silent.stderr == f"wrote {fused}: {len(written)} queries, rrf of 2 runs\n"
