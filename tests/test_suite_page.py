"""The suite's HTML page in Debian's Chromium, offline: the table, one chart per dataset with a
bar per system, and links that open each cell's own evaluation page."""

from __future__ import annotations

import re

import pytest
from selenium.webdriver.common.by import By

from browser import chromium  # noqa: F401  (a fixture: the shared Chromium, tests/browser.py)
from ef.evaluation import SuiteDataset, evaluate_suite
from suite_fixtures import CosineRetriever, beir_folder
from test_html_browser import marks, open_page


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    root = tmp_path_factory.mktemp("suite-page")
    datasets = [
        "builtin:stdlib-docs",
        SuiteDataset(beir_folder(root, "woods", seed=3), name="<b>woods</b>"),
        str(beir_folder(root, "lake", seed=4)),
    ]
    report = evaluate_suite(
        {"bm25": "bm25", "cos<script>": CosineRetriever},
        datasets,
        k_values=(10,),
        metrics=("ndcg",),
        baseline="bm25",
        tests=("t-test",),
    )
    path = report.to_html(root / "suite.html", title="Suite </script><i>x</i>")
    return report, path


def test_the_page_shows_the_table_and_a_chart_per_dataset(chromium, page):  # noqa: F811
    report, path = page
    open_page(chromium, path)
    assert chromium.title == "Suite </script><i>x</i>"
    assert chromium.find_elements(By.TAG_NAME, "i") == []  # names are text, never markup
    for dataset in report.datasets:
        assert marks(chromium, f"dataset:{dataset}", "rect") == len(report.systems)
        row = chromium.find_element(By.CSS_SELECTOR, f'tr[data-row="{dataset}"]')
        cells = row.find_elements(By.TAG_NAME, "td")
        assert cells[0].text == dataset
        values = [report.value(dataset, s) for s in report.systems]
        shown = [re.sub(r"[†‡]$", "", c.text) for c in cells[1:]]
        assert shown == [f"{v:.4f}" for v in values]
        bold = [bool(c.find_elements(By.TAG_NAME, "strong")) for c in cells[1:]]
        assert bold == [v == max(values) for v in values]
    averages = chromium.find_elements(By.CSS_SELECTOR, "#suite-table tr.average")
    n_queries = sum(report.cells[d]["bm25"].n_queries for d in report.datasets)
    assert [r.find_element(By.TAG_NAME, "td").text for r in averages][:2] == [
        "Average (macro, 3 datasets)",
        f"Average (micro, {n_queries} queries)",
    ]


def test_each_value_links_to_its_cells_own_page(chromium, page):  # noqa: F811
    report, path = page
    open_page(chromium, path)
    links = [
        a.get_attribute("href") for a in chromium.find_elements(By.CSS_SELECTOR, "#suite-table a")
    ]
    assert len(links) == len(report.datasets) * len(report.systems)
    target = chromium.find_element(
        By.CSS_SELECTOR, 'tr[data-row="lake"] td[data-system="cos<script>"] a'
    )
    href = target.get_attribute("href")
    open_page(chromium, path.parent / href.split(path.parent.name + "/", 1)[1])
    assert chromium.title == "cos<script> on lake"
    shown = chromium.find_element(By.ID, "metrics").text
    assert f"{report.cells['lake']['cos<script>'].metrics['ndcg@10']:.4f}" in shown
