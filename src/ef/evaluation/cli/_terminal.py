"""The ``--format table`` output: a rich table, sized for where it goes.

Imported only when a table is printed, so the other formats never load rich. A table must fit
the width it is read at without losing a digit, so a table of numbers too wide for it is shown
with rows and columns swapped (metrics down the side) when that fits, and otherwise in blocks
of columns, each repeating the label columns, as pandas prints a wide frame. On a terminal the
width is the window's and the table gets colours. Anywhere else (a pipe, a log, a file) it is
plain text, never coloured whatever ``FORCE_COLOR`` says, laid out for ``COLUMNS`` (80 when
unset): the text of a cell wraps between its words, a table of text alone too wide even so is
shown in blocks of columns too, and no number or word is ever broken or cut, so a label too
long for that width makes its lines longer instead. Machines read ``--format tsv``, ``csv`` or
``json``.
"""

from __future__ import annotations

import os
import re
import textwrap
from typing import IO, TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Console

from ef.evaluation.extending import Cell, Figure, Table

if TYPE_CHECKING:
    from rich.table import Table as RichTable

__all__ = [
    "PLAIN_WIDTH",
    "column_blocks",
    "fitted",
    "from_rich",
    "natural_width",
    "plain_width",
    "print_table",
    "transposed",
]

PLAIN_WIDTH = 80
"""The width a table is laid out for off a terminal, unless ``COLUMNS`` says otherwise."""


_MARKS = re.compile(r"[^0-9)\]]*$")


def _mark_width(text: str) -> int:
    found = _MARKS.search(text) if any(c.isdigit() for c in text) else None
    return 0 if found is None else len(found.group())


def _aligned(texts: list[str]) -> list[Figure]:
    """Numbers as written, their marks (``★†``, group letters) padded to one width, so that
    the digits of a right-aligned column line up; a text without a digit (``baseline``) is
    no number and has no marks.

    >>> [figure.text for figure in _aligned(["0.5000★†", "0.2500", "< 0.0001†", "baseline"])]
    ['0.5000★†', '0.2500  ', '< 0.0001† ', 'baseline  ']
    """
    marks = [_mark_width(text) for text in texts]
    width = max(marks, default=0)
    return [Figure(text + " " * (width - mark)) for text, mark in zip(texts, marks, strict=True)]


def from_rich(rich_table: RichTable, title: str) -> tuple[Table, str]:
    """A report's own rich table (``to_table(plain=True)``) as an ``ef-eval`` table and its
    caption: right-aligned columns hold numbers as written (with their marks), the others
    labels. Styles are dropped: a plain rendering marks in text what bold would show.
    """
    columns = [str(column.header) for column in rich_table.columns]
    cells: list[list[Cell]] = []
    for column in rich_table.columns:
        texts = [str(cell) for cell in column.cells]
        cells.append(list(_aligned(texts)) if column.justify == "right" else list(texts))
    rows = list(zip(*cells, strict=True))
    return Table(title, columns, rows), str(rich_table.caption or "")


