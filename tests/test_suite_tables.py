"""BEIR's table of a suite, read back by parsers: LaTeX by pylatexenc, Markdown rendered by
markdown-it, the terminal table as text; best values bold, significance marked."""

from __future__ import annotations

import html.parser
import io

import pytest
from markdown_it import MarkdownIt
from pylatexenc.latex2text import LatexNodes2Text
from pylatexenc.latexwalker import (
    LatexEnvironmentNode,
    LatexMacroNode,
    LatexMathNode,
    LatexSpecialsNode,
    LatexWalker,
)
from rich.console import Console

from ef.evaluation import RetrievalEvalReport, suite_report


def _cell(values):
    per_query = {f"q{i}": {"ndcg@10": v} for i, v in enumerate(values)}
    return RetrievalEvalReport(
        {"ndcg@10": sum(values) / len(values)}, per_query, len(values), (10,)
    )


LOW = [0.1, 0.2, 0.1, 0.15, 0.2, 0.1, 0.05, 0.2, 0.1, 0.15, 0.1, 0.2]
HIGH = [v + 0.5 + 0.01 * (i % 3) for i, v in enumerate(LOW)]
CELLS = {
    "nf_corpus & co": {"bm25": _cell(LOW), "dense_v2": _cell(HIGH), "tie": _cell(HIGH)},
    "fiqa": {"bm25": _cell(HIGH), "dense_v2": _cell(LOW), "tie": _cell(HIGH)},
    "scidocs": {"bm25": _cell([0.5, 0.2]), "dense_v2": _cell([0.2, 0.5]), "tie": _cell([0.4, 0.3])},
}


@pytest.fixture(scope="module")
def report():
    return suite_report(
        CELLS, baseline="bm25", compare_options={"tests": ["t-test"], "correction": None}
    )


def _expected_rows(report, digits=4):
    """(label, [(text, bold, mark)]) computed here from the cells, not by the renderer."""
    rows = []
    for dataset in report.datasets:
        values = {s: CELLS[dataset][s].metrics["ndcg@10"] for s in report.systems}
        top = max(values.values())
        cells = []
        for system, value in values.items():
            mark = ""
            if system != "bm25":
                row = report.comparisons[dataset].comparison(system, "ndcg@10")
                if row.p_values["t-test"] is not None and row.p_values["t-test"] <= 0.05:
                    mark = "†" if row.difference > 0 else "‡"
            cells.append((f"{value:.{digits}f}", value == top, mark))
        rows.append((dataset, cells))
    return rows


def test_the_fixture_has_wins_losses_and_ties(report):
    assert report.significance("nf_corpus & co", "dense_v2") == 1
    assert report.significance("fiqa", "dense_v2") == -1
    assert report.significance("scidocs", "dense_v2") == 0
    assert report.best("nf_corpus & co") == ("dense_v2", "tie")
    assert report.significant_wins == {"dense_v2": 1, "tie": 1}
    assert report.significant_losses == {"dense_v2": 1, "tie": 0}


def _latex_rows(text):
    walker = LatexWalker(text, tolerant_parsing=False)
    nodes, _, _ = walker.get_latex_nodes()
    table = next(n for n in nodes if isinstance(n, LatexEnvironmentNode))
    tabular = next(
        n
        for n in table.nodelist
        if isinstance(n, LatexEnvironmentNode) and n.environmentname == "tabular"
    )
    rows, row, cell = [], [], []
    for node in tabular.nodelist:
        if isinstance(node, LatexSpecialsNode) and node.specials_chars == "&":
            row.append(cell)
            cell = []
        elif isinstance(node, LatexMacroNode) and node.macroname == "\\":
            rows.append([*row, cell])
            row, cell = [], []
        elif isinstance(node, LatexMacroNode) and node.macroname in ("toprule", "midrule"):
            continue
        else:
            cell.append(node)
    to_text = LatexNodes2Text()
    parsed = []
    for nodes in rows:
        shown = []
        for cell_nodes in nodes:
            bold = any(
                isinstance(n, LatexMacroNode) and n.macroname == "textbf" for n in cell_nodes
            )
            maths = [n.latex_verbatim() for n in cell_nodes if isinstance(n, LatexMathNode)]
            mark = {"$^\\dagger$": "†", "$^\\ddagger$": "‡"}.get("".join(maths), "")
            text = to_text.nodelist_to_text(
                [n for n in cell_nodes if not isinstance(n, LatexMathNode)]
            )
            shown.append((text.strip(), bold, mark))
        parsed.append(shown)
    return table, parsed


def test_latex_parses_and_holds_the_table(report):
    text = report.to_latex()
    table, rows = _latex_rows(text)
    assert table.environmentname == "table"
    header, *body = rows
    assert [t for t, _, _ in header] == ["Dataset", "bm25 (baseline)", "dense_v2", "tie"]
    expected = _expected_rows(report)
    for (label, cells), row in zip(expected, body, strict=False):
        assert row[0][0] == label
        assert row[1:] == cells
    macro = body[len(report.datasets)]
    assert macro[0][0] == "Average (macro, 3 datasets)"
    assert [float(t) for t, _, _ in macro[1:]] == pytest.approx(
        [sum(CELLS[d][s].metrics["ndcg@10"] for d in CELLS) / 3 for s in report.systems], abs=5e-5
    )
    assert body[-1][0][0] == "Significant wins / losses"
    assert [t for t, _, _ in body[-1][1:]] == ["baseline", "1 / 1", "1 / 0"]
    caption = LatexNodes2Text().latex_to_text(text.split("\\caption{", 1)[1].split("}\n", 1)[0])
    assert "significantly better / worse than the baseline (bm25)" in caption
    assert "no correction over the 2 systems compared" in caption
    assert "‡" not in text and "†" not in text  # both marks written for LaTeX


class _Cells(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.inside = [], False

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.rows[-1].append(["", False])
            self.inside = True
        elif tag == "strong":
            self.rows[-1][-1][1] = True

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.inside = False

    def handle_data(self, data):
        if self.inside:
            self.rows[-1][-1][0] += data


def test_markdown_renders_as_a_table_with_bold_best_values(report):
    rendered = MarkdownIt("commonmark").enable("table").render(report.to_markdown())
    parser = _Cells()
    parser.feed(rendered)
    header, *body = parser.rows
    assert [t for t, _ in header] == ["Dataset", "bm25 (baseline)", "dense_v2", "tie"]
    for (label, cells), row in zip(_expected_rows(report), body, strict=False):
        assert row[0][0] == label  # "&" and "_" came through the escaping
        assert [(t, b) for t, b in row[1:]] == [(text + mark, best) for text, best, mark in cells]
    assert "<p>Table: ndcg@10 per dataset." in rendered


def test_the_terminal_table_shows_the_same_rows(report):
    buffer = io.StringIO()
    Console(file=buffer, width=160, color_system=None).print(report.to_table())
    text = buffer.getvalue()
    for label, cells in _expected_rows(report):
        line = next(line for line in text.splitlines() if label in line)
        assert [c.strip() for c in line.split("│")[2:-1]] == [t + m for t, _, m in cells]
    assert "Average (micro, 26 queries)" in text
    buffer = io.StringIO()
    Console(file=buffer, width=160, color_system=None).print(report.to_table(plain=True))
    line = next(line for line in buffer.getvalue().splitlines() if "fiqa" in line)
    high, low = (f"{sum(v) / len(v):.4f}" for v in (HIGH, LOW))
    assert [c.strip() for c in line.split("│")[2:-1]] == [f"{high}★", f"{low}‡", f"{high}★"]
