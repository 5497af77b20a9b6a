"""The comparison report: systems against a baseline, metric by metric (attrs, frozen)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ef.evaluation._compare.report_frames import comparison_columns
from ef.evaluation._report.fields import (
    JsonReport,
    checked,
    count,
    finite,
    integer,
    list_of,
    mapping_of,
    nested,
    object_,
    optional,
    string,
)
from ef.evaluation._report.frames import Column, FrameOutputs
from ef.evaluation._report.frozen import (
    FrozenDict,
    as_tuple,
    freeze,
    frozen_dict,
    frozen_dict_of_dicts,
)
from ef.evaluation._report.html_hook import write_html
from ef.evaluation._types import Corpus, Qrels, Queries, Run

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["ComparisonReport", "PairedComparison"]


def _interval(value: Iterable[float] | None) -> tuple[float, float] | None:
    if value is None:
        return None
    low, high = value
    return (float(low), float(high))


def _interval_pair(value: Any, where: str) -> Any:
    values = list_of(finite)(value, where)
    if len(values) != 2:
        raise ValueError(f"{where} holds {len(values)} numbers; expected 2 (low, high)")
    return values


_P_VALUES = checked(mapping_of(optional(finite)))
_GROUP_MEANS = checked(mapping_of(mapping_of(mapping_of(finite))))
_GROUP_COUNTS = checked(mapping_of(count))


@attrs.frozen
class PairedComparison(JsonReport):
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
    :param baseline: the system this one is compared with: the report's baseline, or, when
        every pair is compared, the other system of the pair (``None`` in JSON written before
        it was kept: the report's baseline).
    :param urisk: URisk at the report's ``risk_alpha`` (``None``: no risk was asked for).
    :param trisk: TRisk, URisk's t-statistic (``None``: not asked for, or undefined); see
        :attr:`risk_reading`.
    """

    system: str = attrs.field(metadata=checked(string))
    metric: str = attrs.field(metadata=checked(string))
    mean: float = attrs.field(metadata=checked(finite))
    baseline_mean: float = attrs.field(metadata=checked(finite))
    difference: float = attrs.field(metadata=checked(finite))
    wins: int = attrs.field(metadata=checked(count))
    ties: int = attrs.field(metadata=checked(count))
    losses: int = attrs.field(metadata=checked(count))
    effect_size: float | None = attrs.field(metadata=checked(optional(finite)))
    p_values: FrozenDict[str, float | None] = attrs.field(converter=frozen_dict, metadata=_P_VALUES)
    adjusted_p_values: FrozenDict[str, float | None] = attrs.field(
        converter=frozen_dict, metadata=_P_VALUES
    )
    confidence_interval: tuple[float, float] | None = attrs.field(
        default=None, converter=_interval, metadata=checked(optional(_interval_pair))
    )
    not_applicable: int = attrs.field(default=0, kw_only=True, metadata=checked(count))
    baseline: str | None = attrs.field(
        default=None, kw_only=True, metadata=checked(optional(string))
    )
    urisk: float | None = attrs.field(
        default=None, kw_only=True, metadata=checked(optional(finite))
    )
    trisk: float | None = attrs.field(
        default=None, kw_only=True, metadata=checked(optional(finite))
    )
    group: str | None = attrs.field(default=None, kw_only=True, metadata=checked(optional(string)))

    @property
    def risk_reading(self) -> str | None:
        """What :attr:`trisk` says: ``"riskier"`` (TRisk <= -2), ``"safer"`` (>= 2) or
        ``"not significant"``; ``None`` when no risk was asked for."""
        from ef.evaluation._compare.risk import trisk_reading

        return None if self.urisk is None else trisk_reading(self.trisk)


_GROUP_ROWS = checked(list_of(nested(PairedComparison)))


def _mirrored(row: PairedComparison, system: str) -> PairedComparison:
    """``row`` seen from the other system's side: ``system`` is now the one compared."""
    interval = row.confidence_interval
    return attrs.evolve(
        row,
        system=system,
        baseline=row.system,
        mean=row.baseline_mean,
        baseline_mean=row.mean,
        difference=-row.difference,
        wins=row.losses,
        losses=row.wins,
        effect_size=None if row.effect_size is None else -row.effect_size,
        confidence_interval=None if interval is None else (-interval[1], -interval[0]),
    )


