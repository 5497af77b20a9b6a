"""Comparison reports as tables: Markdown, LaTeX and the terminal (rich).

Every rendering shows the same thing: one row per system (the baseline first), one column per
metric, the mean over the paired queries; the best mean of each metric in bold, a dagger on a
mean that differs significantly from the baseline's, and a caption naming the test, the
correction and the significance level, so a table copied into a paper says how it was made.

One comparison, every rendering — two systems over six queries, with the randomisation test:

>>> from ef.evaluation import RetrievalEvalReport, compare
>>> def scored(*values):
...     per_query = {f"q{i}": {"ndcg@10": v} for i, v in enumerate(values)}
...     return RetrievalEvalReport({}, per_query, len(values), (10,))
>>> report = compare(
...     {"bm25": scored(0.25, 0.5, 0.125, 0.5, 0.25, 0.375),
...      "dense": scored(0.5, 0.75, 0.5, 0.875, 0.625, 0.75)},
...     baseline="bm25", tests=("randomization",))
>>> print(caption(report))  # doctest: +NORMALIZE_WHITESPACE
Mean over 6 paired queries; baseline: bm25. Bold: the best system per metric.
†: significantly different from the baseline at α = 0.05 (two-sided paired
randomisation test, 10,000 permutations, seed 0; Holm correction over 1 comparison
per metric).
>>> print(to_markdown(report, digits=3))  # doctest: +ELLIPSIS
| System | ndcg@10 |
| :--- | ---: |
| bm25 (baseline) | 0.333 |
| dense | **0.667**† |
<BLANKLINE>
Table: Mean over 6 paired queries; baseline: bm25. Bold: the best system per metric. ...
<BLANKLINE>
>>> print(to_latex(report, digits=3))  # doctest: +ELLIPSIS
\\begin{table}[t]
  \\centering
  \\caption{Mean over 6 paired queries; baseline: bm25. ... at $\\alpha$ = 0.05 ...}
  \\begin{tabular}{lr}
    \\toprule
    System & ndcg@10 \\\\
    \\midrule
    bm25 (baseline) & 0.333 \\\\
    dense & \\textbf{0.667}$^\\dagger$ \\\\
    \\bottomrule
  \\end{tabular}
\\end{table}
<BLANKLINE>
>>> from rich.console import Console
>>> Console(width=60).print(to_table(report))  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┓
┃ System                               ┃           ndcg@10 ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━┩
│ bm25 (baseline)                      │            0.3333 │
│ dense                                │           0.6667† │
└──────────────────────────────────────┴───────────────────┘
Mean over 6 paired queries; baseline: bm25. Bold: the best ...
>>> Console(width=80).print(to_details_table(report))  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
┏━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━┳━━━━━━━┳━━━━━━━┳━━━━━━━━━━━━━━━━━━━┓
┃ System ┃ Metric  ┃  Δ mean ┃     d ┃ W/T/L ┃ p (randomization) ┃
┡━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━╇━━━━━━━╇━━━━━━━╇━━━━━━━━━━━━━━━━━━━┩
│ dense  │ ndcg@10 │ +0.3333 │ +5.16 │ 6/0/0 │           0.0312† │
└────────┴─────────┴─────────┴───────┴───────┴───────────────────┘
Differences from the baseline (bm25) over 6 queries; p-values...
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: the report's methods import this module
    from rich.table import Table

    from ef.evaluation._compare.report import ComparisonReport

__all__ = ["caption", "to_details_table", "to_latex", "to_markdown", "to_table"]

_DAGGER = "†"


_TEST_NAMES = {
    "t-test": "paired t-test",
    "randomization": "paired randomisation test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "bootstrap": "paired bootstrap",
}

_CORRECTION_NAMES = {
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "bh": "Benjamini–Hochberg",
}


def _deciding_test(report: ComparisonReport, test: str | None) -> str:
    chosen = report.tests[0] if test is None else test
    if chosen not in report.tests:
        raise ValueError(f"test {chosen!r} was not run; the report has: {', '.join(report.tests)}")
    return chosen


def caption(report: ComparisonReport, test: str | None = None) -> str:
    """The caption every rendering carries: what the numbers are and what the marks mean.

    :param report: the comparison.
    :param test: the test whose results are marked; ``None`` means the report's first.
    :raises ValueError: if ``test`` was not run.

    The module's example shows it.
    """
    test = _deciding_test(report, test)
    compared = len(report.systems) - 1
    if test == "bootstrap":
        mark = (
            f"{_DAGGER}: the {report.confidence_level:.0%} paired bootstrap interval of the "
            f"difference from the baseline ({report.n_resamples:,} resamples, seed "
            f"{report.seed}) leaves out 0, with no correction."
        )
    else:
        if test == "randomization":
            detail = f", {report.n_permutations:,} permutations, seed {report.seed}"
        else:
            detail = ""
        plural = "s" if compared != 1 else ""
        correction = (
            "no correction"
            if report.correction is None
            else f"{_CORRECTION_NAMES[report.correction]} correction over {compared} "
            f"comparison{plural} per metric"
        )
        mark = (
            f"{_DAGGER}: significantly different from the baseline at α = {report.alpha:g} "
            f"(two-sided {_TEST_NAMES[test]}{detail}; {correction})."
        )
    return (
        f"Mean over {report.n_queries} paired queries; baseline: {report.baseline}. "
        f"Bold: the best system per metric. {mark}{_left_out(report)}"
    )


def _left_out(report: ComparisonReport) -> str:
    """Which tests left out pairs where a RAG metric did not apply; empty when none did."""
    rows = [f"{r.system} on {r.metric}: {r.not_applicable}" for r in report.comparisons]
    rows = [row for row, r in zip(rows, report.comparisons, strict=True) if r.not_applicable]
    if not rows:
        return ""
    return f" Pairs left out where the metric did not apply to a side: {'; '.join(rows)}."


def _grid(report: ComparisonReport, test: str, digits: int) -> list[list[tuple[str, bool, bool]]]:
    """Per system, per metric: ``(formatted mean, is best, differs significantly)``."""
    best = {metric: set(report.best(metric)) for metric in report.metrics}
    rows = []
    for system in report.systems:
        cells = []
        for metric in report.metrics:
            marked = system != report.baseline and report.significant(system, metric, test)
            cells.append(
                (f"{report.means[system][metric]:.{digits}f}", system in best[metric], marked)
            )
        rows.append(cells)
    return rows


def _label(report: ComparisonReport, system: str) -> str:
    return f"{system} (baseline)" if system == report.baseline else system


def _markdown_escape(text: str) -> str:
    for special in "\\`*_[]<>|":
        text = text.replace(special, "\\" + special)
    return text


def to_markdown(report: ComparisonReport, *, test: str | None = None, digits: int = 4) -> str:
    """A Markdown table (GitHub and Pandoc pipe-table syntax) with a ``Table:`` caption.

    :param report: the comparison.
    :param test: the test whose results are marked; ``None`` means the report's first.
    :param digits: decimals shown.
    :raises ValueError: if ``test`` was not run.

    The module's example shows it.
    """
    test = _deciding_test(report, test)
    header = ["System", *(_markdown_escape(m) for m in report.metrics)]
    lines = [
        "| " + " | ".join(header) + " |",
        "| :--- |" + " ---: |" * len(report.metrics),
    ]
    for system, cells in zip(report.systems, _grid(report, test, digits), strict=True):
        shown = [
            (f"**{value}**" if best else value) + (_DAGGER if marked else "")
            for value, best, marked in cells
        ]
        lines.append("| " + " | ".join([_markdown_escape(_label(report, system)), *shown]) + " |")
    return "\n".join([*lines, "", "Table: " + _markdown_escape(caption(report, test)), ""])


_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "α": r"$\alpha$",
    _DAGGER: r"$^\dagger$",
    "–": "--",
}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(char, char) for char in text)


def to_latex(report: ComparisonReport, *, test: str | None = None, digits: int = 4) -> str:
    """A LaTeX ``table`` environment with a ``\\caption`` (needs the ``booktabs`` package).

    :param report: the comparison.
    :param test: the test whose results are marked; ``None`` means the report's first.
    :param digits: decimals shown.
    :raises ValueError: if ``test`` was not run.

    The module's example shows it.
    """
    test = _deciding_test(report, test)
    header = " & ".join(["System", *(_latex_escape(m) for m in report.metrics)])
    body = []
    for system, cells in zip(report.systems, _grid(report, test, digits), strict=True):
        shown = [
            (rf"\textbf{{{value}}}" if best else value) + (r"$^\dagger$" if marked else "")
            for value, best, marked in cells
        ]
        body.append("    " + " & ".join([_latex_escape(_label(report, system)), *shown]) + r" \\")
    return "\n".join(
        [
            r"\begin{table}[t]",
            r"  \centering",
            rf"  \caption{{{_latex_escape(caption(report, test))}}}",
            rf"  \begin{{tabular}}{{l{'r' * len(report.metrics)}}}",
            r"    \toprule",
            f"    {header} \\\\",
            r"    \midrule",
            *body,
            r"    \bottomrule",
            r"  \end{tabular}",
            r"\end{table}",
            "",
        ]
    )


def to_table(
    report: ComparisonReport, *, test: str | None = None, digits: int = 4, plain: bool = False
) -> Table:
    """A rich table of the means for the terminal, best bold, significant ones daggered.

    :param report: the comparison.
    :param test: the test whose results are marked; ``None`` means the report's first.
    :param digits: decimals shown.
    :param plain: for text without styles (a pipe, a file): the best values are written
        ``**0.5000**``, as in Markdown, since bold would be lost.
    :raises ValueError: if ``test`` was not run.

    The module's example shows it.
    """
    from rich.table import Table
    from rich.text import Text

    test = _deciding_test(report, test)
    text = caption(report, test)
    # Rich wraps a caption to the table's width: widen a narrow table rather than let a
    # caption run down the screen a word at a time.
    table = Table(caption=text, caption_justify="left", min_width=min(len(text) // 3, 80))
    table.add_column("System")
    for metric in report.metrics:
        table.add_column(metric, justify="right", no_wrap=True)
    for system, cells in zip(report.systems, _grid(report, test, digits), strict=True):
        shown = [
            Text(f"**{value}**" if best and plain else value, style="bold" if best else "")
            + (_DAGGER if marked else "")
            for value, best, marked in cells
        ]
        table.add_row(Text(_label(report, system)), *shown)
    return table


def _number(value: float | None, digits: int) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.{digits}f}"


def _p(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def to_details_table(report: ComparisonReport, *, digits: int = 4) -> Table:
    """A rich table with one row per comparison: difference, interval, effect, wins, p-values.

    The p-values shown are the adjusted ones (the raw ones are in the report).

    :param report: the comparison.
    :param digits: decimals shown for the differences.

    The module's example shows it.
    """
    from rich.table import Table

    p_tests = [t for t in report.tests if t != "bootstrap"]
    correction = report.correction and _CORRECTION_NAMES[report.correction]
    table = Table(
        caption=(
            f"Differences from the baseline ({report.baseline}) over {report.n_queries} "
            f"queries; p-values two-sided, {correction or 'uncorrected'}.{_left_out(report)}"
        ),
        caption_justify="left",
    )
    # Numbers never wrap (half an interval on each line reads as two numbers); names may.
    table.add_column("System", overflow="fold")
    table.add_column("Metric", overflow="fold")
    table.add_column("Δ mean", justify="right", no_wrap=True)
    if "bootstrap" in report.tests:
        table.add_column(f"{report.confidence_level:.0%} CI", justify="right", no_wrap=True)
    table.add_column("d", justify="right", no_wrap=True)
    table.add_column("W/T/L", justify="right", no_wrap=True)
    for test in p_tests:
        table.add_column(f"p ({test})", justify="right", no_wrap=True)
    for row in report.comparisons:
        cells = [row.system, row.metric, _number(row.difference, digits)]
        if "bootstrap" in report.tests:
            interval = row.confidence_interval
            cells.append(
                "n/a"
                if interval is None
                else f"[{_number(interval[0], digits)}, {_number(interval[1], digits)}]"
            )
        cells.append(_number(row.effect_size, 2))
        cells.append(f"{row.wins}/{row.ties}/{row.losses}")
        for test in p_tests:
            marked = report.significant(row.system, row.metric, test)
            cells.append(_p(row.adjusted_p_values[test]) + (_DAGGER if marked else ""))
        table.add_row(*cells)
    return table
