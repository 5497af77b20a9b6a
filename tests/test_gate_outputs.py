"""What ``ef-eval check`` writes: never onto one of its inputs (the run, the qrels, the
baseline it reads, the config), the step summary included; and an output that cannot be written
is exit code 2, an input error, never 1, the code of a regression."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from ef.evaluation.cli import main
from gate_cli import RULE, lay_out


@pytest.fixture
def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``ef-eval check`` of a run against its own baseline (a passing gate), in ``tmp_path``."""
    argv = [*lay_out(tmp_path, monkeypatch), *RULE]
    assert main([*argv, "--update-baseline"]) == 0
    return argv


def _inputs() -> dict[str, bytes]:
    return {name: Path(name).read_bytes() for name in ("run.txt", "qrels.txt", "base.json")}


def _output(argv: list[str], option: str, path: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``argv`` writing ``path`` through ``option``: a flag, or ``$GITHUB_STEP_SUMMARY``."""
    if option.startswith("$"):
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", path)
        return argv
    return [*argv, option, path]


@pytest.mark.parametrize("baseline", ["run.txt", "qrels.txt", "./run.txt"])
def test_update_baseline_never_replaces_the_run_or_the_qrels(gate, capsys, baseline):
    before = _inputs()
    capsys.readouterr()
    argv = ["check", "run.txt", "--qrels", "qrels.txt", "--baseline", baseline, *RULE]
    assert main([*argv, "--update-baseline"]) == 2
    assert "would replace the input" in capsys.readouterr().err
    assert _inputs() == before


def test_update_baseline_through_a_link_to_the_run_is_refused(gate, capsys):
    os.symlink("run.txt", "link.json")
    before = _inputs()
    argv = ["check", "run.txt", "--qrels", "qrels.txt", "--baseline", "link.json", *RULE]
    assert main([*argv, "--update-baseline"]) == 2
    assert _inputs() == before


@pytest.mark.parametrize("target", ["base.json", "run.txt", "qrels.txt", "gate.toml"])
def test_the_step_summary_never_appends_to_an_input(gate, capsys, monkeypatch, target):
    Path("gate.toml").write_text('[tool.ef-evaluation.check."ndcg@10"]\nmin = 0\n')
    before = {**_inputs(), "gate.toml": Path("gate.toml").read_bytes()}
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", target)
    capsys.readouterr()
    assert main([*gate, "--config", "gate.toml"]) == 2
    err = capsys.readouterr().err
    assert "$GITHUB_STEP_SUMMARY" in err and "would replace the input" in err
    assert {**_inputs(), "gate.toml": Path("gate.toml").read_bytes()} == before


@pytest.mark.parametrize("option", ["--junit", "$GITHUB_STEP_SUMMARY"])
@pytest.mark.parametrize("read", ["pyproject.toml", "gate.toml"])
def test_no_output_replaces_the_rules_file_read(gate, capsys, monkeypatch, option, read):
    # Both hold rules: gate.toml is read when --config names it, else pyproject.toml.
    tables = ("pyproject.toml", "gate.toml")
    for name in tables:
        Path(name).write_text('[tool.ef-evaluation.check."ndcg@10"]\nmin = 0\n')
    before = {**_inputs(), **{name: Path(name).read_bytes() for name in tables}}
    argv = gate[:-2]  # no --rule: the rules are the file's
    if read == "gate.toml":
        argv += ["--config", "gate.toml"]
    argv = _output(argv, option, read, monkeypatch)
    capsys.readouterr()
    assert main(argv) == 2
    assert f"{option} {read} would replace the input" in capsys.readouterr().err
    assert {**_inputs(), **{name: Path(name).read_bytes() for name in tables}} == before


def test_a_step_summary_fifo_nobody_reads_fails_at_once(gate, capsys, monkeypatch):
    os.mkfifo("summary")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", "summary")
    capsys.readouterr()
    assert main(gate) == 2
    assert "summary" in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--junit", "--markdown", "$GITHUB_STEP_SUMMARY"])
@pytest.mark.parametrize("where", ["a folder", "a missing folder"])
def test_an_output_in_no_folder_is_exit_2_before_scoring(gate, capsys, monkeypatch, option, where):
    Path("out").mkdir()
    path = "out" if where == "a folder" else "missing/gate.out"
    argv = _output(list(gate), option, path, monkeypatch)
    capsys.readouterr()
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert path in captured.err
    assert "quality gate" not in captured.out  # refused before anything was scored


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("option", ["--junit", "--markdown", "$GITHUB_STEP_SUMMARY"])
def test_a_write_that_fails_on_a_passing_gate_is_exit_2(gate, capsys, monkeypatch, option):
    argv = _output(list(gate), option, "/dev/full", monkeypatch)
    capsys.readouterr()
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "quality gate passed" in captured.out
    assert captured.err == f"ef-eval: error: cannot write /dev/full: {os.strerror(errno.ENOSPC)}\n"


def test_the_baseline_and_the_json_outputs_are_laid_out_one_value_a_line(gate, capsys):
    # The baseline is committed: one space a level keeps it short, and a changed value one line.
    text = Path("base.json").read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), indent=1) + "\n"
    capsys.readouterr()
    assert main([*gate, "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert out == json.dumps(json.loads(out), indent=2) + "\n"  # as every command's JSON


def test_update_baseline_into_a_missing_folder_is_exit_2_before_scoring(gate, capsys):
    argv = ["check", "run.txt", "--qrels", "qrels.txt", "--baseline", "no/base.json", *RULE]
    assert main([*argv, "--update-baseline"]) == 2
    assert "no/base.json" in capsys.readouterr().err


def test_update_baseline_leaves_the_step_summary_alone(gate, capsys, monkeypatch):
    Path("summary").mkdir()
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", "summary")  # not written: no check ran
    assert main([*gate, "--update-baseline"]) == 0
    assert list(Path("summary").iterdir()) == []
