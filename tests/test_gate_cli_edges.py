"""``ef-eval check`` at its edges: options read from a TOML table, the exit code when an
experiment tracker fails after a passing gate, and each usage error (exit code 2) saying what
was wrong: no rule, no judgements, no baseline given, an output that cannot be written, a
baseline of another kind, a baseline to be written to a plugin's location, an extra that is not
installed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ef.evaluation import hookimpl, read_gate_config
from ef.evaluation.cli import main
from ef.evaluation.testing import registered_plugin
from gate_cli import RULE, RUN, lay_out


@pytest.fixture
def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``ef-eval check`` of a run against its own baseline, in ``tmp_path``."""
    argv = lay_out(tmp_path, monkeypatch)
    assert main([*argv, *RULE, "--update-baseline"]) == 0
    return argv


def test_correction_none_in_a_toml_table_means_no_correction(gate, capsys):
    Path("gate.toml").write_text(
        '[tool.ef-evaluation.check]\ncorrection = "none"\n\n'
        '[tool.ef-evaluation.check."ndcg@10"]\nfail_if = "significantly_worse"\n'
    )
    config = read_gate_config("gate.toml")
    assert config.correction is None and config.has_correction
    assert config.check_options() == {"correction": None}
    capsys.readouterr()
    assert main([*gate, "--config", "gate.toml"]) == 0
    assert "t-test (no correction, alpha 0.05)" in capsys.readouterr().out


class _BrokenTracker:
    @hookimpl
    def ef_evaluation_register_command_extensions(self, register):  # type: ignore[no-untyped-def]
        def finished(command, reports, args, **details):  # type: ignore[no-untyped-def]
            raise ConnectionError("the tracker is gone")

        register("broken", lambda parser, command: None, finished)


def test_a_tracker_failure_after_a_passing_gate_exits_2_not_1(gate, capsys):
    capsys.readouterr()
    with registered_plugin(_BrokenTracker(), name="broken-tracker"):
        code = main([*gate, "--rule", "ndcg@10 >= 0"])
    captured = capsys.readouterr()
    assert code == 2
    assert "quality gate passed" in captured.out  # the outputs came first
    assert "the tracker is gone" in captured.err


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str], message: str) -> None:
    capsys.readouterr()
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_no_rule_is_a_usage_error_naming_the_table_that_has_none(gate, capsys):
    _fails(gate, capsys, "no rule: give --rule or a [tool.ef-evaluation.check] table")
    Path("pyproject.toml").write_text('[tool.ef-evaluation.check]\ncorrection = "none"\n')
    _fails(gate, capsys, "no rule: the [tool.ef-evaluation.check] table of pyproject.toml has none")


def test_a_pyproject_without_the_table_is_passed_over_and_a_wrong_table_refused(gate, capsys):
    Path("pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert main([*gate, "--rule", "ndcg@10 >= 0"]) == 0
    Path("pyproject.toml").write_text('[tool.ef-evaluation.check]\nalpha = "x"\n')
    _fails([*gate, "--rule", "ndcg@10 >= 0"], capsys, "pyproject.toml: alpha: expected a number")


def test_a_run_file_needs_judgements(gate, capsys):
    argv = ["check", "run.txt", "--baseline", "base.json", "--rule", "ndcg@10 >= 0"]
    _fails(argv, capsys, "no judgements: give --qrels or --dataset")


def test_a_run_file_named_like_a_retriever_is_a_run_file(gate, capsys):
    Path("bm25").write_text(RUN)
    argv = ["check", "bm25", *gate[2:], "--rule", "ndcg@10 >= 0"]
    assert main(argv) == 0


@pytest.mark.parametrize(
    ("option", "path", "problem"),
    [
        ("--html", "page.html", "--html page.html: cannot be written: a folder is in the way"),
        (
            "--markdown",
            "gone/gate.md",
            "--markdown gone/gate.md: cannot be written: no such folder gone\n",
        ),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_scoring(
    gate, capsys, option, path, problem
):
    Path("page.html").mkdir()
    _fails([*gate, "--rule", "ndcg@10 >= 0", option, path], capsys, problem)


def test_the_baseline_is_a_required_option(gate, capsys):
    argv = ["check", "run.txt", "--qrels", "qrels.txt", "--rule", "ndcg@10 >= 0"]
    _fails(argv, capsys, "the following arguments are required: --baseline")


def test_a_retriever_without_its_extra_is_a_usage_error_naming_the_extra(gate, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "bm25s", None)  # as if the bm25 extra were not installed
    argv = ["check", "bm25", "--dataset", "builtin:stdlib-docs", "--baseline", "base.json"]
    extra = "RUN bm25: BM25 indexing needs the 'bm25s' package: pip install 'ef-evaluation[bm25]'"
    _fails([*argv, "--rule", "ndcg@10 >= 0"], capsys, f"ef-eval: error: {extra}\n")


def test_html_without_its_extra_is_a_usage_error_naming_the_extra(gate, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "jinja2", None)  # as if the html extra were not installed
    argv = [*gate, "--rule", "ndcg@10 >= 0", "--html", "gate.html"]
    extra = "--html: an HTML report needs jinja2: pip install 'ef-evaluation[html]'"
    _fails(argv, capsys, f"ef-eval: error: {extra}\n")
    assert not Path("gate.html").exists()


def test_a_baseline_of_another_kind_is_refused(gate, capsys):
    Path("rag.json").write_text('{"metrics": {}, "coverage": {}, "n_samples": 0}')
    argv = [*gate[:-1], "rag.json", "--rule", "ndcg@10 >= 0"]
    _fails(argv, capsys, "rag.json: a RagEvalReport, not a retrieval report")


class _Store:
    @hookimpl
    def ef_evaluation_register_report_locations(self, register):  # type: ignore[no-untyped-def]
        register("memory", lambda name: b"{}", description="reports in memory")


def test_update_baseline_writes_a_file_never_a_plugins_location(gate, capsys):
    argv = [*gate[:-1], "memory:base", "--rule", "ndcg@10 >= 0", "--update-baseline"]
    with registered_plugin(_Store(), name="memory-store"):
        _fails(
            argv, capsys, "--update-baseline writes a file, and memory:base is a report location"
        )


@pytest.mark.parametrize(
    ("correction", "shown"), [("bonferroni", "(bonferroni, alpha"), ("none", "(no correction,")]
)
def test_the_correction_option_is_the_one_used(gate, capsys, correction, shown):
    capsys.readouterr()
    rule = ["--rule", 'ndcg@10: fail_if = "significantly_worse"']
    assert main([*gate, *rule, "--correction", correction]) == 0
    assert shown in capsys.readouterr().out
