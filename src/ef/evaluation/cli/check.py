"""``ef-eval check RUN --qrels QRELS --baseline BASELINE.json``: the quality gate.

A thin layer over :func:`~ef.evaluation.check`: the run is scored against the qrels with the
metrics the rules name — a run file, or a retriever as ``ef-eval retrieval --retriever`` takes
it (``bm25``, ``st:MODEL``, ``module:attr``, a URL) run on the queries of ``--dataset`` — then
checked against the baseline report under the rules given by
``--rule`` and by a ``[tool.ef-evaluation.check]`` table (``--config FILE``, else
``pyproject.toml`` in the working directory when it has one). ``--update-baseline`` writes the
run's report as the new baseline instead.

Exit codes: 0 when every rule holds (or the baseline was written), 1 when a rule fails (a
regression), 2 for a usage or input error (a bad command line, a file that cannot be read, a
baseline made on other qrels, queries or options), for an output that cannot be written or
would replace an input (whatever the verdict), and for a plugin's extension that fails after
the outputs were written (an experiment tracker that cannot be reached).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from ef.evaluation import (
    CORRECTIONS,
    CheckReport,
    EvaluationError,
    GateConfig,
    RetrievalEvalReport,
    check,
    evaluate_retrieval,
    evaluate_run,
    is_stream,
    parse_rule,
    read_dataset,
    read_gate_config,
    read_report,
    redact_url,
    registry,
    resolve_builtin,
    write_text_atomically,
)
from ef.evaluation.cli._arguments import (
    add_html_option,
    add_judging_options,
    add_missing_queries_option,
    add_run_format_option,
    retrieval_options,
)
from ef.evaluation.cli._common import EXIT_USAGE, CliError, check_outputs, read_qrels
from ef.evaluation.cli._extensions import report_finished
from ef.evaluation.cli._groups import add_groups_option, read_groups
from ef.evaluation.cli._retrievers import (
    RETRIEVER_FORMS,
    add_http_options,
    http_options,
    is_retriever_spec,
    resolve_retriever,
)

if TYPE_CHECKING:
    from ef.evaluation import Queries
    from ef.evaluation.cli._common import Subparsers

__all__ = ["EXIT_PASS", "EXIT_REGRESSION", "add_parser", "handle"]

EXIT_PASS = 0
"""Every rule holds, or the baseline was written."""
EXIT_REGRESSION = 1
"""A rule fails: the run is worse than the rules allow."""

_TESTS = ("t-test", "randomization", "wilcoxon")
_SUMMARY = "GITHUB_STEP_SUMMARY"

DESCRIPTION = """\
Check a run against a saved baseline report under rules, for CI. RUN is a run file, or a
retriever as 'ef-eval retrieval --retriever' takes it (bm25, st:MODEL, module:attr or a URL),
run on the queries of --dataset. The rules: floors ('ndcg@10 >= 0.60'),
tolerated drops ('ndcg@10: max_drop = 0.01') and significance-aware regressions
('ndcg@10: fail_if = "significantly_worse"': the paired test over the queries, corrected over
the metrics under such a rule). Rules come from --rule and from a [tool.ef-evaluation.check]
table (--config, else ./pyproject.toml). A baseline made on other qrels, queries or options is
refused, naming what changed (--allow-changed-qrels compares on the common queries).
--update-baseline writes the run's report as the baseline. --html writes the comparison page
against the baseline. Exit 0: pass; 1: a rule fails; 2: usage or input error.
"""


def add_parser(subparsers: Subparsers) -> None:
    """Register the ``check`` subcommand."""
    parser = subparsers.add_parser(
        "check", help="the quality gate: check a run against a baseline", description=DESCRIPTION
    )
    parser.add_argument(
        "run",
        metavar="RUN",
        help="the run file to check, or a retriever: " + " | ".join(RETRIEVER_FORMS),
    )
    parser.add_argument(
        "--qrels",
        metavar="QRELS",
        help="the judgements (default: those of --dataset)",
    )
    parser.add_argument(
        "--dataset",
        metavar="DATASET",
        help="a BEIR folder or builtin:NAME: the queries a retriever answers, the corpus bm25 "
        "and st:MODEL index, and the judgements unless --qrels is given",
    )
    parser.add_argument(
        "--reader",
        metavar="NAME",
        help="the dataset reader of --dataset (default: beir), or of QRELS without --dataset",
    )
    parser.add_argument(
        "--baseline",
        metavar="FILE",
        required=True,
        help="the baseline report (JSON), or SCHEME:NAME where a plugin reads reports from "
        "(mlflow:RUN_ID with the MLflow plugin)",
    )
    parser.add_argument(
        "--update-baseline",
        action="store_true",
        help="write the run's report to --baseline instead of checking",
    )
    parser.add_argument(
        "--rule", action="append", default=[], metavar="RULE", help="a rule (repeatable)"
    )
    parser.add_argument("--config", metavar="FILE", help="a TOML file with the rules' table")
    add_groups_option(parser)
    parser.add_argument("--alpha", type=float, help="the significance level (default 0.05)")
    parser.add_argument("--test", choices=_TESTS, help="the paired test (default t-test)")
    parser.add_argument(
        "--correction",
        choices=(*CORRECTIONS, "none"),
        help="the correction over the gated metrics (default holm)",
    )
    parser.add_argument(
        "--allow-changed-qrels",
        action="store_true",
        help="compare on the common queries when the baseline's qrels or queries changed",
    )
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument("--markdown", metavar="FILE", help="also write a Markdown summary")
    parser.add_argument("--junit", metavar="FILE", help="also write JUnit XML, a case per rule")
    add_html_option(parser, "the comparison with the baseline, query by query")
    add_run_format_option(parser)
    add_http_options(parser)
    add_judging_options(parser)
    add_missing_queries_option(parser, "a judged query missing from the run does: it scores 0")
    parser.add_argument("--debug", action="store_true", help="show the traceback on failure")
    parser.set_defaults(handler=handle)


def _config(args: argparse.Namespace) -> tuple[GateConfig, str | None]:
    """The rules and options, and the TOML file whose table was read (None: no table)."""
    configs = []
    read = args.config
    if args.config is not None:
        configs.append(read_gate_config(args.config))
    elif Path("pyproject.toml").is_file():
        try:
            configs.append(read_gate_config("pyproject.toml"))
            read = "pyproject.toml"
        except ValueError as error:
            if "no [tool.ef-evaluation.check] table" not in str(error):
                raise
    configs.append(
        GateConfig(
            rules=tuple(parse_rule(text) for text in args.rule),
            alpha=args.alpha,
            test=args.test,
            correction=None if args.correction == "none" else args.correction,
            has_correction=args.correction is not None,
        )
    )
    config = GateConfig()
    for each in configs:
        config = config.updated(each)
    return config, read


def _is_retriever(run: str) -> bool:
    """A retriever spec, unless a file of that name exists (a run file named ``bm25``)."""
    return is_retriever_spec(run) and not os.path.exists(run)


def _scored(
    args: argparse.Namespace, metrics: list[str]
) -> tuple[RetrievalEvalReport, Queries | None]:
    """The run's report, and the query texts when a retriever answered them."""
    options = retrieval_options(args)
    groups = read_groups(args)
    if groups is not None:
        options["groups"] = groups  # a rule with a group gates that group's queries
    if not _is_retriever(args.run):
        if args.qrels is not None:
            qrels = read_qrels(args.qrels, None if args.dataset else args.reader)
        elif args.dataset is not None:
            qrels = read_qrels(os.fspath(resolve_builtin(args.dataset)), args.reader or "beir")
        else:
            raise CliError("no judgements: give --qrels or --dataset", exit_code=EXIT_USAGE)
        report = evaluate_run(
            args.run, qrels, run_format=args.run_format, metrics=metrics, **options
        )
        return report, None
    spec = redact_url(args.run)
    if args.dataset is None:
        raise CliError(
            f"RUN {spec!r} is a retriever: give --dataset, the queries it answers "
            "(a BEIR folder or builtin:NAME)",
            exit_code=EXIT_USAGE,
        )
    corpus, queries, qrels = read_dataset(
        resolve_builtin(args.dataset), reader=args.reader or "beir"
    )
    if args.qrels is not None:
        qrels = read_qrels(args.qrels, None)
    try:
        retriever = resolve_retriever(args.run, corpus, http_options=http_options(args))
    except ImportError as error:
        raise CliError(f"RUN {spec}: {error}", exit_code=EXIT_USAGE) from error
    for run_file_only in ("missing_queries", "depth"):
        options.pop(run_file_only, None)
    # A failed query stops the check (on_error="raise"): a gate never scores a partial run. The
    # default cutoffs ask as deep as 'ef-eval retrieval' does: recip_rank sees the same ranking.
    report = evaluate_retrieval(retriever, qrels, queries, metrics=metrics, **options)
    return report, queries


