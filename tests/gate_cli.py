"""The small gate the ``ef-eval check`` tests lay out: six queries, a run that finds each one's
document first, and the command line that checks the run against ``base.json``."""

from __future__ import annotations

from pathlib import Path

import pytest

QRELS = "".join(f"q{i} 0 d{i} 1\n" for i in range(6))
RUN = "".join(f"q{i} Q0 d{i} 1 1.0 a\n" for i in range(6))
RULE = ["--rule", "ndcg@10 >= 0"]


def lay_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Write ``qrels.txt`` and ``run.txt`` in ``tmp_path``, work there with no step summary set,
    and give ``ef-eval check``'s arguments (no rule, no baseline written yet)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    Path("qrels.txt").write_text(QRELS)
    Path("run.txt").write_text(RUN)
    return ["check", "run.txt", "--qrels", "qrels.txt", "--baseline", "base.json"]
