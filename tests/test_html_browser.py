"""The visual report in real browsers: Debian's Chromium driven through selenium, offline, and
a Firefox ESR screenshot of each page.

One Chromium serves every browser test a test process runs (``tests/browser.py``: Debian's
packaged browser and driver, offline, reset before each test). Screenshots go to the folder
named by ``EF_HTML_SCREENSHOTS``, or to a temporary one (the docs' pictures are taken this way).
"""

from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path

import attrs
import pytest
from PIL import Image
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from browser import chromium
from ef.evaluation import QueryFailure, compare, evaluate_rag, evaluate_run
from ef.evaluation._html.rankings import ranking

__all__ = ["chromium"]  # the browser fixture (tests/browser.py)

N_QUERIES = 30
CUTOFFS = (1, 5, 10, 20)
# Vega's default mark colour, which a chart's bars and points are drawn in.
VEGA_BLUE = (76, 120, 168)


def _qrels() -> dict[str, dict[str, float]]:
    return {
        f"q{i}": {f"d{i}": 2.0, f"d{i + 1}": 1.0, f"d{i + 40}": 1.0, f"d{i + 2}": 0.0}
        for i in range(N_QUERIES)
    }


QRELS = _qrels()
# System a ranks 25 documents per query: its relevant d{i} sits at rank i % 7 + 1.
RUN_A = {
    f"q{i}": {f"d{j}": float(100 - (j - i + 7 - i % 7) % 25) for j in range(i, i + 25)}
    for i in range(N_QUERIES)
}
RUN_B = {f"q{i}": [f"d{i}", f"d{i + 1}", f"d{i + 40}", f"d{i + 3}"] for i in range(N_QUERIES)}
CORPUS = {f"d{j}": f"Document {j}: " + "some words of text " * 20 for j in range(80)}
QUERIES = {f"q{i}": f"what is topic {i}?" for i in range(N_QUERIES)}
SAMPLES = [
    {
        "user_input": "Capital of France?",
        "response": "Paris",
        "reference": "Paris",
        "retrieved_contexts": ["Paris is the capital of France."],
    },
    {
        "user_input": "Longest river?",
        "response": "The Nile",
        "reference": "Nile",
        "retrieved_contexts": ["The Nile is long.", "The Amazon is long too."],
    },
    {"user_input": "Who wrote it?", "response": "", "retrieved_contexts": []},
]


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pages")
    a = evaluate_run(RUN_A, QRELS, k_values=CUTOFFS)
    b = evaluate_run(RUN_B, QRELS, k_values=CUTOFFS)
    timed = attrs.evolve(
        a,
        latency={q: 0.01 * (1 + int(q[1:]) % 9) for q in QRELS},
        failures=[QueryFailure("q99", "TimeoutError", "no answer within 5 s", 3)],
        manifest={"retriever": "bm25", "dataset": {"qrels": "sha256:0f3a"}, "version": "0.2.0"},
    )
    comparison = compare(
        {"a": a, "b": b}, baseline="a", tests=("randomization",), n_permutations=1000
    )
    return {
        "evaluation": timed.to_html(
            folder / "evaluation.html", run=RUN_A, qrels=QRELS, corpus=CORPUS, queries=QUERIES
        ),
        "comparison": comparison.to_html(
            folder / "comparison.html",
            runs={"a": RUN_A, "b": RUN_B},
            qrels=QRELS,
            queries=QUERIES,
        ),
        "rag": evaluate_rag(SAMPLES).to_html(folder / "rag.html", samples=SAMPLES),
    }


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    named = os.environ.get("EF_HTML_SCREENSHOTS")
    folder = Path(named) if named else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def open_page(driver: webdriver.Chrome, page: Path) -> None:
    """Load ``page`` from disk, wait for every chart, and check the console stayed clean."""
    driver.get_log("browser")  # drop what an earlier page left
    driver.get(page.as_uri())
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script("return document.body.dataset.ready")
    )
    assert driver.execute_script("return document.body.dataset.ready") == "true"
    problems = [entry for entry in driver.get_log("browser") if entry["level"] != "INFO"]
    assert problems == []


