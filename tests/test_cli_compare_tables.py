"""What ``ef-eval compare`` prints, piped, logged or on a terminal, and how it writes p-values.

Off a terminal the tables are laid out for 80 columns (``COLUMNS``) as every ``ef-eval`` table
is: a table too wide turns (metrics down the side) or is cut into blocks of columns, and each
caption is a paragraph under its table, never wider than it. The best mean of each metric is
marked ★ and a significant difference †, both explained by the caption; no Markdown ``**``
inside a table. Each shown cell is read back and checked against the command's own
``--format json``; ``--format tsv`` is read back with the ``csv`` module. A p-value under
0.0001 is written ``< 0.0001`` in every format, never ``0.0000``.

Each distinct command runs once for the module. The plain tables come from real ``ef-eval``
processes, their output in a pipe or on a pseudo-terminal, which decides their layout. The other
formats do not depend on where the output goes: they are the same command run in-process
(``ef.evaluation.cli.main``), which spares each of them a new interpreter importing SciPy.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

import in_process_cli
from ef.evaluation import write_trec_qrels, write_trec_run
from ef.evaluation.cli import main
from test_cli_tables import ENV, on_terminal, piped

BOX_RULE = re.compile(r"^\s*─+\s*$")
SYSTEMS = ("bm25.run", "dense.run", "hybrid.run", "splade.run", "colbert.run")
METRICS = "ndcg@10,map@100,recall@100,P@10,mrr@10"
FAST = ("--permutations", "500", "--resamples", "500")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Qrels over 60 queries with integer ids, and five runs: colbert far better than bm25 (a
    p-value far under 0.0001), the others near it."""
    folder = tmp_path_factory.mktemp("compare")
    rng = random.Random(7)
    docs = [f"d{i}" for i in range(80)]
    qrels = {str(q): {doc: 1.0 for doc in rng.sample(docs, 4)} for q in range(1, 61)}
    write_trec_qrels(folder / "qrels.txt", qrels)
    paths = []
    for index, name in enumerate(SYSTEMS):
        run = {}
        for query, judged in qrels.items():
            ranked = rng.sample(docs, 30)
            if name == "colbert.run":
                ranked = [*judged, *(doc for doc in ranked if doc not in judged)]
            elif index and rng.random() < 0.2 * index:
                ranked.insert(rng.randint(0, 5), next(iter(judged)))
            run[query] = {doc: float(100 - rank) for rank, doc in enumerate(ranked[:30])}
        write_trec_run(folder / name, run, tag=name)
        paths.append(folder / name)
    return {"qrels": folder / "qrels.txt", "runs": paths}


def sections(text: str) -> dict[str, list[tuple[list[str], list[list[str]]]]]:
    """The table blocks of ``compare``'s plain output under each title: header and rows, cells
    split where two spaces or more part them (a cell holds single spaces at most)."""
    found: dict[str, list[tuple[list[str], list[list[str]]]]] = {}
    lines = text.splitlines()
    title = ""
    for index, line in enumerate(lines):
        if line in ("Means", "Differences") or line.startswith("Adjusted p-values of "):
            title = line
        if BOX_RULE.match(line):
            end = lines.index("", index)
            split = [re.split(r"\s{2,}", row.strip()) for row in [lines[index - 1]]]
            rows = [re.split(r"\s{2,}", row.strip()) for row in lines[index + 1 : end]]
            found.setdefault(title, []).append((split[0], rows))
    return found


def means_shown(blocks: list[tuple[list[str], list[list[str]]]]) -> dict[tuple[str, str], str]:
    """Every cell of the means table, however it was laid out: ``{(system, metric): text}``."""
    shown: dict[tuple[str, str], str] = {}
    for header, rows in blocks:
        turned = header[0] != "System"
        for row in rows:
            label, *values = row
            names = header if turned else header[1:]
            for name, value in zip(names, values, strict=True):
                system, metric = (name, label) if turned else (label, name)
                system = system.removesuffix(" (baseline)")
                assert (system, metric) not in shown
                shown[system, metric] = value
    return shown


def p_text(value: float | None) -> str:
    """A p-value written as the tables write it, from the JSON's full-precision number."""
    if value is None:
        return "n/a"
    return "< 0.0001" if value < 0.0001 else f"{value:.4f}"


