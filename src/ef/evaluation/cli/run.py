"""``ef-eval run QRELS RUN [RUN ...]``: score run files against relevance judgements.

Each run file is scored with :func:`~ef.evaluation.evaluate_run` given its path, so the numbers
are trec_eval's (score order, ties by doc id descending). A TREC run file is scored one query
at a time (it must be grouped by query, as trec_eval writes runs), so a run larger than memory
can be scored; the other formats (:func:`~ef.evaluation.read_run`: ranx's JSON, JSON Lines,
Parquet, told by the file name or ``--run-format``) are read whole.

The qrels are a qrels file in either form :func:`~ef.evaluation.read_trec_qrels`
reads (TREC qrels lines, or BEIR's TSV such as ``qrels/test.tsv``, told apart by the first
line), or anything a registered dataset reader reads (``--reader beir`` for a BEIR folder,
whose qrels are used). Any of them may be a pipe (``<(zcat qrels.gz)``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ef.evaluation import (
    MissingQueriesError,
    MissingQueriesWarning,
    evaluate_run,
    read_run,
    registry,
)
from ef.evaluation.cli._arguments import (
    add_depth_option,
    add_html_option,
    add_interval_options,
    add_missing_queries_option,
    add_run_format_option,
)
from ef.evaluation.cli._common import (
    EXIT_USAGE,
    CliError,
    add_metric_options,
    add_output_options,
    check_names,
    check_outputs,
    command_outputs,
    emit,
    read_qrels,
    retrieval_options,
)
from ef.evaluation.cli._extensions import report_finished
from ef.evaluation.cli._groups import add_groups_option, read_groups, report_table
from ef.evaluation.cli._html import runs_html
from ef.evaluation.cli._output import report_data

if TYPE_CHECKING:
    from ef.evaluation.cli._common import Subparsers

__all__ = ["add_parser", "handle", "run_names"]

DESCRIPTION = """\
Score run files against relevance judgements: TREC runs ('qid Q0 docid rank score tag',
grouped by query, scored one query at a time), ranx's JSON, JSON Lines or Parquet (by file name
or --run-format). Each run is ordered as trec_eval orders it (score descending, ties by doc id
descending). A judged query missing from a run scores 0, with one warning per run; a run that
holds no judged query is refused, naming the likely cause (a prefix such as q1 against 1, zero
padding, letter case); --missing-queries changes the rule. One row per run, named after its
file; --per-query shows each query.
"""


def add_parser(subparsers: Subparsers) -> None:
    """Register the ``run`` subcommand."""
    parser = subparsers.add_parser(
        "run",
        help="score run files (TREC, JSON, JSONL, Parquet) against qrels",
        description=DESCRIPTION,
    )
    parser.add_argument(
        "qrels",
        metavar="QRELS",
        help="a qrels file: TREC ('qid 0 docid grade') or BEIR's TSV (with its "
        "'query-id corpus-id score' header)",
    )
    parser.add_argument("runs", metavar="RUN", nargs="+", help="run files to score")
    add_run_format_option(parser)
    parser.add_argument(
        "--reader",
        metavar="NAME",
        help="read QRELS with this dataset reader instead (e.g. 'beir' for a BEIR folder)",
    )
    add_metric_options(parser, evaluate_run, cutoffs=True)
    add_interval_options(parser)
    add_missing_queries_option(parser, "a judged query missing from a run does: it scores 0")
    add_depth_option(parser)
    add_groups_option(parser)
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


@contextlib.contextmanager
def about_run(path: str) -> Iterator[None]:
    """Name ``path`` in what the library says of a run it was handed read (as "the run")."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", MissingQueriesWarning)
            yield
    except MissingQueriesError as error:
        error.add_note(f"the run is {path}")
        raise
    finally:
        for warning in caught:  # given again once the recording has stopped
            named = issubclass(warning.category, MissingQueriesWarning)
            message = f"{path}: {warning.message}" if named else warning.message
            warnings.warn_explicit(message, warning.category, warning.filename, warning.lineno)


def handle(args: argparse.Namespace) -> int:
    """Score every run file and print one row per run (or per run and query)."""
    check_names(args.metrics, registry().metrics, "metric")
    check_outputs(command_outputs(args), [args.qrels, *args.runs])
    names = run_names(args.runs)
    # Without a page the judgements are only scored with: held packed, half the memory.
    qrels = read_qrels(args.qrels, args.reader, packed=not args.html)
    options = retrieval_options(args)
    groups = read_groups(args)
    if groups is not None:
        options["groups"] = groups
    paths = dict(zip(names, args.runs, strict=True))
    if args.html:
        # The page draws the rankings, so each run is read once and kept (a pipe cannot be
        # read twice); without a page, a TREC file streams query by query.
        read = {name: read_run(path, format=args.run_format) for name, path in paths.items()}
        reports = {}
        for name, run in read.items():
            with about_run(paths[name]):
                reports[name] = evaluate_run(run, qrels, **options)
    else:
        reports = {
            name: evaluate_run(path, qrels, run_format=args.run_format, **options)
            for name, path in paths.items()
        }
    n_queries = next(iter(reports.values())).n_queries
    runs = f"{len(reports)} runs" if len(reports) > 1 else "1 run"
    title = f"{runs} scored against {Path(args.qrels).name} ({n_queries} judged queries)"
    table = report_table(title, reports, label="run", per_query=args.per_query)
    data = {name: report_data(report) for name, report in reports.items()}
    emit(args, table, data, inputs=[args.qrels, *args.runs])
    if args.html:
        # One run: its evaluation page, named after the run and the judgements.
        page = f"{next(iter(reports))} on {Path(args.qrels).name}" if len(reports) == 1 else None
        runs_html(args.html, reports, runs=read, qrels=qrels, title=page)
    report_finished(args, "run", reports, dataset=args.qrels)
    return 0
