"""The gate's report as text: one table of the rules (:func:`rule_table`), written as a
terminal summary, a Markdown section and JUnit XML, and shown by the gate's page."""

from __future__ import annotations

from typing import TYPE_CHECKING
from xml.etree import ElementTree

import attrs

from ef.evaluation._compare.render_pairs import format_p_value
from ef.evaluation._report.table import Cell, Figure, Table

if TYPE_CHECKING:
    from ef.evaluation._gate.report import CheckReport, RuleResult

__all__ = ["COLUMNS", "rule_table", "summary", "to_junit", "to_markdown", "to_text"]

COLUMNS = ("rule", "value", "baseline", "difference", "interval", "p", "verdict")


def _row(result: RuleResult) -> tuple[Cell, ...]:
    interval = result.interval
    return (
        result.rule.text,
        Figure(f"{result.value:.4f}"),
        Figure(f"{result.baseline:.4f}"),
        Figure(f"{result.difference:+.4f}"),
        None if interval is None else Figure(f"[{interval[0]:+.4f}, {interval[1]:+.4f}]"),
        None if result.p_value is None else Figure(format_p_value(result.p_value)),
        result.verdict.upper(),
    )


def rule_table(report: CheckReport) -> Table:
    """The table every output of the gate shows: one row per rule under :data:`COLUMNS`, the
    numbers as written (the difference and its interval signed, the p-value as every
    comparison writes it), nothing where a rule has no number (the p-value of a floor)."""
    judged = "" if report.judged is None else f": {report.judged}"
    return Table(f"quality gate{judged}", COLUMNS, [_row(result) for result in report.results])


def summary(report: CheckReport) -> str:
    """The verdict in one line, with the queries compared and the test."""
    failed = len(report.failures)
    verdict = "passed" if report.passed else f"FAILED ({failed} of {len(report.results)} rules)"
    correction = report.correction or "no correction"
    return (
        f"quality gate {verdict}: {report.n_queries} queries, {report.test} "
        f"({correction}, alpha {report.alpha:g})"
    )


def _lines(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def to_text(report: CheckReport) -> str:
    """The rules' table as plain text, then the failures, the notes and the summary line."""
    lines = [f"FAIL {result.rule.text}: {result.reason}" for result in report.failures]
    lines.extend(f"note: {note}" for note in report.notes)
    return rule_table(report).to_text() + _lines([*lines, summary(report)])


def to_markdown(report: CheckReport) -> str:
    """A Markdown section for a pull request comment or a CI job summary: a heading, the
    rules' table (each rule as code), then the failures and the notes."""
    heading = (
        "✅ Retrieval quality gate passed" if report.passed else "❌ Retrieval quality gate failed"
    )
    if report.judged is not None:
        heading += f": {report.judged}"
    table = rule_table(report)
    coded = attrs.evolve(table, rows=[(f"`{row[0]}`", *row[1:]) for row in table.rows])
    lines = [f"### {heading}", "", coded.to_markdown().rstrip("\n"), ""]
    lines.extend(f"- **{result.rule.text}**: {result.reason}" for result in report.failures)
    lines.extend(f"- {note}" for note in report.notes)
    return _lines([*lines, summary(report)])


def to_junit(report: CheckReport) -> str:
    """JUnit XML: one test suite, one test case per rule (a failure element when it fails),
    its numbers from the rule's row of the table."""
    suite = ElementTree.Element(
        "testsuite",
        name="ef-evaluation quality gate",
        tests=str(len(report.results)),
        failures=str(len(report.failures)),
        errors="0",
        skipped="0",
    )
    for result, row in zip(report.results, rule_table(report).texts(), strict=True):
        case = ElementTree.SubElement(suite, "testcase", classname="ef-eval.check", name=row[0])
        detail = ", ".join(  # a cell with nothing to say (no p of a floor) is left out
            f"{k}={v}" for k, v in zip(COLUMNS[1:-1], row[1:-1], strict=True) if v
        )
        if not result.passed:
            failure = ElementTree.SubElement(case, "failure", message=result.reason)
            failure.text = detail
        else:
            ElementTree.SubElement(case, "system-out").text = f"{result.reason}; {detail}"
    suites = ElementTree.Element("testsuites")
    suites.append(suite)
    ElementTree.indent(suites)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        + ElementTree.tostring(suites, encoding="unicode")
        + "\n"
    )
