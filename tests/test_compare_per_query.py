"""A comparison keeps the per-query values its tests were computed from: they equal what
``evaluate_run`` gives each system, survive a JSON round trip, and draw the per-topic chart of
``to_html(path)`` with nothing else handed over (opened in real headless Chromium)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from browser import chromium
from ef.evaluation import (
    ComparisonReport,
    compare,
    evaluate_rag,
    evaluate_run,
    read_trec_qrels,
    read_trec_run,
    write_trec_qrels,
    write_trec_run,
)
from ef.evaluation.cli import main
from test_html_browser import QRELS, RUN_A, RUN_B, column, marks, open_page

__all__ = ["chromium"]  # the shared Chromium (tests/browser.py)

RUNS = {"a": RUN_A, "b": RUN_B}
METRICS = ("ndcg@10", "map@100", "P@5")


@pytest.fixture(scope="module")
def comparison() -> ComparisonReport:
    return compare(RUNS, QRELS, baseline="a", metrics=METRICS, tests=("t-test",))


def test_the_values_are_each_systems_evaluate_run_values(comparison):
    for name, run in RUNS.items():
        alone = evaluate_run(run, QRELS, metrics=list(METRICS), k_values=(1,))
        assert set(comparison.per_query[name]) == set(QRELS)
        for query_id, row in comparison.per_query[name].items():
            assert dict(row) == {key: alone.per_query[query_id][key] for key in METRICS}


def test_the_means_and_differences_are_those_of_the_values_kept(comparison):
    for row in comparison.comparisons:
        values = comparison.per_query[row.system]
        base = comparison.per_query["a"]
        differences = [values[q][row.metric] - base[q][row.metric] for q in values]
        assert row.difference == pytest.approx(sum(differences) / len(differences), abs=1e-15)


def test_the_values_survive_a_json_round_trip(comparison):
    again = ComparisonReport.from_json(comparison.to_json())
    assert again == comparison
    assert again.per_query == comparison.per_query
    assert (
        json.loads(comparison.to_json())["per_query"]["b"]["q3"]["P@5"]
        == (comparison.per_query["b"]["q3"]["P@5"])
    )


def test_json_written_before_the_values_were_kept_still_reads(comparison):
    data = json.loads(comparison.to_json())
    del data["per_query"]
    old = ComparisonReport.from_dict(data)
    assert old.per_query == {}
    assert old.comparisons == comparison.comparisons


def test_a_value_that_is_not_a_number_is_refused(comparison):
    data = json.loads(comparison.to_json())
    data["per_query"]["b"]["q3"]["P@5"] = "high"
    with pytest.raises(TypeError, match="per_query"):
        ComparisonReport.from_dict(data)


def test_rag_comparisons_keep_the_values_that_apply():
    samples = [
        {"user_input": "Capital?", "response": "Paris", "reference": "Paris"},
        {"user_input": "River?", "response": "Seine"},
    ]
    other = [dict(sample, response="Lyon") for sample in samples]
    reports = {
        "one": evaluate_rag(samples, metrics=["exact_match"], ids=["s1", "s2"]),
        "two": evaluate_rag(other, metrics=["exact_match"], ids=["s1", "s2"]),
    }
    comparison = compare(reports, baseline="one", metrics=["exact_match"], tests=("t-test",))
    # s2 has no reference: exact_match does not apply there, and no value is kept for it.
    assert comparison.per_query == {
        "one": {"s1": {"exact_match": 1.0}, "s2": {}},
        "two": {"s1": {"exact_match": 0.0}, "s2": {}},
    }


def test_a_page_from_compare_alone_draws_one_bar_per_query(chromium, comparison, tmp_path: Path):
    page = compare(RUNS, QRELS, baseline="a", tests=("t-test",)).to_html(tmp_path / "c.html")
    open_page(chromium, page)
    assert marks(chromium, "difference:b", "rect") == len(QRELS)
    cells = column(chromium, "b − a")
    assert len(cells) == len(QRELS) and all(cell.strip() for cell in cells)
    b = evaluate_run(RUN_B, QRELS, k_values=(10,)).per_query
    a = evaluate_run(RUN_A, QRELS, k_values=(10,)).per_query
    shown = sorted(float(cell) for cell in cells)
    expected = sorted(b[q]["ndcg@10"] - a[q]["ndcg@10"] for q in QRELS)
    assert shown == pytest.approx(expected, abs=5e-5)


def test_the_cli_writes_the_page_python_writes(tmp_path: Path):
    qrels = tmp_path / "qrels.txt"
    write_trec_qrels(qrels, QRELS)
    paths = {name: tmp_path / f"{name}.run" for name in RUNS}
    for name, run in RUNS.items():
        write_trec_run(paths[name], run)
    cli_page = tmp_path / "cli.html"
    arguments = ["compare", str(qrels), str(paths["a"]), str(paths["b"]), "--baseline", "a.run"]
    arguments += ["--tests", "t-test", "--html", str(cli_page), "-o", str(tmp_path / "out.txt")]
    assert main(arguments) == 0
    systems = {f"{n}.run": read_trec_run(p) for n, p in paths.items()}
    judged = read_trec_qrels(qrels)
    comparison = compare(systems, judged, baseline="a.run", tests=("t-test",))
    written = comparison.to_html(tmp_path / "python.html", runs=systems, qrels=judged)
    assert cli_page.read_text() == written.read_text()
