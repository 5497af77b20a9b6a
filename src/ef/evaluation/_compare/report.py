"""The comparison report: systems against a baseline, metric by metric (attrs, frozen)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from ef.evaluation._json import loads_strict
from ef.evaluation._report.fields import (
    check_fields,
    count,
    finite,
    integer,
    list_of,
    mapping_of,
    optional,
    string,
)

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["ComparisonReport", "PairedComparison"]


def _str_tuple(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


def _interval(value: Iterable[float] | None) -> tuple[float, float] | None:
    if value is None:
        return None
    low, high = value
    return (float(low), float(high))


def _comparison_tuple(values: Iterable[PairedComparison]) -> tuple[PairedComparison, ...]:
    return tuple(values)


@attrs.frozen
class PairedComparison:
    """One system against the baseline on one metric, over the paired queries.

    :param system: the compared system's name.
    :param metric: the metric key (``"ndcg@10"``).
    :param mean: the system's mean over the paired queries.
    :param baseline_mean: the baseline's mean over the same queries.
    :param difference: the mean of the per-query differences, system minus baseline.
    :param wins: queries where the system scores higher than the baseline.
    :param ties: queries where both score the same.
    :param losses: queries where the system scores lower.
    :param effect_size: Cohen's d for paired data, ``None`` when undefined.
    :param p_values: the raw p-value of each test that gives one (``None``: undefined).
    :param adjusted_p_values: the same after the report's correction.
    :param confidence_interval: the bootstrap interval of ``difference``, if it was asked for.
    :param not_applicable: paired samples left out because the metric did not apply to the
        system or the baseline there (RAG reports; always 0 for retrieval).
    """

    system: str
    metric: str
    mean: float
    baseline_mean: float
    difference: float
    wins: int
    ties: int
    losses: int
    effect_size: float | None
    p_values: dict[str, float | None]
    adjusted_p_values: dict[str, float | None]
    confidence_interval: tuple[float, float] | None = attrs.field(default=None, converter=_interval)
    not_applicable: int = attrs.field(default=0, kw_only=True)


@attrs.frozen
class ComparisonReport:
    """The outcome of :func:`compare` — systems against a baseline, metric by metric.

    ``means`` maps every system (the baseline too) to its mean of each metric over the
    paired queries; ``comparisons`` holds one :class:`PairedComparison` per compared system
    and metric. A difference is significant when its adjusted p-value is at most ``alpha``
    (for ``"bootstrap"``: when its interval leaves out 0). The report keeps every parameter
    that decided the numbers, and round-trips through JSON.

    >>> from ef.evaluation import compare
    >>> from ef.evaluation import RetrievalEvalReport
    >>> def scored(values):
    ...     per_query = {q: {'ndcg@10': v} for q, v in values.items()}
    ...     return RetrievalEvalReport({}, per_query, len(values), (10,))
    >>> report = compare(
    ...     {'bm25': scored({'q1': 0.2, 'q2': 0.4}), 'dense': scored({'q1': 0.6, 'q2': 0.5})},
    ...     baseline='bm25', tests=('randomization',))
    >>> report.comparison('dense', 'ndcg@10').wins
    2
    >>> report.comparison('dense', 'ndcg@10').p_values
    {'randomization': 0.5}
    """

    baseline: str
    systems: tuple[str, ...] = attrs.field(converter=_str_tuple)
    metrics: tuple[str, ...] = attrs.field(converter=_str_tuple)
    means: dict[str, dict[str, float]]
    comparisons: tuple[PairedComparison, ...] = attrs.field(converter=_comparison_tuple)
    n_queries: int
    tests: tuple[str, ...] = attrs.field(converter=_str_tuple)
    correction: str | None
    alpha: float = 0.05
    confidence_level: float = 0.95
    n_permutations: int = 10_000
    n_resamples: int = 10_000
    seed: int = 0

    def comparison(self, system: str, metric: str) -> PairedComparison:
        """The comparison of ``system`` with the baseline on ``metric``.

        :raises KeyError: if there is none (the baseline itself, or an unknown name).
        """
        for row in self.comparisons:
            if row.system == system and row.metric == metric:
                return row
        raise KeyError(f"no comparison of system {system!r} on metric {metric!r}")

    def significant(self, system: str, metric: str, test: str | None = None) -> bool:
        """Whether ``system`` differs significantly from the baseline on ``metric``.

        :param test: which test decides; ``None`` means the first of :attr:`tests`.
        :raises KeyError: for an unknown system or metric, or a test the report did not run.
        """
        test = self.tests[0] if test is None else test
        if test not in self.tests:
            raise KeyError(f"test {test!r} was not run (ran: {', '.join(self.tests)})")
        row = self.comparison(system, metric)
        if test == "bootstrap":
            interval = row.confidence_interval
            return interval is not None and (interval[0] > 0.0 or interval[1] < 0.0)
        p_value = row.adjusted_p_values.get(test)
        return p_value is not None and p_value <= self.alpha

    def best(self, metric: str) -> tuple[str, ...]:
        """The systems with the highest mean of ``metric`` (several on a tie)."""
        top = max(self.means[system][metric] for system in self.systems)
        return tuple(s for s in self.systems if self.means[s][metric] == top)

    def to_markdown(self, *, test: str | None = None, digits: int = 4) -> str:
        """A Markdown table; see :func:`ef.evaluation._compare.render.to_markdown`."""
        from ef.evaluation._compare.render import to_markdown

        return to_markdown(self, test=test, digits=digits)

    def to_latex(self, *, test: str | None = None, digits: int = 4) -> str:
        """A LaTeX table; see :func:`ef.evaluation._compare.render.to_latex`."""
        from ef.evaluation._compare.render import to_latex

        return to_latex(self, test=test, digits=digits)

    def to_table(self, *, test: str | None = None, digits: int = 4, plain: bool = False) -> Table:
        """A rich table for the terminal; see :func:`ef.evaluation._compare.render.to_table`."""
        from ef.evaluation._compare.render import to_table

        return to_table(self, test=test, digits=digits, plain=plain)

    def to_details_table(self, *, digits: int = 4) -> Table:
        """A rich table of every comparison; see :mod:`ef.evaluation._compare.render`."""
        from ef.evaluation._compare.render import to_details_table

        return to_details_table(self, digits=digits)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (the inverse of :meth:`from_dict`)."""
        data = attrs.asdict(self)
        for name in ("systems", "metrics", "tests"):
            data[name] = list(data[name])
        data["comparisons"] = [dict(row) for row in data["comparisons"]]
        for row in data["comparisons"]:
            if row["confidence_interval"] is not None:
                row["confidence_interval"] = list(row["confidence_interval"])
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ComparisonReport:
        """Rebuild a report from :meth:`to_dict` output, checking every field first.

        :raises TypeError: for a missing or unknown field, or a value of the wrong type (a
            string or ``null`` where a number belongs).
        :raises ValueError: for a number that is not finite, or a negative count.
        """
        fields = check_fields(cls, data, _REPORT_FIELDS)
        fields["comparisons"] = [PairedComparison(**row) for row in fields["comparisons"]]
        return cls(**fields)

    def to_json(self, **dumps_options: Any) -> str:
        """The report as a JSON string; strict JSON, so a value that is not finite is refused.

        :raises ValueError: if a value is NaN or infinite.
        """
        return json.dumps(self.to_dict(), **{**dumps_options, "allow_nan": False})

    @classmethod
    def from_json(cls, text: str | bytes) -> ComparisonReport:
        """Rebuild a report from :meth:`to_json` output, which must be strict JSON.

        :raises ValueError: for text that is not strict JSON, or a field of the wrong value.
        :raises TypeError: for a field of the wrong type.
        """
        return cls.from_dict(loads_strict(text))


def _interval_pair(value: Any, where: str) -> Any:
    values = list_of(finite)(value, where)
    if len(values) != 2:
        raise ValueError(f"{where} holds {len(values)} numbers; expected 2 (low, high)")
    return values


def _comparison(value: Any, where: str) -> Any:
    return check_fields(PairedComparison, value, _COMPARISON_FIELDS, where)


_P_VALUES = mapping_of(optional(finite))
_COMPARISON_FIELDS = {
    "system": string,
    "metric": string,
    "mean": finite,
    "baseline_mean": finite,
    "difference": finite,
    "wins": count,
    "ties": count,
    "losses": count,
    "effect_size": optional(finite),
    "p_values": _P_VALUES,
    "adjusted_p_values": _P_VALUES,
    "confidence_interval": optional(_interval_pair),
    "not_applicable": count,
}
_REPORT_FIELDS = {
    "baseline": string,
    "systems": list_of(string),
    "metrics": list_of(string),
    "means": mapping_of(mapping_of(finite)),
    "comparisons": list_of(_comparison),
    "n_queries": count,
    "tests": list_of(string),
    "correction": optional(string),
    "alpha": finite,
    "confidence_level": finite,
    "n_permutations": count,
    "n_resamples": count,
    "seed": integer,
}
