"""``--groups FILE`` and the per-group tables of ``ef-eval run``, ``retrieval``, ``compare`` and
``rag``.

With groups, the table of means has a ``group`` column and a ``queries`` count: for each report
its row over all queries (group ``(all)``), a row per group, and, when some scored queries are in
no group, a ``(no group)`` row that counts them (they count in ``(all)`` and in no group's
means, so the row has no means). The per-query table gains a ``groups`` column.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from ef.evaluation import (
    QueryGroups,
    RagEvalReport,
    RetrievalEvalReport,
    read_query_groups,
)
from ef.evaluation.cli._common import EXIT_USAGE, CliError, Table, retrieval_table

__all__ = [
    "ALL",
    "NO_GROUP",
    "add_groups_option",
    "grouped_rag_rows",
    "read_groups",
    "report_table",
]

ALL = "(all)"
"""The group label of a row over every scored query."""
NO_GROUP = "(no group)"
"""The group label of the row counting the scored queries in no group."""


def add_groups_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--groups FILE``: query groups, each reported on its own as well."""
    parser.add_argument(
        "--groups",
        metavar="FILE",
        help="query groups: TSV lines 'query_id<TAB>group' (a query on several lines for "
        'several groups) or JSON Lines {"query_id": ..., "group": ...}; means, counts and '
        "tests are also reported per group",
    )


def read_groups(args: argparse.Namespace) -> QueryGroups | None:
    """The groups of ``--groups``, or ``None``.

    :raises CliError: a usage error for a file that cannot be read, is no regular file or
        breaks the form.
    """
    path = getattr(args, "groups", None)
    if path is None:
        return None
    try:
        return read_query_groups(path)
    except (OSError, ValueError) as error:  # a ValueError names the file already
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        where = "" if isinstance(error, ValueError) else f"--groups {path}: "
        raise CliError(f"{where}{reason}", exit_code=EXIT_USAGE) from error


def report_table(
    title: str, reports: Mapping[str, RetrievalEvalReport], *, label: str, per_query: bool
) -> Table:
    """:func:`~ef.evaluation.cli._common.retrieval_table`, with the groups of the reports.

    >>> report = RetrievalEvalReport({'P@1': 0.5}, {'q1': {'P@1': 1.0}, 'q2': {'P@1': 0.0}},
    ...     2, (1,), groups={'short': {'metrics': {'P@1': 1.0}, 'n_queries': 1}},
    ...     query_groups={'q1': ['short']})
    >>> report_table('t', {'bm25': report}, label='run', per_query=False).rows
    (('bm25', '(all)', 2, 0.5), ('bm25', 'short', 1, 1.0), ('bm25', '(no group)', 1, None))
    """
    if not any(report.groups for report in reports.values()):
        return retrieval_table(title, reports, label=label, per_query=per_query)
    keys = list(dict.fromkeys(key for report in reports.values() for key in report.metrics))
    if per_query:
        rows = [
            (
                name,
                query_id,
                ", ".join(report.query_groups.get(query_id, ())) or None,
                *(values.get(key) for key in keys),
            )
            for name, report in reports.items()
            for query_id, values in report.per_query.items()
        ]
        return Table(title, (label, "query", "groups", *keys), rows)
    table_rows: list[tuple[str | int | float | None, ...]] = []
    for name, report in reports.items():
        table_rows.append((name, ALL, report.n_queries, *(report.metrics.get(k) for k in keys)))
        for group, result in report.groups.items():
            values = (result.metrics.get(k) for k in keys)
            table_rows.append((name, group, result.n_queries, *values))
        if report.ungrouped:
            table_rows.append((name, NO_GROUP, len(report.ungrouped), *([None] * len(keys))))
    return Table(title, (label, "group", "queries", *keys), table_rows)


def grouped_rag_rows(report: RagEvalReport) -> list[tuple[str | int | float | None, ...]]:
    """The rows ``group, samples, metric means…`` of a RAG report with groups."""
    names = list(report.coverage)
    rows: list[tuple[str | int | float | None, ...]] = [
        (ALL, report.n_samples, *(report.metrics.get(n) for n in names))
    ]
    for group, result in report.groups.items():
        rows.append((group, result.n_queries, *(result.metrics.get(n) for n in names)))
    ungrouped = sum(1 for names_of in report.sample_groups if not names_of)
    if ungrouped:
        rows.append((NO_GROUP, ungrouped, *([None] * len(names))))
    return rows
