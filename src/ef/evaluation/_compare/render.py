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

from ef.evaluation._compare.render_groups import group_markdown
from ef.evaluation._compare.render_pairs import CORRECTION_NAMES as _CORRECTION_NAMES
from ef.evaluation._compare.render_pairs import DAGGER as _DAGGER
from ef.evaluation._compare.render_pairs import TEST_NAMES as _TEST_NAMES
from ef.evaluation._compare.render_pairs import (
    family_clause,
    format_p_value,
    p_value_latex,
    p_value_markdown,
)
from ef.evaluation._report.table import Cell, Figure
from ef.evaluation._report.table import Table as _Table
from ef.evaluation._report.table_cells import BEST

if TYPE_CHECKING:  # annotations only: the report's methods import this module
    from rich.table import Table

    from ef.evaluation._compare.report import ComparisonReport

__all__ = [
    "BEST",
    "caption",
    "details_table",
    "means_table",
    "to_details_table",
    "to_latex",
    "to_markdown",
    "to_table",
]


def _deciding_test(report: ComparisonReport, test: str | None) -> str:
    chosen = report.tests[0] if test is None else test
    if chosen not in report.tests:
        raise ValueError(f"test {chosen!r} was not run; the report has: {', '.join(report.tests)}")
    return chosen


def caption(
    report: ComparisonReport, test: str | None = None, *, best_mark: str | None = None
) -> str:
    """The caption every rendering carries: what the numbers are and what the marks mean.

    :param report: the comparison.
    :param test: the test whose results are marked; ``None`` means the report's first.
    :param best_mark: the symbol that marks the best system per metric, where bold cannot
        (plain text); ``None`` says bold.
    :raises ValueError: if ``test`` was not run.

    The module's example shows it.
    """
    test = _deciding_test(report, test)
    compared = len(report.systems) - 1
    best = f"{best_mark or 'Bold'}: the best system per metric."
    if report.baseline is None:
        if test == "bootstrap":
            how = (
                f": the {report.confidence_level:.0%} paired bootstrap interval of their "
                f"difference ({report.n_resamples:,} resamples, seed {report.seed}) holds 0"
            )
        else:
            how = f" at α = {report.alpha:g} ({family_clause(report, test)})"
        return (
            f"Mean over {report.n_queries} paired queries; every pair of systems compared. "
            f"{best} Letters: systems that share a letter do not "
            f"differ significantly{how}.{_left_out(report)}"
        )
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
        f"{best} {mark}{_left_out(report)}"
    )


def _left_out(report: ComparisonReport) -> str:
    """Which tests left out pairs where a RAG metric did not apply; empty when none did."""
    rows = [f"{r.system} on {r.metric}: {r.not_applicable}" for r in report.comparisons]
    rows = [row for row, r in zip(rows, report.comparisons, strict=True) if r.not_applicable]
    if not rows:
        return ""
    return f" Pairs left out where the metric did not apply to a side: {'; '.join(rows)}."


def _grid(report: ComparisonReport, test: str, digits: int) -> list[list[Figure]]:
    """Per system, per metric: the mean, bold when best, marked with a dagger when the system
    differs significantly from the baseline, or with its group letters when every pair was
    compared."""
    best = {metric: set(report.best(metric)) for metric in report.metrics}
    letters = {}
    if report.baseline is None:
        letters = {metric: report.groups(metric, test) for metric in report.metrics}
    rows = []
    for system in report.systems:
        cells = []
        for metric in report.metrics:
            if report.baseline is None:
                mark = letters[metric][system]
            else:
                marked = system != report.baseline and report.significant(system, metric, test)
                mark = _DAGGER if marked else ""
            mean = f"{report.means[system][metric]:.{digits}f}"
            cells.append(Figure(mean, bold=system in best[metric], mark=mark))
        rows.append(cells)
    return rows


def _label(report: ComparisonReport, system: str) -> str:
    return f"{system} (baseline)" if system == report.baseline else system


def means_table(
    report: ComparisonReport, test: str | None = None, digits: int = 4, *, plain: bool = False
) -> _Table:
    """The means as a table: a row per system (the baseline first), a column per metric; for
    plain text (``plain``), the caption says the best are marked :data:`BEST`."""
    test = _deciding_test(report, test)
    rows: list[list[Cell]] = [
        [_label(report, system), *cells]
        for system, cells in zip(report.systems, _grid(report, test, digits), strict=True)
    ]
    text = caption(report, test, best_mark=BEST if plain else None)
    return _Table("Means", ["System", *report.metrics], rows, caption=text)


