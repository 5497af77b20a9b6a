"""``ef-eval metrics``: every measure ``--metrics`` accepts, with its notations and source.

The rows come from :func:`~ef.evaluation.measure_catalogue` with ``notations=True``, the same
registry view ``docs/metrics.md`` is generated from: registered metrics (ef's, trec_eval's,
plugins') first, then the core measures known by their notations.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ef.evaluation import measure_catalogue
from ef.evaluation.cli._common import Table, add_output_options, emit

if TYPE_CHECKING:
    from ef.evaluation.cli._common import Subparsers

__all__ = ["add_parser", "docs_table", "handle", "measures"]


def add_parser(subparsers: Subparsers) -> None:
    """Register the ``metrics`` subcommand."""
    parser = subparsers.add_parser(
        "metrics",
        help="list every measure --metrics accepts, with its notations",
        description="List every measure: the names it may be written as in --metrics "
        "(ef's, ir_measures', trec_eval's, ranx's, BEIR's), its parameters, a one-line "
        "definition, how it aggregates over queries, its source of truth and its plugin.",
    )
    add_output_options(parser)
    parser.set_defaults(handler=handle)


def measures() -> list[dict[str, Any]]:
    """Every measure as a JSON-ready dict.

    >>> rows = {row["name"]: row for row in measures()}
    >>> rows["ERR"]["notations"], rows["ERR"]["source"]
    (['ERR@20', 'ERR(max_rel=3)@20'], "gdeval (ir_measures' gdeval provider)")
    """
    return [
        {
            "name": name,
            "notations": list(info.notations),
            "parameters": list(info.options),
            "keys": None if info.keys is None else list(info.keys),
            "description": info.description,
            "aggregation": info.aggregation,
            "source": info.source,
            "plugin": info.plugin,
        }
        for name, info in measure_catalogue(notations=True).items()
    ]


def handle(args: argparse.Namespace) -> int:
    """Print one row per measure."""
    rows_data = measures()
    rows = [
        (
            row["name"],
            "\n".join(row["notations"]),
            "\n".join(row["parameters"]),
            row["description"],
            row["aggregation"],
            row["source"],
        )
        for row in rows_data
    ]
    columns = ("measure", "notations", "parameters", "definition", "aggregation", "source")
    title = f"{len(rows)} measures (K: any rank cutoff, X: trec_eval's parameter)"
    emit(args, Table(title, columns, rows), rows_data)
    return 0


def _code(values: list[str]) -> str:
    return ", ".join(f"`{value}`" for value in values)


def docs_table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of ``docs/metrics.md``: one row per measure of ``rows``.

    >>> print(docs_table([{"name": "ERR", "notations": ["ERR@20"], "parameters": [],
    ...     "description": "expected reciprocal rank", "aggregation": "mean",
    ...     "source": "gdeval"}]))
    | measure | notations | parameters | definition | aggregation | source |
    | --- | --- | --- | --- | --- | --- |
    | `ERR` | `ERR@20` |  | expected reciprocal rank | mean | gdeval |
    """
    columns = ["measure", "notations", "parameters", "definition", "aggregation", "source"]
    cells = [
        [
            f"`{row['name']}`",
            _code(row["notations"]),
            "; ".join(row["parameters"]),
            row["description"],
            row["aggregation"],
            row["source"],
        ]
        for row in rows
    ]
    return Table("Measures", columns, cells).to_markdown().rstrip("\n")
