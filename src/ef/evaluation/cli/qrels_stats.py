"""``ef-eval qrels-stats QRELS [RUN ...]``: what the judgements hold, and what runs leave unjudged.

One row per query (:func:`~ef.evaluation.qrels_statistics`): documents judged, relevant (grade
above 0), judged at each grade, and for each run file the documents of its first ``--depth``
that carry no grade; a last row sums them. ``--format json`` gives the statistics as
:meth:`~ef.evaluation.QrelsStatistics.to_dict` writes them.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ef.evaluation import QrelsStatistics, qrels_statistics, read_run
from ef.evaluation.cli._arguments import add_run_format_option, positive_int
from ef.evaluation.cli._common import (
    Cell,
    Table,
    add_output_options,
    check_outputs,
    command_outputs,
    emit,
    read_qrels,
)
from ef.evaluation.cli.run import run_names

if TYPE_CHECKING:
    from ef.evaluation.cli._common import Subparsers

__all__ = ["add_parser", "handle", "statistics_table"]

DESCRIPTION = """\
Count the judgements per query: documents judged, relevant (grade above 0) and judged at each
grade; with run files, the documents of each run's first --depth (trec_eval's order) that have
no grade, which a metric counts as not relevant. A last row sums each column.
"""


def add_parser(subparsers: Subparsers) -> None:
    """Register the ``qrels-stats`` subcommand."""
    parser = subparsers.add_parser(
        "qrels-stats",
        help="count judgements per query and grade, and unjudged documents in runs",
        description=DESCRIPTION,
    )
    parser.add_argument(
        "qrels", metavar="QRELS", help="a qrels file: TREC ('qid 0 docid grade') or BEIR's TSV"
    )
    parser.add_argument("runs", metavar="RUN", nargs="*", help="run files whose top to check")
    parser.add_argument(
        "--reader",
        metavar="NAME",
        help="read QRELS with this dataset reader instead (e.g. 'beir' for a BEIR folder)",
    )
    add_run_format_option(parser)
    parser.add_argument(
        "--depth",
        type=positive_int,
        default=10,
        metavar="K",
        help="how deep into each run to look for unjudged documents (default: 10)",
    )
    add_output_options(parser)
    parser.set_defaults(handler=handle)


def statistics_table(title: str, stats: QrelsStatistics) -> Table:
    """One row per judged query (then each query only a run answers), and a row of totals.

    >>> stats = qrels_statistics({"q1": {"d1": 2, "d2": 0}}, {"bm25": {"q1": ["d1", "d9"]}})
    >>> table = statistics_table("t", stats)
    >>> table.columns
    ('query', 'judged', 'relevant', 'grade 0', 'grade 2', 'unjudged@10 bm25')
    >>> table.rows[-1]
    ('all', 2, 1, 1, 1, 1)
    """
    grades = list(stats.grade_totals())
    runs = list(stats.unjudged)
    queries = list(stats.judged)
    queries += [q for run in runs for q in stats.unjudged[run] if q not in stats.judged]
    queries = list(dict.fromkeys(queries))
    rows: list[list[Cell]] = []
    for query_id in queries:
        row: list[Cell] = [query_id, stats.judged.get(query_id, 0), stats.relevant.get(query_id, 0)]
        per_grade = stats.grades.get(query_id)
        row += [0 if per_grade is None else per_grade.get(grade, 0) for grade in grades]
        row += [stats.unjudged[run].get(query_id) for run in runs]
        rows.append(row)
    totals: list[Cell] = ["all", sum(stats.judged.values()), sum(stats.relevant.values())]
    totals += list(stats.grade_totals().values())
    totals += [sum(stats.unjudged[run].values()) for run in runs]
    columns = ["query", "judged", "relevant", *(f"grade {grade}" for grade in grades)]
    columns += [f"unjudged@{stats.depth} {run}" for run in runs]
    return Table(title, columns, [*rows, totals])


def handle(args: argparse.Namespace) -> int:
    """Count the judgements and print one row per query."""
    check_outputs(command_outputs(args), [args.qrels, *args.runs])
    qrels = read_qrels(args.qrels, args.reader)
    names = run_names(args.runs) if args.runs else []
    runs = {
        name: read_run(path, format=args.run_format)
        for name, path in zip(names, args.runs, strict=True)
    }
    stats = qrels_statistics(qrels, runs or None, depth=args.depth)
    n_judged = sum(stats.judged.values())
    title = f"{args.qrels}: {n_judged:,} judgements over {len(stats.judged):,} queries"
    if runs:
        shares = [
            f"{name} {share:.1%}"
            for name in runs
            if (share := stats.unjudged_share(name)) is not None
        ]
        title += f"; unjudged in the top {args.depth}: {', '.join(shares)}"
    emit(args, statistics_table(title, stats), stats.to_dict(), inputs=[args.qrels, *args.runs])
    return 0
