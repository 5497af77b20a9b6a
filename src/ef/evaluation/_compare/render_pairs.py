"""A comparison of every pair of systems as tables: group letters, and a square table of
p-values per metric (Markdown, LaTeX, the terminal); the heat map is in the HTML page.

>>> from ef.evaluation import RetrievalEvalReport, compare
>>> def scored(*values):
...     per_query = {f"q{i}": {"ndcg@10": v} for i, v in enumerate(values)}
...     return RetrievalEvalReport({}, per_query, len(values), (10,))
>>> report = compare(
...     {"bm25": scored(0.25, 0.5, 0.125, 0.5, 0.25, 0.375),
...      "dense": scored(0.5, 0.75, 0.5, 0.875, 0.625, 0.75),
...      "hybrid": scored(0.5, 0.75, 0.5, 0.75, 0.625, 0.875)},
...     tests=("t-test",))
>>> report.groups("ndcg@10")
{'bm25': 'b', 'dense': 'a', 'hybrid': 'a'}
>>> print(p_value_markdown(report, "ndcg@10"))  # doctest: +NORMALIZE_WHITESPACE
| ndcg@10 | bm25 | dense | hybrid |
| :--- | ---: | ---: | ---: |
| bm25 | – | 0.0002 | 0.0010 |
| dense | 0.0002 | – | 1.0000 |
| hybrid | 0.0010 | 1.0000 | – |
<BLANKLINE>
Table: Adjusted p-values of ndcg@10 (two-sided paired t-test; Holm correction over
3 pairs × 1 metric).
<BLANKLINE>
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: the report's methods import this module
    from rich.table import Table

    from ef.evaluation._compare.report import ComparisonReport

__all__ = [
    "CORRECTION_NAMES",
    "DAGGER",
    "TEST_NAMES",
    "family_clause",
    "format_p_value",
    "latex_table",
    "p_value_caption",
    "p_value_latex",
    "p_value_markdown",
    "p_value_table",
]

DAGGER = "†"
TEST_NAMES = {
    "t-test": "paired t-test",
    "randomization": "paired randomisation test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "bootstrap": "paired bootstrap",
    "tukey": "Tukey's HSD",
}
"""What each significance test is called in captions, in every format."""
CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini–Hochberg"}


def _p_test(report: ComparisonReport, test: str | None) -> str:
    chosen = report.tests[0] if test is None else test
    if chosen not in report.tests:
        raise ValueError(f"test {chosen!r} was not run; the report has: {', '.join(report.tests)}")
    if chosen == "bootstrap":
        raise ValueError("the bootstrap gives intervals, not p-values: name another test")
    return chosen


def family_clause(report: ComparisonReport, test: str) -> str:
    """How the p-values of ``test`` were made: the test and the family it was corrected over."""
    name = TEST_NAMES.get(test, test)
    if test == "tukey":
        return f"{name} over the {len(report.systems)} systems of each metric"
    if test == "randomization":
        name += f", {report.n_permutations:,} permutations, seed {report.seed}"
    if report.correction is None:
        return f"two-sided {name}; no correction"
    correction = CORRECTION_NAMES[report.correction]
    n_metrics = len(report.metrics)
    if report.baseline is None:
        n = len(report.systems)
        family = f"{n * (n - 1) // 2} pairs × {n_metrics} metric{'s' if n_metrics != 1 else ''}"
    else:
        n = len(report.systems) - 1
        family = f"{n} comparison{'s' if n != 1 else ''} per metric"
    return f"two-sided {name}; {correction} correction over {family}"


def p_value_caption(report: ComparisonReport, metric: str, test: str | None = None) -> str:
    """The caption of the p-value table of ``metric``."""
    test = _p_test(report, test)
    return f"Adjusted p-values of {metric} ({family_clause(report, test)})."


P_FLOOR = 1e-4
"""The smallest p-value written out; a smaller one is written ``< 0.0001``."""


def format_p_value(value: float | None, *, prefix: bool = False) -> str:
    """A p-value as every rendering writes it (terminal, Markdown, LaTeX, HTML): four
    decimals, or ``< 0.0001`` below that, never ``0.0000``; ``n/a`` when undefined.

    :param value: the p-value, or None.
    :param prefix: write it as a statement, ``p = 0.0312`` or ``p < 0.0001``.

    >>> format_p_value(0.03125), format_p_value(3e-7), format_p_value(None)
    ('0.0312', '< 0.0001', 'n/a')
    >>> format_p_value(0.00009, prefix=True), format_p_value(1.0, prefix=True)
    ('p < 0.0001', 'p = 1.0000')
    """
    if value is None:
        return "n/a"
    text = f"< {P_FLOOR:.4f}" if value < P_FLOOR else f"{value:.4f}"
    if not prefix:
        return text
    return f"p {text}" if value < P_FLOOR else f"p = {text}"


def _cells(report: ComparisonReport, metric: str, test: str) -> list[list[str]]:
    table = report.p_value_table(metric, test)
    return [
        ["–" if a == b else format_p_value(table[a][b]) for b in report.systems]
        for a in report.systems
    ]


def p_value_markdown(report: ComparisonReport, metric: str, test: str | None = None) -> str:
    """The square table of adjusted p-values of ``metric`` in Markdown, with its caption."""
    test = _p_test(report, test)
    lines = [
        "| " + " | ".join([markdown_escape(metric), *map(markdown_escape, report.systems)]) + " |",
        "| :--- |" + " ---: |" * len(report.systems),
    ]
    for system, cells in zip(report.systems, _cells(report, metric, test), strict=True):
        lines.append("| " + " | ".join([markdown_escape(system), *cells]) + " |")
    caption = markdown_escape(p_value_caption(report, metric, test))
    return "\n".join([*lines, "", f"Table: {caption}", ""])


def markdown_escape(text: str) -> str:
    """``text`` with Markdown's special characters escaped."""
    for special in "\\`*_[]<>|":
        text = text.replace(special, "\\" + special)
    return text


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
    DAGGER: r"$^\dagger$",
    "–": "--",
    "<": r"$<$",
    ">": r"$>$",
}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters (and α, †, –, ``<``, ``>``) written for LaTeX."""
    return "".join(_LATEX_SPECIALS.get(char, char) for char in text)


def p_value_latex(report: ComparisonReport, metric: str, test: str | None = None) -> str:
    """The square table of adjusted p-values of ``metric`` as a LaTeX ``table`` (booktabs)."""
    test = _p_test(report, test)
    header = " & ".join([latex_escape(metric), *map(latex_escape, report.systems)])
    body = [
        "    " + " & ".join([latex_escape(system), *map(latex_escape, cells)]) + r" \\"
        for system, cells in zip(report.systems, _cells(report, metric, test), strict=True)
    ]
    caption = p_value_caption(report, metric, test)
    return latex_table(caption, len(report.systems), header, body)


def latex_table(caption: str, columns: int, header: str, body: list[str]) -> str:
    """A booktabs LaTeX ``table``: ``caption`` (escaped here), a label column and ``columns``
    right-aligned ones, the ``header`` row and the ``body`` rows (each ending in ``\\\\``)."""
    return "\n".join(
        [
            r"\begin{table}[t]",
            r"  \centering",
            rf"  \caption{{{latex_escape(caption)}}}",
            rf"  \begin{{tabular}}{{l{'r' * columns}}}",
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


def p_value_table(report: ComparisonReport, metric: str, test: str | None = None) -> Table:
    """The square table of adjusted p-values of ``metric`` for the terminal (rich)."""
    from rich.table import Table

    test = _p_test(report, test)
    table = Table(caption=p_value_caption(report, metric, test), caption_justify="left")
    table.add_column(metric, overflow="fold")
    for system in report.systems:
        table.add_column(system, justify="right", no_wrap=True)
    for system, cells in zip(report.systems, _cells(report, metric, test), strict=True):
        table.add_row(system, *cells)
    return table
