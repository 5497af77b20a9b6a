"""``ef-eval compare``: compare systems with a baseline, or every pair, with significance tests.

Two ways in: ``ef-eval compare QRELS RUN [RUN ...]`` scores TREC run files against the qrels
(as ``ef-eval run`` does), and ``ef-eval compare REPORT.json [REPORT.json ...]`` compares saved
reports, each a report's JSON or the output of ``ef-eval run --format json`` (one report per
run). Everything else is :func:`~ef.evaluation.compare`, whose statistics need the ``stats``
extra (scipy).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ef.evaluation import (
    CORRECTIONS,
    SIGNIFICANCE_TESTS,
    DatasetFormatError,
    RetrievalEvalReport,
    compare,
    loads_strict,
    read_run,
    registry,
)
from ef.evaluation.cli._arguments import (
    add_depth_option,
    add_html_option,
    add_missing_queries_option,
    add_run_format_option,
)
from ef.evaluation.cli._common import (
    EXIT_USAGE,
    CliError,
    add_judging_options,
    add_output_options,
    check_names,
    check_outputs,
    command_outputs,
    parse_names,
    positive_int,
    read_qrels,
    write_output,
)
from ef.evaluation.cli._compare_tables import comparison_csv, comparison_tsv, print_comparison
from ef.evaluation.cli._extensions import report_finished
from ef.evaluation.cli._groups import add_groups_option, read_groups
from ef.evaluation.cli._html import comparison_html, dataset_texts
from ef.evaluation.cli.run import run_names

if TYPE_CHECKING:
    from ef.evaluation.cli._common import Subparsers

__all__ = ["add_parser", "handle", "read_reports"]

FORMATS = ("table", "json", "markdown", "latex", "csv", "tsv")

DESCRIPTION = """\
Compare systems with a baseline (--baseline), or every pair of systems (without it), on
per-query values, paired by query id, with significance tests (tukey: Tukey's HSD), a
multiple-testing correction, effect sizes and wins/ties/losses. Either score TREC run files
against qrels (QRELS RUN [RUN ...]; a judged query missing from a run scores 0, with a warning,
and a run holding no judged query is refused: see --missing-queries), or compare saved reports
(REPORT.json [REPORT.json ...], from 'ef-eval run --format json' or a report's to_json()).
Systems are named after their files (reports: without '.json'); --baseline takes a name or a
path as given.
"""


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}; expected a number in (0, 1)")
    return value


def add_parser(subparsers: Subparsers) -> None:
    """Register the ``compare`` subcommand."""
    parser = subparsers.add_parser(
        "compare",
        help="compare runs or reports with a baseline or pair by pair, with significance tests",
        description=DESCRIPTION,
    )
    parser.add_argument(
        "inputs",
        metavar="INPUT",
        nargs="+",
        help="QRELS then TREC run files, or report JSON files",
    )
    parser.add_argument(
        "--baseline",
        metavar="NAME",
        help="the baseline system (default: none, every pair of systems is compared)",
    )
    add_judging_options(parser)
    add_missing_queries_option(parser, "a judged query missing from a run does: it scores 0")
    add_depth_option(parser)
    add_run_format_option(parser)
    parser.add_argument(
        "--metrics",
        type=parse_names,
        default=("ndcg@10",),
        metavar="KEY[,KEY...]",
        help="metric keys to compare, comma-separated (default: ndcg@10), e.g. ndcg@10,map@100",
    )
    parser.add_argument(
        "--tests",
        type=parse_names,
        default=("t-test", "randomization"),
        metavar="NAME[,NAME...]",
        help=f"tests to run: {', '.join(SIGNIFICANCE_TESTS)} (default: t-test,randomization); "
        "the first one marks the table",
    )
    parser.add_argument(
        "--correction",
        choices=[*CORRECTIONS, "none"],
        default="holm",
        help="multiple-testing correction over the systems compared with the baseline, or "
        "over every pair and metric without one (default: holm)",
    )
    parser.add_argument(
        "--alpha", type=_probability, default=0.05, help="significance level (default: 0.05)"
    )
    parser.add_argument(
        "--permutations",
        type=positive_int,
        default=10_000,
        metavar="N",
        help="random swaps of the randomisation test (default: 10000)",
    )
    parser.add_argument(
        "--resamples",
        type=positive_int,
        default=10_000,
        metavar="N",
        help="resamples of the bootstrap (default: 10000)",
    )
    parser.add_argument(
        "--confidence",
        type=_probability,
        default=0.95,
        help="coverage of the bootstrap interval (default: 0.95)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random tests (default: 0)")
    parser.add_argument(
        "--risk-alpha",
        type=float,
        metavar="ALPHA",
        help="also compute URisk, TRisk and GeoRisk with this risk weight (e.g. 1, 5)",
    )
    parser.add_argument(
        "--reader",
        metavar="NAME",
        help="read QRELS with this dataset reader instead (e.g. 'beir' for a BEIR folder)",
    )
    add_output_options(
        parser,
        formats=FORMATS,
        format_help="table (default: fits the terminal, or 80 columns when piped), json (the "
        "comparison report), markdown, latex, or csv and tsv (one row per comparison, full "
        "precision)",
    )
    add_html_option(parser, "with reports or runs, the per-query differences")
    parser.add_argument(
        "--dataset",
        metavar="DIR",
        help="a BEIR folder: query texts and document snippets for the --html page",
    )
    add_groups_option(parser)
    parser.set_defaults(handler=handle)


def _report_name(path: str) -> str:
    return Path(path).name.removesuffix(".json") or Path(path).name


def read_reports(paths: Sequence[str]) -> tuple[dict[str, RetrievalEvalReport], dict[str, str]]:
    """The reports in JSON files, by system name, and the name each single-report file gives.

    A file holds one report (a report's ``to_json()``; named after the file, without
    ``.json``) or a mapping from names to reports (``ef-eval run --format json``). Each file
    is read once (a pipe will do) and must be strict UTF-8 JSON; every field of every report is
    checked (:meth:`RetrievalEvalReport.from_dict`), so no string or ``null`` passes for a
    number.

    :raises CliError: for a file that cannot be read, is not strict JSON or holds no report,
        or a name given twice.
    """
    reports: dict[str, RetrievalEvalReport] = {}
    names_by_path: dict[str, str] = {}
    for path in paths:
        data = _load_json(path)
        if isinstance(data, dict) and "per_query" in data:
            found = {_report_name(path): data}
            names_by_path[path] = _report_name(path)
        elif isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values()):
            found = data
        else:
            raise CliError(
                f"{path}: expected a report (with 'per_query') or a mapping of names to reports"
            )
        for name, value in found.items():
            if name in reports:
                raise CliError(f"{path}: system {name!r} is already given by another file")
            try:
                reports[name] = RetrievalEvalReport.from_dict(value)
            except (TypeError, ValueError) as error:
                raise CliError(f"{path}: {name!r} is not a report: {error}") from error
    return reports, names_by_path


def _load_json(path: str) -> Any:
    """The strict JSON document in ``path``; a syntax error is named with its line."""
    try:
        with open(path, "rb") as file:
            raw = file.read()
    except OSError as error:
        raise CliError(f"cannot read {path}: {error.strerror or error}") from error
    try:
        return loads_strict(raw)
    except ValueError as problem:  # a JsonProblem: the text is not strict JSON
        # loads_strict counts columns from the start of the file: name the line instead.
        message = _syntax_error(path, raw) or f"{path}: not JSON: {problem}"
        raise CliError(message) from None


def _syntax_error(path: str, raw: bytes) -> str | None:
    """``path:line: ...`` for a JSON syntax error in ``raw``, or None for other problems."""
    try:
        json.loads(raw.decode("utf-8"))
    except json.JSONDecodeError as error:
        return f"{path}:{error.lineno}: not JSON: {error.msg} at column {error.colno}"
    except (ValueError, RecursionError):  # not UTF-8, too deep, too many digits
        pass
    return None


def _systems(args: argparse.Namespace) -> tuple[dict[str, Any], Any, dict[str, str]]:
    """The systems by name, the qrels (None for reports), and the name of each input path."""
    inputs: list[str] = args.inputs
    if all(path.endswith(".json") for path in inputs):
        reports, names_by_path = read_reports(inputs)
        return dict(reports), None, names_by_path
    if inputs[0].endswith(".json"):
        # Runs follow a qrels file, which is never JSON; a .json run is ranx's format.
        raise CliError(
            "give either QRELS and run files, or report JSON files only, not both",
            exit_code=EXIT_USAGE,
        )
    if len(inputs) < 2:
        raise CliError("give QRELS and at least one run file", exit_code=EXIT_USAGE)
    check_names(args.metrics, registry().metrics, "metric")  # any notation: nDCG@10, P_10
    names = run_names(inputs[1:])
    qrels = read_qrels(inputs[0], args.reader)
    runs = {
        name: _read_run(path, args.run_format) for name, path in zip(names, inputs[1:], strict=True)
    }
    return runs, qrels, dict(zip(inputs[1:], names, strict=True))


def _read_run(path: str, run_format: str | None) -> Any:
    """The run in ``path``; a saved report given among run files is named as such."""
    try:
        return read_run(path, format=run_format)
    except DatasetFormatError:
        # Read again only to explain the error: a report's JSON is never a run.
        if path.endswith(".json") and _holds_reports(path):
            raise CliError(
                f"{path} is a report: give either QRELS and run files, or report JSON files "
                "only, not both",
                exit_code=EXIT_USAGE,
            ) from None
        raise


def _holds_reports(path: str) -> bool:
    try:
        data = _load_json(path)
    except CliError:
        return False
    if not isinstance(data, dict):
        return False
    values = data.values()
    return "per_query" in data or all(isinstance(v, dict) and "per_query" in v for v in values)


def _baseline(given: str, systems: Mapping[str, object], names_by_path: Mapping[str, str]) -> str:
    if given in systems:
        return given
    if given in names_by_path:
        return names_by_path[given]
    raise CliError(
        f"unknown baseline {given!r}; the systems are: {', '.join(systems)}",
        exit_code=EXIT_USAGE,
    )


def handle(args: argparse.Namespace) -> int:
    """Compare the systems and print the report in the chosen format."""
    check_names(args.tests, SIGNIFICANCE_TESTS, "test")
    if args.dataset is not None and not args.html:
        raise CliError(
            "--dataset gives the --html page its texts: give --html too", exit_code=EXIT_USAGE
        )
    check_outputs(command_outputs(args), [*args.inputs, *filter(None, [args.dataset])])
    systems, qrels, names_by_path = _systems(args)
    baseline = None if args.baseline is None else _baseline(args.baseline, systems, names_by_path)
    report = compare(
        systems,
        qrels,
        baseline=baseline,
        metrics=args.metrics,
        tests=args.tests,
        correction=None if args.correction == "none" else args.correction,
        n_permutations=args.permutations,
        n_resamples=args.resamples,
        seed=args.seed,
        alpha=args.alpha,
        confidence_level=args.confidence,
        relevance_level=args.relevance_level,
        judged_only=bool(args.judged_only),
        risk_alpha=args.risk_alpha,
        depth=args.depth,
        groups=read_groups(args),
        **({} if args.missing_queries is None else {"missing_queries": args.missing_queries}),
    )
    if args.html:
        texts, _ = dataset_texts(args.dataset)
        comparison_html(args.html, report, systems, qrels=qrels, **texts)
    dataset = None if qrels is None else args.inputs[0]
    if args.format == "table":
        if args.output in (None, "-") and sys.stdout.isatty():
            print_comparison(report, sys.stdout, terminal=True)
            report_finished(args, "compare", {"comparison": report}, dataset=dataset)
            return 0
        buffer = io.StringIO()
        print_comparison(report, buffer, terminal=False)
        text = buffer.getvalue()
    elif args.format == "json":
        text = report.to_json(indent=2, ensure_ascii=False) + "\n"
    elif args.format == "markdown":
        text = report.to_markdown()
    elif args.format == "latex":
        text = report.to_latex()
    elif args.format == "tsv":
        text = comparison_tsv(report)
    else:
        text = comparison_csv(report)
    write_output(args.output, text, inputs=args.inputs)
    report_finished(args, "compare", {"comparison": report}, dataset=dataset)
    return 0
