"""The first-hour walk-through (docs/first-hour.md) shows what the commands print now: its
steps are run on the bundled dataset and each "now" output of the guide is found, line by line
and in order, in what they printed."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import in_process_cli
from test_cli_tables import ENV

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "first-hour.md"
COMPARE = ["builtin:stdlib-docs", "bm25.run", "short.run", "long.run", "fused.run"]
COMPARE += ["--reader", "beir", "--baseline", "bm25.run", "--tests", "t-test"]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = in_process_cli.ef_eval(*args, env=ENV, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done


def text_blocks() -> list[str]:
    text = GUIDE.read_text(encoding="utf-8")
    return re.findall(r"^```text\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def shown_in(block: str, output: str) -> None:
    """Every line of ``block`` but its ``...`` elisions is a line of ``output``, in order."""
    lines = output.splitlines()
    position = 0
    for line in block.splitlines():
        if line.strip() == "...":
            continue
        assert line in lines[position:], f"{line!r} is not printed"
        position = lines.index(line, position) + 1


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("walkthrough")
    found = {"demo": run("demo", cwd=folder).stdout}
    retrieval = ["retrieval", "builtin:stdlib-docs", "--retriever", "bm25", "--no-progress"]
    run(*retrieval, "--save-run", "bm25.run", "-o", "bm25.txt", cwd=folder)
    run(*retrieval, "--segment-size", "40", "--save-run", "short.run", "-o", "s.txt", cwd=folder)
    run(*retrieval, "--segment-size", "400", "--save-run", "long.run", "-o", "l.txt", cwd=folder)
    found["fuse"] = run("fuse", "short.run", "long.run", "-o", "fused.run", cwd=folder).stderr
    metrics = ["--metrics", "ndcg@10,map@100,recall@100,P@10,mrr@10"]
    found["compare"] = run("compare", *COMPARE, *metrics, cwd=folder).stdout
    tsv = ["--metrics", "ndcg@10,mrr@10", "--format", "tsv"]
    found["tsv"] = run("compare", *COMPARE[:2], COMPARE[4], *COMPARE[5:], *tsv, cwd=folder).stdout
    return found


def test_the_guides_demo_output_is_what_the_demo_prints(outputs: dict[str, str]) -> None:
    (now,) = [block for block in text_blocks() if "\n                   bm25\n" in block]
    shown_in(now, outputs["demo"])


def test_the_guides_comparison_is_what_compare_prints(outputs: dict[str, str]) -> None:
    (now,) = [block for block in text_blocks() if block.startswith("Means\n")]
    shown_in(now, outputs["compare"])
    assert "wrote fused.run: 40 queries, rrf of 2 runs" in outputs["fuse"]
    (tsv,) = [block for block in text_blocks() if block.startswith("system\tmetric")]
    header, first = tsv.splitlines()
    assert outputs["tsv"].splitlines()[:2] == [header, first]
