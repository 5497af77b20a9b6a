"""Every command that reads run files reads every run format: compare, fuse, report, run --html."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ef.evaluation import read_run, read_trec_run, write_run
from ef.evaluation.cli import main

RUN_A = {"q1": {"d1": 0.5, "d2": 0.9}, "q2": {"d3": 0.7, "d4": 0.2}}
RUN_B = {"q1": {"d1": 0.9, "d2": 0.5}, "q2": {"d3": 0.7, "d4": 0.2}}


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d3 1\n")
    write_run(tmp_path / "a.jsonl", RUN_A)
    write_run(tmp_path / "b.json", RUN_B)
    write_run(tmp_path / "b.data", RUN_B, format="json")
    return tmp_path


def test_compare_reads_json_and_jsonl_runs(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = [files / "qrels.txt", files / "a.jsonl", files / "b.json"]
    options = ["--metrics", "mrr@10", "--format", "json", "--baseline", "a.jsonl"]
    assert main(["compare", *map(str, args), *options]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["means"] == {"a.jsonl": {"mrr@10": 0.75}, "b.json": {"mrr@10": 1.0}}


def test_fuse_reads_runs_by_name_or_by_run_format(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = files / "fused.txt"
    inputs = [str(files / "a.jsonl"), str(files / "b.data")]
    assert main(["fuse", *inputs, "--run-format", "json", "-o", str(out)]) == 1
    assert (
        "a.jsonl:2: invalid JSON (Extra data)" in capsys.readouterr().err
    )  # JSON Lines are no JSON
    assert not out.exists()
    write_run(files / "a.data", RUN_A, format="json")
    assert (
        main(["fuse", str(files / "a.data"), *inputs[1:], "--run-format", "json", "-o", str(out)])
        == 0
    )
    by_name = files / "by-name.txt"
    assert main(["fuse", str(files / "a.jsonl"), str(files / "b.json"), "-o", str(by_name)]) == 0
    # --run-format names the fused run's format too: out is JSON, by-name.txt TREC
    assert read_run(out, format="json") == read_trec_run(by_name)
    assert set(read_trec_run(by_name)) == {"q1", "q2"}


def test_run_with_a_page_reads_a_jsonl_run_once(files: Path) -> None:
    page = files / "page.html"
    args = ["run", str(files / "qrels.txt"), str(files / "a.jsonl"), "--html", str(page)]
    assert main(args) == 0
    assert "d3" in page.read_text(encoding="utf-8")