def _inputs(args: argparse.Namespace) -> list[str]:
    """Every file the command reads, which nothing it writes may replace."""
    config = args.config
    if config is None and Path("pyproject.toml").is_file():
        config = "pyproject.toml"
    inputs = [p for p in (args.qrels, args.dataset, config) if p is not None]
    if not _is_retriever(args.run):
        inputs.append(args.run)
    if not args.update_baseline:
        inputs.append(args.baseline)
    return inputs


def _written(args: argparse.Namespace) -> dict[str, str | None]:
    """Every file the command writes, by the option (or variable) that names it."""
    return {
        "--baseline": args.baseline if args.update_baseline else None,
        "--markdown": args.markdown,
        "--junit": args.junit,
        "--html": args.html,
        # Appended to when a check ran: --update-baseline leaves it alone.
        f"${_SUMMARY}": None if args.update_baseline else os.environ.get(_SUMMARY) or None,
    }


def _unwritable(path: str) -> str | None:
    """Why ``path`` cannot be written, known before writing: a folder in its place, or no
    folder to write it in (a full disk is only known once written)."""
    if is_stream(path):
        return None
    if os.path.isdir(path):
        return "a folder is in the way"
    folder = os.path.dirname(os.path.realpath(path))
    if not os.path.isdir(folder):
        return f"no such folder {os.path.dirname(path) or folder}"
    return None


