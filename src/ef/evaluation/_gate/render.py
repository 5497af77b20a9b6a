"""The gate's report as text: a terminal summary, a Markdown table, JUnit XML."""

from __future__ import annotations

from typing import TYPE_CHECKING
from xml.etree import ElementTree

from ef.evaluation._compare.render_pairs import format_p_value

if TYPE_CHECKING:
    from ef.evaluation._gate.report import CheckReport, RuleResult

__all__ = ["COLUMNS", "cells", "summary", "to_junit", "to_markdown", "to_text"]

COLUMNS = ("rule", "value", "baseline", "difference", "interval", "p", "verdict")


def cells(result: RuleResult) -> list[str]:
    """One rule's cells under :data:`COLUMNS`, as every output shows them."""
    interval = result.interval
    return [
        result.rule.text,
        f"{result.value:.4f}",
        f"{result.baseline:.4f}",
        f"{result.difference:+.4f}",
        "" if interval is None else f"[{interval[0]:+.4f}, {interval[1]:+.4f}]",
        "" if result.p_value is None else format_p_value(result.p_value),
        result.verdict.upper(),
    ]


def summary(report: CheckReport) -> str:
    """The verdict in one line, with the queries compared and the test."""
    failed = len(report.failures)
    verdict = "passed" if report.passed else f"FAILED ({failed} of {len(report.results)} rules)"
    correction = report.correction or "no correction"
    return (
        f"quality gate {verdict}: {report.n_queries} queries, {report.test} "
        f"({correction}, alpha {report.alpha:g})"
    )


def to_text(report: CheckReport) -> str:
    """A plain table, one line per rule, then the summary line and the notes."""
    rows = [list(COLUMNS), *(cells(result) for result in report.results)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    for result in report.failures:
        lines.append(f"FAIL {result.rule.text}: {result.reason}")
    lines.extend(f"note: {note}" for note in report.notes)
    lines.append(summary(report))
    return "\n".join(lines) + "\n"


def _escaped(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(report: CheckReport) -> str:
    """A Markdown section for a pull request comment or a CI job summary: a heading, a table
    with one row per rule (columns :data:`COLUMNS`), then the failures and the notes."""
    heading = (
        "✅ Retrieval quality gate passed" if report.passed else "❌ Retrieval quality gate failed"
    )
    if report.judged is not None:
        heading += f": {_escaped(report.judged)}"
    lines = [f"### {heading}", "", "| " + " | ".join(COLUMNS) + " |"]
    lines.append("|" + "|".join(["---"] + ["---:"] * 5 + [":---:"]) + "|")
    for result in report.results:
        row = cells(result)
        row[0] = f"`{row[0]}`"
        lines.append("| " + " | ".join(_escaped(cell) for cell in row) + " |")
    lines.append("")
    lines.extend(f"- **{r.rule.text}**: {_escaped(r.reason)}" for r in report.failures)
    lines.extend(f"- {_escaped(note)}" for note in report.notes)
    lines.append(summary(report))
    return "\n".join(lines) + "\n"


def to_junit(report: CheckReport) -> str:
    """JUnit XML: one test suite, one test case per rule (a failure element when it fails)."""
    suite = ElementTree.Element(
        "testsuite",
        name="ef-evaluation quality gate",
        tests=str(len(report.results)),
        failures=str(len(report.failures)),
        errors="0",
        skipped="0",
    )
    for result in report.results:
        case = ElementTree.SubElement(
            suite, "testcase", classname="ef-eval.check", name=result.rule.text
        )
        detail = ", ".join(  # a cell with nothing to say (no p of a floor) is left out
            f"{k}={v}" for k, v in zip(COLUMNS[1:-1], cells(result)[1:-1], strict=True) if v
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
