"""``ef-eval compare``: compare systems with a baseline, or every pair of systems, with
significance tests.

Two ways in: ``ef-eval compare QRELS RUN [RUN ...]`` scores TREC run files against the qrels
(as ``ef-eval run`` does), and ``ef-eval compare REPORT.json [REPORT.json ...]`` compares saved
reports, each a report's JSON or the output of ``ef-eval run --format json`` (one report per
run). Everything else is :func:`~ef.evaluation.compare`, whose statistics need the ``stats``
extra (scipy).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ef.evaluation import (
    CORRECTIONS,
    SIGNIFICANCE_TESTS,
    ComparisonReport,
    DatasetFormatError,
    RetrievalEvalReport,
    compare,
    loads_strict,
    read_run,
    registry,
)
from ef.evaluation.cli._arguments import (
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
from ef.evaluation.cli._extensions import report_finished
from ef.evaluation.cli._html import comparison_html
from ef.evaluation.cli.run import run_names

if TYPE_CHECKING:
    from rich.console import RenderableType

    from ef.evaluation.cli._common import Subparsers

__all__ = ["add_parser", "handle", "read_reports"]

FORMATS = ("table", "json", "markdown", "latex", "csv")

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
        format_help="table (default), json (the comparison report), markdown, latex, or csv "
        "(one row per comparison)",
    )
    add_html_option(parser, "with reports or runs, the per-query differences")
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


def _csv(report: ComparisonReport) -> str:
    p_tests = [test for test in report.tests if test != "bootstrap"]
    pairs = report.baseline is None
    columns = ["system", *(["baseline"] if pairs else []), "metric", "mean", "baseline_mean"]
    columns.append("difference")
    if "bootstrap" in report.tests:
        columns += ["ci_low", "ci_high"]
    columns += ["effect_size", "wins", "ties", "losses"]
    for test in p_tests:
        columns += [f"p_{test}", f"p_{test}_adjusted"]
    if report.risk_alpha is not None:
        columns += ["urisk", "trisk", "risk", "georisk"]
    columns.append("significant")
    rows = []
    for row in report.comparisons:
        cells: list[Any] = [row.system, *([row.baseline] if pairs else []), row.metric]
        cells += [row.mean, row.baseline_mean, row.difference]
        if "bootstrap" in report.tests:
            cells += list(row.confidence_interval or (None, None))
        cells += [row.effect_size, row.wins, row.ties, row.losses]
        for test in p_tests:
            cells += [row.p_values[test], row.adjusted_p_values[test]]
        if report.risk_alpha is not None:
            cells += [row.urisk, row.trisk, row.risk_reading]
            cells.append(report.georisk[row.system].get(row.metric))
        significant = report.significant(row.system, row.metric, against=row.baseline)
        cells.append("yes" if significant else "no")
        rows.append(["" if cell is None else cell for cell in cells])
    # Full precision, as in JSON: a p-value of 1e-12 must not print as 0.0000.
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buffer.getvalue()


def _plain(renderables: Sequence[RenderableType]) -> str:
    """Rich renderables as plain text at their natural width, without trailing spaces."""
    from rich.console import Console

    buffer = io.StringIO()
    width = max(Console(width=1000).measure(r).maximum for r in renderables)
    console = Console(file=buffer, force_terminal=False, color_system=None, width=width)
    for renderable in renderables:
        console.print(renderable)
        console.print()
    return "".join(line.rstrip() + "\n" for line in buffer.getvalue().rstrip().splitlines())


def handle(args: argparse.Namespace) -> int:
    """Compare the systems and print the report in the chosen format."""
    check_names(args.tests, SIGNIFICANCE_TESTS, "test")
    check_outputs(command_outputs(args), args.inputs)
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
        **({} if args.missing_queries is None else {"missing_queries": args.missing_queries}),
    )
    if args.html:
        comparison_html(args.html, report, systems, qrels=qrels)
    dataset = None if qrels is None else args.inputs[0]
    if args.format == "table":
        to_terminal = args.output in (None, "-") and sys.stdout.isatty()
        tables = [report.to_table(plain=not to_terminal), report.to_details_table()]
        if report.baseline is None and any(t != "bootstrap" for t in report.tests):
            test = next(t for t in report.tests if t != "bootstrap")
            tables += [report.to_p_value_table(metric, test) for metric in report.metrics]
        if to_terminal:
            from rich.console import Console

            console = Console(file=sys.stdout)
            for table in tables:
                console.print(table)
                console.print()
            report_finished(args, "compare", {"comparison": report}, dataset=dataset)
            return 0
        text = _plain(tables)
    elif args.format == "json":
        text = report.to_json(indent=2, ensure_ascii=False) + "\n"
    elif args.format == "markdown":
        text = report.to_markdown()
    elif args.format == "latex":
        text = report.to_latex()
    else:
        text = _csv(report)
    write_output(args.output, text, inputs=args.inputs)
    report_finished(args, "compare", {"comparison": report}, dataset=dataset)
    return 0
