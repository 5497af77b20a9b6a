"""``ef-eval suite DATASET... --system SPEC...``: systems over datasets, BEIR's table.

Each dataset is read once; each (dataset, system) cell is an evaluation through the runner,
journaled under ``--journal-dir`` (a stopped suite started again resumes where it stopped),
its index kept under ``--index-dir``, its report written under ``--results-dir``.
``ef-eval suite --merge DIR DIR...`` joins results folders written elsewhere into one table.
What the library does is :func:`~ef.evaluation.evaluate_suite`; this module is the command line.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ef.evaluation import (
    RETRIEVER_FORMS,
    SIGNIFICANCE_TESTS,
    SuiteDataset,
    SuiteReport,
    evaluate_suite,
    is_retriever_spec,
    merge_suite_results,
    redact_url,
    registry,
    write_suite_results,
)
from ef.evaluation.cli._arguments import parse_cutoffs, parse_names
from ef.evaluation.cli._common import (
    EXIT_USAGE,
    CliError,
    add_output_options,
    check_names,
    check_outputs,
    positive_int,
    write_output,
)
from ef.evaluation.cli._extensions import report_finished

if TYPE_CHECKING:
    from ef.evaluation.cli._common import Subparsers

__all__ = ["add_parser", "handle"]

FORMATS = ("table", "json", "markdown", "latex")

DESCRIPTION = """\
Evaluate every system on every dataset and print one table: a row per dataset, a column per
system, the averages over datasets (macro) and over queries (micro), and with --baseline the
significance of each difference on each dataset. A DATASET is a BEIR folder, builtin:NAME,
or READER:SOURCE for another reader (ir_datasets:beir/scifact/test), each optionally ending
in @SPLIT. A --system is SPEC or NAME=SPEC, SPEC being what 'ef-eval retrieval --retriever'
takes: bm25, st:MODEL, module:attr or a URL. With --merge, the positional arguments are
results folders (--results-dir of earlier suites), merged into one table.
"""


def _system(text: str) -> tuple[str, str]:
    name, equals, spec = text.partition("=")
    if equals and name and not name.startswith(("http:", "https:")) and ":" not in name:
        return name, spec
    return redact_url(text), text  # a URL's credentials never name a column or a file


def add_parser(subparsers: Subparsers) -> None:
    """Register the ``suite`` subcommand."""
    parser = subparsers.add_parser(
        "suite",
        help="evaluate systems over several datasets: BEIR's table, averages, significance",
        description=DESCRIPTION,
    )
    parser.add_argument(
        "datasets", nargs="+", metavar="DATASET", help="the datasets (with --merge: folders)"
    )
    parser.add_argument(
        "--system",
        dest="systems",
        action="append",
        type=_system,
        default=[],
        metavar="[NAME=]SPEC",
        help="a system (repeatable): bm25, st:MODEL, module:attr or a URL",
    )
    parser.add_argument("--baseline", metavar="NAME", help="compare every system with NAME")
    parser.add_argument(
        "--metric", default=None, metavar="KEY", help="the table's metric (default: ndcg@10)"
    )
    parser.add_argument("--metrics", type=parse_names, metavar="NAME[,NAME...]")
    parser.add_argument("--k", type=parse_cutoffs, metavar="K[,K...]", help="rank cutoffs")
    parser.add_argument(
        "--tests",
        type=parse_names,
        default=("t-test",),
        metavar="TEST[,TEST...]",
        help="significance tests; the first marks the table (default: t-test)",
    )
    parser.add_argument("--limit", type=positive_int, metavar="N", help="results per query")
    parser.add_argument("--index-dir", metavar="DIR", help="saved indexes, per dataset and system")
    parser.add_argument("--journal-dir", metavar="DIR", help="journals, one per cell: resumable")
    parser.add_argument("--results-dir", metavar="DIR", help="a results file per cell")
    parser.add_argument("--html", metavar="FILE", help="also write the suite's HTML page")
    parser.add_argument(
        "--merge", action="store_true", help="merge the results folders given as DATASET"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress lines")
    add_output_options(
        parser, formats=FORMATS, format_help="table (default), json, markdown or latex"
    )
    parser.set_defaults(handler=handle)


def _check_usage(args: argparse.Namespace) -> None:
    """Refuse, before anything is read, a command line the suite could not run."""
    if not args.systems:
        raise CliError("give at least one --system", exit_code=EXIT_USAGE)
    for _, spec in args.systems:
        if not is_retriever_spec(spec):
            forms = "; ".join(RETRIEVER_FORMS)
            message = f"unknown system {redact_url(spec)!r}; expected one of: {forms}"
            raise CliError(message, exit_code=EXIT_USAGE)
    names = [name for name, _ in args.systems]
    if args.baseline is not None and args.baseline not in names:
        raise CliError(
            f"--baseline {args.baseline!r} is not one of the systems: {', '.join(names)}",
            exit_code=EXIT_USAGE,
        )
    if len(set(names)) < len(names):
        raise CliError("two --system share one name: name them NAME=SPEC", exit_code=EXIT_USAGE)
    datasets = [SuiteDataset.parse(source).name for source in args.datasets]
    if len(set(datasets)) < len(datasets):
        raise CliError(
            f"two datasets share one name ({', '.join(datasets)}); a suite names each by its "
            "folder (and @SPLIT)",
            exit_code=EXIT_USAGE,
        )


def _run(args: argparse.Namespace) -> SuiteReport:
    _check_usage(args)
    if args.metrics:
        check_names(args.metrics, registry().metrics, "metric")
    if args.metric is not None:
        check_names([args.metric], registry().metrics, "metric")
    check_names(args.tests, SIGNIFICANCE_TESTS, "test")
    options = {
        "metrics": args.metrics,
        "k_values": args.k,
        "limit": args.limit,
        "metric": args.metric,
    }
    return evaluate_suite(
        dict(args.systems),
        args.datasets,
        baseline=args.baseline,
        index_dir=args.index_dir,
        journal_dir=args.journal_dir,
        results_dir=args.results_dir,
        progress=not args.no_progress,
        tests=args.tests,
        **{key: value for key, value in options.items() if value is not None},
    )


def _merge(args: argparse.Namespace) -> SuiteReport:
    if args.systems:
        raise CliError("--merge takes results folders, not --system", exit_code=EXIT_USAGE)
    try:
        chosen = {} if args.baseline is None else {"baseline": args.baseline}
        report = merge_suite_results(*args.datasets, metric=args.metric, **chosen)
    except ValueError as error:
        raise CliError(str(error)) from error
    if args.results_dir is not None:
        write_suite_results(report, args.results_dir)
    return report


def _print_table(report: SuiteReport, stream: IO[str], *, terminal: bool) -> None:
    """The suite's table as every ``ef-eval`` table is printed: fitted to the terminal, or
    plain text off it, the best value of each row marked ★ (bold does not survive a pipe)."""
    from ef.evaluation.cli._terminal import from_rich, print_table

    table, caption = from_rich(report.to_table(plain=True), f"Suite: {report.metric}")
    print_table(table, stream, terminal=terminal, caption=caption)


def _merged_files(folders: list[str]) -> list[str]:
    """The files a merge of ``folders`` reads (each ``suite.json`` and ``DATASET/SYSTEM.json``,
    as docs/suites.md lays them out): inputs, whichever path or link reaches them."""
    found: list[str] = []
    for folder in map(Path, folders):
        found += [str(folder / "suite.json"), *map(str, sorted(folder.glob("*/*.json")))]
    return found


def handle(args: argparse.Namespace) -> int:
    """Run (or merge) the suite, print its table in the chosen format, then hand the report
    to the installed command extensions (``--mlflow``)."""
    # A merged folder is an input: nothing is written into it (an index, a cell, the results),
    # nor onto a file it holds, even one reached through a link out of the folder.
    outputs = {"--output": args.output, "--html": args.html}
    inputs = list(args.datasets)
    if args.merge:
        outputs["--results-dir"] = args.results_dir
        inputs += _merged_files(args.datasets)
    check_outputs(outputs, inputs)
    report = _merge(args) if args.merge else _run(args)
    if args.html:
        report.to_html(args.html)
    _write(args, report, inputs)
    report_finished(args, "suite", {"suite": report})
    return 0


def _write(args: argparse.Namespace, report: SuiteReport, inputs: list[str]) -> None:
    if args.format == "table" and args.output in (None, "-") and sys.stdout.isatty():
        _print_table(report, sys.stdout, terminal=True)
        return
    if args.format == "json":
        text = report.to_json(indent=2, ensure_ascii=False) + "\n"
    elif args.format == "markdown":
        text = report.to_markdown()
    elif args.format == "latex":
        text = report.to_latex()
    else:
        buffer = io.StringIO()
        _print_table(report, buffer, terminal=False)
        text = buffer.getvalue()
    write_output(args.output, text, inputs=inputs)