def to_markdown(report: ComparisonReport, *, test: str | None = None, digits: int = 4) -> str:
    """A Markdown table (GitHub and Pandoc pipe-table syntax) with a ``Table:`` caption.

    :param report: the comparison.
    :param test: the test whose results are marked; ``None`` means the report's first.
    :param digits: decimals shown.
    :raises ValueError: if ``test`` was not run.

    The module's example shows it.
    """
    test = _deciding_test(report, test)
    text = means_table(report, test, digits).to_markdown()
    if report.baseline is None and test != "bootstrap":
        text += "".join("\n" + p_value_markdown(report, m, test) for m in report.metrics)
    if report.group_counts:
        text += "\n" + group_markdown(report, test, digits)
    return text


def to_latex(report: ComparisonReport, *, test: str | None = None, digits: int = 4) -> str:
    """The means, and without a baseline the p-values, as :func:`to_markdown` writes them,
    in LaTeX ``table`` environments with a ``\\caption`` (they need the ``booktabs`` package).
    The module's example shows it."""
    test = _deciding_test(report, test)
    pairs = ""
    if report.baseline is None and test != "bootstrap":
        pairs = "".join("\n" + p_value_latex(report, m, test) for m in report.metrics)
    return means_table(report, test, digits).to_latex() + pairs


def to_table(
    report: ComparisonReport, *, test: str | None = None, digits: int = 4, plain: bool = False
) -> Table:
    """A rich table of the means for the terminal, best bold, significant ones daggered.

    :param report: the comparison.
    :param test: the test whose results are marked; ``None`` means the report's first.
    :param digits: decimals shown.
    :param plain: for text without styles (a pipe, a file): the best values are marked
        with :data:`BEST` (``0.5000★``) and the caption says so, since bold would be lost.
    :raises ValueError: if ``test`` was not run.

    The module's example shows it.
    """
    return means_table(report, test, digits, plain=plain).to_rich(framed=True, plain=plain)


def _number(value: float | None, digits: int) -> Figure:
    return Figure("n/a" if value is None else f"{value:+.{digits}f}")


def details_table(report: ComparisonReport, *, digits: int = 4) -> _Table:
    """One row per comparison: difference, interval, effect, wins, adjusted p-values, and
    the risk measures when they were computed."""
    p_tests = [t for t in report.tests if t != "bootstrap"]
    correction = report.correction and _CORRECTION_NAMES[report.correction]
    against = f"the baseline ({report.baseline})" if report.baseline else "the system in Vs"
    text = (
        f"Differences from {against} over {report.n_queries} "
        f"queries; p-values two-sided, {correction or 'uncorrected'}.{_left_out(report)}"
    )
    columns = ["System", *(["Vs"] if report.baseline is None else []), "Metric", "Δ mean"]
    if "bootstrap" in report.tests:
        columns.append(f"{report.confidence_level:.0%} CI")
    columns += ["d", "W/T/L", *(f"p ({test})" for test in p_tests)]
    if report.risk_alpha is not None:
        columns += [f"URisk α={report.risk_alpha:g}", "TRisk", "GeoRisk"]
    rows: list[list[Cell]] = []
    for row in report.comparisons:
        other = [] if report.baseline is not None else [row.baseline or ""]
        cells: list[Cell] = [row.system, *other, row.metric, _number(row.difference, digits)]
        if "bootstrap" in report.tests:
            interval = row.confidence_interval
            cells.append(
                Figure("n/a")
                if interval is None
                else Figure(
                    f"[{_number(interval[0], digits).text}, {_number(interval[1], digits).text}]"
                )
            )
        cells.append(_number(row.effect_size, 2))
        cells.append(Figure(f"{row.wins}/{row.ties}/{row.losses}"))
        for test in p_tests:
            marked = report.significant(row.system, row.metric, test, against=row.baseline)
            p_value = format_p_value(row.adjusted_p_values[test])
            cells.append(Figure(p_value, mark=_DAGGER if marked else ""))
        if report.risk_alpha is not None:
            reading = {"riskier": " (riskier)", "safer": " (safer)"}.get(row.risk_reading or "", "")
            trisk = Figure(_number(row.trisk, 2).text + reading)
            cells += [_number(row.urisk, digits), trisk]
            cells.append(_number(report.georisk[row.system].get(row.metric), digits))
        rows.append(cells)
    return _Table("Differences", columns, rows, caption=text)


def to_details_table(report: ComparisonReport, *, digits: int = 4) -> Table:
    """A rich table with one row per comparison: difference, interval, effect, wins, p-values.

    The p-values shown are the adjusted ones (the raw ones are in the report).

    :param report: the comparison.
    :param digits: decimals shown for the differences.

    The module's example shows it.
    """
    return details_table(report, digits=digits).to_rich(framed=True)
