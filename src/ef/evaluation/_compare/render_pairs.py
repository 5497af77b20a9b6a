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

from ef.evaluation._report.table import Cell, Figure
from ef.evaluation._report.table import Table as _Table

if TYPE_CHECKING:  # annotations only: the report's methods import this module
    from rich.table import Table

    from ef.evaluation._compare.report import ComparisonReport

__all__ = [
    "CORRECTION_NAMES",
    "DAGGER",
    "TEST_NAMES",
    "family_clause",
    "format_p_value",
    "p_value_caption",
    "p_value_latex",
    "p_value_markdown",
    "p_value_table",
    "p_values",
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


def p_values(report: ComparisonReport, metric: str, test: str | None = None) -> _Table:
    """The square table of adjusted p-values of ``metric``, with its caption."""
    test = _p_test(report, test)
    rows: list[list[Cell]] = [
        [system, *map(Figure, cells)]
        for system, cells in zip(report.systems, _cells(report, metric, test), strict=True)
    ]
    return _Table(
        f"Adjusted p-values of {metric}",
        [metric, *report.systems],
        rows,
        caption=p_value_caption(report, metric, test),
    )


def p_value_markdown(report: ComparisonReport, metric: str, test: str | None = None) -> str:
    """The square table of adjusted p-values of ``metric`` in Markdown, with its caption."""
    return p_values(report, metric, test).to_markdown()


def p_value_latex(report: ComparisonReport, metric: str, test: str | None = None) -> str:
    """The square table of adjusted p-values of ``metric`` as a LaTeX ``table`` (booktabs)."""
    return p_values(report, metric, test).to_latex()


def p_value_table(report: ComparisonReport, metric: str, test: str | None = None) -> Table:
    """The square table of adjusted p-values of ``metric`` for the terminal (rich)."""
    return p_values(report, metric, test).to_rich(framed=True)
