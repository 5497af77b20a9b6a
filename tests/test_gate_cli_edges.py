"""``ef-eval check`` at its edges: options read from a TOML table, and the exit code when an
experiment tracker fails after a passing gate."""

from __future__ import annotations

from pathlib import Path

import pytest

from ef.evaluation import hookimpl, read_gate_config
from ef.evaluation.cli import main
from ef.evaluation.testing import registered_plugin

QRELS = "".join(f"q{i} 0 d{i} 1\n" for i in range(6))
RUN = "".join(f"q{i} Q0 d{i} 1 1.0 a\n" for i in range(6))


@pytest.fixture
def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``ef-eval check`` of a run against its own baseline, in ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    Path("qrels.txt").write_text(QRELS)
    Path("run.txt").write_text(RUN)
    argv = ["check", "run.txt", "--qrels", "qrels.txt", "--baseline", "base.json"]
    assert main([*argv, "--rule", "ndcg@10 >= 0", "--update-baseline"]) == 0
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