def compare_args(runs: dict[str, Any], *extra: object) -> list[object]:
    return ["compare", runs["qrels"], *runs["runs"], "--metrics", METRICS, *FAST, *extra]


class Outputs:
    """What ``ef-eval compare`` on the module's runs prints, each distinct command run once."""

    def __init__(self, runs: dict[str, Any]) -> None:
        self.runs = runs
        self.seen: dict[tuple[str, ...], str] = {}

    def piped(self, *extra: object) -> str:
        """The plain table of a real ``ef-eval`` process writing into a pipe."""
        key = ("piped", *map(str, extra))
        if key not in self.seen:
            self.seen[key] = piped(*compare_args(self.runs, *extra))
        return self.seen[key]

    def printed(self, format: str, *extra: object) -> str:
        """What the command prints with ``--format format``, run in-process."""
        key = (format, *map(str, extra))
        if key not in self.seen:
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main([*map(str, compare_args(self.runs, *extra)), "--format", format])
            assert code == 0, err.getvalue()
            self.seen[key] = out.getvalue()
        return self.seen[key]


@pytest.fixture(scope="module")
def outputs(runs: dict[str, Any]) -> Outputs:
    return Outputs(runs)


@pytest.mark.timeout(180)  # at least 10 times its time on an idle 2-core machine
def test_piped_tables_fit_80_columns_with_marks_a_caption_explains(outputs: Outputs) -> None:
    text = outputs.piped("--baseline", "bm25.run")
    assert max(map(len, text.splitlines())) <= 80
    assert "**" not in text and "\x1b" not in text
    data = json.loads(outputs.printed("json", "--baseline", "bm25.run"))
    found = sections(text)
    assert set(found) == {"Means", "Differences"}
    expected = {}
    for metric in data["metrics"]:
        top = max(data["means"][system][metric] for system in SYSTEMS)
        for system in SYSTEMS:
            mean = data["means"][system][metric]
            (row,) = [
                r for r in data["comparisons"] if r["system"] == system and r["metric"] == metric
            ] or [None]
            significant = row is not None and row["adjusted_p_values"]["t-test"] <= data["alpha"]
            marks = ("★" if mean == top else "") + ("†" if significant else "")
            expected[system, metric] = f"{mean:.4f}{marks}"
    assert means_shown(found["Means"]) == expected
    assert any("★" in cell for cell in expected.values())
    assert any("†" in cell for cell in expected.values())
    (caption,) = [p for p in text.split("\n\n") if p.startswith("Mean over")]
    caption = " ".join(caption.split())  # the paragraph under the means
    assert caption.startswith("Mean over 60 paired queries; baseline: bm25.run. ★: the best")
    assert "†: significantly different from the baseline at α = 0.05" in caption


@pytest.mark.timeout(180)  # at least 10 times its time on an idle 2-core machine
def test_piped_differences_show_each_adjusted_p_value(outputs: Outputs) -> None:
    text = outputs.piped("--baseline", "bm25.run")
    data = json.loads(outputs.printed("json", "--baseline", "bm25.run"))
    shown: dict[tuple[str, str], dict[str, str]] = {}
    for header, rows in sections(text)["Differences"]:
        assert header[:2] == ["System", "Metric"]
        for system, metric, *values in rows:
            entry = shown.setdefault((system, metric), {})
            entry.update(zip(header[2:], values, strict=True))
    assert len(shown) == len(data["comparisons"]) == 4 * 5
    for row in data["comparisons"]:
        cells = shown[row["system"], row["metric"]]
        assert cells["Δ mean"] == f"{row['difference']:+.4f}"
        for test in ("t-test", "randomization"):
            p = row["adjusted_p_values"][test]
            assert cells[f"p ({test})"].rstrip("†") == p_text(p)
    colbert = shown["colbert.run", "ndcg@10"]["p (t-test)"]
    assert colbert == "< 0.0001†" and "0.0000" not in text


