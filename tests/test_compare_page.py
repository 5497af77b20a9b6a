"""The comparison page ``ef-eval compare --html`` writes, in headless Chromium, offline.

With ``--dataset`` it shows each query's text and the documents' snippets; it marks the best
system of each metric, writes ``p < 0.0001`` rather than ``p = 0.0000``, lists integer query
ids by number, draws the per-topic chart (and fills the per-query table) of whichever metric
the selector picks, and keeps five systems' rankings side by side in one row that scrolls.
Every number is checked against pytrec_eval's per-query values of the same runs.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from browser import chromium
from ef.evaluation import write_beir, write_trec_qrels, write_trec_run
from test_html_browser import column, marks, screenshots
from test_html_pages import ef_eval, open_page

__all__ = ["chromium", "screenshots"]  # the shared Chromium (tests/browser.py), the picture folder

SYSTEMS = ("bm25.run", "dense.run", "first.run", "deep.run", "hybrid.run")
METRICS = {"ndcg@10": "ndcg_cut_10", "recall@100": "recall_100", "mrr@10": "recip_rank"}


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A BEIR folder with integer query ids, five runs ten deep (so MRR@10 is pytrec_eval's
    reciprocal rank): first.run puts a relevant document first, deep.run all of them at
    ranks 8 to 10; and the page ``ef-eval compare --html --dataset`` writes of them."""
    folder = tmp_path_factory.mktemp("compare-page")
    rng = random.Random(43)
    docs = [f"doc{i}" for i in range(120)]
    corpus = {doc: f"Text of {doc}: " + "words about something " * 12 for doc in docs}
    ids = [str(i) for i in rng.sample(range(1, 2000), 24)] + ["1", "100", "1012", "2"]
    ids = list(dict.fromkeys(ids))
    queries = {query: f"question number {query}?" for query in ids}
    qrels = {query: dict.fromkeys(rng.sample(docs, 3), 1) for query in ids}
    write_beir(folder / "beir", corpus, queries, qrels)
    write_trec_qrels(folder / "qrels.txt", qrels)
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for name in SYSTEMS:
        runs[name] = {}
        for query, judged in qrels.items():
            ranked = rng.sample(docs, 10)
            if name in ("first.run", "deep.run"):
                ranked = [doc for doc in rng.sample(docs, 20) if doc not in judged][:10]
            if name == "first.run":
                ranked[0] = next(iter(judged))
            elif name == "deep.run":
                ranked[7:10] = list(judged)
            runs[name][query] = {doc: float(10 - rank) for rank, doc in enumerate(ranked)}
        write_trec_run(folder / name, runs[name], tag=name)
    ef_eval(
        "compare", "qrels.txt", *SYSTEMS, "--baseline", "bm25.run", "--tests", "t-test",
        "--metrics", ",".join(METRICS), "--html", "page.html", "--dataset", "beir",
        "-o", "table.txt", cwd=folder,
    )  # fmt: skip
    ef_eval("run", "qrels.txt", "first.run", "--html", "first.html", "-o", "first.txt", cwd=folder)
    ef_eval(
        "compare", "qrels.txt", *SYSTEMS[:3], "--tests", "t-test", "--html", "pairs.html",
        "-o", "pairs.txt", cwd=folder,
    )  # fmt: skip
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(METRICS.values()))
    values = {
        name: {
            query: {ours: theirs[query][measure] for ours, measure in METRICS.items()}
            for query in qrels
        }
        for name, theirs in ((name, evaluator.evaluate(run)) for name, run in runs.items())
    }
    return {"path": folder / "page.html", "queries": queries, "values": values, "folder": folder}


def test_queries_are_listed_by_number_with_their_text(
    chromium: webdriver.Chrome, page: dict[str, Any], screenshots: Path
) -> None:
    open_page(chromium, page["path"])
    chromium.save_screenshot(str(screenshots / "cli-comparison.png"))
    order = sorted(page["queries"], key=int)
    assert column(chromium, "query") == order
    assert column(chromium, "text") == [page["queries"][query] for query in order]


def test_the_best_system_of_each_metric_is_marked(
    chromium: webdriver.Chrome, page: dict[str, Any]
) -> None:
    open_page(chromium, page["path"])
    values = page["values"]
    for metric in METRICS:
        means = {s: sum(v[metric] for v in values[s].values()) / len(values[s]) for s in SYSTEMS}
        best = [s for s in SYSTEMS if means[s] == max(means.values())]
        marked = chromium.find_elements(By.CSS_SELECTOR, f'#means td.best[data-metric="{metric}"]')
        systems = [
            cell.find_element(By.XPATH, "..").get_attribute("data-system") for cell in marked
        ]
        assert systems == best
        assert all(cell.find_element(By.CSS_SELECTOR, "sup.best").text == "★" for cell in marked)
    # first.run and deep.run each lead somewhere, so the marks are not all on one row.
    rows = {c.find_element(By.XPATH, "..").get_attribute("data-system")
            for c in chromium.find_elements(By.CSS_SELECTOR, "#means td.best")}  # fmt: skip
    assert {"first.run", "deep.run"} <= rows


