"""The group facet of the evaluation page, in real headless Chromium (the shared one)."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from browser import chromium as browser_chromium
from ef.evaluation import evaluate_run
from test_html_browser import QRELS, QUERIES, RUN_A, column, marks, open_page
from test_html_browser import screenshots as browser_screenshots

# The shared Chromium (tests/browser.py: offline, reset for each test) and the browser tests'
# screenshot folder.
chromium = browser_chromium
screenshots = browser_screenshots

GROUPS = {
    **{q: ["even"] if int(q[1:]) % 2 == 0 else ["odd"] for q in QRELS if int(q[1:]) < 26},
    "q0": ["even", "first"],
    "q1": ["odd", "first"],
}


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    report = evaluate_run(RUN_A, QRELS, k_values=(1, 10), groups=GROUPS)
    path = tmp_path_factory.mktemp("group_pages") / "groups.html"
    report.to_html(path, queries=QUERIES)
    return path, report


def test_the_group_facet_charts_each_group_and_lists_its_means(chromium, page, screenshots):
    path, report = page
    open_page(chromium, path)
    chromium.find_element(By.ID, "groups").screenshot(str(screenshots / "chromium-groups.png"))
    assert marks(chromium, "groups", "rect") == 3  # even, first, odd
    # The chart's bars are the groups' means of the headline metric, in the groups' order.
    bars = chromium.execute_script(
        "return window.efReport.charts.groups.data('source_0').map(d => [d.group, d.mean]);"
    )
    assert bars == [[name, r.metrics["ndcg@10"]] for name, r in report.groups.items()]
    rows = chromium.find_elements(By.CSS_SELECTOR, "#groups tbody tr")
    shown = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")] for row in rows]
    assert [row[:2] for row in shown] == [["even", "13"], ["first", "2"], ["odd", "13"]]
    columns = [th.text for th in chromium.find_elements(By.CSS_SELECTOR, "#groups thead th")]
    ndcg = columns.index("ndcg@10")
    assert shown[0][ndcg] == f"{report.groups['even'].metrics['ndcg@10']:.4f}"
    assert "4 scored queries are in no group" in chromium.find_element(By.ID, "groups").text


def test_the_per_query_table_is_filtered_by_group(chromium, page, screenshots):
    path, report = page
    open_page(chromium, path)
    choice = Select(chromium.find_element(By.ID, "group-filter"))
    assert [o.text for o in choice.options] == [
        "all queries", "even", "first", "odd", "(no group)"
    ]  # fmt: skip
    assert len(column(chromium, "query")) == len(QRELS)
    choice.select_by_visible_text("odd")
    assert column(chromium, "query") == [q for q in QRELS if "odd" in GROUPS.get(q, ())]
    choice.select_by_visible_text("first")
    assert column(chromium, "query") == ["q0", "q1"]
    chromium.find_element(By.ID, "filter").send_keys("topic 1")  # both filters apply together
    assert column(chromium, "query") == ["q1"]
    chromium.find_element(By.ID, "filter").clear()
    chromium.execute_script(
        "const f = document.getElementById('filter'); f.dispatchEvent(new Event('input'));"
    )
    choice.select_by_visible_text("(no group)")
    assert column(chromium, "query") == list(report.ungrouped) == ["q26", "q27", "q28", "q29"]
    chromium.save_screenshot(str(screenshots / "chromium-groups-filtered.png"))
    choice.select_by_visible_text("all queries")
    assert len(column(chromium, "query")) == len(QRELS)
