"""``ef-eval check --html PATH``: the comparison page against the baseline, in headless Chromium.

A run that loses the relevant document on a fifth of the queries is checked against its
baseline: the page shows one difference bar per query, the means (pytrec_eval's) with the
significance mark, and opens offline with a clean console (``test_html_browser``'s browser).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import pytrec_eval
from selenium.webdriver.common.by import By

from browser import chromium
from ef.evaluation import write_trec_qrels, write_trec_run
from ef.evaluation.cli import main
from test_html_browser import marks, open_page

__all__ = ["chromium"]  # the shared Chromium (tests/browser.py)

N_QUERIES = 60
QRELS = {f"q{i}": {f"rel{i}": 1} for i in range(N_QUERIES)}


def ranked(*, lose: float, seed: int) -> dict[str, dict[str, float]]:
    rng = random.Random(seed)
    lost = set(rng.sample(sorted(QRELS), round(lose * N_QUERIES)))
    run = {}
    for i, query in enumerate(QRELS):
        docs = [f"other{i}_{j}" for j in range(9)]
        if query not in lost:
            docs.insert(i % 4, f"rel{i}")
        run[query] = {doc: float(100 - rank) for rank, doc in enumerate(docs)}
    return run


def ndcg10(run: dict[str, dict[str, float]]) -> float:
    values = pytrec_eval.RelevanceEvaluator(QRELS, {"ndcg_cut.10"}).evaluate(run)
    return sum(v["ndcg_cut_10"] for v in values.values()) / N_QUERIES


@pytest.fixture
def checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    write_trec_qrels(tmp_path / "qrels.txt", QRELS)
    write_trec_run(tmp_path / "base.txt", ranked(lose=0.0, seed=0))
    write_trec_run(tmp_path / "worse.txt", ranked(lose=0.2, seed=1))
    gate = ["--qrels", "qrels.txt", "--baseline", "baseline.json"]
    gate += ["--rule", 'ndcg@10: fail_if = "significantly_worse"']
    assert main(["check", "base.txt", *gate, "--update-baseline"]) == 0
    return ["check", "worse.txt", *gate]


def test_the_page_compares_the_run_with_its_baseline(chromium, checked, tmp_path, capsys):
    assert main([*checked, "--html", "gate.html"]) == 1
    assert "quality gate FAILED" in capsys.readouterr().out
    # Written at once: the page alone beside the inputs, no temporary file left.
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "base.txt",
        "baseline.json",
        "gate.html",
        "qrels.txt",
        "worse.txt",
    ]
    open_page(chromium, tmp_path / "gate.html")
    assert marks(chromium, "difference:current", "rect") == N_QUERIES
    current = chromium.find_element(By.CSS_SELECTOR, '#means tr[data-system="current"]')
    base = chromium.find_element(By.CSS_SELECTOR, '#means tr[data-system="baseline"]')
    assert f"{ndcg10(ranked(lose=0.2, seed=1)):.4f}" in current.text
    assert f"{ndcg10(ranked(lose=0.0, seed=0)):.4f}" in base.text
    assert current.find_elements(By.CSS_SELECTOR, "sup.mark")  # significantly worse
    assert "worse.txt against baseline.json" in chromium.title


def test_no_page_when_writing_the_baseline(checked, capsys):
    update = [*checked, "--update-baseline", "--html", "gate.html"]
    assert main(update) == 2
    assert "--update-baseline has no page" in capsys.readouterr().err
    assert not Path("gate.html").exists()