@pytest.mark.timeout(180)  # at least 10 times its time on an idle 2-core machine
def test_every_pair_fits_too_and_its_p_value_tables_say_under(outputs: Outputs) -> None:
    text = outputs.piped("--tests", "t-test")
    assert max(map(len, text.splitlines())) <= 80
    assert "**" not in text and "0.0000" not in text
    data = json.loads(outputs.printed("json", "--tests", "t-test"))
    found = sections(text)
    for metric in data["metrics"]:
        cells: dict[tuple[str, str], str] = {}
        for header, rows in found[f"Adjusted p-values of {metric}"]:
            names = header[1:] if header[0] == metric else header
            for label, *values in rows:
                cells.update(((label, name), v) for name, v in zip(names, values, strict=True))
        assert len(cells) == len(SYSTEMS) ** 2
        for row in data["comparisons"]:
            if row["metric"] == metric:
                p = p_text(row["adjusted_p_values"]["t-test"])
                assert cells[row["system"], row["baseline"]] == p
                assert cells[row["baseline"], row["system"]] == p
    assert "< 0.0001" in text


def test_on_a_terminal_the_tables_fit_its_width_without_markdown(runs: dict[str, Any]) -> None:
    text = on_terminal(compare_args(runs, "--baseline", "bm25.run"), columns=80)
    assert max(map(len, text.splitlines())) <= 80
    assert "**" not in text and "★" in text and "< 0.0001†" in text


def test_tsv_holds_every_comparison_at_full_precision(outputs: Outputs) -> None:
    args = ("--baseline", "bm25.run", "--tests", "t-test,bootstrap")
    tsv = outputs.printed("tsv", *args)
    header, *rows = list(csv.reader(io.StringIO(tsv), delimiter="\t"))
    data = json.loads(outputs.printed("json", *args))
    assert header[:3] == ["system", "metric", "mean"] and "p_t-test_adjusted" in header
    assert len(rows) == len(data["comparisons"])
    for row, expected in zip(rows, data["comparisons"], strict=True):
        cells = dict(zip(header, row, strict=True))
        assert (cells["system"], cells["metric"]) == (expected["system"], expected["metric"])
        assert float(cells["difference"]) == expected["difference"]
        assert float(cells["p_t-test_adjusted"]) == expected["adjusted_p_values"]["t-test"]
        low, high = expected["confidence_interval"]
        assert (float(cells["ci_low"]), float(cells["ci_high"])) == (low, high)
        assert int(cells["wins"]) == expected["wins"]
    csv_rows = list(csv.reader(io.StringIO(outputs.printed("csv", *args))))
    assert csv_rows == [header, *rows]


def test_markdown_and_latex_write_p_under_a_floor(outputs: Outputs) -> None:
    markdown = outputs.printed("markdown", "--tests", "t-test")
    latex = outputs.printed("latex", "--tests", "t-test")
    assert "| < 0.0001 |" in markdown and "0.0000" not in markdown
    assert "& $<$ 0.0001" in latex and "0.0000" not in latex


def test_dataset_without_html_is_a_usage_error(runs: dict[str, Any], tmp_path: Path) -> None:
    done = in_process_cli.ef_eval(*compare_args(runs, "--dataset", tmp_path), env=ENV)
    assert done.returncode == 2
    assert "--dataset gives the --html page its texts: give --html too" in done.stderr


def test_the_quality_gate_writes_its_p_values_the_same_way() -> None:
    from scipy import stats

    from ef.evaluation import check, evaluate_run, parse_rule

    qrels = {f"q{i}": {f"rel{i}": 1.0} for i in range(100)}
    first = {q: {f"rel{q[1:]}": 2.0, "other": 1.0} for q in qrels}
    lost = {q: {"other": 2.0, f"rel{q[1:]}": 1.0} if int(q[1:]) % 2 else first[q] for q in qrels}
    baseline = evaluate_run(first, qrels, metrics=["mrr@10"], k_values=(10,))
    current = evaluate_run(lost, qrels, metrics=["mrr@10"], k_values=(10,))
    rule = parse_rule('mrr@10: fail_if = "significantly_worse"')
    report = check(current, baseline, [rule], correction=None)
    theirs = stats.ttest_rel([0.5 if i % 2 else 1.0 for i in range(100)], [1.0] * 100).pvalue
    assert theirs < 0.0001
    (result,) = report.results
    assert result.reason == "significantly worse (p < 0.0001, alpha 0.05)"
    assert "< 0.0001" in report.to_text() and "< 0.0001" in report.to_markdown()
    assert re.search(r"\de-\d", report.to_text()) is None  # no 3.2e-05 either
