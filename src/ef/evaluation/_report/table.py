"""The one table model: rows under named columns, and its one writer per format.

Every table the library and ``ef-eval`` show is a :class:`Table`: the terminal (plain text at
its natural width or laid out for a width, or a rich table for a console), Markdown, LaTeX,
CSV and TSV, each with one escaping rule. Rich draws the terminal's; it is imported only when
a terminal table is drawn.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import TYPE_CHECKING

import attrs

from ef.evaluation._report.table_cells import (
    BEST,
    MISSING,
    Cell,
    Figure,
    format_cell,
    latex_cell,
    latex_escaped,
    markdown_cell,
    markdown_escaped,
    plain_mark,
)

if TYPE_CHECKING:
    from rich.table import Table as RichTable

__all__ = ["Cell", "Figure", "Table", "format_cell"]

_TSV_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _cell_tuple(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


def _index_set(values: Iterable[int]) -> frozenset[int]:
    return frozenset(values)


def _row_tuple(rows: Iterable[Iterable[Cell]]) -> tuple[tuple[Cell, ...], ...]:
    return tuple(tuple(row) for row in rows)


@attrs.frozen
class Table:
    """Rows under named columns, with a title saying what was measured, and its writers:
    :meth:`to_text` and :meth:`to_rich` for a terminal, :meth:`to_markdown`, :meth:`to_latex`,
    :meth:`to_csv`, :meth:`to_tsv`.

    A number (an ``int``, a ``float`` shown with 4 decimals, or a :class:`Figure`) is laid
    out as one: a column of numbers is right-aligned and never wrapped.

    :param title: one line saying what the numbers are (shown above a terminal table).
    :param columns: the column names.
    :param rows: one sequence of cells per row, as long as ``columns``.
    :param caption: a paragraph saying what the numbers are and what their marks mean, written
        under a Markdown table (``Table: …``) and as a LaTeX table's ``\\caption``.
    :param sections: the rows (by index) that start a new section, below a rule.
    :raises ValueError: if a row's length differs from the number of columns.

    >>> Table("demo", ["run", "ndcg@10"], [["bm25", 0.5]]).rows
    (('bm25', 0.5),)
    """

    title: str
    columns: tuple[str, ...] = attrs.field(converter=_cell_tuple)
    rows: tuple[tuple[Cell, ...], ...] = attrs.field(converter=_row_tuple)
    # How a table is presented, not what it holds: left out of its repr.
    caption: str = attrs.field(default="", kw_only=True, repr=False)
    sections: frozenset[int] = attrs.field(
        default=frozenset(), kw_only=True, converter=_index_set, repr=False
    )

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

    def _shown(self) -> list[list[str]]:
        """Each row's cells as a terminal shows them, a missing value as ``-``, the marks
        after a column's figures (★, †, letters) padded to one width, so that the digits of a
        right-aligned column line up."""
        texts = self.texts(missing=MISSING)
        for i in range(len(self.columns)):
            if not self.numeric(i):
                continue
            marks = [len(plain_mark(row[i])) for row in self.rows]
            for row, mark in zip(texts, marks, strict=True):
                row[i] += " " * (max(marks) - mark)
        return texts

    def widths(self) -> list[int]:
        """Each column's width in terminal cells: its name's or its widest cell's line, a
        missing value shown as ``-``."""
        from rich.cells import cell_len

        texts = [list(self.columns), *self._shown()]
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

        texts = [list(self.columns), *self._shown()]
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

    def to_rich(self, *, framed: bool = False, plain: bool = True) -> RichTable:
        """The table drawn by rich, numbers flush right and never wrapped, text folded.

        :param framed: drawn as a report shows itself on a console, in rich's own frame with
            the caption under it; otherwise as ``ef-eval`` prints a table, under a rule, the
            marks after a column's numbers lined up.
        :param plain: framed, a bold figure is also followed by :data:`BEST`, for text that
            loses bold (unframed, it always is).
        """
        from rich import box
        from rich.cells import cell_len
        from rich.table import Table as RichTable
        from rich.text import Text

        if framed:
            return self._framed(plain)
        rich_table = RichTable(box=box.SIMPLE_HEAD)
        widths = self.widths()
        numeric = [self.numeric(i) for i in range(len(self.columns))]
        for i, name in enumerate(self.columns):
            if numeric[i]:
                # Numbers are never wrapped or cut: a shortened number would be a wrong number.
                rich_table.add_column(name, justify="right", no_wrap=True, min_width=widths[i])
            else:
                rich_table.add_column(name, overflow="fold")
        for index, row in enumerate(self._shown()):
            # A number is set flush right by hand: rich's right alignment would drop the
            # spaces that keep a column's digits in line when some values carry marks.
            rich_table.add_row(
                *(
                    Text(" " * (widths[i] - cell_len(cell)) + cell, justify="left")
                    if numeric[i]
                    else cell
                    for i, cell in enumerate(row)
                ),
                end_section=index + 1 in self.sections,
            )
        return rich_table

    def _framed(self, plain: bool) -> RichTable:
        from rich.table import Table as RichTable
        from rich.text import Text

        # Rich wraps a caption to the table's width: a narrow table is widened rather than
        # let its caption run down the screen a word at a time.
        width = min(len(self.caption) // 3, 80) if self.caption else None
        rich_table = RichTable(
            caption=self.caption or None, caption_justify="left", min_width=width
        )
        numeric = [self.numeric(i) for i in range(len(self.columns))]
        for i, name in enumerate(self.columns):
            if numeric[i]:
                rich_table.add_column(name, justify="right", no_wrap=True)
            else:
                rich_table.add_column(name, overflow="fold")
        for index, row in enumerate(self.rows):
            rich_table.add_row(
                *(
                    Text(cell.text + BEST * (cell.bold and plain), style="bold" * cell.bold)
                    + plain_mark(attrs.evolve(cell, bold=False))
                    if isinstance(cell, Figure)
                    else Text(format_cell(cell, missing=MISSING))
                    for cell in row
                ),
                end_section=index + 1 in self.sections,
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
        r"""The table in Markdown (GitHub's and Pandoc's pipe tables), numeric columns
        right-aligned, a missing value ``-``, every text escaped by :func:`markdown_escaped`;
        a bold figure is ``**bold**``, a mark of letters ``<sup>ab</sup>``. A table with a
        caption aligns its other columns left explicitly (``:---``) and has the caption under
        it, as Pandoc reads one: ``Table: …``.

        >>> print(Table("t", ["run", "ndcg@10"], [["a|b", 0.63093]]).to_markdown())
        | run | ndcg@10 |
        | --- | ---: |
        | a\|b | 0.6309 |
        <BLANKLINE>
        >>> best = Figure("0.6309", bold=True, mark="†")
        >>> print(Table("t", ["run", "ndcg@10"], [["a", best]], caption="Means.").to_markdown())
        | run | ndcg@10 |
        | :--- | ---: |
        | a | **0.6309**† |
        <BLANKLINE>
        Table: Means.
        <BLANKLINE>
        """
        text = ":---" if self.caption else "---"
        rule = ["---:" if self.numeric(i) else text for i in range(len(self.columns))]
        lines = [map(markdown_escaped, self.columns), rule]
        lines += [map(markdown_cell, row) for row in self.rows]
        table = "".join(f"| {' | '.join(line)} |\n" for line in lines)
        return table + (f"\nTable: {markdown_escaped(self.caption)}\n" if self.caption else "")

    def to_latex(self) -> str:
        r"""The table as a LaTeX ``table`` (needs the ``booktabs`` package), numeric columns
        right-aligned, a missing value ``-``, every text escaped by :func:`latex_escaped`; a
        bold figure is ``\textbf``, a mark of letters a superscript, a section starts below
        a ``\midrule``.

        >>> best = Figure("0.6309", bold=True, mark="a")
        >>> print(Table("t", ["run", "ndcg@10"], [["a_b", best]], caption="50%").to_latex())
        \begin{table}[t]
          \centering
          \caption{50\%}
          \begin{tabular}{lr}
            \toprule
            run & ndcg@10 \\
            \midrule
            a\_b & \textbf{0.6309}$^{\mathrm{a}}$ \\
            \bottomrule
          \end{tabular}
        \end{table}
        <BLANKLINE>
        """
        align = "".join("r" if self.numeric(i) else "l" for i in range(len(self.columns)))
        lines = [r"\begin{table}[t]", r"  \centering"]
        if self.caption:
            lines.append(rf"  \caption{{{latex_escaped(self.caption)}}}")
        lines += [rf"  \begin{{tabular}}{{{align}}}", r"    \toprule"]
        lines.append(f"    {' & '.join(map(latex_escaped, self.columns))} \\\\")
        lines.append(r"    \midrule")
        for index, row in enumerate(self.rows):
            if index in self.sections:
                lines.append(r"    \midrule")
            lines.append(f"    {' & '.join(map(latex_cell, row))} \\\\")
        return "\n".join([*lines, r"    \bottomrule", r"  \end{tabular}", r"\end{table}", ""])

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
