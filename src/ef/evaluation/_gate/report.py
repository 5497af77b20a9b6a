"""The gate's report: each rule's verdict, with the numbers behind it (attrs, frozen)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from ef.evaluation._gate.rules import GateRule, rule_from_json
from ef.evaluation._report.fields import (
    JsonReport,
    built,
    checked,
    count,
    finite,
    list_of,
    nested,
    optional,
    string,
)
from ef.evaluation._report.frozen import as_tuple

if TYPE_CHECKING:
    from ef.evaluation._report.reports import RetrievalEvalReport

__all__ = ["FAIL", "PASS", "CheckReport", "RuleResult"]

PASS = "pass"
FAIL = "fail"


def _interval(value: Iterable[float] | None) -> tuple[float, float] | None:
    if value is None:
        return None
    low, high = value
    return (float(low), float(high))


@attrs.frozen
class RuleResult(JsonReport):
    """One rule checked: its verdict and the numbers it was judged on.

    :param rule: the rule.
    :param verdict: ``"pass"`` or ``"fail"``.
    :param value: the metric's mean now, over the compared queries.
    :param baseline: the baseline's mean over the same queries.
    :param difference: the mean per-query difference, now minus baseline.
    :param interval: the paired bootstrap interval of ``difference``.
    :param p_value: the paired test's p-value (two-sided), after the correction over the
        metrics under a ``fail_if`` rule; ``None`` for other rules or when undefined.
    :param reason: why the rule passed or failed, in one sentence.
    """

    rule: GateRule = attrs.field(metadata=checked(built(GateRule, rule_from_json)))
    verdict: str = attrs.field(
        validator=attrs.validators.in_((PASS, FAIL)), metadata=checked(string)
    )
    value: float = attrs.field(metadata=checked(finite))
    baseline: float = attrs.field(metadata=checked(finite))
    difference: float = attrs.field(metadata=checked(finite))
    interval: tuple[float, float] | None = attrs.field(
        converter=_interval, metadata=checked(optional(list_of(finite)))
    )
    p_value: float | None = attrs.field(metadata=checked(optional(finite)))
    reason: str = attrs.field(metadata=checked(string))

    @property
    def passed(self) -> bool:
        """Whether the rule holds."""
        return self.verdict == PASS


@attrs.frozen
class CheckReport(JsonReport):
    """The outcome of :func:`check`: one :class:`RuleResult` per rule, in the rules' order.

    :param results: each rule's result.
    :param n_queries: the queries compared (the common ones, when the baseline's qrels or
        queries changed and that was allowed).
    :param test: the paired test of ``fail_if`` rules.
    :param correction: the multiple-testing correction over the metrics under ``fail_if``.
    :param alpha: the significance level.
    :param notes: what the reader must know (a changed input that was allowed, queries left
        out).
    :param judged: what was judged against what (``"run.txt against baseline.json"``), for
        the headings of the outputs; ``None`` when not said.
    """

    results: tuple[RuleResult, ...] = attrs.field(
        converter=as_tuple, metadata=checked(list_of(nested(RuleResult)))
    )
    n_queries: int = attrs.field(metadata=checked(count))
    test: str = attrs.field(metadata=checked(string))
    correction: str | None = attrs.field(metadata=checked(optional(string)))
    alpha: float = attrs.field(metadata=checked(finite))
    notes: tuple[str, ...] = attrs.field(
        default=(), converter=as_tuple, metadata=checked(list_of(string))
    )
    judged: str | None = attrs.field(default=None, kw_only=True, metadata=checked(optional(string)))

    @property
    def passed(self) -> bool:
        """Whether every rule holds (the gate's exit code 0)."""
        return all(result.passed for result in self.results)

    @property
    def failures(self) -> tuple[RuleResult, ...]:
        """The rules that do not hold."""
        return tuple(result for result in self.results if not result.passed)

    def to_text(self) -> str:
        """A plain table for a terminal: one line per rule (rule, value, baseline, difference,
        interval, p, verdict), then the failures, the notes and a summary line."""
        from ef.evaluation._gate.render import to_text

        return to_text(self)

    def to_markdown(self) -> str:
        """A Markdown section for a pull request comment or a CI job summary: a heading, the
        same table, the failures and the notes."""
        from ef.evaluation._gate.render import to_markdown

        return to_markdown(self)

    def to_junit(self) -> str:
        """JUnit XML: one test suite, one test case per rule, a ``failure`` when it fails."""
        from ef.evaluation._gate.render import to_junit

        return to_junit(self)

    def to_html(
        self,
        path: str | os.PathLike[str],
        current: RetrievalEvalReport,
        baseline: RetrievalEvalReport,
        *,
        queries: Mapping[str, str] | None = None,
        title: str | None = None,
    ) -> Path:
        """Write the gate's page: one self-contained HTML page that opens offline, leading
        with the verdict (what was judged against what) and the rules' table, then the
        compared queries, the largest loss on the first rule's metric first, with their
        text when ``queries`` are given, and the per-query difference chart.

        :param current: the report that was checked.
        :param baseline: the baseline it was checked against.
        :param queries: the query texts, shown beside the ids.
        :returns: ``path``.
        :raises ImportError: without the ``html`` extra (Jinja2, vl-convert-python).
        """
        from ef.evaluation._gate.page import write_gate_page

        return write_gate_page(self, path, current, baseline, queries=queries, title=title)
