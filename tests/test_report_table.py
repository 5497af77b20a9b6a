"""The table model (``ef.evaluation.extending.Table``): each writer keeps every cell, escaped
once by its format's one rule, and lays numbers out as numbers."""

from __future__ import annotations

import csv
import io
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from ef.evaluation.extending import Figure, Table

# Plain words with the characters the writer escapes (other Markdown syntax is the cell's own).
texts = st.text(st.sampled_from("ab1 .|\\"), min_size=1, max_size=8)


def _rendered_cells(markdown: str) -> list[list[str]]:
    """The cells of a Markdown table as a CommonMark reader (markdown-it, GFM tables) sees
    them, text only."""
    markdown_it = pytest.importorskip("markdown_it")
    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse(markdown)
    rows: list[list[str]] = []
    for token in tokens:
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows:
            rows[-1].append("".join(child.content for child in token.children or []))
    return rows


@given(st.lists(texts, min_size=1, max_size=4))
def test_a_markdown_cell_reads_back_as_written(cells):
    # Spaces at either end too: a reader trims a cell, so the writer keeps them as &#32;.
    table = Table("t", [f"c{i}" for i in range(len(cells))], [cells])
    assert _rendered_cells(table.to_markdown())[1] == cells


def test_a_pipe_backslash_and_line_break_are_escaped_once():
    table = Table("t", ["a|b"], [["x|y\\z"], ["two\nlines"]])
    assert table.to_markdown() == "| a\\|b |\n| --- |\n| x\\|y\\\\z |\n| two<br>lines |\n"


def test_a_space_at_either_end_of_a_markdown_cell_is_kept_and_one_inside_is_not_touched():
    table = Table("t", ["a b"], [[" x "], ["  "]], caption="A | b")
    assert table.to_markdown() == (
        "| a b |\n| :--- |\n| &#32;x&#32; |\n| &#32;&#32; |\n\nTable: A \\| b\n"
    )


def test_latex_escapes_its_ten_special_characters_and_marks_figures():
    figures = [Figure("0.5", bold=True, mark="†"), Figure("< 0.0001", mark="ab"), None]
    table = Table("t", ["&%$#_{}~^\\"], [[cell] for cell in figures], sections={1})
    lines = table.to_latex().splitlines()
    assert lines[2] == "  \\begin{tabular}{r}"
    assert lines[4] == (
        "    \\&\\%\\$\\#\\_\\{\\}\\textasciitilde{}\\textasciicircum{}\\textbackslash{} \\\\"
    )
    assert lines[5:10] == [
        "    \\midrule",
        "    \\textbf{0.5}$^\\dagger$ \\\\",
        "    \\midrule",
        "    $<$ 0.0001$^{\\mathrm{ab}}$ \\\\",
        "    - \\\\",
    ]


def test_csv_and_tsv_keep_every_cell_and_write_nothing_for_none():
    table = Table("t", ["run", "ndcg@10", "note"], [["a,b\tc", 0.63093, None]])
    assert list(csv.reader(io.StringIO(table.to_csv()))) == [
        ["run", "ndcg@10", "note"],
        ["a,b\tc", "0.6309", ""],
    ]
    assert table.to_tsv() == "run\tndcg@10\tnote\na,b\\tc\t0.6309\t\n"


def test_a_column_of_numbers_is_right_aligned_in_every_writer():
    table = Table(
        "t", ["run", "score", "mark"], [["bm25", 0.5, Figure("+0.1000†")], ["x", 12, None]]
    )
    assert [table.numeric(i) for i in range(3)] == [False, True, True]
    assert table.to_markdown().splitlines()[1] == "| --- | ---: | ---: |"
    assert table.to_text().splitlines()[2:] == [
        "  bm25   0.5000   +0.1000†",
        "  x          12          -",
    ]


prose = st.lists(st.text(st.sampled_from("ab.é漢"), min_size=1, max_size=12), max_size=8)


@given(
    st.lists(st.tuples(prose, prose, st.floats(0, 1)), min_size=1, max_size=4),
    st.integers(10, 60),
)
def test_text_laid_out_for_a_width_wraps_between_words_and_never_breaks_one(rows, width):
    table = Table(
        "t", ["name", "about", "score"], [(" ".join(a), " ".join(b), x) for a, b, x in rows]
    )
    text = table.to_text(width)
    narrowest = sum(table.word_widths()) + 3 * 3 + 1
    assert max(cell_len(line) for line in text.splitlines()) <= max(width, narrowest)
    shown = Counter(text.replace("─", " ").split())
    words = [*table.columns, *(w for a, b, x in rows for w in (*a, *b, f"{x:.4f}"))]
    assert shown == Counter(words)
    if width >= table.natural_width():
        assert text == table.to_text()


def test_a_row_of_the_wrong_length_is_refused():
    with pytest.raises(ValueError, match=r"has 1 cells; expected 2"):
        Table("t", ["a", "b"], [["x"]])