def marks(driver: webdriver.Chrome, chart: str, kind: str) -> int:
    """How many data marks of ``kind`` (rect, symbol) the chart named ``chart`` drew."""
    script = (
        "const node = [...document.querySelectorAll('[data-chart]')]"
        "  .find(n => n.dataset.chart === arguments[0]);"
        "return node.dataset.rendered === 'true'"
        "  ? node.querySelectorAll(`.role-mark.mark-${arguments[1]} path`).length : -1;"
    )
    count: int = driver.execute_script(script, chart, kind)
    return count


def column(driver: webdriver.Chrome, name: str) -> list[str]:
    """The shown cells of the table's column ``name``, top to bottom (read in one round trip)."""
    script = (
        "const heads = [...document.querySelectorAll('#queries th')].map(th => th.dataset.column);"
        "const index = heads.indexOf(arguments[0]);"
        "return [...document.querySelectorAll('#queries tbody tr')]"
        "  .map(tr => tr.children[index].textContent);"
    )
    cells: list[str] = driver.execute_script(script, name)
    return cells


def test_the_evaluation_page_draws_each_chart_with_its_marks(chromium, pages, screenshots):
    open_page(chromium, pages["evaluation"])
    chromium.save_screenshot(str(screenshots / "chromium-evaluation.png"))
    assert marks(chromium, "distribution", "rect") == 10  # ten bins of ndcg@10
    assert marks(chromium, "latency", "rect") == 20  # twenty bins of seconds
    assert marks(chromium, "pr_curve", "symbol") == 11  # trec_eval's 11 recall levels
    assert marks(chromium, "k_curves", "symbol") == 5 * len(CUTOFFS)  # 5 metrics, 4 cutoffs
    text = chromium.find_element(By.TAG_NAME, "main").text
    assert "no answer within 5 s" in text and "sha256:0f3a" in text
    assert "p95" in chromium.find_element(By.ID, "latency").text


def test_the_per_query_table_sorts_and_filters(chromium, pages, screenshots):
    open_page(chromium, pages["evaluation"])
    header = chromium.find_element(By.CSS_SELECTOR, '#queries th[data-column="ndcg@10"]')
    header.click()
    values = [float(v) for v in column(chromium, "ndcg@10")]
    assert len(values) == N_QUERIES and values == sorted(values, reverse=True)
    assert values[0] > values[-1]
    header = chromium.find_element(By.CSS_SELECTOR, '#queries th[data-column="ndcg@10"]')
    header.click()
    assert [float(v) for v in column(chromium, "ndcg@10")] == sorted(values)
    chromium.find_element(By.ID, "filter").send_keys("topic 1")
    shown = column(chromium, "query")
    assert sorted(shown) == sorted(q for q, text in QUERIES.items() if "topic 1" in text)
    assert len(shown) == 11  # q1, q10 … q19


def test_clicking_a_query_opens_its_drilldown_with_grades(chromium, pages, screenshots):
    open_page(chromium, pages["evaluation"])
    chromium.find_element(By.CSS_SELECTOR, '#queries tr[data-query="q3"]').click()
    section = chromium.find_element(By.ID, "drilldown")
    assert section.is_displayed() and section.get_attribute("data-query") == "q3"
    assert "what is topic 3?" in section.text
    chromium.save_screenshot(str(screenshots / "chromium-evaluation-drilldown.png"))
    items = section.find_elements(By.CSS_SELECTOR, "ol.ranked li")
    expected = ranking(RUN_A["q3"])[:20]
    assert [item.get_attribute("data-doc") for item in items] == expected
    for item, doc in zip(items, expected, strict=True):
        grade = QRELS["q3"].get(doc)
        mark = item.find_element(By.CSS_SELECTOR, ".grade").get_attribute("class")
        assert mark.split()[-1] == (
            "unjudged" if grade is None else "relevant" if grade > 0 else "nonrelevant"
        )
        assert item.find_element(By.CSS_SELECTOR, ".snippet").text.startswith(f"Document {doc[1:]}")
    missed = section.find_elements(By.CSS_SELECTOR, "ul.missed li")
    # d43 was never retrieved; d4 was, at a rank beyond 20, or inside the top 20 and not missed.
    where = {item.get_attribute("data-doc"): item.get_attribute("data-rank") for item in missed}
    assert where["d43"] == "none"
    assert all(doc not in expected for doc in where)