def _check_written(args: argparse.Namespace) -> None:
    """Refuse, before anything is scored, an output onto an input or where no file can be."""
    written = _written(args)
    check_outputs(written, _inputs(args))
    for option, path in written.items():
        problem = None if path is None else _unwritable(path)
        if problem is not None:
            raise CliError(f"{option} {path}: cannot be written: {problem}", exit_code=EXIT_USAGE)


def _write(path: str, text: str, inputs: list[str]) -> None:
    with write_text_atomically(path, inputs=inputs) as sink:
        sink.write(text)


def _outputs(args: argparse.Namespace, report: CheckReport) -> None:
    """Print the outcome, then write the files: a file that cannot be written is exit code 2
    whatever the verdict (exit 1 says a rule failed, nothing else)."""
    if args.format == "json":
        print(json.dumps({"passed": report.passed, **report.to_dict()}, indent=2))
    else:
        print(report.to_text(), end="")
    inputs = _inputs(args)
    try:
        if args.markdown:
            _write(args.markdown, report.to_markdown(), inputs)
        if summary := os.environ.get(_SUMMARY):
            with write_text_atomically(summary, inputs=inputs, append=True) as sink:
                sink.write(report.to_markdown())
        if args.junit:
            _write(args.junit, report.to_junit(), inputs)
    except (OSError, ValueError) as error:
        message = str(error)
        if isinstance(error, OSError) and error.filename is not None and error.strerror:
            message = f"cannot write {os.fsdecode(error.filename)}: {error.strerror}"
        raise CliError(message, exit_code=EXIT_USAGE) from error