def test_p_values_under_the_floor_read_p_less_than(
    chromium: webdriver.Chrome, page: dict[str, Any]
) -> None:
    open_page(chromium, page["path"])
    shown = [cell.text for cell in chromium.find_elements(By.CSS_SELECTOR, "#means small.p")]
    assert len(shown) == (len(SYSTEMS) - 1) * len(METRICS)
    assert "p < 0.0001" in shown and all(text.startswith("p ") for text in shown)
    assert "p = 0.0000" not in chromium.find_element(By.TAG_NAME, "main").text


def _chart_values(driver: webdriver.Chrome, name: str) -> dict[str, float]:
    rows = driver.execute_script(
        "return window.efReport.charts[arguments[0]].data('source_0')"
        ".map(row => [row.query, row.difference]);",
        name,
    )
    return dict(rows)


def test_the_selector_draws_the_per_topic_chart_of_every_metric(
    chromium: webdriver.Chrome, page: dict[str, Any]
) -> None:
    open_page(chromium, page["path"])
    values = page["values"]
    select = Select(chromium.find_element(By.ID, "chart-metric"))
    assert [option.text for option in select.options] == list(METRICS)
    names = [f"difference:{system}" for system in SYSTEMS[1:]]
    for metric in [*list(METRICS)[1:], next(iter(METRICS))]:
        select.select_by_value(metric)
        WebDriverWait(chromium, 30).until(
            lambda d, metric=metric: d.execute_script(
                "return [...document.querySelectorAll('[data-chart^=\"difference:\"]')]"
                ".every(n => n.dataset.metric === arguments[0] && n.dataset.rendered === 'true')",
                metric,
            )
        )
        for name in names:
            system = name.removeprefix("difference:")
            assert marks(chromium, name, "rect") == len(page["queries"])
            expected = {
                query: values[system][query][metric] - values["bm25.run"][query][metric]
                for query in page["queries"]
            }
            shown = _chart_values(chromium, name)
            assert shown.keys() == expected.keys()
            assert all(abs(shown[q] - expected[q]) < 1e-9 for q in expected), metric
            # The per-query table follows the selector: its rows are this metric's too.
            order = column(chromium, "query")
            cells = [float(cell) for cell in column(chromium, f"{system} − bm25.run")]
            assert len(cells) == len(order) == len(expected)
            assert all(abs(v - expected[q]) <= 5.1e-5 for q, v in zip(order, cells, strict=True))
        heading = chromium.find_element(By.CSS_SELECTOR, "#per-query h2").text
        assert heading == f"Per query: {metric} difference"
    assert [e for e in chromium.get_log("browser") if e["level"] != "INFO"] == []


def test_five_systems_stay_side_by_side_in_a_row_that_scrolls(
    chromium: webdriver.Chrome, page: dict[str, Any], screenshots: Path
) -> None:
    open_page(chromium, page["path"])
    query = column(chromium, "query")[0]
    chromium.find_element(By.CSS_SELECTOR, f'#queries tr[data-query="{query}"]').click()
    chromium.save_screenshot(str(screenshots / "cli-comparison-drilldown.png"))
    boxes = chromium.find_elements(By.CSS_SELECTOR, "#drilldown .system")
    assert [box.get_attribute("data-system") for box in boxes] == list(SYSTEMS)
    assert len({box.rect["y"] for box in boxes}) == 1  # one row, no fifth system below
    layout = chromium.execute_script(
        "const row = document.querySelector('#drilldown .systems');"
        "return [document.documentElement.scrollWidth, window.innerWidth,"
        "        row.scrollWidth, row.clientWidth, getComputedStyle(row).overflowX];"
    )
    page_width, window_width, row_width, row_shown, overflow = layout
    assert page_width <= window_width  # the page itself never overflows
    assert row_width > row_shown and overflow == "auto"  # the row scrolls instead
    snippets = chromium.find_elements(By.CSS_SELECTOR, "#drilldown li[data-doc] .snippet")
    assert snippets
    for snippet in snippets:
        doc = snippet.find_element(By.XPATH, "..").get_attribute("data-doc")
        text = chromium.execute_script("return arguments[0].textContent;", snippet)
        assert text.startswith(f"Text of {doc}: words about")


def test_the_evaluation_page_lists_integer_ids_by_number_too(
    chromium: webdriver.Chrome, page: dict[str, Any]
) -> None:
    open_page(chromium, page["folder"] / "first.html")
    assert column(chromium, "query") == sorted(page["queries"], key=int)


def test_the_heat_map_labels_p_values_as_the_tables_write_them(
    chromium: webdriver.Chrome, page: dict[str, Any]
) -> None:
    open_page(chromium, page["folder"] / "pairs.html")
    labels = chromium.execute_script(
        "return window.efReport.charts['pvalues:ndcg@10'].data('source_0')"
        ".map(row => [row.system, row.other, row.p, row.label]);"
    )
    assert len(labels) == 6  # three systems, six ordered pairs
    for _, _, p, label in labels:
        written = "< 0.0001" if p < 0.0001 else f"{p:.4f}"
        assert label == written + ("†" if p <= 0.05 else "")
    assert any(label.startswith("< 0.0001") for *_, label in labels)