def test_the_comparison_page_has_one_bar_per_query_and_rankings_side_by_side(
    chromium, pages, screenshots
):
    open_page(chromium, pages["comparison"])
    assert marks(chromium, "difference:b", "rect") == N_QUERIES
    row = chromium.find_element(By.CSS_SELECTOR, '#means tr[data-system="b"]')
    a = evaluate_run(RUN_A, QRELS, k_values=(10,))
    b = evaluate_run(RUN_B, QRELS, k_values=(10,))
    assert (
        f"{b.metrics['ndcg@10']:.4f}" in row.text and f"{a.metrics['ndcg@10']:.4f}" not in row.text
    )
    assert row.find_elements(By.CSS_SELECTOR, "sup.mark")  # b beats a on every query
    chromium.find_element(By.CSS_SELECTOR, '#queries tr[data-query="q5"]').click()
    systems = chromium.find_elements(By.CSS_SELECTOR, "#drilldown .system")
    assert [s.get_attribute("data-system") for s in systems] == ["a", "b"]
    chromium.execute_script("window.scrollTo(0, 0)")
    chromium.save_screenshot(str(screenshots / "chromium-comparison.png"))
    docs_b = [li.get_attribute("data-doc") for li in systems[1].find_elements(By.TAG_NAME, "li")]
    assert docs_b[:4] == RUN_B["q5"]


def test_the_rag_page_lists_each_sample(chromium, pages, screenshots):
    open_page(chromium, pages["rag"])
    chromium.save_screenshot(str(screenshots / "chromium-rag.png"))
    assert marks(chromium, "means", "rect") == len(evaluate_rag(SAMPLES).metrics)
    assert column(chromium, "question") == [s["user_input"] for s in SAMPLES]
    assert "The Amazon is long too." in column(chromium, "contexts")[1]
    coverage = chromium.find_element(By.ID, "metrics").text
    assert "2 / 3" in coverage  # the reference-based metrics skip the sample without one


def _blue_share(path: Path) -> float:
    with Image.open(path) as image:
        data = image.convert("RGB").tobytes()
    pixels = [data[i : i + 3] for i in range(0, len(data), 3)]
    close = sum(1 for p in pixels if math.dist(p, VEGA_BLUE) < 40)
    return close / len(pixels)


