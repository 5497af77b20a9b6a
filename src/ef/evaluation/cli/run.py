"""``ef-eval run QRELS RUN [RUN ...]``: score TREC run files against relevance judgements.

Each run file is read with :func:`~ef.evaluation.read_trec_run` and scored with
:func:`~ef.evaluation.evaluate_run`, so the numbers are trec_eval's (score order, ties by doc id
descending). The qrels are a qrels file in either form :func:`~ef.evaluation.read_trec_qrels`
reads (TREC qrels lines, or BEIR's TSV such as ``qrels/test.tsv``, told apart by the first
line), or anything a registered dataset reader reads (``--reader beir`` for a BEIR folder,
whose qrels are used). Any of them may be a pipe (``<(zcat qrels.gz)``).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ef.evaluation import evaluate_run, read_trec_run, registry
from ef.evaluation.cli._arguments import add_html_option
from ef.evaluation.cli._common import (
    EXIT_USAGE,
    CliError,
    add_metric_options,
    add_output_options,
    check_names,
    emit,
    read_qrels,
    retrieval_options,
    retrieval_table,
)
from ef.evaluation.cli._html import runs_html

if TYPE_CHECKING:
    from ef.evaluation.cli._common import Subparsers

__all__ = ["add_parser", "handle", "run_names"]

DESCRIPTION = """\
Score TREC run files ('qid Q0 docid rank score tag') against relevance judgements. Each run is
ordered as trec_eval orders it (score descending, ties by doc id descending); a judged query
missing from a run scores 0. One row per run, named after its file; --per-query shows each
query.
"""


def add_parser(subparsers: Subparsers) -> None:
    """Register the ``run`` subcommand."""
    parser = subparsers.add_parser(
        "run",
        help="score TREC run files against qrels",
        description=DESCRIPTION,
    )
    parser.add_argument(
        "qrels",
        metavar="QRELS",
        help="a qrels file: TREC ('qid 0 docid grade') or BEIR's TSV (with its "
        "'query-id corpus-id score' header)",
    )
    parser.add_argument("runs", metavar="RUN", nargs="+", help="TREC run files to score")
    parser.add_argument(
        "--reader",
        metavar="NAME",
        help="read QRELS with this dataset reader instead (e.g. 'beir' for a BEIR folder)",
    )
    add_metric_options(parser, evaluate_run, cutoffs=True)
    add_output_options(parser)
    add_html_option(parser, "several runs: compared with the first")
    parser.set_defaults(handler=handle)


def run_names(paths: Sequence[str]) -> list[str]:
    """A name per run file: its file name, or the path as given when file names collide.

    :raises CliError: if the same path is given twice.

    >>> run_names(["runs/bm25.txt", "dense.txt"])
    ['bm25.txt', 'dense.txt']
    >>> run_names(["a/run.txt", "b/run.txt"])
    ['a/run.txt', 'b/run.txt']
    """
    names = [Path(path).name for path in paths]
    if len(set(names)) == len(names):
        return names
    repeated = sorted({path for path in paths if paths.count(path) > 1})
    if repeated:
        raise CliError(f"run file {repeated[0]} is given more than once", exit_code=EXIT_USAGE)
    return [os.fspath(path) for path in paths]


def handle(args: argparse.Namespace) -> int:
    """Score every run file and print one row per run (or per run and query)."""
    check_names(args.metrics, registry().metrics, "metric")
    names = run_names(args.runs)
    qrels = read_qrels(args.qrels, args.reader)
    options = retrieval_options(args)
    read = {name: read_trec_run(path) for name, path in zip(names, args.runs, strict=True)}
    reports = {name: evaluate_run(run, qrels, **options) for name, run in read.items()}
    n_queries = next(iter(reports.values())).n_queries
    runs = f"{len(reports)} runs" if len(reports) > 1 else "1 run"
    title = f"{runs} scored against {Path(args.qrels).name} ({n_queries} judged queries)"
    table = retrieval_table(title, reports, label="run", per_query=args.per_query)
    data = {name: report.to_dict() for name, report in reports.items()}
    emit(args, table, data, inputs=[args.qrels, *args.runs])
    if args.html:
        runs_html(args.html, reports, runs=read, qrels=qrels)
    return 0
