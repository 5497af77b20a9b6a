"""A table's cells and how each format writes one: text, numbers, and figures written out
with their marks (:class:`Figure`); Markdown's and LaTeX's escaping rules, one each."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

import attrs

__all__ = [
    "BEST",
    "MISSING",
    "Cell",
    "Figure",
    "format_cell",
    "latex_cell",
    "latex_escaped",
    "markdown_cell",
    "markdown_escaped",
    "plain_mark",
]

MISSING = "-"


BEST = "★"
"""The mark of a bold figure in plain text, where bold would be lost."""


@attrs.frozen
class Figure:
    """A number already written out with its marks (``0.6667★†``, ``+0.2500``, ``< 0.0001``):
    laid out as a number is (right-aligned, never wrapped), shown as written.

    A figure may be the best of its row or column (``bold``: bold where a format has it,
    :data:`BEST` after it in plain text) and carry a ``mark`` after it: a symbol (``†``,
    ``‡``) written as each format writes that symbol, or letters (group letters) written as a
    superscript (after a space in plain text).

    >>> best = Figure("0.5", bold=True, mark="ab")
    >>> from ef.evaluation.extending import Table
    >>> Table("t", ["ndcg@10"], [[Figure("0.6667†")], [best]]).texts()
    [['0.6667†'], ['0.5★ ab']]
    """

    text: str
    bold: bool = attrs.field(default=False, kw_only=True)
    mark: str = attrs.field(default="", kw_only=True)

    @property
    def lettered(self) -> bool:
        """Whether the mark is letters (a superscript) rather than a symbol."""
        return self.mark[:1].isalnum()


Cell: TypeAlias = str | int | float | Figure | None
"""A table cell: text, a count, a metric value, a written-out number, or nothing (a metric
that did not apply)."""


def format_cell(value: Cell, *, missing: str = "") -> str:
    """A cell as text: numbers with 4 decimals, counts as they are, ``missing`` for None.

    >>> format_cell(0.630929753), format_cell(12), format_cell(None, missing="-")
    ('0.6309', '12', '-')
    """
    if value is None:
        return missing
    if isinstance(value, Figure):
        return value.text + plain_mark(value)
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def markdown_escaped(text: str) -> str:
    r"""``text`` for a Markdown table cell or caption: a backslash, ``|`` and a line break
    escaped (``\\``, ``\|``, ``<br>``) and a space at either end kept (``&#32;``), since a
    cell is trimmed; any other Markdown in it is its own.

    >>> print(markdown_escaped(" a|b\\"))
    &#32;a\|b\\
    """
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "<br>")
    start = len(text) - len(text.lstrip(" "))
    end = len(text) - len(text.rstrip(" ")) if start < len(text) else 0
    return "&#32;" * start + text[start : len(text) - end] + "&#32;" * end


_LATEX_ESCAPES = str.maketrans(
    {
        # LaTeX's ten special characters.
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
        # What pdfLaTeX's default fonts lack or print as another character.
        "<": r"$<$",
        ">": r"$>$",
        "α": r"$\alpha$",
        "†": r"$^\dagger$",
        "‡": r"$^\ddagger$",
        "–": "--",
    }
)


def latex_escaped(text: str) -> str:
    r"""``text`` for LaTeX: its ten special characters escaped, and ``<``, ``>``, ``α``,
    ``†``, ``‡`` and ``–``, which its default fonts lack, written in LaTeX.

    >>> print(latex_escaped("50% of a_b < 1 †"))
    50\% of a\_b $<$ 1 $^\dagger$
    """
    return text.translate(_LATEX_ESCAPES)


def plain_mark(cell: Cell) -> str:
    """What follows a figure in plain text: ★ when it is bold, then its mark."""
    if not isinstance(cell, Figure):
        return ""
    return BEST * cell.bold + (f" {cell.mark}" if cell.lettered else cell.mark)


def _written(cell: Cell, escape: Callable[[str], str], bold: str, superscript: str) -> str:
    if not isinstance(cell, Figure):
        return escape(format_cell(cell, missing=MISSING))
    text, mark = escape(cell.text), escape(cell.mark)
    mark = superscript.format(mark) if cell.lettered else mark
    return (bold.format(text) if cell.bold else text) + mark


def markdown_cell(cell: Cell) -> str:
    """A cell in Markdown: escaped, a bold figure ``**bold**``, letters ``<sup>ab</sup>``."""
    return _written(cell, markdown_escaped, "**{}**", "<sup>{}</sup>")


def latex_cell(cell: Cell) -> str:
    """A cell in LaTeX: escaped, a bold figure ``\textbf``, letters a superscript."""
    return _written(cell, latex_escaped, r"\textbf{{{}}}", r"$^{{\mathrm{{{}}}}}$")