def test_firefox_draws_each_page(pages, screenshots, tmp_path):
    """firefox-esr has no packaged driver: its headless screenshot of each page must show the
    charts (Vega's blue) the page draws."""
    # Every web address goes to a closed local port: the page must not need one.
    prefs = {
        "network.proxy.type": "1",
        "network.proxy.http": '"127.0.0.1"',
        "network.proxy.http_port": "9",
        "network.proxy.ssl": '"127.0.0.1"',
        "network.proxy.ssl_port": "9",
        "network.captive-portal-service.enabled": "false",
        "app.update.enabled": "false",
    }
    shots: dict[str, Path] = {}
    running: dict[str, subprocess.Popen[str]] = {}
    # One Firefox per page, at the same time: each needs a profile of its own; none
    # outlives the test, however it ends.
    try:
        for kind, page in pages.items():
            profile = tmp_path / f"profile-{kind}"
            profile.mkdir()
            (profile / "user.js").write_text(
                "".join(f'user_pref("{name}", {value});\n' for name, value in prefs.items())
            )
            shots[kind] = screenshots / f"firefox-{kind}.png"
            shots[kind].unlink(missing_ok=True)
            running[kind] = subprocess.Popen(
                [
                    "firefox-esr",
                    "--headless",
                    "--no-remote",
                    "--profile",
                    str(profile),
                    "--window-size=1200,1500",
                    "--screenshot",
                    str(shots[kind]),
                    page.as_uri(),
                ],
                env={**os.environ, "HOME": str(tmp_path / "home"), "MOZ_HEADLESS": "1"},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
        for kind, process in running.items():
            _, errors = process.communicate(timeout=90)
            assert process.returncode == 0, (kind, errors)
    finally:
        for process in running.values():
            if process.poll() is None:
                process.kill()
                process.communicate()
    for kind, shot in shots.items():
        with Image.open(shot) as image:
            assert image.size == (1200, 1500)
        assert _blue_share(shot) > 0.002, kind


# Escaping: hostile text in every place a page shows text is shown as text, never markup.

HOSTILE = "<b>&\"'</script>"


@pytest.fixture(scope="module")
def hostile_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("hostile")
    query, doc, metric = f"q{HOSTILE}", f"d{HOSTILE}", f"m{HOSTILE}"
    qrels = {query: {doc: 1.0}, "q2": {"d2": 1.0}}
    run = {query: {doc: 2.0, "d2": 1.0}, "q2": {"d2": 1.0, doc: 0.5}}
    queries = {query: f"query text {HOSTILE}", "q2": "plain"}
    corpus = {doc: f"document text {HOSTILE}", "d2": "plain"}
    scored = evaluate_run(run, qrels, k_values=(10,))
    # a metric name of a plugin's choosing, with the report built as a plugin's would be
    report = attrs.evolve(
        scored,
        metrics={**scored.metrics, f"{metric}@10": 0.5},
        per_query={q: {**v, f"{metric}@10": 0.5} for q, v in scored.per_query.items()},
    )
    other = attrs.evolve(report, per_query={q: dict(v) for q, v in report.per_query.items()})
    system = f"s{HOSTILE}"
    comparison = compare(
        {"base": report, system: other}, baseline="base", tests=("randomization",),
        n_permutations=100, metrics=[f"{metric}@10", "ndcg@10"],
    )  # fmt: skip
    samples = [
        {
            "user_input": f"question {HOSTILE}",
            "response": f"response {HOSTILE}",
            "reference": f"reference {HOSTILE}",
            "retrieved_contexts": [f"context {HOSTILE}"],
        }
    ]
    rag = evaluate_rag(samples, metrics=["exact_match"], ids=[f"id{HOSTILE}"])
    return {
        "evaluation": report.to_html(
            folder / "evaluation.html", run=run, qrels=qrels, corpus=corpus, queries=queries,
            title=f"title {HOSTILE}",
        ),
        "comparison": comparison.to_html(
            folder / "comparison.html",
            runs={"base": run, system: run}, qrels=qrels, queries=queries,
            title=f"title {HOSTILE}",
        ),
        "rag": rag.to_html(folder / "rag.html", samples=samples, title=f"title {HOSTILE}"),
    }  # fmt: skip


def _shown_text(driver: webdriver.Chrome) -> str:
    """Everything the page shows as text, the drill-down opened on the hostile query."""
    rows = driver.find_elements(By.CSS_SELECTOR, "#queries tbody tr")
    if rows:
        rows[0].click()
    return str(driver.execute_script("return document.body.innerText"))


@pytest.mark.parametrize("page", ["evaluation", "comparison", "rag"])
def test_hostile_text_is_shown_as_text_everywhere(chromium, hostile_pages, page):
    open_page(chromium, hostile_pages[page])  # the data parsed, every chart drawn, no errors
    assert chromium.title == f"title {HOSTILE}"
    # nothing became an element: not one <b> from the data, no script cut short
    assert chromium.execute_script("return document.querySelectorAll('main b').length") == 0
    text = _shown_text(chromium)
    ids = {"evaluation": "qdm", "comparison": "sqdm", "rag": ""}[page]
    texts = {
        "evaluation": ["title", "query text", "document text"],
        "comparison": ["title", "query text"],
        "rag": ["title", "question", "response", "reference", "context"],
    }[page]
    needles = [f"{first}{HOSTILE}" for first in ids] + [f"{t} {HOSTILE}" for t in texts]
    if page == "rag":
        needles.append(f"id{HOSTILE}")
    for needle in needles:
        assert needle in text, (page, needle)
