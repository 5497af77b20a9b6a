"""What the gate says: library errors in the library's words (no command-line flag), the
command's advice in its own; rules read from a file name the file; every output names the run
it judged; no empty cell in the JUnit XML."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from xml.etree import ElementTree

import pytest

from ef.evaluation import (
    FailIfSignificantlyWorse,
    Floor,
    GateRule,
    MaxDrop,
    check,
    evaluate_run,
    parse_rule,
    read_gate_config,
)
from ef.evaluation.cli import main
from gate_cli import QRELS, RULE, lay_out


@pytest.fixture
def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    return [*lay_out(tmp_path, monkeypatch), *RULE]


def test_a_missing_baseline_says_how_to_write_it(gate, capsys):
    assert main(gate) == 2
    assert "base.json: no baseline: write it with --update-baseline" in capsys.readouterr().err


def test_library_errors_name_no_flag_and_the_command_adds_its_own(gate, capsys):
    qrels = {f"q{i}": {f"d{i}": 1} for i in range(6)}
    run = {q: {d: 1.0 for d in docs} for q, docs in qrels.items()}
    baseline = evaluate_run(run, qrels, metrics=["ndcg@10"])
    current = evaluate_run(run, {**qrels, "q0": {"d0": 2}}, metrics=["ndcg@10"])
    with pytest.raises(ValueError) as caught:
        check(current, baseline, [parse_rule("ndcg@10 >= 0")])
    assert "--" not in str(caught.value)
    assert "allow_changed_qrels" in str(caught.value)
    assert main([*gate, "--update-baseline"]) == 0
    Path("qrels.txt").write_text(QRELS.replace("q0 0 d0 1", "q0 0 d0 2"))
    capsys.readouterr()
    assert main(gate) == 2
    err = capsys.readouterr().err
    assert "--update-baseline" in err and "--allow-changed-qrels" in err
    assert "allow_changed_qrels" not in err


def test_rules_that_are_not_rules_are_a_type_error():
    report = evaluate_run({"q1": {"d1": 1.0}}, {"q1": {"d1": 1}}, metrics=["ndcg@10"])
    with pytest.raises(TypeError, match=r"rules\[0\]: expected a GateRule .* got a dict"):
        check(report, report, [{"metric": "ndcg@10", "kind": "min", "threshold": 0.5}])


@pytest.mark.parametrize(
    ("table", "words"),
    [
        ('"ndcg@10"]\nmax_drop = -0.01\n', r'gate\.toml: "?ndcg@10"?\.max_drop: .*0 or more'),
        ('"ndcg@10"]\n', r"gate\.toml: ndcg@10: no rule \(expected min, max_drop or fail_if\)"),
        ('"ndcg@10"]\ngroup = "nav"\n', r"gate\.toml: ndcg@10: no rule"),
    ],
    ids=["negative drop", "empty sub-table", "a group alone"],
)
def test_a_bad_table_of_rules_names_the_file(tmp_path, table, words):
    path = tmp_path / "gate.toml"
    path.write_text("[tool.ef-evaluation.check." + table)
    with pytest.raises(ValueError, match=words):
        read_gate_config(path)


def test_a_table_without_rules_is_not_called_missing(gate, capsys):
    Path("pyproject.toml").write_text("[tool.ef-evaluation.check]\nalpha = 0.01\n")
    assert main(gate[:-2]) == 2
    err = capsys.readouterr().err
    assert "pyproject.toml" in err and "no rule" in err
    assert "give --rule or a [tool.ef-evaluation.check] table" not in err


def test_the_outputs_name_the_run_and_the_baseline_and_junit_has_no_empty_cell(
    gate, capsys, monkeypatch
):
    assert main([*gate, "--update-baseline"]) == 0
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", "summary.md")
    argv = [*gate, "--rule", "ndcg@10: max_drop = 0.01", "--markdown", "gate.md"]
    capsys.readouterr()
    assert main([*argv, "--junit", "gate.xml", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["judged"] == "run.txt against base.json"
    for name in ("gate.md", "summary.md"):
        heading = Path(name).read_text().splitlines()[0]
        assert heading == "### ✅ Retrieval quality gate passed: run.txt against base.json"
    for case in ElementTree.parse("gate.xml").getroot().iter("testcase"):
        text = case.findtext("system-out")
        assert "p=" not in text and "interval=," not in text and not text.endswith("=")


def test_a_file_name_that_is_not_utf8_is_named_with_its_byte_escaped(gate, capsys, monkeypatch):
    # A name another system wrote: Python keeps its byte 0xff as a character no UTF-8 file holds.
    argv = [*gate[:4], "--baseline", os.fsdecode(b"base\xffv1.json"), *RULE]
    capsys.readouterr()
    assert main([*argv, "--update-baseline"]) == 0
    assert capsys.readouterr().out == "baseline written to base\\xffv1.json (6 queries)\n"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", "summary.md")
    assert main([*argv, "--markdown", "gate.md", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["judged"] == "run.txt against base\\xffv1.json"
    for name in ("gate.md", "summary.md"):
        heading = Path(name).read_text(encoding="utf-8").splitlines()[0]
        assert heading == "### ✅ Retrieval quality gate passed: run.txt against base\\xffv1.json"


BASE = r"^GateRule is the base of the gate's rules, not a rule: build a Floor, a MaxDrop or a "


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: GateRule("ndcg@10"), TypeError, BASE + "FailIfSignificantlyWorse"),
        (lambda: GateRule("ndcg@10", "min", 0.5), TypeError, BASE + "FailIfSignificantlyWorse"),
        (
            lambda: Floor("ndcg@10", None),
            ValueError,
            r"^rule 'min' on 'ndcg@10': threshold None: expected a finite number$",
        ),
        (
            lambda: MaxDrop("ndcg@10", math.inf),
            ValueError,
            r"^rule 'max_drop' on 'ndcg@10': threshold inf: expected a finite number$",
        ),
        (lambda: Floor("ndcg@10", True), ValueError, r"threshold True: expected a finite number"),
        (
            lambda: MaxDrop("ndcg@10", -0.01),
            ValueError,
            r"^max_drop of 'ndcg@10' must be 0 or more$",
        ),
        (lambda: FailIfSignificantlyWorse("ndcg@10", 0.5), TypeError, r"positional argument"),
        (lambda: Floor(10, 0.5), TypeError, r"'metric' must be <class 'str'>"),
        (lambda: Floor("ndcg@10", 0.5, group=3), TypeError, r"'group' must be <class 'str'>"),
    ],
)
def test_a_rule_built_in_code_is_checked_as_strictly_as_one_parsed(build, error, message):
    with pytest.raises(error, match=message):
        build()


def test_a_group_the_report_lacks_is_said_in_the_librarys_words_and_the_commands(gate, capsys):
    qrels = {f"q{i}": {f"d{i}": 1} for i in range(6)}
    run = {q: {d: 1.0 for d in docs} for q, docs in qrels.items()}
    report = evaluate_run(run, qrels, metrics=["ndcg@10"])
    with pytest.raises(ValueError) as caught:
        check(report, report, [Floor("ndcg@10", 0.5, group="typo")])
    assert str(caught.value) == (
        "a rule gates query group 'typo', which the report lacks (none: evaluate it with groups=)"
    )
    assert main([*gate, "--update-baseline"]) == 0
    capsys.readouterr()
    assert main([*gate, "--rule", "group typo: ndcg@10 >= 0"]) == 2
    err = capsys.readouterr().err
    assert "which the report lacks (none: score the run with --groups FILE)" in err
    assert "groups=" not in err
