"""``ef-eval pool RUN [RUN ...]``: the documents several runs rank in their top k, to judge.

The pool is :func:`~ef.evaluation.pool_runs` of the run files: per query, the union of each
run's first ``--depth`` documents (trec_eval's order), minus what ``--judged`` already grades.
It is written as BEIR's qrels TSV with the score column empty (see
:meth:`~ef.evaluation.JudgementPool.to_tsv`): fill in the grades and the file is a qrels file.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ef.evaluation import pool_runs, read_run
from ef.evaluation.cli._arguments import add_run_format_option, positive_int
from ef.evaluation.cli._common import CliError, check_outputs, read_qrels, write_output
from ef.evaluation.cli.run import run_names

if TYPE_CHECKING:
    from ef.evaluation.cli._common import Subparsers

__all__ = ["add_parser", "handle"]

DESCRIPTION = """\
Pool run files to depth k, as the TREC tracks build their judgements: for each query, the union
of every run's first k documents (each run in trec_eval's order: score descending, ties by doc
id descending). The pool is written as a TSV with the header 'query-id corpus-id score' and an
empty score column, one row per document to judge (doc ids sorted); once the grades are filled
in, it is a qrels file every ef-eval command reads. A summary goes to standard error.
"""


def add_parser(subparsers: Subparsers) -> None:
    """Register the ``pool`` subcommand."""
    parser = subparsers.add_parser(
        "pool",
        help="pool run files to depth k: the documents to judge",
        description=DESCRIPTION,
    )
    parser.add_argument("runs", metavar="RUN", nargs="+", help="run files to pool")
    add_run_format_option(parser)
    parser.add_argument(
        "--depth",
        type=positive_int,
        default=10,
        metavar="K",
        help="how many documents of each run's ranking to pool per query (default: 10)",
    )
    parser.add_argument(
        "--judged",
        metavar="QRELS",
        help="judgements already made (TREC or BEIR qrels): their documents are left out",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the pool to FILE, replaced all at once ('-' or none: standard output; "
        "a name ending in .gz is compressed)",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show the full traceback when something fails"
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Pool the run files, write the pool and say on standard error what it holds."""
    inputs = [*args.runs, *([args.judged] if args.judged else [])]
    output = None if args.output in (None, "-") else args.output
    check_outputs({"--output": output}, inputs)
    names = run_names(args.runs)
    runs = {
        name: read_run(path, format=args.run_format)
        for name, path in zip(names, args.runs, strict=True)
    }
    judged = None if args.judged is None else read_qrels(args.judged, None)
    pool = pool_runs(runs, depth=args.depth, judged=judged)
    if output is None:
        write_output(None, pool.to_tsv())
    else:
        try:
            pool.write(output)
        except OSError as error:
            raise CliError(f"cannot write {output}: {error.strerror or error}") from error
    left_out = f"; {pool.left_out:,} already judged, left out" if args.judged else ""
    print(
        f"pool of {len(runs)} run{'s' if len(runs) != 1 else ''} at depth {args.depth}: "
        f"{pool.n_documents:,} documents to judge over {len(pool.documents):,} queries"
        f"{left_out}",
        file=sys.stderr,
    )
    return 0
