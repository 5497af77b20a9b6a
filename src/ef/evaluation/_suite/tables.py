"""A suite as BEIR prints it: Markdown, LaTeX and the terminal (rich), one grid for all three.

A row per dataset and a column per system, holding the mean of the table's metric; then the
average rows, over datasets (macro) and over queries (micro), and, with a baseline, the count
of datasets each system wins and loses with significance. The best value of each row is bold;
a value significantly better than the baseline's on that dataset carries ``†``, one
significantly worse ``‡``. A caption says what the numbers are and how significance was
decided, so a table pasted into a paper says how it was made.

>>> from ef.evaluation import RetrievalEvalReport, suite_report
>>> def cell(*values):
...     per_query = {f"q{i}": {"ndcg@10": v} for i, v in enumerate(values)}
...     return RetrievalEvalReport({"ndcg@10": sum(values) / len(values)}, per_query,
...                                len(values), (10,))
>>> report = suite_report(
...     {"a": {"bm25": cell(0.5, 0.25), "dense": cell(0.75, 0.5)},
...      "b": {"bm25": cell(1.0), "dense": cell(0.25)}})
>>> print(to_markdown(report, digits=3))  # doctest: +NORMALIZE_WHITESPACE
| Dataset | bm25 | dense |
| :--- | ---: | ---: |
| a | 0.375 | **0.625** |
| b | **1.000** | 0.250 |
| Average (macro, 2 datasets) | **0.688** | 0.438 |
| Average (micro, 3 queries) | **0.583** | 0.500 |
<BLANKLINE>
Table: ndcg@10 per dataset. Bold: the best system per row. Macro: the mean over the 2
datasets; micro: the mean over the 3 queries of all datasets.
<BLANKLINE>
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ef.evaluation._compare.render_pairs import CORRECTION_NAMES, TEST_NAMES
from ef.evaluation._report.table import Cell as _Cell
from ef.evaluation._report.table import Figure
from ef.evaluation._report.table import Table as _Table
from ef.evaluation._report.table_cells import BEST

if TYPE_CHECKING:
    from rich.table import Table

    from ef.evaluation._suite.report import SuiteReport

__all__ = [
    "BETTER",
    "WORSE",
    "caption",
    "counted",
    "grid",
    "suite_table",
    "to_latex",
    "to_markdown",
    "to_table",
]

BETTER = "†"
"""The mark of a value significantly better than the baseline's on its dataset."""
WORSE = "‡"
"""The mark of a value significantly worse than the baseline's on its dataset."""


def _row(values: Sequence[float | None], marks: Sequence[str], digits: int) -> list[Figure]:
    present = [v for v in values if v is not None]
    top = max(present, default=None)
    return [
        Figure("—" if v is None else f"{v:.{digits}f}", bold=v is not None and v == top, mark=mark)
        for v, mark in zip(values, marks, strict=True)
    ]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, in the plural unless ``n`` is 1.

    >>> counted(1, "dataset"), counted(2, "dataset"), counted(1, "query", "queries")
    ('1 dataset', '2 datasets', '1 query')
    """
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def _n_queries(report: SuiteReport) -> int:
    return sum(next(iter(row.values())).n_queries for row in report.cells.values() if len(row) > 0)


def grid(report: SuiteReport, digits: int = 4) -> list[tuple[str, list[Figure]]]:
    """The table's rows, each a label and one figure per system: bold the row's best, marked
    :data:`BETTER` or :data:`WORSE`."""
    rows: list[tuple[str, list[Figure]]] = []
    for dataset in report.datasets:
        values = [report.value(dataset, s) for s in report.systems]
        marks = [
            {1: BETTER, -1: WORSE}.get(report.significance(dataset, s), "") for s in report.systems
        ]
        rows.append((dataset, _row(values, marks, digits)))
    none = [""] * len(report.systems)
    for label, table in (
        (f"Average (macro, {counted(len(report.datasets), 'dataset')})", report.macro),
        (f"Average (micro, {counted(_n_queries(report), 'query', 'queries')})", report.micro),
    ):
        values = [table[s].get(report.metric) if s in table else None for s in report.systems]
        rows.append((label, _row(values, none, digits)))
    if report.baseline is not None:
        counts = [
            Figure(
                "baseline"
                if s == report.baseline
                else f"{report.significant_wins.get(s, 0)} / {report.significant_losses.get(s, 0)}"
            )
            for s in report.systems
        ]
        rows.append(("Significant wins / losses", counts))
    return rows


def caption(report: SuiteReport, *, best_mark: str | None = None) -> str:
    """What the table's numbers are and what its marks mean.

    :param best_mark: the symbol that marks the best system per row, where bold cannot
        (plain text); ``None`` says bold.
    """
    datasets = counted(len(report.datasets), "dataset")
    queries = counted(_n_queries(report), "query", "queries")
    every = "the dataset" if len(report.datasets) == 1 else "all datasets"
    parts = [
        f"{report.metric} per dataset. {best_mark or 'Bold'}: the best system per row.",
        f"Macro: the mean over the {datasets}; micro: the mean over the {queries} of {every}.",
    ]
    comparison = next(iter(report.comparisons.values()), None)
    if report.baseline is not None and comparison is not None:
        test = comparison.tests[0]
        correction = CORRECTION_NAMES.get(comparison.correction or "", "no")
        others = len(report.systems) - 1
        compared = f"{others} system{'s' if others != 1 else ''} compared"
        parts.insert(
            1,
            f"{BETTER} / {WORSE}: significantly better / worse than the baseline "
            f"({report.baseline}) on that dataset at α = {comparison.alpha:g} "
            f"({TEST_NAMES.get(test, test)}, {correction} correction over the {compared}); "
            "wins / losses count those datasets.",
        )
    return " ".join(parts)


def _header(report: SuiteReport) -> list[str]:
    return [f"{s} (baseline)" if s == report.baseline else s for s in report.systems]


def suite_table(report: SuiteReport, digits: int = 4, *, plain: bool = False) -> _Table:
    """The grid as a table with its caption, the average rows in a section of their own; for
    plain text (``plain``), the caption says the best are marked ``★``."""
    rows: list[list[_Cell]] = [[label, *cells] for label, cells in grid(report, digits)]
    return _Table(
        f"Suite: {report.metric}",
        ["Dataset", *_header(report)],
        rows,
        caption=caption(report, best_mark=BEST if plain else None),
        sections={len(report.datasets)},
    )


def to_markdown(report: SuiteReport, *, digits: int = 4) -> str:
    """The table in Markdown (GitHub's pipe tables), the caption below it."""
    return suite_table(report, digits).to_markdown()


def to_latex(report: SuiteReport, *, digits: int = 4) -> str:
    """The table as a LaTeX ``table`` (booktabs), a rule above the average rows."""
    return suite_table(report, digits).to_latex()


def to_table(report: SuiteReport, *, digits: int = 4, plain: bool = False) -> Table:
    """The table for the terminal (rich): bold for the best, the marks after the values.

    :param plain: for text without styles (a pipe, a file): the best values are marked
        with ``★`` (``0.5000★``) and the caption says so, since bold would be lost.
    """
    return suite_table(report, digits, plain=plain).to_rich(framed=True, plain=plain)
