"""``ef-eval suite``'s inputs: the merged folders' files read as every saved report is (regular,
strict, means that are their queries'), outputs never onto them, datasets and metric names
checked before a cell runs, the documented factory form, and what the table says of one."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from ef.evaluation import evaluate_suite, write_beir
from in_process_cli import ef_eval

DOCS = Path(__file__).parents[1] / "docs" / "suites.md"
PETS = (
    {
        "d1": "cats purr when they are content",
        "d2": "dogs bark at the postman",
        "d3": "a cat sleeps sixteen hours a day",
    },
    {"q1": "why do cats purr", "q2": "how long does a cat sleep", "q3": "do dogs bark"},
    {"q1": {"d1": 1.0}, "q2": {"d3": 1.0}, "q3": {"d2": 1.0}},
)


def _pets(root: Path, name: str = "pets") -> Path:
    write_beir(root / name, *PETS)
    return root / name


def _results(root: Path, **options: object) -> Path:
    """A results folder of bm25 on the pets dataset: ``R/pets/bm25.json``."""
    evaluate_suite({"bm25": "bm25"}, [_pets(root)], results_dir=root / "R", **options)
    return root / "R"


def _edit_cell(path: Path, edit) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data["report"])
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


@pytest.mark.parametrize("through", ["the merged folder", "the linked folder"])
def test_a_merge_never_writes_onto_a_cell_it_reads(tmp_path, through):
    evaluate_suite({"A": "bm25"}, [_pets(tmp_path, "alpha")], results_dir=tmp_path / "R")
    # The dataset's folder of cells lives elsewhere, linked into the results folder.
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "R" / "alpha").rename(tmp_path / "elsewhere" / "alpha")
    (tmp_path / "R" / "alpha").symlink_to(tmp_path / "elsewhere" / "alpha")
    cell = tmp_path / "elsewhere" / "alpha" / "A.json"
    before = cell.read_bytes()
    output = "R/alpha/A.json" if through == "the merged folder" else "elsewhere/alpha/A.json"
    result = ef_eval("suite", "--merge", "R", "-o", output, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert f"--output {output} would replace the input" in result.stderr
    assert "A.json" in result.stderr.split("the input", 1)[1]
    assert result.stdout == ""
    assert cell.read_bytes() == before


def test_a_cell_whose_means_are_not_its_queries_is_refused_naming_the_file_and_metric(tmp_path):
    # trec_eval's aggregates too: gm_map is a geometric mean, num_rel a sum.
    results = _results(tmp_path, metrics=("ndcg", "gm_map", "num_rel"), k_values=(10,))
    cell = results / "pets" / "bm25.json"
    assert ef_eval("suite", "--merge", results, "--format", "json").returncode == 0

    def noise(report):  # rounding noise, as another machine's sums may carry
        report["metrics"]["ndcg@10"] -= 1e-13

    _edit_cell(cell, noise)
    assert ef_eval("suite", "--merge", results, "--format", "json").returncode == 0

    def edited(report):
        report["metrics"]["gm_map"] *= 1 + 1e-9

    _edit_cell(cell, edited)
    result = ef_eval("suite", "--merge", results, "--format", "json")
    assert result.returncode == 1 and result.stdout == ""
    assert f"{cell}: the mean gm_map = " in result.stderr
    assert "is not the geometric mean of its 3 per-query values" in result.stderr


def test_a_cell_that_names_a_key_twice_is_refused_naming_the_file_and_key(tmp_path):
    results = _results(tmp_path)
    cell = results / "pets" / "bm25.json"
    text = cell.read_text(encoding="utf-8")
    # The later copy holds the true value: only the strict reader can tell.
    true = json.loads(text)["report"]["metrics"]["ndcg@10"]
    cell.write_text(
        text.replace('"ndcg@10": ', f'"ndcg@10": 0.25, "ndcg@10": {true!r}, "ignored": ', 1),
        encoding="utf-8",
    )
    result = ef_eval("suite", "--merge", results)
    assert result.returncode == 1 and result.stdout == ""
    assert f"{cell}: not a suite results file: key 'ndcg@10' appears twice" in result.stderr


def test_a_cell_that_is_a_fifo_is_refused_naming_it_without_waiting(tmp_path):
    results = _results(tmp_path)
    cell = results / "pets" / "bm25.json"
    cell.unlink()
    os.mkfifo(cell)
    result = ef_eval("suite", "--merge", results)
    assert result.returncode == 1 and result.stdout == ""
    assert f"{cell}: a FIFO, not a regular file" in result.stderr


def test_a_dataset_without_query_texts_is_named_with_its_queries_file(tmp_path):
    _pets(tmp_path)
    _pets(tmp_path, "empty")
    (tmp_path / "empty" / "queries.jsonl").write_text("", encoding="utf-8")
    result = ef_eval("suite", "pets", "empty", "--system", "bm25", cwd=tmp_path)
    assert result.returncode == 1
    assert (
        "the suite's dataset 'empty': empty/queries.jsonl holds 0 queries, none of its 3 "
        "judged queries, so no query can be scored"
    ) in result.stderr
    assert "cell 2/2 empty" not in result.stderr  # refused before its cells


def test_an_unknown_table_metric_is_refused_before_any_cell_runs(tmp_path):
    _pets(tmp_path)
    result = ef_eval(
        "suite", "pets", "--system", "bm25", "--metric", "nosuch@10", "--results-dir", "R",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2
    assert "unknown metric 'nosuch@10'" in result.stderr
    assert "cell" not in result.stderr and not (tmp_path / "R").exists()
    # The library checks it first too: the missing dataset is never looked for.
    with pytest.raises(ValueError, match="'nosuch@10'"):
        evaluate_suite(["bm25"], [tmp_path / "nowhere"], metric="nosuch@10")


def _documented_factory() -> str:
    """The ``def overlap(corpus)`` of docs/suites.md's first example, without its prompts."""
    lines = DOCS.read_text(encoding="utf-8").splitlines()
    start = lines.index(">>> def overlap(corpus):")
    code = [lines[start][4:]]
    for line in lines[start + 1 :]:
        if not line.startswith("... "):
            break
        code.append(line[4:])
    return "\n".join(code) + "\n"


