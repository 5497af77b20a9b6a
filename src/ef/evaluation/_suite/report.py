"""The suite report: every (dataset, system) cell, the averages, the comparisons (attrs, frozen)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ef.evaluation._compare.report import ComparisonReport
from ef.evaluation._report.fields import (
    JsonReport,
    checked,
    count,
    list_of,
    mapping_of,
    nested,
    object_,
    optional,
    string,
)
from ef.evaluation._report.fields import finite as _finite
from ef.evaluation._report.frames import Column, FrameOutputs
from ef.evaluation._report.frozen import (
    FrozenDict,
    as_tuple,
    freeze,
    frozen_dict,
    frozen_dict_of_dicts,
)
from ef.evaluation._report.reports import RetrievalEvalReport

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["AVERAGES", "SuiteReport"]

AVERAGES = ("macro", "micro")
"""The two averages of a system over a suite: over datasets (macro), over queries (micro)."""


def _cells(value: Any) -> FrozenDict[str, FrozenDict[str, RetrievalEvalReport]]:
    return FrozenDict({dataset: frozen_dict(row) for dataset, row in value.items()})


_MEANS = checked(mapping_of(mapping_of(_finite)))


@attrs.frozen
class SuiteReport(FrameOutputs, JsonReport):
    """The outcome of :func:`evaluate_suite` — systems over datasets, BEIR's table and more.

    ``cells[dataset][system]`` is the :class:`RetrievalEvalReport` of one system on one dataset
    (a cell missing from a merge of partial suites is absent). Per system, two averages of
    every metric, said which: ``macro`` is the mean over datasets of each dataset's mean (BEIR's
    "Avg." row, every dataset weighing the same), ``micro`` the mean over all the suite's
    queries pooled (every query weighing the same; only for metrics that are plain means over
    queries, so not ``gm_map`` or the ``num_*`` counts). A system missing a dataset has no
    averages. With a ``baseline``, ``comparisons[dataset]`` is :func:`compare` of every system
    with it on the table's ``metric``, and ``significant_wins`` / ``significant_losses`` count
    per system the datasets where it is significantly better / worse than the baseline.

    ``datasets_info`` holds each dataset's source, reader, split and size; ``manifest`` the
    library version and the suite's parameters. The report round-trips through JSON
    (:meth:`to_json`, :meth:`from_json`) and gives DataFrames (:meth:`to_pandas`: one row per
    dataset, system and metric; with ``means=True`` one per system, average and metric).

    >>> from ef.evaluation import RetrievalEvalReport, suite_report
    >>> def cell(value):
    ...     return RetrievalEvalReport({'ndcg@10': value}, {'q1': {'ndcg@10': value}}, 1, (10,))
    >>> report = suite_report(
    ...     {'a': {'bm25': cell(0.5)}, 'b': {'bm25': cell(0.25)}}, systems=('bm25',))
    >>> report.macro['bm25']['ndcg@10']
    0.375
    """

    datasets: tuple[str, ...] = attrs.field(converter=as_tuple, metadata=checked(list_of(string)))
    systems: tuple[str, ...] = attrs.field(converter=as_tuple, metadata=checked(list_of(string)))
    metric: str = attrs.field(metadata=checked(string))
    cells: FrozenDict[str, FrozenDict[str, RetrievalEvalReport]] = attrs.field(
        converter=_cells,
        repr=False,
        metadata=checked(mapping_of(mapping_of(nested(RetrievalEvalReport)))),
    )
    macro: FrozenDict[str, FrozenDict[str, float]] = attrs.field(
        converter=frozen_dict_of_dicts, metadata=_MEANS
    )
    micro: FrozenDict[str, FrozenDict[str, float]] = attrs.field(
        converter=frozen_dict_of_dicts, metadata=_MEANS
    )
    baseline: str | None = attrs.field(
        default=None, kw_only=True, metadata=checked(optional(string))
    )
    comparisons: FrozenDict[str, ComparisonReport] = attrs.field(
        factory=FrozenDict,
        kw_only=True,
        repr=False,
        converter=frozen_dict,
        metadata=checked(mapping_of(nested(ComparisonReport))),
    )
    significant_wins: FrozenDict[str, int] = attrs.field(
        factory=FrozenDict, kw_only=True, converter=frozen_dict, metadata=checked(mapping_of(count))
    )
    significant_losses: FrozenDict[str, int] = attrs.field(
        factory=FrozenDict, kw_only=True, converter=frozen_dict, metadata=checked(mapping_of(count))
    )
    datasets_info: FrozenDict[str, Any] = attrs.field(
        factory=FrozenDict, kw_only=True, converter=freeze, metadata=checked(object_)
    )
    manifest: FrozenDict[str, Any] = attrs.field(
        factory=FrozenDict, kw_only=True, converter=freeze, metadata=checked(object_)
    )

    def value(self, dataset: str, system: str, metric: str | None = None) -> float | None:
        """The mean of ``metric`` (default: the table's) of ``system`` on ``dataset``, or
        ``None`` when that cell is missing or lacks the metric."""
        cell = self.cells.get(dataset, FrozenDict()).get(system)
        return None if cell is None else cell.metrics.get(metric or self.metric)

    def table(self, metric: str | None = None) -> dict[str, dict[str, float | None]]:
        """``{dataset: {system: mean}}`` of ``metric`` (default: the table's), BEIR's layout."""
        return {d: {s: self.value(d, s, metric) for s in self.systems} for d in self.datasets}

    def best(self, dataset: str, metric: str | None = None) -> tuple[str, ...]:
        """The systems with the highest mean on ``dataset`` (several on a tie)."""
        row = {s: v for s, v in self.table(metric)[dataset].items() if v is not None}
        top = max(row.values(), default=None)
        return tuple(s for s, v in row.items() if v == top)

    def significance(self, dataset: str, system: str) -> int:
        """``+1`` when ``system`` is significantly better than the baseline on ``dataset``
        (the table's metric, the comparison's first test), ``-1`` when significantly worse,
        ``0`` otherwise (no baseline, the baseline itself, no comparison)."""
        comparison = self.comparisons.get(dataset)
        if comparison is None or system == self.baseline or system not in comparison.systems:
            return 0
        if not comparison.significant(system, self.metric):
            return 0
        difference = comparison.comparison(system, self.metric).difference
        return 1 if difference > 0 else -1 if difference < 0 else 0

    def to_markdown(self, *, digits: int = 4) -> str:
        """BEIR's table in Markdown; see :func:`ef.evaluation._suite.tables.to_markdown`."""
        from ef.evaluation._suite.tables import to_markdown

        return to_markdown(self, digits=digits)

    def to_latex(self, *, digits: int = 4) -> str:
        """BEIR's table in LaTeX; see :func:`ef.evaluation._suite.tables.to_latex`."""
        from ef.evaluation._suite.tables import to_latex

        return to_latex(self, digits=digits)

    def to_table(self, *, digits: int = 4, plain: bool = False) -> Table:
        """BEIR's table for the terminal (rich); see :mod:`ef.evaluation._suite.tables`."""
        from ef.evaluation._suite.tables import to_table

        return to_table(self, digits=digits, plain=plain)

    def to_html(
        self, path: str | os.PathLike[str], *, title: str | None = None, cell_pages: bool = True
    ) -> Path:
        """Write the suite as one self-contained HTML page: the table, a chart per dataset and,
        with ``cell_pages``, each cell's evaluation page in the folder ``<page>-cells/`` beside
        it, linked from the table; see :mod:`ef.evaluation._suite.page`.

        :returns: ``path``.
        :raises ImportError: without the ``html`` extra (Jinja2, vl-convert-python).
        """
        from ef.evaluation._suite.page import write_suite_page

        return write_suite_page(self, path, title=title, cell_pages=cell_pages)

    def frame_columns(self, means: bool) -> list[Column]:
        """Columns ``dataset, system, metric, value``, one row per cell and metric (datasets,
        then systems, in the report's order); with ``means``: ``system, average, metric,
        value``, ``average`` being ``"macro"`` (over datasets) or ``"micro"`` (over queries).
        """
        if means:
            rows = [
                (system, average, metric, value)
                for system in self.systems
                for average, table in zip(AVERAGES, (self.macro, self.micro), strict=True)
                for metric, value in table.get(system, FrozenDict()).items()
            ]
            names = ("system", "average", "metric")
        else:
            rows = [
                (dataset, system, metric, value)
                for dataset in self.datasets
                for system in self.systems
                if system in self.cells.get(dataset, FrozenDict())
                for metric, value in self.cells[dataset][system].metrics.items()
            ]
            names = ("dataset", "system", "metric")
        columns: list[Column] = [
            (name, "string", [row[i] for row in rows]) for i, name in enumerate(names)
        ]
        columns.append(("value", "float", [row[3] for row in rows]))
        return columns
