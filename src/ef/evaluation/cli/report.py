"""``ef-eval report REPORT.json [REPORT.json ...] -o report.html``: a visual report of saved
reports, and the ``--html`` pages of ``run``, ``retrieval``, ``compare`` and ``rag``.

One retrieval report becomes an evaluation page (with ``--run`` and ``--qrels``, its drill-down
and precision-recall curve); one RAG report a RAG page (``--samples`` adds the texts); one
comparison report a comparison page; several retrieval reports are compared with
:func:`~ef.evaluation.compare` against ``--baseline`` (default: the first) and become a
comparison page. Every page is one file that opens from disk with the network off.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ef.evaluation import (
    ComparisonReport,
    RagEvalReport,
    RetrievalEvalReport,
    read_rag_samples,
    read_run,
)
from ef.evaluation.cli._arguments import add_run_format_option, html_path
from ef.evaluation.cli._common import (
    EXIT_USAGE,
    CliError,
    check_outputs,
    command_outputs,
    read_qrels,
)
from ef.evaluation.cli._html import dataset_texts, runs_html
from ef.evaluation.cli.compare import _load_json, read_reports
from ef.evaluation.cli.run import run_names

if TYPE_CHECKING:
    from ef.evaluation import Run
    from ef.evaluation.cli._common import Subparsers

__all__ = ["add_parser", "handle"]

DESCRIPTION = """\
Write a visual report: one HTML page that opens from disk with the network off. One retrieval
report gives an evaluation page (--run and --qrels add the per-query drill-down and the
precision-recall curve, --dataset adds query texts and document snippets); one RAG report a RAG
page (--samples adds each sample's texts); a comparison report a comparison page; several
retrieval reports are compared against --baseline and give a comparison page (--run once per
report, in the same order, adds the side-by-side drill-down).
"""


def add_parser(subparsers: Subparsers) -> None:
    """Register the ``report`` subcommand."""
    parser = subparsers.add_parser(
        "report", help="write a visual HTML report of saved reports", description=DESCRIPTION
    )
    parser.add_argument("reports", metavar="REPORT", nargs="+", help="report JSON files")
    parser.add_argument(
        "-o", "--output", type=html_path, metavar="FILE", required=True, help="the page to write"
    )
    parser.add_argument(
        "--run",
        action="append",
        metavar="RUN",
        help="a run file (once per report; TREC, or by --run-format)",
    )
    add_run_format_option(parser)
    parser.add_argument("--qrels", metavar="QRELS", help="the qrels the runs were scored with")
    parser.add_argument("--reader", metavar="NAME", help="read QRELS with this dataset reader")
    parser.add_argument(
        "--dataset", metavar="DIR", help="a BEIR folder: query texts and document snippets"
    )
    parser.add_argument("--samples", metavar="FILE", help="the RAG samples a RAG report scored")
    parser.add_argument("--baseline", metavar="NAME", help="the baseline of several reports")
    parser.add_argument("--title", metavar="TEXT", help="the page's title")
    parser.add_argument(
        "--debug", action="store_true", help="show the full traceback when something fails"
    )
    parser.set_defaults(handler=handle)


def _kind(data: Any) -> str:
    if isinstance(data, dict) and "comparisons" in data:
        return "comparison"
    if isinstance(data, dict) and "coverage" in data:
        return "rag"
    return "retrieval"


def _single(args: argparse.Namespace, data: Any) -> None:
    """The page of one comparison or RAG report."""
    try:
        if _kind(data) == "comparison":
            ComparisonReport.from_dict(data).to_html(args.output, title=args.title)
        else:
            samples = None
            if args.samples is not None:
                samples = [sample for _, sample in read_rag_samples(args.samples)]
            RagEvalReport.from_dict(data).to_html(args.output, samples=samples, title=args.title)
    except (TypeError, ValueError) as error:
        raise CliError(f"{args.reports[0]}: {error}") from error


def handle(args: argparse.Namespace) -> int:
    """Read the reports (and runs, qrels, dataset) and write the page."""
    inputs = [*args.reports, *(args.run or ()), *filter(None, [args.qrels, args.dataset])]
    check_outputs(command_outputs(args), inputs)
    if len(args.reports) == 1 and _kind(data := _load_json(args.reports[0])) != "retrieval":
        _single(args, data)
    else:
        texts, dataset_qrels = dataset_texts(args.dataset)
        qrels = read_qrels(args.qrels, args.reader) if args.qrels else dataset_qrels
        reports, _ = read_reports(args.reports)
        runs_html(
            args.output,
            reports,
            runs=_runs(args.run, reports, qrels, args.run_format),
            qrels=qrels,
            baseline=args.baseline,
            title=args.title,
            **texts,
        )
    return 0


def _runs(
    paths: Sequence[str] | None,
    reports: Mapping[str, RetrievalEvalReport],
    qrels: Any,
    run_format: str | None = None,
) -> dict[str, Run] | None:
    if not paths:
        return None
    if qrels is None:
        raise CliError(
            "--run needs --qrels (or --dataset) to mark the grades", exit_code=EXIT_USAGE
        )
    if len(paths) != len(reports):
        raise CliError(
            f"give one --run per report: {len(paths)} runs for {len(reports)} reports "
            f"({', '.join(reports)})",
            exit_code=EXIT_USAGE,
        )
    run_names(paths)  # refuses a run file given twice
    return {
        name: read_run(path, format=run_format) for name, path in zip(reports, paths, strict=True)
    }