@attrs.frozen
class ComparisonReport(FrameOutputs, JsonReport):
    """The outcome of :func:`compare` — systems against a baseline, metric by metric.

    ``means`` maps every system (the baseline too) to its mean of each metric over the
    paired queries; ``comparisons`` holds one :class:`PairedComparison` per compared system
    and metric; ``per_query`` keeps the values the tests were computed from, system → query
    id → metric → value (a RAG metric that does not apply to a sample is left out), which
    :meth:`to_html` draws as each system's per-query difference chart. A report read from
    JSON written before it kept them has an empty ``per_query``. A difference is significant
    when its adjusted p-value is at most ``alpha`` (for ``"bootstrap"``: when its interval
    leaves out 0). The report keeps every parameter that decided the numbers (``manifest``:
    the ``parameters.depth`` the systems were scored at, trec_eval's ``-M``), and round-trips
    through JSON. Compared with ``groups=``, ``group_comparisons`` holds the same rows for
    each query group (their ``group`` set), ``group_means`` each group's means and
    ``group_counts`` its paired queries (see :doc:`/groups`).

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

    baseline: str | None = attrs.field(metadata=checked(optional(string)))
    systems: tuple[str, ...] = attrs.field(converter=as_tuple, metadata=checked(list_of(string)))
    metrics: tuple[str, ...] = attrs.field(converter=as_tuple, metadata=checked(list_of(string)))
    means: FrozenDict[str, FrozenDict[str, float]] = attrs.field(
        converter=frozen_dict_of_dicts, metadata=checked(mapping_of(mapping_of(finite)))
    )
    comparisons: tuple[PairedComparison, ...] = attrs.field(
        converter=as_tuple, metadata=checked(list_of(nested(PairedComparison)))
    )
    n_queries: int = attrs.field(metadata=checked(count))
    tests: tuple[str, ...] = attrs.field(converter=as_tuple, metadata=checked(list_of(string)))
    correction: str | None = attrs.field(metadata=checked(optional(string)))
    alpha: float = attrs.field(default=0.05, metadata=checked(finite))
    confidence_level: float = attrs.field(default=0.95, metadata=checked(finite))
    n_permutations: int = attrs.field(default=10_000, metadata=checked(count))
    n_resamples: int = attrs.field(default=10_000, metadata=checked(count))
    seed: int = attrs.field(default=0, metadata=checked(integer))
    risk_alpha: float | None = attrs.field(
        default=None, kw_only=True, metadata=checked(optional(finite))
    )
    georisk: FrozenDict[str, FrozenDict[str, float]] = attrs.field(
        factory=FrozenDict,
        kw_only=True,
        converter=frozen_dict_of_dicts,
        metadata=checked(mapping_of(mapping_of(finite))),
    )
    manifest: FrozenDict[str, Any] = attrs.field(
        factory=FrozenDict, converter=freeze, kw_only=True, metadata=checked(object_)
    )
    per_query: FrozenDict[str, FrozenDict[str, FrozenDict[str, float]]] = attrs.field(
        factory=FrozenDict,
        kw_only=True,
        repr=False,
        converter=freeze,
        metadata=checked(mapping_of(mapping_of(mapping_of(finite)))),
    )
    group_means: FrozenDict[str, FrozenDict[str, FrozenDict[str, float]]] = attrs.field(
        factory=FrozenDict, kw_only=True, converter=freeze, metadata=_GROUP_MEANS
    )
    group_counts: FrozenDict[str, int] = attrs.field(
        factory=FrozenDict, kw_only=True, converter=frozen_dict, metadata=_GROUP_COUNTS
    )
    group_comparisons: tuple[PairedComparison, ...] = attrs.field(
        default=(), kw_only=True, converter=as_tuple, metadata=_GROUP_ROWS
    )

    def comparison(self, system: str, metric: str, against: str | None = None) -> PairedComparison:
        """The comparison of ``system`` with the baseline on ``metric``, or with the system
        ``against`` (when every pair was compared: either order; the row is then seen from
        ``system``'s side, its difference, wins and losses, effect and interval mirrored).

        :raises KeyError: if there is none (the baseline itself, or an unknown name).
        """
        against = self.baseline if against is None else against
        for row in self.comparisons:
            if row.metric != metric:
                continue
            other = self.baseline if row.baseline is None else row.baseline
            if row.system == system and other == against:
                return row
            if row.system == against and other == system:
                return _mirrored(row, system)
        if against is None:
            raise KeyError(
                f"every pair was compared: name the other system of {system!r} (against=)"
            )
        raise KeyError(f"no comparison of system {system!r} with {against!r} on metric {metric!r}")

    def significant(
        self, system: str, metric: str, test: str | None = None, *, against: str | None = None
    ) -> bool:
        """Whether ``system`` differs significantly from the baseline (or from ``against``)
        on ``metric``.

        :param test: which test decides; ``None`` means the first of :attr:`tests`.
        :raises KeyError: for an unknown system or metric, or a test the report did not run.
        """
        return self.row_significant(self.comparison(system, metric, against), test)

    def row_significant(self, row: PairedComparison, test: str | None = None) -> bool:
        """Whether the comparison ``row`` (one of :attr:`comparisons` or
        :attr:`group_comparisons`) is significant by ``test`` (``None``: the first of
        :attr:`tests`): its adjusted p-value at most :attr:`alpha`, or for the bootstrap its
        interval excluding 0.

        :raises KeyError: for a test the report did not run.
        """
        test = self.tests[0] if test is None else test
        if test not in self.tests:
            raise KeyError(f"test {test!r} was not run (ran: {', '.join(self.tests)})")
        if test == "bootstrap":
            interval = row.confidence_interval
            return interval is not None and (interval[0] > 0.0 or interval[1] < 0.0)
        p_value = row.adjusted_p_values.get(test)
        return p_value is not None and p_value <= self.alpha

    def p_value_table(
        self, metric: str, test: str | None = None
    ) -> dict[str, dict[str, float | None]]:
        """The square table of adjusted p-values of ``metric``: ``table[a][b]`` for every two
        systems compared (symmetric; ``None`` on the diagonal, for a pair not compared, and
        for the bootstrap, which gives an interval, not a p-value).

        :param test: the test; ``None`` means the first of :attr:`tests`.
        """
        test = self.tests[0] if test is None else test
        table: dict[str, dict[str, float | None]] = {
            a: dict.fromkeys(self.systems) for a in self.systems
        }
        for row in self.comparisons:
            if row.metric == metric:
                other = self.baseline if row.baseline is None else row.baseline
                if other is not None:
                    p_value = row.adjusted_p_values.get(test)
                    table[row.system][other] = table[other][row.system] = p_value
        return table

    def groups(self, metric: str, test: str | None = None) -> dict[str, str]:
        """Letters per system: systems that share a letter do not differ significantly on
        ``metric`` (the letters papers print); ``a`` is the group of the best mean. Pairs the
        report did not compare count as not differing.

        :param test: which test decides; ``None`` means the first of :attr:`tests`.
        """
        from ef.evaluation._compare.pairwise import letter_groups

        compared = {
            frozenset((row.system, self.baseline if row.baseline is None else row.baseline))
            for row in self.comparisons
            if row.metric == metric
        }

        def differ(a: str, b: str) -> bool:
            if frozenset((a, b)) not in compared:
                return False
            return self.significant(a, metric, test, against=b)

        means = {system: self.means[system][metric] for system in self.systems}
        return letter_groups(self.systems, means, differ)

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

    def to_p_value_table(self, metric: str, test: str | None = None) -> Table:
        """A rich square table of :meth:`p_value_table`; see
        :func:`ef.evaluation._compare.render_pairs.p_value_table`."""
        from ef.evaluation._compare.render_pairs import p_value_table

        return p_value_table(self, metric, test)

    def to_group_table(self, *, test: str | None = None, digits: int = 4) -> Table:
        """A rich table of each query group's means, marked by the group's corrected tests;
        see :mod:`ef.evaluation._compare.render_groups`."""
        from ef.evaluation._compare.render_groups import group_table

        return group_table(self, test, digits)

    def to_details_table(self, *, digits: int = 4) -> Table:
        """A rich table of every comparison; see :mod:`ef.evaluation._compare.render`."""
        from ef.evaluation._compare.render import to_details_table

        return to_details_table(self, digits=digits)

    def to_html(
        self,
        path: str | os.PathLike[str],
        *,
        runs: Mapping[str, Run] | None = None,
        qrels: Qrels | None = None,
        corpus: Corpus | None = None,
        queries: Queries | None = None,
        title: str | None = None,
    ) -> Path:
        """Write this comparison as one self-contained HTML page: the means with significance
        marks and intervals, wins/ties/losses, and each system's per-query difference chart
        against the baseline (from :attr:`per_query`); ``runs`` with ``qrels`` add a
        drill-down showing the systems' rankings of one query side by side.

        :param runs: each system's run, by the names the comparison uses.
        :param corpus: document texts for the drill-down's snippets.
        :param queries: query texts, shown beside the query ids.
        :returns: ``path``.
        :raises ImportError: without the ``html`` extra (Jinja2, vl-convert-python).
        :raises ValueError: for runs without qrels (or the reverse), or an unknown system.
        """
        inputs = {"runs": runs, "qrels": qrels, "corpus": corpus}
        return write_html(self, path, **inputs, queries=queries, title=title)

    def frame_columns(self, means: bool) -> list[Column]:
        """Columns of one row per comparison: ``system`` (and, when every pair was compared,
        ``baseline``, the other system of the pair), ``metric, mean, baseline_mean,
        difference, wins, ties, losses, effect_size``, then ``p_<test>`` and
        ``adjusted_p_<test>`` per test run, then ``ci_low, ci_high`` (missing values where a
        test or interval does not apply), and with a ``risk_alpha``: ``urisk, trisk, risk``
        (the reading of TRisk) and ``georisk`` (the system's). With ``means``: ``system,
        metric, value``, the mean of every system (the baseline too) on every metric. A
        comparison with groups adds a ``group`` column (missing on the rows over all queries)
        and the rows of :attr:`group_comparisons` (with ``means``, each group's means).
        """
        return comparison_columns(self, means)
