"""The table every ``ef-eval`` subcommand builds, and its file renderings (Markdown, CSV, TSV).

The terminal rendering is :mod:`ef.evaluation.cli._terminal`; both import this module, neither
imports the other.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import TypeAlias

import attrs

__all__ = ["Cell", "Figure", "Table", "csv_text", "format_cell", "markdown_text", "tsv_text"]


@attrs.frozen
class Figure:
    """A number already written out with its marks (``0.6667★†``, ``+0.2500``, ``< 0.0001``):
    laid out as a number is (right-aligned, never wrapped), shown as written.

    >>> format_cell(Figure("0.6667†"))
    '0.6667†'
    """

    text: str


Cell: TypeAlias = str | int | float | Figure | None
"""A table cell: text, a count, a metric value, a written-out number, or nothing (a metric
that did not apply)."""


def _cell_tuple(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


def _row_tuple(rows: Iterable[Iterable[Cell]]) -> tuple[tuple[Cell, ...], ...]:
    return tuple(tuple(row) for row in rows)


@attrs.frozen
class Table:
    """Rows under named columns, with a title saying what was measured.

    :param title: one line saying what the numbers are (shown above the terminal table).
    :param columns: the column names.
    :param rows: one tuple of cells per row, as long as ``columns``.
    :raises ValueError: if a row's length differs from the number of columns.

    >>> Table("demo", ["run", "ndcg@10"], [["bm25", 0.5]]).rows
    (('bm25', 0.5),)
    """

    title: str
    columns: tuple[str, ...] = attrs.field(converter=_cell_tuple)
    rows: tuple[tuple[Cell, ...], ...] = attrs.field(converter=_row_tuple)

    def __attrs_post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"row {row!r} has {len(row)} cells; expected {len(self.columns)}")

    def numeric(self, column: int) -> bool:
        """Whether every filled cell of ``column`` is a number (right-aligned when shown)."""
        cells = [row[column] for row in self.rows if row[column] is not None]
        return bool(cells) and all(isinstance(cell, int | float | Figure) for cell in cells)


def format_cell(value: Cell, *, missing: str = "") -> str:
    """A cell as text: numbers with 4 decimals, counts as they are, ``missing`` for None.

    >>> format_cell(0.630929753), format_cell(12), format_cell(None, missing="-")
    ('0.6309', '12', '-')
    """
    if value is None:
        return missing
    if isinstance(value, Figure):
        return value.text
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def markdown_text(table: Table) -> str:
    """``table`` as a Markdown table, numeric columns right-aligned."""

    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "<br>")

    rule = ["---:" if table.numeric(i) else "---" for i in range(len(table.columns))]
    lines = [table.columns, rule]
    lines += [[escape(format_cell(cell, missing="-")) for cell in row] for row in table.rows]
    return "".join(f"| {' | '.join(map(escape, line))} |\n" for line in lines)


def csv_text(table: Table) -> str:
    """``table`` as CSV, numbers with 4 decimals."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.columns)
    writer.writerows([format_cell(cell) for cell in row] for row in table.rows)
    return buffer.getvalue()


_TSV_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def tsv_text(table: Table) -> str:
    r"""``table`` as tab-separated values, numbers with 4 decimals, a missing value empty.

    TSV has no quoting: a backslash, tab, newline or carriage return inside a cell is written
    as ``\\``, ``\t``, ``\n`` or ``\r`` (the convention of PostgreSQL's ``COPY``), so every
    line is one row and every tab separates two cells.

    >>> tsv_text(Table("t", ["run", "ndcg@10"], [["bm25\tv2", 0.63093], ["x", None]]))
    'run\tndcg@10\nbm25\\tv2\t0.6309\nx\t\n'
    """
    lines = [table.columns, *([format_cell(cell) for cell in row] for row in table.rows)]
    return "".join("\t".join(c.translate(_TSV_ESCAPES) for c in line) + "\n" for line in lines)
