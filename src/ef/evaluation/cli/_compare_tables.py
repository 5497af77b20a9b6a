"""What ``ef-eval compare`` prints: its tables (``--format table``) and its rows (``csv``,
``tsv``).

The tables are the comparison report's own renderings (``to_table(plain=True)``,
``to_details_table()``, ``to_p_value_table()``), laid out as every ``ef-eval`` table is
(:mod:`ef.evaluation.cli._terminal`): fitted to the terminal, or off a terminal to ``COLUMNS``
(80 when unset); a table too wide is turned (metrics down the side) or cut into blocks of
columns that each repeat the row labels. Each caption is a paragraph under its table, wrapped
to the same width. Marks are symbols explained by the caption (★ the best system per metric,
† a significant difference, letters for groups), never Markdown inside a table.

CSV and TSV hold one row per comparison at full precision, as JSON does: a p-value of 1e-12
must not print as 0.0000.
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Any

from ef.evaluation.extending import Table

if TYPE_CHECKING:
    from ef.evaluation import ComparisonReport

__all__ = ["comparison_columns", "comparison_csv", "comparison_tsv", "print_comparison"]


def comparison_tables(report: ComparisonReport) -> list[tuple[Table, str]]:
    """The tables ``--format table`` shows, each with its caption: the means, the
    differences, without a baseline the adjusted p-values of every pair per metric, and with
    query groups each group's means."""
    from ef.evaluation.cli._terminal import from_rich

    tables = [
        from_rich(report.to_table(plain=True), "Means"),
        from_rich(report.to_details_table(), "Differences"),
    ]
    test = next((t for t in report.tests if t != "bootstrap"), None)
    if report.baseline is None and test is not None:
        tables += [
            from_rich(report.to_p_value_table(metric, test), f"Adjusted p-values of {metric}")
            for metric in report.metrics
        ]
    if report.group_counts:
        tables.append(from_rich(report.to_group_table(), "Query groups"))
    return tables


def print_comparison(report: ComparisonReport, stream: IO[str], *, terminal: bool) -> None:
    """Print every table of :func:`comparison_tables` to ``stream``, a blank line apart.

    :param terminal: whether ``stream`` is a terminal (its width, colours), or plain text.
    """
    from ef.evaluation.cli._terminal import print_table

    for index, (table, caption) in enumerate(comparison_tables(report)):
        if index:
            stream.write("\n")
            stream.flush()
        print_table(table, stream, terminal=terminal, caption=caption)


def comparison_columns(report: ComparisonReport) -> tuple[list[str], list[list[Any]]]:
    """The columns of one row per comparison, and the rows (``None`` where nothing applies);
    compared with query groups, each group's comparisons follow, named in a ``group`` column
    (empty on the rows over all queries)."""
    p_tests = [test for test in report.tests if test != "bootstrap"]
    pairs = report.baseline is None
    grouped = bool(report.group_comparisons)
    columns = ["system", *(["baseline"] if pairs else []), "metric"]
    columns += [*(["group"] if grouped else []), "mean", "baseline_mean"]
    columns.append("difference")
    if "bootstrap" in report.tests:
        columns += ["ci_low", "ci_high"]
    columns += ["effect_size", "wins", "ties", "losses"]
    for test in p_tests:
        columns += [f"p_{test}", f"p_{test}_adjusted"]
    if report.risk_alpha is not None:
        columns += ["urisk", "trisk", "risk", "georisk"]
    columns.append("significant")
    rows = []
    for row in (*report.comparisons, *report.group_comparisons):
        cells: list[Any] = [row.system, *([row.baseline] if pairs else []), row.metric]
        cells += [*([row.group] if grouped else []), row.mean, row.baseline_mean, row.difference]
        if "bootstrap" in report.tests:
            cells += list(row.confidence_interval or (None, None))
        cells += [row.effect_size, row.wins, row.ties, row.losses]
        for test in p_tests:
            cells += [row.p_values[test], row.adjusted_p_values[test]]
        if report.risk_alpha is not None:
            cells += [row.urisk, row.trisk, row.risk_reading]
            overall = row.group is None  # GeoRisk is over all queries only
            cells.append(report.georisk[row.system].get(row.metric) if overall else None)
        cells.append("yes" if report.row_significant(row) else "no")
        rows.append(cells)
    return columns, rows


def comparison_csv(report: ComparisonReport) -> str:
    """:func:`comparison_columns` as CSV, numbers at full precision, nothing as empty."""
    return _full_precision(report).to_csv()


def comparison_tsv(report: ComparisonReport) -> str:
    """:func:`comparison_columns` as tab-separated values (escaped as
    :meth:`~ef.evaluation.extending.Table.to_tsv` escapes), numbers at full precision."""
    return _full_precision(report).to_tsv()


def _full_precision(report: ComparisonReport) -> Table:
    """:func:`comparison_columns` as a table of text: each number as Python writes it (a
    table's own writers would round it to 4 decimals), nothing as empty."""
    columns, rows = comparison_columns(report)
    texts = [["" if cell is None else str(cell) for cell in row] for row in rows]
    return Table("", columns, texts)
