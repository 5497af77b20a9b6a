"""Reports as DataFrames: ``to_arrow()``, ``to_pandas()`` and ``to_polars()``, one implementation.

A report says which columns it has (:meth:`FrameOutputs.frame_columns`); this module builds a
pyarrow Table of them with fixed types, and pandas and polars take that Table as it is, so the
three outputs always hold the same rows and columns. The libraries are imported only when one
of these methods is called (extra ``dataframes``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

__all__ = ["Column", "FrameOutputs", "arrow_table"]

ColumnType = Literal["string", "float", "int"]
Column = tuple[str, ColumnType, Sequence[Any]]
"""One column: its name, its type, and its values (``None`` for a missing value)."""


def arrow_table(columns: Sequence[Column]) -> Any:
    """A pyarrow Table of ``columns``, typed as they say (an empty column keeps its type)."""
    try:
        import pyarrow as arrow  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError as error:  # pragma: no cover - the extra is part of the test set-up
        raise ImportError(
            "a report as a DataFrame needs pyarrow: pip install 'ef-evaluation[dataframes]'"
        ) from error
    types = {"string": arrow.string(), "float": arrow.float64(), "int": arrow.int64()}
    schema = arrow.schema([(name, types[kind]) for name, kind, _ in columns])
    return arrow.table({name: list(values) for name, _, values in columns}, schema=schema)


class FrameOutputs:
    """The DataFrame outputs of a report: each report lists its columns, this does the rest."""

    __slots__ = ()

    def frame_columns(self, means: bool) -> list[Column]:
        """The report's columns: its values in long form, or its means with ``means=True``."""
        raise NotImplementedError

    def to_arrow(self, *, means: bool = False) -> Any:
        """The report as a pyarrow Table (see :meth:`to_pandas` for the layout)."""
        return arrow_table(self.frame_columns(means))

    def to_pandas(self, *, means: bool = False) -> Any:
        """The report as a pandas DataFrame, in long form: one row per value.

        The layout of each report is documented on its class and in :doc:`/dataframes`.

        :param means: the means (one row per metric) instead of the per-query values.
        """
        return self.to_arrow(means=means).to_pandas()

    def to_polars(self, *, means: bool = False) -> Any:
        """The report as a polars DataFrame (see :meth:`to_pandas` for the layout)."""
        import polars

        return polars.from_arrow(self.to_arrow(means=means))