def test_the_documented_factory_named_module_attr_is_called_with_each_corpus(tmp_path):
    assert "--system overlap=mysystems:overlap" in DOCS.read_text(encoding="utf-8")
    (tmp_path / "mysystems.py").write_text(_documented_factory(), encoding="utf-8")
    _pets(tmp_path)
    saved_path = list(sys.path)
    try:
        result = ef_eval(
            "suite", "pets", "--system", "overlap=mysystems:overlap", "--format", "json",
            cwd=tmp_path,
        )  # fmt: skip
        factory = sys.modules["mysystems"].overlap
    finally:
        sys.path[:] = saved_path
        sys.modules.pop("mysystems", None)
    assert result.returncode == 0, result.stderr
    library = evaluate_suite({"overlap": factory}, [tmp_path / "pets"])
    assert json.loads(result.stdout)["cells"]["pets"]["overlap"]["metrics"] == dict(
        library.cells["pets"]["overlap"].metrics
    )


def test_a_suite_of_one_counts_in_the_singular(tmp_path):
    write_beir(tmp_path / "one", PETS[0], {"q1": PETS[1]["q1"]}, {"q1": PETS[2]["q1"]})
    result = ef_eval(
        "suite", "one", "--system", "bm25", "--format", "markdown", "--html", "page.html",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "| Average (macro, 1 dataset) |" in result.stdout
    assert "| Average (micro, 1 query) |" in result.stdout
    assert "mean over the 1 dataset; micro: the mean over the 1 query of the dataset." in (
        result.stdout.replace("\n", " ")
    )
    assert "suite: 1 dataset × 1 system = 1 cell" in result.stderr
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert "<title>Suite: 1 system, 1 dataset</title>" in page
    assert "1 system over 1 dataset" in page
    shown = result.stdout + result.stderr + page
    assert not re.search(r"\b1 (datasets|systems|queries|cells)\b", shown)


def test_a_piped_table_is_plain_text_with_the_best_value_marked(tmp_path):
    _pets(tmp_path)
    result = ef_eval(
        "suite", "pets", "builtin:stdlib-docs", "--system", "bm25", "--system", "cos=bm25",
        "--no-progress", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "**" not in out and not set("┏┃┡│└━") & set(out)
    assert re.search(r"^  pets +1\.0000★ +1\.0000★$", out, re.MULTILINE), out
    assert "★: the best system per row." in out
