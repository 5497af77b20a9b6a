"""The comparison tables: best in bold, significant differences marked, captions that say how."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from ef.evaluation._compare.compare import compare
from ef.evaluation._compare.render import caption, to_details_table, to_latex, to_markdown
from ef.evaluation._compare.report import ComparisonReport, PairedComparison
from ef.evaluation._report.reports import RetrievalEvalReport

METRICS = ("ndcg@10", "map@100")


def report_of(
    means: dict[str, dict[str, float]],
    p_values: dict[tuple[str, str], float | None],
    *,
    tests: tuple[str, ...] = ("t-test",),
    correction: str | None = "holm",
    alpha: float = 0.05,
    intervals: dict[tuple[str, str], tuple[float, float]] | None = None,
) -> ComparisonReport:
    """A report built by hand: the baseline is the first system of ``means``."""
    systems = list(means)
    metrics = list(next(iter(means.values())))
    rows = [
        PairedComparison(
            system=system,
            metric=metric,
            mean=means[system][metric],
            baseline_mean=means[systems[0]][metric],
            difference=means[system][metric] - means[systems[0]][metric],
            wins=1,
            ties=2,
            losses=3,
            effect_size=None,
            p_values={test: p_values[system, metric] for test in tests if test != "bootstrap"},
            adjusted_p_values={
                test: p_values[system, metric] for test in tests if test != "bootstrap"
            },
            confidence_interval=(intervals or {}).get((system, metric)),
        )
        for metric in metrics
        for system in systems[1:]
    ]
    return ComparisonReport(
        baseline=systems[0],
        systems=systems,
        metrics=metrics,
        means=means,
        comparisons=rows,
        n_queries=6,
        tests=tests,
        correction=correction,
        alpha=alpha,
    )


def markdown_cells(text: str) -> list[list[str]]:
    """The body rows of the first Markdown table in ``text``, split into cells."""
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row.strip("| ").split(" | ")] for row in rows[2:]]


def latex_cells(text: str) -> list[list[str]]:
    body = text.split("\\midrule\n", 1)[1].split("\\bottomrule", 1)[0]
    return [
        [cell.strip() for cell in line.strip().removesuffix("\\\\").split(" & ")]
        for line in body.strip().splitlines()
    ]


names = st.text(alphabet="abcdefghij", min_size=1, max_size=6)
values = st.integers(0, 8).map(lambda i: i / 8)


@st.composite
def hand_made_reports(draw: st.DrawFn) -> ComparisonReport:
    systems = draw(st.lists(names, min_size=2, max_size=4, unique=True))
    means = {s: {m: draw(values) for m in METRICS} for s in systems}
    p_values = {
        (s, m): draw(st.none() | st.sampled_from([0.001, 0.04, 0.05, 0.051, 0.5, 1.0]))
        for s in systems[1:]
        for m in METRICS
    }
    return report_of(means, p_values)


@settings(max_examples=80, deadline=None)
@given(hand_made_reports())
def test_markdown_and_latex_bold_the_best_and_mark_significant_differences(report):
    tables = {
        "markdown": (markdown_cells(to_markdown(report)), "**", "†"),
        "latex": (latex_cells(to_latex(report)), "\\textbf{", "$^\\dagger$"),
    }
    for cells, bold, dagger in tables.values():
        assert len(cells) == len(report.systems)
        for system, row in zip(report.systems, cells, strict=True):
            assert row[0] == (f"{system} (baseline)" if system == report.baseline else system)
            for metric, cell in zip(report.metrics, row[1:], strict=True):
                top = max(report.means[s][metric] for s in report.systems)
                assert cell.startswith(bold) == (report.means[system][metric] == top)
                p_value = (
                    None
                    if system == report.baseline
                    else report.comparison(system, metric).adjusted_p_values["t-test"]
                )
                assert cell.endswith(dagger) == (p_value is not None and p_value <= 0.05)
                assert f"{report.means[system][metric]:.4f}" in cell


def test_ties_for_the_best_are_all_bold():
    report = report_of(
        {"a": {"ndcg@10": 0.5}, "b": {"ndcg@10": 0.5}, "c": {"ndcg@10": 0.25}},
        {("b", "ndcg@10"): 1.0, ("c", "ndcg@10"): 0.01},
    )
    assert [row[1] for row in markdown_cells(to_markdown(report))] == [
        "**0.5000**",
        "**0.5000**",
        "0.2500†",
    ]


def test_captions_name_the_test_the_correction_and_alpha():
    report = report_of(
        {"a": {"ndcg@10": 0.5}, "b": {"ndcg@10": 0.25}, "c": {"ndcg@10": 0.75}},
        {("b", "ndcg@10"): 0.2, ("c", "ndcg@10"): 0.01},
        tests=("wilcoxon", "randomization"),
        correction="bh",
        alpha=0.01,
    )
    text = caption(report)
    assert "Wilcoxon signed-rank test" in text
    assert "Benjamini–Hochberg correction over 2 comparisons per metric" in text
    assert "α = 0.01" in text and "baseline: a" in text and "6 paired queries" in text
    text = caption(report, "randomization")
    assert "randomisation test, 10,000 permutations, seed 0" in text
    assert text in to_markdown(report, test="randomization")
    assert "Benjamini--Hochberg" in to_latex(report)
    assert "$\\alpha$ = 0.01" in to_latex(report)
    uncorrected = report_of({"a": {"m": 0.5}, "b": {"m": 0.25}}, {("b", "m"): 0.2}, correction=None)
    assert "no correction" in caption(uncorrected)


def test_the_bootstrap_marks_intervals_that_leave_out_zero():
    report = report_of(
        {"a": {"m": 0.5}, "b": {"m": 0.75}, "c": {"m": 0.55}},
        {("b", "m"): None, ("c", "m"): None},
        tests=("bootstrap",),
        intervals={("b", "m"): (0.1, 0.4), ("c", "m"): (-0.05, 0.15)},
    )
    assert [row[1] for row in markdown_cells(to_markdown(report))] == [
        "0.5000",
        "**0.7500**†",
        "0.5500",
    ]
    assert "95% paired bootstrap interval" in caption(report)


def test_the_marking_test_can_be_chosen_and_must_have_been_run():
    def scored(*values: float) -> RetrievalEvalReport:
        per_query = {f"q{i}": {"m": v} for i, v in enumerate(values)}
        return RetrievalEvalReport({}, per_query, len(values), (10,))

    # The same gain on each of five queries: the t-test's p-value is 0, while Wilcoxon's
    # cannot go below 2 / 2**5 with five queries.
    report = compare(
        {"a": scored(0.5, 0.5, 0.5, 0.5, 0.5), "b": scored(0.625, 0.625, 0.625, 0.625, 0.625)},
        baseline="a",
        metrics=("m",),
        tests=("t-test", "wilcoxon"),
    )
    assert report.significant("b", "m", "t-test") and not report.significant("b", "m", "wilcoxon")
    assert markdown_cells(to_markdown(report))[1][1].endswith("†")
    assert not markdown_cells(to_markdown(report, test="wilcoxon"))[1][1].endswith("†")
    with pytest.raises(ValueError, match="test 'bootstrap' was not run"):
        to_markdown(report, test="bootstrap")


def test_special_characters_are_escaped():
    report = report_of(
        {"bm_25|x": {"p_at&5": 0.5}, "50% {a}#$~^\\": {"p_at&5": 0.25}},
        {("50% {a}#$~^\\", "p_at&5"): 1.0},
    )
    markdown = to_markdown(report)
    # Markdown escapes only what breaks a table (a pipe, a backslash): a cell's other
    # characters are its own, as in every table the library writes.
    assert "| bm_25\\|x (baseline) |" in markdown
    assert markdown_cells(markdown)[0][0] == "bm_25\\|x (baseline)"
    assert markdown_cells(markdown)[1][0] == "50% {a}#$~^\\\\"
    latex = to_latex(report)
    assert r"System & p\_at\&5 \\" in latex
    assert r"50\% \{a\}\#\$\textasciitilde{}\textasciicircum{}\textbackslash{} & 0.2500 \\" in latex


def test_latex_table_structure():
    report = report_of(
        {"a": {"x": 0.5, "y": 0.1}, "b": {"x": 0.25, "y": 0.2}},
        {("b", "x"): 0.01, ("b", "y"): 0.5},
    )
    latex = to_latex(report, digits=2)
    assert latex.startswith("\\begin{table}[t]\n")
    assert latex.endswith("\\end{table}\n")
    assert "\\begin{tabular}{lrr}" in latex
    for rule in ("\\toprule", "\\midrule", "\\bottomrule"):
        assert latex.count(rule) == 1
    assert re.search(r"\\caption\{Mean over 6 paired queries.*Holm correction", latex)
    assert latex_cells(latex) == [
        ["a (baseline)", "\\textbf{0.50}", "0.10"],
        ["b", "0.25$^\\dagger$", "\\textbf{0.20}"],
    ]


def test_terminal_table_shows_bold_best_and_daggers():
    report = report_of(
        {"bm25": {"ndcg@10": 0.5}, "dense": {"ndcg@10": 0.625}},
        {("dense", "ndcg@10"): 0.01},
    )
    console = Console(width=100, force_terminal=True, color_system="standard", record=True)
    console.print(report.to_table())
    plain = console.export_text(styles=False, clear=False)
    styled = console.export_text(styles=True)
    assert "bm25 (baseline)" in plain and "0.6250†" in plain
    assert re.search(r"\x1b\[1m *0\.6250", styled) and not re.search(r"\x1b\[1m *0\.5000", styled)
    assert "Holm correction over 1 comparison per metric" in " ".join(plain.split())


def test_details_table_lists_every_comparison():
    report = report_of(
        {"a": {"x": 0.5, "y": 0.1}, "b": {"x": 0.25, "y": 0.2}, "c": {"x": 0.5, "y": 0.1}},
        {("b", "x"): 0.01, ("b", "y"): 0.5, ("c", "x"): None, ("c", "y"): 1.0},
        tests=("t-test", "bootstrap"),
        intervals={("b", "x"): (-0.3, -0.2)},
    )
    console = Console(width=120, record=True)
    console.print(to_details_table(report, digits=2))
    text = console.export_text()
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert len(rows) == 4
    assert re.search(r"│ b +│ x +│ +-0.25 │ \[-0.30, -0.20\] │ n/a │ 1/2/3 │ +0.0100† │", rows[0])
    assert "n/a" in rows[2] and "1.0000" in rows[3]
    assert "95% CI" in text and "p (t-test)" in text
