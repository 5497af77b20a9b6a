"""The gate's outputs show one table: the terminal text, the Markdown, the JUnit XML and the
HTML page give the same cells for the same report, each as written from the rule's result.

The report is generated: 20 queries with one relevant document each, five of which the current
run loses. A floor passes, a tolerated drop fails, and the significance rule has a p-value.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree

import attrs
import pytest

from ef.evaluation import (
    CheckReport,
    FailIfSignificantlyWorse,
    Floor,
    MaxDrop,
    RetrievalEvalReport,
    check,
    evaluate_run,
)
from ef.evaluation._gate.render import rule_table

QRELS = {f"q{i:02}": {"d1": 1} for i in range(20)}


def _reports() -> tuple[CheckReport, RetrievalEvalReport, RetrievalEvalReport]:
    before = evaluate_run({q: ["d1"] for q in QRELS}, QRELS, metrics=["recall@10"])
    lost = {q: ["d1"] if i % 4 else ["d2"] for i, q in enumerate(QRELS)}
    after = evaluate_run(lost, QRELS, metrics=["recall@10"])
    rules = [
        Floor("recall@10", 0.5),
        MaxDrop("recall@10", 0.1),
        FailIfSignificantlyWorse("recall@10"),
    ]
    return check(after, before, rules), after, before


def _expected(report: CheckReport) -> list[list[str]]:
    """Each rule's cells, written from its result: what every output must show."""
    rows = []
    for result in report.results:
        low, high = result.interval
        rows.append(
            [
                result.rule.text,
                f"{result.value:.4f}",
                f"{result.baseline:.4f}",
                f"{result.difference:+.4f}",
                f"[{low:+.4f}, {high:+.4f}]",
                "-" if result.p_value is None else f"{result.p_value:.4f}",
                result.verdict.upper(),
            ]
        )
    return rows


def _text_rows(text: str) -> list[list[str]]:
    lines = text.splitlines()
    assert lines[0].split() == [
        "rule",
        "value",
        "baseline",
        "difference",
        "interval",
        "p",
        "verdict",
    ]
    assert set(lines[1].strip()) == {"─"}
    return [re.split(r"\s{2,}", line.strip()) for line in lines[2:5]]


def _markdown_rows(text: str) -> list[list[str]]:
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    assert lines[1] == "| --- | ---: | ---: | ---: | ---: | ---: | --- |"
    rows = [line[2:-2].split(" | ") for line in lines[2:]]
    for row in rows:
        assert row[0].startswith("`") and row[0].endswith("`")  # a rule reads as code
        row[0] = row[0][1:-1]
    return rows


def _junit_rows(text: str) -> list[list[str]]:
    rows = []
    for case in ElementTree.fromstring(text.split("\n", 1)[1]).iter("testcase"):
        failure = case.find("failure")
        detail = failure.text if failure is not None else case.findtext("system-out")
        assert detail is not None
        if failure is None:
            detail = detail.split("; ", 1)[1]  # after the reason
        found = dict(re.findall(r"(\w+)=(.*?)(?=, \w+=|$)", detail))
        numbers = [found.get(k, "-") for k in ("value", "baseline", "difference", "interval", "p")]
        rows.append([case.get("name"), *numbers, "PASS" if failure is None else "FAIL"])
    return rows


class _RuleCells(HTMLParser):
    """The cells of the page's rules table (``<section id="rules">``), row by row."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.in_rules = self.in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "section":
            self.in_rules = ("id", "rules") in attrs
        elif self.in_rules and tag == "tr":
            self.rows.append([])
        elif self.in_rules and tag == "td":
            self.in_cell = True
            self.rows[-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self.in_cell = False

    def handle_data(self, data: str) -> None:
        if self.in_cell:
            self.rows[-1][-1] += data


def _html_rows(path: Path) -> list[list[str]]:
    parser = _RuleCells()
    parser.feed(path.read_text(encoding="utf-8"))
    return [row for row in parser.rows if row]  # the header row has no td


def test_the_report_has_a_passing_floor_a_failing_drop_and_a_p_value():
    report, _, _ = _reports()
    assert [result.verdict for result in report.results] == ["pass", "fail", "fail"]
    assert [result.p_value is None for result in report.results] == [True, True, False]


def test_the_terminal_markdown_and_junit_show_the_same_cells():
    report, _, _ = _reports()
    expected = _expected(report)
    assert _text_rows(report.to_text()) == expected
    assert _markdown_rows(report.to_markdown()) == expected
    assert _junit_rows(report.to_junit()) == expected


def test_the_page_shows_the_same_cells(tmp_path):
    pytest.importorskip("jinja2")
    pytest.importorskip("vl_convert")
    report, current, baseline = _reports()
    page = report.to_html(tmp_path / "gate.html", current, baseline)
    assert _html_rows(page) == _expected(report)


def test_a_rule_judged_on_one_query_has_no_interval_and_every_output_says_so():
    qrels = {"q1": {"d1": 1}}
    current = evaluate_run({"q1": {"d1": 1.0}}, qrels)
    baseline = evaluate_run({"q1": {"d2": 1.0, "d1": 0.5}}, qrels)
    report = check(current, baseline, [Floor("ndcg@10", 0.1), FailIfSignificantlyWorse("ndcg@10")])
    assert [(r.interval, r.p_value) for r in report.results] == [(None, None), (None, None)]
    assert all(r.passed for r in report.results)
    back = CheckReport.from_json(report.to_json())
    assert back == report and [r.interval for r in back.results] == [None, None]
    for line in report.to_text().splitlines()[2:4]:
        assert re.search(r"\+0\.3691\s+-\s+-\s+PASS$", line), line
    assert "interval=" not in report.to_junit() and "p=" not in report.to_junit()


def test_what_was_judged_heads_the_text_and_the_markdown_when_it_is_said():
    report, _, _ = _reports()
    said = attrs.evolve(report, judged="run.txt against base.json")
    assert rule_table(said).title == "quality gate: run.txt against base.json"
    assert rule_table(attrs.evolve(report, judged=None)).title == "quality gate"
    heading = said.to_markdown().splitlines()[0]
    assert heading.endswith("quality gate failed: run.txt against base.json"), heading
    unsaid = attrs.evolve(report, judged=None).to_markdown().splitlines()[0]
    assert unsaid.endswith("quality gate failed"), unsaid


def test_a_result_is_a_pass_or_a_fail_and_a_report_names_what_was_judged_by_keyword():
    report, _, _ = _reports()
    data = report.to_dict()
    data["results"][0]["verdict"] = "maybe"
    with pytest.raises(ValueError, match="'verdict' must be in"):
        CheckReport.from_dict(data)
    fields = (report.results, report.n_queries, report.test, report.correction, report.alpha)
    with pytest.raises(TypeError, match="positional argument"):
        CheckReport(*fields, report.notes, "run.txt against base.json")
