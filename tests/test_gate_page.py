"""``ef-eval check --html PATH``: the gate's page, in headless Chromium.

A run that loses the relevant document on a fifth of the queries is checked against its
baseline: the page leads with the verdict and the rules' table (the means pytrec_eval computes),
visible at 1280×800 without scrolling, lists the losing queries first with their text, draws one
difference bar per query, and opens offline with a clean console (``test_html_browser``'s
browser).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval
from selenium.webdriver.common.by import By

from browser import chromium
from ef.evaluation import (
    evaluate_run,
    read_trec_qrels,
    write_beir,
    write_trec_qrels,
    write_trec_run,
)
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
    verdict = chromium.find_element(By.ID, "verdict")
    assert verdict.text.startswith("FAILED worse.txt against baseline.json: 1 of 1 rules fail")
    cells = [td.text for td in chromium.find_elements(By.CSS_SELECTOR, "#rules tbody tr.fail td")]
    assert cells[0] == 'ndcg@10: fail_if = "significantly_worse"'
    assert cells[1] == f"{ndcg10(ranked(lose=0.2, seed=1)):.4f}"
    assert cells[2] == f"{ndcg10(ranked(lose=0.0, seed=0)):.4f}"
    assert cells[-1] == "FAIL"
    assert "worse.txt against baseline.json" in chromium.title
    assert "systems" not in chromium.find_element(By.CLASS_NAME, "subtitle").text


def viewport(driver: Any, width: int, height: int) -> None:
    """Size the window so that the page's viewport is ``width`` × ``height`` (the window's
    frame takes its own pixels)."""
    driver.set_window_size(width, height)
    inner = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    driver.set_window_size(2 * width - inner[0], 2 * height - inner[1])
    assert driver.execute_script("return [window.innerWidth, window.innerHeight]") == [
        width,
        height,
    ]


def in_view(driver: Any, element_id: str) -> bool:
    """Whether the element is wholly inside the viewport, the page unscrolled."""
    script = (
        "const box = document.getElementById(arguments[0]).getBoundingClientRect();"
        "return box.top >= 0 && box.left >= 0 && box.bottom <= window.innerHeight"
        "  && box.right <= window.innerWidth && window.scrollY === 0;"
    )
    return bool(driver.execute_script(script, element_id))


def test_the_verdict_and_rules_lead_and_losing_queries_come_first_with_their_text(
    chromium, checked, tmp_path
):
    corpus = {f"rel{i}": f"document {i}" for i in range(N_QUERIES)}
    queries = {query: f"what is topic {query}?" for query in QRELS}
    write_beir(tmp_path / "dataset", corpus, queries, QRELS)
    rules = ["--rule", "ndcg@10 >= 0.5", "--rule", "ndcg@10: max_drop = 0.05"]
    assert main([*checked, *rules, "--dataset", "dataset", "--html", "gate.html"]) == 1
    open_page(chromium, tmp_path / "gate.html")
    viewport(chromium, 1280, 800)
    assert in_view(chromium, "verdict")
    assert in_view(chromium, "rules")
    rows = chromium.find_elements(By.CSS_SELECTOR, "#rules tbody tr")
    assert [row.find_elements(By.TAG_NAME, "td")[-1].text for row in rows] == [
        "FAIL",
        "PASS",
        "FAIL",
    ]
    # The twelve queries that lost their relevant document first, each with its text.
    table = [
        [td.text for td in tr.find_elements(By.TAG_NAME, "td")]
        for tr in chromium.find_elements(By.CSS_SELECTOR, "#queries tbody tr")
    ]
    losses = [row for row in table if float(row[-1]) < 0]
    assert len(losses) == round(0.2 * N_QUERIES) and table[: len(losses)] == losses
    assert all(row[1] == queries[row[0]] for row in table)
    # The largest loss first, not the lowest value now: the baselines differ by rank, 1 to 4.
    differences = [float(row[-1]) for row in table]
    assert differences == sorted(differences) and len(set(differences)) > 2


def test_the_queries_show_the_values_the_gate_paired_under_the_rules_name(chromium, tmp_path):
    # The baseline holds trec_eval's P_5, the rule names P@5: the same measure, paired.
    write_trec_qrels(tmp_path / "qrels.txt", QRELS)
    before, after = ranked(lose=0.0, seed=0), ranked(lose=0.2, seed=1)
    write_trec_run(tmp_path / "worse.txt", after)
    baseline = evaluate_run(before, read_trec_qrels(tmp_path / "qrels.txt"), metrics=["P"])
    (tmp_path / "baseline.json").write_text(baseline.to_json(), encoding="utf-8")
    argv = ["check", str(tmp_path / "worse.txt"), "--qrels", str(tmp_path / "qrels.txt")]
    argv += ["--baseline", str(tmp_path / "baseline.json"), "--rule", "P@5 >= 0"]
    assert main([*argv, "--html", str(tmp_path / "gate.html")]) == 0
    open_page(chromium, tmp_path / "gate.html")
    shown = {
        cells[0]: [float(cell) for cell in cells[-3:]]  # baseline, now, difference
        for tr in chromium.find_elements(By.CSS_SELECTOR, "#queries tbody tr")
        if (cells := [td.text for td in tr.find_elements(By.TAG_NAME, "td")])
    }
    oracle = pytrec_eval.RelevanceEvaluator(QRELS, {"P_5"})
    old, new = oracle.evaluate(before), oracle.evaluate(after)
    assert shown == {
        q: pytest.approx([old[q]["P_5"], new[q]["P_5"], new[q]["P_5"] - old[q]["P_5"]], abs=1e-4)
        for q in QRELS
    }


def test_no_page_when_writing_the_baseline(checked, capsys):
    update = [*checked, "--update-baseline", "--html", "gate.html"]
    assert main(update) == 2
    assert "--update-baseline has no page" in capsys.readouterr().err
    assert not Path("gate.html").exists()