def _named(path: str) -> str:
    """``path`` as text a UTF-8 output holds: a byte of it that is not UTF-8 shown as ``\\xff``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _refuse_location(baseline: str) -> None:
    """Refuse to write a baseline to a plugin's report location: only a file is written."""
    scheme, colon, _ = baseline.partition(":")
    location = registry().report_locations.get(scheme) if colon else None
    if location is not None:
        raise CliError(
            f"--update-baseline writes a file, and {baseline} is a report location of plugin "
            f"{location.plugin!r}: give a file, or log the report with the plugin's own option",
            exit_code=EXIT_USAGE,
        )


def _gate(args: argparse.Namespace) -> tuple[RetrievalEvalReport, CheckReport | None]:
    """The run's report, and the gate's outcome (None when the baseline was written)."""
    config, read = _config(args)
    if not config.rules and read is not None:
        raise ValueError(
            f"no rule: the [tool.ef-evaluation.check] table of {read} has none; give --rule, "
            'or a table of rules per metric ([tool.ef-evaluation.check."ndcg@10"], min = 0.5)'
        )
    if not config.rules:
        raise ValueError("no rule: give --rule or a [tool.ef-evaluation.check] table")
    metrics = list(dict.fromkeys(rule.metric for rule in config.rules))
    if args.update_baseline:
        _refuse_location(args.baseline)
    current, queries = _scored(args, metrics)
    if args.update_baseline:
        _write(args.baseline, current.to_json(indent=1) + "\n", _inputs(args))
        print(f"baseline written to {_named(args.baseline)} ({current.n_queries} queries)")
        return current, None
    try:
        baseline = read_report(args.baseline)
    except FileNotFoundError as error:
        if error.filename is None or os.fsdecode(error.filename) != args.baseline:
            raise  # a plugin's location says why itself
        raise ValueError(f"{args.baseline}: no baseline: write it with --update-baseline") from None
    if not isinstance(baseline, RetrievalEvalReport):
        raise ValueError(f"{args.baseline}: a {type(baseline).__name__}, not a retrieval report")
    options = {"allow_changed_qrels": args.allow_changed_qrels, **config.check_options()}
    try:
        report = check(current, baseline, config.rules, **options)
    except ValueError as error:  # the library's advice, in the command's words
        message = str(error).replace("baseline again", "baseline again (--update-baseline)")
        message = message.replace("(allow_changed_qrels)", "(--allow-changed-qrels)")
        message = message.replace("evaluate it with groups=", "score the run with --groups FILE")
        raise ValueError(f"{args.baseline}: {message}") from error
    judged = f"{_named(redact_url(args.run))} against {_named(args.baseline)}"
    report = attrs.evolve(report, judged=judged)
    if args.html:
        if queries is None and args.dataset is not None:  # the texts of a run file's queries
            _, queries, _ = read_dataset(
                resolve_builtin(args.dataset), reader=args.reader or "beir"
            )
        try:
            report.to_html(args.html, current, baseline, queries=queries)
        except ImportError as error:
            raise CliError(f"--html: {error}") from error
    return current, report


def handle(args: argparse.Namespace) -> int:
    """Score the run, check it against the baseline, print and write the outputs."""
    if args.update_baseline and args.html:
        raise CliError(
            "--html shows the check against the baseline: --update-baseline has no page",
            exit_code=EXIT_USAGE,
        )
    _check_written(args)
    try:
        current, report = _gate(args)
    except (ValueError, TypeError, OSError, EvaluationError) as error:  # a CliError is one too
        message = str(error)
        if isinstance(error, OSError) and error.filename is not None and error.strerror:
            message = f"{os.fsdecode(error.filename)}: {error.strerror}"
        raise CliError(message, exit_code=EXIT_USAGE) from error
    if report is not None:
        _outputs(args, report)
    try:
        report_finished(
            args, "check", {Path(args.run).name: current}, dataset=args.qrels, check_report=report
        )
    except CliError as error:  # exit 1 is a regression: a tracker's failure is not one
        raise CliError(str(error), exit_code=EXIT_USAGE) from error
    return EXIT_PASS if report is None or report.passed else EXIT_REGRESSION
