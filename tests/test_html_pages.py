"""The pages the CLI writes say what they show: checked in headless Chromium, offline.

The evaluation page is titled with the system and the dataset, gives the query text room, and
shows no blank manifest rows; the RAG page names samples without repeating the question and
shows a list of references as answers, not as Python's ``['a', 'b']``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from browser import chromium
from ef.evaluation import evaluate_retrieval, read_beir
from test_html_browser import column, screenshots

__all__ = ["chromium", "screenshots"]  # the shared Chromium (tests/browser.py), the picture folder

EF_EVAL = shutil.which("ef-eval", path=str(Path(sys.executable).parent))
ENV = {**os.environ, "EF_EVALUATION_PLUGINS": ""}
SAMPLES = [
    {
        "user_input": "capital of France?",
        "response": "Paris",
        "reference": "Paris",
        "retrieved_contexts": ["Paris is the capital of France."],
    },
    {"user_input": "2 + 2?", "response": "five", "reference": "four", "retrieved_contexts": []},
    {
        "user_input": "a primary colour?",
        "response": "red",
        "reference": ["blue", "Red"],
        "retrieved_contexts": ["Red, yellow and blue are primary colours."],
    },
]


def ef_eval(*args: object, cwd: Path) -> None:
    assert EF_EVAL is not None, "the ef-eval script is not installed: pip install -e ."
    result = subprocess.run(
        [EF_EVAL, *map(str, args)],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr


def open_page(driver: webdriver.Chrome, page: Path) -> None:
    """Load ``page`` from disk, wait for its script, and check the console stayed clean."""
    driver.get_log("browser")
    driver.get(page.as_uri())
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script("return document.body.dataset.ready")
    )
    assert [entry for entry in driver.get_log("browser") if entry["level"] != "INFO"] == []


@pytest.fixture(scope="module")
def evaluation_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("evaluation")
    ef_eval(
        "retrieval",
        "builtin:stdlib-docs",
        "--retriever",
        "bm25",
        "--save-run",
        "run.txt",
        "--html",
        "page.html",
        "--no-progress",
        cwd=folder,
    )
    return folder / "page.html"


def test_the_evaluation_page_is_titled_with_the_system_and_the_dataset(
    chromium: webdriver.Chrome, evaluation_page: Path, screenshots: Path
) -> None:
    open_page(chromium, evaluation_page)
    chromium.save_screenshot(str(screenshots / "cli-evaluation.png"))
    assert chromium.title == "bm25 on builtin:stdlib-docs"
    assert chromium.find_element(By.TAG_NAME, "h1").text == "bm25 on builtin:stdlib-docs"


def test_the_evaluation_pages_manifest_has_no_blank_rows(
    chromium: webdriver.Chrome, evaluation_page: Path
) -> None:
    open_page(chromium, evaluation_page)
    rows = chromium.find_elements(By.CSS_SELECTOR, "#manifest tr")
    shown = {
        row.find_element(By.TAG_NAME, "th").text: row.find_element(By.TAG_NAME, "td").text
        for row in rows
    }
    assert shown and all(value.strip() for value in shown.values())
    # Options left at None (no timeout, no rate limit) have no row; those set do.
    assert "parameters.timeout" not in shown and "parameters.rate_limit" not in shown
    assert shown["parameters.retries"] == "0" and shown["retriever"].startswith("bm25(")


def test_the_query_text_column_has_room(chromium: webdriver.Chrome, evaluation_page: Path) -> None:
    open_page(chromium, evaluation_page)
    _, queries, qrels = read_beir("builtin:stdlib-docs")
    assert column(chromium, "text") == [queries[query] for query in qrels]
    widths = chromium.execute_script(
        "const em = parseFloat(getComputedStyle(document.body).fontSize);"
        "const cells = [...document.querySelectorAll('#queries tbody td.text')];"
        "return [em, cells.map(td => td.getBoundingClientRect().width)];"
    )
    em, cells = widths
    assert len(cells) == len(qrels)
    assert min(cells) >= 22 * em  # 20 metric columns beside it do not squeeze it


def test_without_a_title_the_page_names_the_system(
    chromium: webdriver.Chrome, tmp_path: Path
) -> None:
    corpus, queries, qrels = read_beir("builtin:stdlib-docs")

    def search(query: str, *, limit: int = 10) -> list[str]:
        return list(corpus)[:limit]

    report = evaluate_retrieval(search, qrels, queries, retriever_id="first-ten")
    page = report.to_html(tmp_path / "page.html")
    open_page(chromium, page)
    assert chromium.title == f"first-ten: retrieval evaluation over {report.n_queries} queries"


def test_the_rag_page_names_samples_and_shows_a_list_of_references(
    chromium: webdriver.Chrome, tmp_path: Path, screenshots: Path
) -> None:
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(sample) + "\n" for sample in SAMPLES))
    ef_eval("rag", samples, "--html", "rag.html", cwd=tmp_path)
    open_page(chromium, tmp_path / "rag.html")
    chromium.save_screenshot(str(screenshots / "cli-rag.png"))
    assert chromium.title == "RAG evaluation of samples.jsonl"
    assert column(chromium, "question") == [sample["user_input"] for sample in SAMPLES]
    assert column(chromium, "sample") == ["0", "1", "2"]  # not the question again
    references = column(chromium, "reference")
    assert references[:2] == ["Paris", "four"]
    assert references[2] == "blue ¶ Red" and "[" not in references[2]
