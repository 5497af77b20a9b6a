"""An empty qrels file is an error naming the file, in every command that reads one."""

from __future__ import annotations

from pathlib import Path

import pytest

from ef.evaluation.cli import main


@pytest.mark.parametrize("command", ["run", "compare"])
def test_an_empty_qrels_file_is_named(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = tmp_path / "empty.qrels"
    qrels.write_text("\n", encoding="utf-8")
    run = tmp_path / "a.run"
    run.write_text("q1 Q0 d1 1 1.0 x\n", encoding="utf-8")
    extra = ["--baseline", "a.run"] if command == "compare" else []
    assert main([command, str(qrels), str(run), *extra]) == 1
    err = capsys.readouterr().err
    assert f"{qrels}: no judgements in it, so no query can be scored" in err
