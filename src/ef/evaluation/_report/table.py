"""The one table model: rows under named columns, and its one writer per format.

Every table the library and ``ef-eval`` show is a :class:`Table`: the terminal (plain text at
its natural width or laid out for a width, or a rich table for a console), Markdown, CSV and
TSV, each with one escaping rule. Rich draws the terminal's; it is imported only when a
terminal table is drawn.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeAlias

import attrs

if TYPE_CHECKING:
    from rich.table import Table as RichTable

__all__ = ["Cell", "Figure", "Table", "format_cell"]

# What a terminal shows for a missing value (a metric that did not apply).
_MISSING = "-"


@attrs.frozen
class Figure:
    """A number already written out with its marks (``0.6667★†``, ``+0.2500``, ``< 0.0001``):
    laid out as a number is (right-aligned, never wrapped), shown as written.

    >>> Table("t", ["ndcg@10"], [[Figure("0.6667†")]]).texts()
    [['0.6667†']]
    """

    text: str


Cell: TypeAlias = str | int | float | Figure | None
"""A table cell: text, a count, a metric value, a written-out number, or nothing (a metric
that did not apply)."""


def _cell_tuple(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


def _row_tuple(rows: Iterable[Iterable[Cell]]) -> tuple[tuple[Cell, ...], ...]:
    return tuple(tuple(row) for row in rows)


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


_TSV_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _markdown_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "<br>")


@attrs.frozen
class Table:
    """Rows under named columns, with a title saying what was measured, and its writers:
    :meth:`to_text` and :meth:`to_rich` for a terminal, :meth:`to_markdown`, :meth:`to_csv`,
    :meth:`to_tsv`.

    A number (an ``int``, a ``float`` shown with 4 decimals, or a :class:`Figure`) is laid
    out as one: a column of numbers is right-aligned and never wrapped.

    :param title: one line saying what the numbers are (shown above a terminal table).
    :param columns: the column names.
    :param rows: one sequence of cells per row, as long as ``columns``.
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

    def texts(self, *, missing: str = "") -> list[list[str]]:
        """Each row's cells as text (:func:`format_cell`), ``missing`` for a missing value.

        >>> Table("t", ["run", "ndcg@10"], [["bm25", 0.630929753], ["dense", None]]).texts()
        [['bm25', '0.6309'], ['dense', '']]
        """
        return [[format_cell(cell, missing=missing) for cell in row] for row in self.rows]

    def widths(self) -> list[int]:
        """Each column's width in terminal cells: its name's or its widest cell's line, a
        missing value shown as ``-``."""
        from rich.cells import cell_len

        texts = [list(self.columns), *self.texts(missing=_MISSING)]
        return [
            max(cell_len(line) for row in texts for line in row[i].split("\n"))
            for i in range(len(self.columns))
        ]

    def word_widths(self) -> list[int]:
        """Each column's narrowest width in terminal cells that breaks no word and no number:
        its longest word (of its name and cells), its widest number for a column of numbers.

        >>> Table("t", ["run", "about"], [["bm25", "a lexical baseline"]]).word_widths()
        [4, 8]
        """
        from rich.cells import cell_len

        texts = [list(self.columns), *self.texts(missing=_MISSING)]
        return [
            width
            if self.numeric(i)
            else max(cell_len(word) for row in texts for word in (row[i].split() or [""]))
            for i, width in enumerate(self.widths())
        ]

    def natural_width(self) -> int:
        """The width in cells the table needs to show every cell on one line.

        >>> Table("t", ["run", "ndcg@10"], [["bm25", 0.5]]).natural_width()
        18
        """
        # One space of padding either side of each cell, one separator between and around.
        return sum(self.widths()) + 3 * len(self.columns) + 1

    def to_rich(self) -> RichTable:
        """The table drawn by rich, numbers flush right and never wrapped, text folded."""
        from rich import box
        from rich.cells import cell_len
        from rich.table import Table as RichTable
        from rich.text import Text

        rich_table = RichTable(box=box.SIMPLE_HEAD)
        widths = self.widths()
        numeric = [self.numeric(i) for i in range(len(self.columns))]
        for i, name in enumerate(self.columns):
            if numeric[i]:
                # Numbers are never wrapped or cut: a shortened number would be a wrong number.
                rich_table.add_column(name, justify="right", no_wrap=True, min_width=widths[i])
            else:
                rich_table.add_column(name, overflow="fold")
        for row in self.texts(missing=_MISSING):
            # A number is set flush right by hand: rich's right alignment would drop the
            # spaces that keep a column's digits in line when some values carry marks.
            rich_table.add_row(
                *(
                    Text(" " * (widths[i] - cell_len(cell)) + cell, justify="left")
                    if numeric[i]
                    else cell
                    for i, cell in enumerate(row)
                )
            )
        return rich_table

    def to_text(self, width: int | None = None) -> str:
        """The table as plain text (no title, no colour, a missing value shown as ``-``), at
        its natural width, or laid out for ``width`` cells when it is wider than that.

        Laid out for a width, the text of a cell wraps between its words, as on a terminal; a
        number and a word (a name, a notation) are never broken, so a table whose numbers and
        longest words do not fit keeps lines longer than ``width``.

        >>> print(Table("t", ["run", "ndcg@10"], [["bm25", 0.63093], ["x", None]]).to_text())
          run    ndcg@10
         ────────────────
          bm25    0.6309
          x            -
        <BLANKLINE>
        >>> table = Table("t", ["run", "about"], [["bm25", "a lexical baseline, tuned"]])
        >>> print(table.to_text(width=26))
          run    about
         ────────────────────────
          bm25   a lexical
                 baseline, tuned
        <BLANKLINE>
        """
        from rich.console import Console

        natural = self.natural_width()
        rich_table = self.to_rich()
        layout = natural
        if width is not None and width < natural:
            # The widest column is narrowed, one cell at a time, down to its longest word:
            # rich's own narrowing does not stop there, and would break words.
            widths, floors = self.widths(), self.word_widths()
            around = natural - sum(widths)  # padding and rules
            while sum(widths) + around > width:
                narrowable = [(w, i) for i, w in enumerate(widths) if w > floors[i]]
                if not narrowable:
                    break
                widths[max(narrowable)[1]] -= 1
            for column, fixed in zip(rich_table.columns, widths, strict=True):
                column.width = fixed
            layout = sum(widths) + around
        buffer = io.StringIO()
        plain = Console(file=buffer, force_terminal=False, color_system=None, width=layout)
        plain.print(rich_table)
        # rich pads every line to the table's width and frames the table with blank lines.
        lines = [line.rstrip() for line in buffer.getvalue().splitlines()]
        while lines and not lines[-1]:
            lines.pop()
        while lines and not lines[0]:
            del lines[0]
        return "".join(line + "\n" for line in lines)

    def to_markdown(self) -> str:
        """The table in Markdown, numeric columns right-aligned, a missing value ``-``; a
        backslash, ``|`` and a line break in a cell are escaped (``\\\\``, ``\\|``, ``<br>``).

        >>> print(Table("t", ["run", "ndcg@10"], [["a|b", 0.63093]]).to_markdown())
        | run | ndcg@10 |
        | --- | ---: |
        | a\\|b | 0.6309 |
        <BLANKLINE>
        """
        rule = ["---:" if self.numeric(i) else "---" for i in range(len(self.columns))]
        lines = [self.columns, rule, *self.texts(missing="-")]
        return "".join(f"| {' | '.join(map(_markdown_escaped, line))} |\n" for line in lines)

    def to_csv(self) -> str:
        """The table as CSV, numbers with 4 decimals, a missing value empty."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.columns)
        writer.writerows(self.texts())
        return buffer.getvalue()

    def to_tsv(self) -> str:
        r"""The table as tab-separated values, numbers with 4 decimals, a missing value empty.

        TSV has no quoting: a backslash, tab, newline or carriage return inside a cell is
        written as ``\\``, ``\t``, ``\n`` or ``\r`` (the convention of PostgreSQL's ``COPY``),
        so every line is one row and every tab separates two cells.

        >>> Table("t", ["run", "ndcg@10"], [["bm25\tv2", 0.63093], ["x", None]]).to_tsv()
        'run\tndcg@10\nbm25\\tv2\t0.6309\nx\t\n'
        """
        lines = [self.columns, *self.texts()]
        return "".join("\t".join(c.translate(_TSV_ESCAPES) for c in line) + "\n" for line in lines)
