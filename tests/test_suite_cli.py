"""``ef-eval suite``: the library's table from the command line, results folders, --merge."""

from __future__ import annotations

import json

import pytest

from ef.evaluation import SuiteReport, evaluate_suite, merge_suite_results
from ef.evaluation.cli import main
from suite_fixtures import CosineRetriever, beir_folder


def _run(capsys, *argv):
    code = main(["suite", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def datasets(tmp_path):
    return ["builtin:stdlib-docs", str(beir_folder(tmp_path, "woods", seed=3))]


def test_the_command_prints_the_librarys_table(capsys, tmp_path, datasets):
    systems = ["--system", "bm25", "--system", "cos=suite_fixtures:CosineRetriever"]
    code, out, err = _run(
        capsys,
        *datasets,
        *systems,
        "--baseline",
        "bm25",
        "--k",
        "1,10",
        "--results-dir",
        tmp_path / "r",
        "--journal-dir",
        tmp_path / "j",
        "--format",
        "markdown",
        "--index-dir",
        tmp_path / "i",
        "--html",
        tmp_path / "suite.html",
    )
    assert code == 0
    page = (tmp_path / "suite.html").read_text()
    for dataset in ("stdlib-docs", "woods"):
        for system in ("bm25", "cos"):
            link = f"suite-cells/{dataset}/{system}.html"
            assert f'href="{link}"' in page and (tmp_path / link).is_file()
    library = evaluate_suite(
        {"bm25": "bm25", "cos": CosineRetriever},
        datasets,
        baseline="bm25",
        k_values=(1, 10),
        tests=("t-test",),
    )
    assert out == library.to_markdown()
    assert "dataset 1/2 stdlib-docs: 1,098 documents, 40 judged queries" in err
    assert "cell 4/4 woods × cos: ndcg@10 = " in err
    assert sorted(p.name for p in (tmp_path / "j" / "woods").iterdir()) == [
        "bm25.jsonl",
        "cos.jsonl",
    ]
    # Run again: every cell resumes from its journal, and says so.
    code, again, err = _run(
        capsys,
        *datasets,
        *systems,
        "--baseline",
        "bm25",
        "--k",
        "1,10",
        "--journal-dir",
        tmp_path / "j",
        "--format",
        "json",
        "--index-dir",
        tmp_path / "i",
    )
    assert code == 0
    assert err.count("loaded index from") == 2  # bm25 on each dataset, built once, then reused
    assert "resumed: 40 of 40 queries from the journal" in err
    assert "(40 resumed from the journal)" in err
    report = SuiteReport.from_json(again)
    assert report.table() == library.table()


def test_merge_joins_results_folders(capsys, tmp_path, datasets):
    for folder, dataset in zip(("a", "b"), datasets, strict=True):
        code, _, _ = _run(
            capsys,
            dataset,
            "--system",
            "bm25",
            "--k",
            "10",
            "--results-dir",
            tmp_path / folder,
            "--no-progress",
        )
        assert code == 0
    code, out, _ = _run(capsys, "--merge", tmp_path / "a", tmp_path / "b", "--format", "latex")
    assert code == 0
    merged = merge_suite_results(tmp_path / "a", tmp_path / "b")
    assert merged.datasets == ("stdlib-docs", "woods")
    assert out == merged.to_latex()
    index = json.loads((tmp_path / "a" / "suite.json").read_text())
    assert index["format"] == "ef-evaluation-suite" and index["datasets"] == ["stdlib-docs"]
    cell = json.loads((tmp_path / "a" / "stdlib-docs" / "bm25.json").read_text())
    assert cell["format"] == "ef-evaluation-suite-cell"
    assert cell["report"]["manifest"]["retriever"] == "bm25"


def test_usage_errors_say_what_is_wrong(capsys, datasets):
    code, _, err = _run(capsys, datasets[0])
    assert code == 2 and "give at least one --system" in err
    code, _, err = _run(capsys, datasets[0], "--system", "sparse")
    assert code == 2 and "unknown system 'sparse'" in err


def test_a_baseline_that_is_no_system_is_a_usage_error_and_a_missing_folder_a_runtime_one(
    capsys, tmp_path, datasets
):
    code, _, err = _run(capsys, datasets[0], "--system", "bm25", "--baseline", "dense")
    assert code == 2 and "--baseline 'dense' is not one of the systems: bm25" in err
    code, _, err = _run(capsys, datasets[0], datasets[0], "--system", "bm25")
    assert code == 2 and "two datasets share one name" in err
    code, _, err = _run(capsys, tmp_path / "nowhere", "--system", "bm25", "--no-progress")
    assert code == 1 and "nowhere" in err


def test_a_urls_credentials_never_name_the_system(capsys, tmp_path, datasets):
    url = "http://user:s3cret@127.0.0.1:9/search"
    code, out, err = _run(capsys, datasets[0], "--system", url, "--journal-dir", tmp_path / "j")
    assert code == 1  # nothing listens on port 9
    assert "http://user:***@127.0.0.1:9/search" in err
    assert "s3cret" not in out + err
    assert [p.name for p in (tmp_path / "j" / "stdlib-docs").iterdir()] == [
        "http_user_127.0.0.1_9_search.jsonl"
    ]
