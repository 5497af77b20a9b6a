"""``ef-eval fuse RUN RUN ... -o FUSED``: fuse TREC run files into one (hybrid search).

Each run file is read with :func:`~ef.evaluation.read_run` (TREC, ranx's JSON, JSON Lines or
Parquet), the runs are fused with :func:`~ef.evaluation.fuse` and the result is written with
:func:`~ef.evaluation.write_run` (atomically: the file appears only once complete), in the
format its name says (``.json``, ``.jsonl``, ``.parquet``, else TREC) or ``--run-format``; it
may not replace one of the runs or the qrels; one line on standard error then says what was
written ("wrote fused.run: 300 queries, rrf of 2 runs"). With
``--optimize``, :func:`~ef.evaluation.optimize_fusion` first searches the method's weights or
parameters on ``--qrels`` for ``--metric``, prints the best configuration (and each fold's with
``--folds``), and the run written, if any, is fused with it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import TYPE_CHECKING, Any

from ef.evaluation import (
    Qrels,
    fuse,
    optimize_fusion,
    read_dataset,
    read_run,
    read_trec_qrels,
    write_run,
)
from ef.evaluation.cli._arguments import add_missing_queries_option, add_run_format_option
from ef.evaluation.cli._common import (
    EXIT_USAGE,
    FORMATS,
    CliError,
    Table,
    check_outputs,
    command_outputs,
    emit,
)
from ef.evaluation.cli.run import run_names

if TYPE_CHECKING:
    from ef.evaluation.cli._common import Subparsers

__all__ = ["add_parser", "handle", "parse_param", "wrote_line"]

DESCRIPTION = """\
Fuse TREC run files ('qid Q0 docid rank score tag') into one run, e.g. BM25 and dense for
hybrid search. Methods and normalisations are ranx's (rrf, wsum, mnz, ..., 'ef-eval plugins'
lists them all); the default normalisation is min-max for score-based methods and none for
rank-based ones. A query missing from a run counts as an empty ranking there, with one warning
per run that lacks some; a run that shares no query id with the others is refused, naming the
likely cause (a prefix such as q1 against 1, zero padding, letter case): see --missing-queries.
"""


def parse_param(text: str) -> tuple[str, Any]:
    """``NAME=VALUE``: the value as an integer, a number, or JSON (lists of trained values).

    >>> parse_param("k=60"), parse_param("phi=0.8"), parse_param("probs=[[0.5, 0.1]]")
    (('k', 60), ('phi', 0.8), ('probs', [[0.5, 0.1]]))
    """
    name, equals, value = text.partition("=")
    if not equals or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    for convert in (int, float):
        try:
            number = convert(value)
        except ValueError:
            continue
        if isinstance(number, float) and not math.isfinite(number):
            raise argparse.ArgumentTypeError(f"{name}: {value!r} is not a finite number")
        return name, number
    try:
        return name, json.loads(value, parse_constant=_refuse_constant)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{name}: {value!r} is not a number or JSON") from error


def _refuse_constant(constant: str) -> Any:
    raise ValueError(f"{constant} is not a finite number")


def _weight(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid weight {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"weight {text!r} is not finite")
    return value


def add_parser(subparsers: Subparsers) -> None:
    """Register the ``fuse`` subcommand."""
    parser = subparsers.add_parser(
        "fuse", help="fuse TREC run files into one (rrf, wsum, ...)", description=DESCRIPTION
    )
    parser.add_argument(
        "runs", metavar="RUN", nargs="+", help="run files to fuse (two+; TREC, or by --run-format)"
    )
    parser.add_argument("--method", default="rrf", help="fusion method (default: rrf)")
    parser.add_argument(
        "--norm", help="normalisation: min-max, min-max-inverted, max, sum, zmuv, rank, borda, none"
    )
    parser.add_argument(
        "--weights", nargs="+", type=_weight, metavar="W", help="one weight per run (wsum, ...)"
    )
    parser.add_argument(
        "--param",
        action="append",
        type=parse_param,
        default=[],
        metavar="NAME=VALUE",
        help="a method parameter, e.g. k=60 for rrf, phi=0.8 for rbc (repeatable)",
    )
    add_missing_queries_option(
        parser, "a query missing from a run that others hold does: it is fused from the others"
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the fused run here, in the format of its name or --run-format",
    )
    add_run_format_option(parser)
    parser.add_argument("--tag", default="fused", help="the run tag of the written run")
    parser.add_argument(
        "--optimize", action="store_true", help="search the weights/parameters on --qrels first"
    )
    parser.add_argument("--qrels", metavar="QRELS", help="judgements (TREC qrels file)")
    parser.add_argument("--reader", metavar="NAME", help="read --qrels with this dataset reader")
    parser.add_argument(
        "--metric", default="ndcg@10", help="what --optimize maximises (default: ndcg@10)"
    )
    parser.add_argument("--folds", type=int, metavar="N", help="cross-validate over N folds")
    parser.add_argument("--format", choices=FORMATS, default="table", help="--optimize's table")
    parser.add_argument(
        "--debug", action="store_true", help="show the full traceback when something fails"
    )
    parser.set_defaults(handler=handle)


def _read_qrels(args: argparse.Namespace) -> Qrels | None:
    if args.qrels is None:
        return None
    if args.reader is None:
        return read_trec_qrels(args.qrels)
    _, _, qrels = read_dataset(args.qrels, reader=args.reader)
    return qrels


def _check_usage(args: argparse.Namespace) -> None:
    if len(args.runs) < 2:
        raise CliError("give at least two run files to fuse", exit_code=EXIT_USAGE)
    if args.optimize and args.qrels is None:
        raise CliError("--optimize needs --qrels", exit_code=EXIT_USAGE)
    if not args.optimize and args.output is None:
        raise CliError("give -o FILE for the fused run", exit_code=EXIT_USAGE)
    if args.folds is not None and not args.optimize:
        raise CliError("--folds goes with --optimize", exit_code=EXIT_USAGE)


def _describe(params: dict[str, Any]) -> str:
    shown = {
        name: value
        for name, value in params.items()
        if name not in ("probs", "log_odds", "map_scores")
    }
    text = ", ".join(f"{name}={value}" for name, value in shown.items())
    trained = [name for name in params if name not in shown]
    if trained:
        text += (", " if text else "") + f"trained {', '.join(trained)}"
    return text or "(training only)"


def handle(args: argparse.Namespace) -> int:
    """Fuse the run files (after the search, with ``--optimize``) and write the fused run."""
    _check_usage(args)
    run_names(args.runs)  # refuses a file given twice
    inputs = [*args.runs, *filter(None, [args.qrels])]
    check_outputs(command_outputs(args), inputs)
    runs = [read_run(path, format=args.run_format) for path in args.runs]
    qrels = _read_qrels(args)
    norm = "default" if args.norm is None else args.norm
    params = dict(args.param)
    method: str = args.method
    if args.optimize:
        assert qrels is not None
        result = optimize_fusion(
            runs, qrels, method=args.method, metric=args.metric, norm=norm, folds=args.folds
        )
        rows: list[tuple[Any, ...]] = [
            ("all queries", _describe(result.best_params), result.best_score, None)
        ]
        rows += [
            (f"fold {i}", _describe(fold.best_params), fold.train_score, fold.held_out_score)
            for i, fold in enumerate(result.folds, 1)
        ]
        title = (
            f"{result.method} on {len(runs)} runs: best of {len(result.tries)} configurations "
            f"by {result.metric}"
            + (f"; mean held-out {result.mean_held_out:.4f}" if result.folds else "")
        )
        table = Table(title, ("queries", "configuration", result.metric, "held-out"), rows)
        data = {
            "method": result.method,
            "norm": result.norm,
            "metric": result.metric,
            "best_params": result.best_params,
            "best_score": result.best_score,
            "tries": [{"params": p, "score": s} for p, s in result.tries],
            "folds": [
                {
                    "queries": list(fold.queries),
                    "best_params": fold.best_params,
                    "train_score": fold.train_score,
                    "held_out_score": fold.held_out_score,
                }
                for fold in result.folds
            ],
            "mean_held_out": result.mean_held_out,
        }
        emit(argparse.Namespace(format=args.format, output=None), table, data)
        fused = result.fuse(runs) if args.output is not None else None
        method = result.method
    else:
        fused = fuse(
            runs,
            method=args.method,
            norm=norm,
            weights=args.weights,
            params=params,
            qrels=qrels,
            **({} if args.missing_queries is None else {"missing_queries": args.missing_queries}),
        )
    if fused is not None:
        check_outputs({"--output": args.output}, inputs)  # again, as the file is written
        write_run(args.output, fused, format=args.run_format, tag=args.tag)
        print(wrote_line(args.output, len(fused), method, len(runs)), file=sys.stderr, flush=True)
    return 0


def wrote_line(path: str, queries: int, method: str, runs: int) -> str:
    """What ``fuse`` says on standard error once the fused run is written.

    >>> wrote_line("fused.run", 300, "rrf", 2)
    'wrote fused.run: 300 queries, rrf of 2 runs'
    """
    plural = "query" if queries == 1 else "queries"
    return f"wrote {path}: {queries:,} {plural}, {method} of {runs} runs"