def plain_width() -> int:
    """The width a table is laid out for off a terminal: ``COLUMNS`` (a shell sets it for
    its own terminal, rarely exports it), else :data:`PLAIN_WIDTH`."""
    text = os.environ.get("COLUMNS", "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else PLAIN_WIDTH


def natural_width(table: Table) -> int:
    """The width in cells the table needs to show every cell on one line
    (:meth:`~ef.evaluation.extending.Table.natural_width`)."""
    return table.natural_width()


def transposed(table: Table) -> Table | None:
    """The table with rows and columns swapped, or None when that makes no sense.

    Only a table with one label column followed by number columns can be swapped: its rows
    become columns headed by their labels, and each number column becomes a row.

    >>> transposed(Table("t", ["run", "ndcg@1", "ndcg@5"], [["a", 0.1, 0.2], ["b", 0.3, 0.4]]))
    Table(title='t', columns=('', 'a', 'b'), rows=(('ndcg@1', 0.1, 0.3), ('ndcg@5', 0.2, 0.4)))
    """
    columns = range(1, len(table.columns))
    if not table.rows or not columns or not all(table.numeric(i) for i in columns):
        return None
    labels = [row[0] for row in table.texts()]
    rows = [(table.columns[i], *(row[i] for row in table.rows)) for i in columns]
    return Table(table.title, ("", *labels), rows)


def column_blocks(table: Table, width: int) -> list[Table]:
    """Split a table too wide for ``width`` into tables of fewer columns that each fit.

    The leading label (non-number) columns are repeated in every block, and the first column
    always is a label, even of numbers (``rag --per-query``'s line numbers). A table whose
    labels alone do not leave room for one number column is returned whole (its text columns
    wrap). A table with no number column is returned whole when its text fits by wrapping
    between words, else its columns after the first are split into blocks that fit so (a
    block of one column whose words are too long for ``width`` is as wide as they need).

    >>> table = Table("t", ["run", "a", "b", "c"], [["bm25", 0.1, 0.2, 0.3]])
    >>> [block.columns for block in column_blocks(table, 26)]
    [('run', 'a', 'b'), ('run', 'c')]
    >>> words = Table("t", ["name", "about", "source"], [["ndcg", "normalised DCG", "ef"]])
    >>> [block.columns for block in column_blocks(words, 22)]
    [('name', 'about'), ('name', 'source')]
    """
    if natural_width(table) <= width:
        return [table]
    labels = 1
    while labels < len(table.columns) and not table.numeric(labels):
        labels += 1
    text_only = labels == len(table.columns)
    if text_only:
        labels = 1
        widths = [w + 3 for w in table.word_widths()]
        if sum(widths) + 1 <= width or len(table.columns) < 3:
            return [table]
    else:
        widths = [w + 3 for w in table.widths()]
    base = sum(widths[:labels]) + 1
    blocks: list[list[int]] = [[]]
    used = base
    for i in range(labels, len(table.columns)):
        if blocks[-1] and used + widths[i] > width:
            blocks.append([])
            used = base
        blocks[-1].append(i)
        used += widths[i]
    too_wide = any(base + widths[block[0]] > width for block in blocks if len(block) == 1)
    if too_wide and not text_only:
        return [table]
    return [
        Table(
            table.title,
            [table.columns[i] for i in [*range(labels), *block]],
            [[row[i] for i in [*range(labels), *block]] for row in table.rows],
        )
        for block in blocks
    ]


def fitted(table: Table, width: int) -> list[Table]:
    """The tables to show for ``table`` in ``width`` cells: itself when it fits, else swapped
    when that fits, else in blocks of columns (:func:`column_blocks`).

    >>> wide = Table("t", ["run", *(f"ndcg@{k}" for k in range(1, 9))], [["bm25", *[0.5] * 8]])
    >>> [block.columns for block in fitted(wide, 40)]
    [('', 'bm25')]
    """
    if natural_width(table) <= width:
        return [table]
    swapped = transposed(table)
    if swapped is not None and natural_width(swapped) <= width:
        return [swapped]
    return column_blocks(table, width)


def print_table(
    table: Table, stream: IO[str], *, terminal: bool, caption: str | None = None
) -> None:
    """Print the title and ``table`` to ``stream``, for a terminal or as plain text.

    :param table: what to show.
    :param stream: where to write.
    :param terminal: whether ``stream`` is a terminal: colours, and the table fits its width;
        otherwise plain text laid out for :func:`plain_width`.
    :param caption: a paragraph printed under the table, wrapped to the width the table was
        laid out for (or the table's own, when a long label made it wider).

    >>> import io
    >>> out = io.StringIO()
    >>> print_table(Table("Demo", ["run", "ndcg@10"], [["bm25", 0.63093]]), out, terminal=False)
    >>> print(out.getvalue())
    Demo
    <BLANKLINE>
      run    ndcg@10
     ────────────────
      bm25    0.6309
    <BLANKLINE>
    """
    if terminal:
        console = Console(file=stream)
        console.print(table.title, style="bold", highlight=False)
        for block in fitted(table, console.width):
            console.print(block.to_rich())
        if caption:
            console.print(caption, markup=False, highlight=False)
        return
    width = plain_width()
    blocks = [block.to_text(width) for block in fitted(table, width)]
    stream.write(table.title + "\n\n" + "\n".join(blocks))
    if caption:
        widest = max(cell_len(line) for block in blocks for line in block.splitlines())
        wrap = textwrap.TextWrapper(
            max(width, widest), break_long_words=False, break_on_hyphens=False
        )
        stream.write("\n" + wrap.fill(caption) + "\n")
