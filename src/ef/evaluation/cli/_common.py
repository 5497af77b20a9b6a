"""What the ``ef-eval`` subcommands share: options, errors, tables and where output goes.

A subcommand builds a :class:`Table` (what a person reads) and a JSON-ready value (what a program
reads), then hands both to :func:`emit`, which renders the one ``--format`` asks for and writes
it to ``--output`` or standard output — with URL passwords hidden, as strict JSON, never over one
of the command's inputs, and all at once (see :mod:`ef.evaluation.cli._output`). Anything that
should end the command with a one-line message raises :class:`CliError`.
"""

from __future__ import annotations

import argparse
import difflib
import io
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, NoReturn, TypeAlias

from ef.evaluation import (
    EvaluationError,
    Qrels,
    RetrievalEvalReport,
    check_metrics,
    read_dataset,
    read_packed_qrels,
    read_trec_qrels,
    registry,
)
from ef.evaluation.cli._arguments import (
    add_judging_options,
    count,
    keyword_defaults,
    parse_cutoffs,
    parse_level,
    parse_names,
    positive_int,
    retrieval_options,
    seconds,
)
from ef.evaluation.cli._intervals import means_table
from ef.evaluation.cli._output import (
    command_outputs,
    json_text,
    output_clash,
    redact,
    write_json,
    write_text,
)
from ef.evaluation.extending import Cell, Table

if TYPE_CHECKING:
    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]

__all__ = [
    "EXIT_RUNTIME",
    "EXIT_USAGE",
    "FORMATS",
    "ArgumentParser",
    "Cell",
    "CliError",
    "Handler",
    "Table",
    "add_judging_options",
    "add_metric_options",
    "add_output_options",
    "check_names",
    "check_outputs",
    "command_outputs",
    "count",
    "emit",
    "keyword_defaults",
    "parse_cutoffs",
    "parse_level",
    "parse_names",
    "positive_int",
    "read_qrels",
    "render_text",
    "retrieval_options",
    "retrieval_table",
    "seconds",
    "write_output",
]

EXIT_RUNTIME = 1
"""Exit code of a command that was well formed but failed (a missing file, a bad line)."""
EXIT_USAGE = 2
"""Exit code of a command line that cannot be run as written (argparse's code too)."""

FORMATS = ("table", "json", "markdown", "csv", "tsv")

Handler: TypeAlias = Callable[[argparse.Namespace], int]
"""What a subcommand registers with ``parser.set_defaults(handler=...)``."""


class CliError(EvaluationError):
    """An error reported as one ``ef-eval: error: ...`` line, ending the command.

    An :class:`~ef.evaluation.EvaluationError`, like every error the library raises.

    :param message: what went wrong, and where.
    :param exit_code: :data:`EXIT_USAGE` for a bad command line, else :data:`EXIT_RUNTIME`.

    >>> CliError("no samples in empty.jsonl").exit_code
    1
    """

    def __init__(self, message: str, *, exit_code: int = EXIT_RUNTIME) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class ArgumentParser(argparse.ArgumentParser):
    """An argparse parser that raises :class:`CliError` instead of printing usage and exiting.

    The error says which ``--help`` to read, so the message stays on one line.

    >>> parser = ArgumentParser(prog="ef-eval")
    >>> _ = parser.add_argument("--k", type=int)
    >>> try:
    ...     parser.parse_args(["--k", "x"])
    ... except CliError as error:
    ...     print(error, error.exit_code)
    argument --k: invalid int value: 'x' (see 'ef-eval --help') 2
    """

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see '{self.prog} --help')", exit_code=EXIT_USAGE)


# options


def check_names(names: Sequence[str] | None, available: Iterable[str], what: str) -> None:
    """Refuse names that are not registered, as a usage error listing the available ones.

    :param names: the names given on the command line, or None (the library's defaults).
    :param available: the registered names.
    :param what: what the names are, for the message (``"metric"``).
    :raises CliError: with exit code :data:`EXIT_USAGE`.

    For metrics, a notation of a measure (``nDCG@10``) is known too, and the closest names
    come from every notation.

    >>> check_names(["trec", "trek"], ["trec"], "reader")
    Traceback (most recent call last):
    ...
    ef.evaluation.cli._common.CliError: unknown reader 'trek'; closest: 'trec'; available: trec
    """
    known = set(available)
    unknown = [name for name in names or () if name not in known]
    closest = ""
    if what == "metric":
        unknown, closest = _not_notations(unknown)
    if unknown:
        plural = "s" if len(unknown) > 1 else ""
        if not closest:
            close = difflib.get_close_matches(unknown[0], sorted(known), n=5, cutoff=0.5)
            closest = f"closest: {', '.join(map(repr, close))}; " if close else ""
        raise CliError(
            f"unknown {what}{plural} {', '.join(map(repr, unknown))}; {closest}"
            f"available: {', '.join(sorted(known))}",
            exit_code=EXIT_USAGE,
        )


def _not_notations(names: Sequence[str]) -> tuple[list[str], str]:
    """The names that are no notation of a measure either (``nDCG@10`` is one), and the
    library's closest names to the first of them.

    :raises CliError: for a known measure written with a cutoff or parameter it does not take.
    """
    unknown: list[str] = []
    closest = ""
    for name in names:
        try:
            check_metrics([name])
        except ValueError as error:
            message = str(error)
            if not message.startswith("unknown metric"):
                raise CliError(message, exit_code=EXIT_USAGE) from None
            if not unknown:
                hint = message.partition("; ")[2].partition(" (")[0]
                closest = f"{hint}; " if hint.startswith("closest") else ""
            unknown.append(name)
    return unknown, closest


def _listed(values: Iterable[object]) -> str:
    return ",".join(map(str, values))


def add_metric_options(
    parser: argparse.ArgumentParser, evaluate: Callable[..., Any], *, cutoffs: bool
) -> None:
    """Add ``--metrics``, ``--per-query`` and, for ranked retrieval, ``--k``.

    :param parser: the subcommand's parser.
    :param evaluate: the library function the options go to, whose defaults ``--help`` shows.
    :param cutoffs: whether the metrics take rank cutoffs (retrieval, not RAG).
    """
    defaults = keyword_defaults(evaluate)
    if cutoffs:
        parser.add_argument(
            "--k",
            type=parse_cutoffs,
            metavar="K[,K...]",
            help=f"rank cutoffs, comma-separated (default: {_listed(defaults['k_values'])})",
        )
        add_judging_options(parser)
    parser.add_argument(
        "--metrics",
        type=parse_names,
        metavar="NAME[,NAME...]",
        help=f"metrics to compute, comma-separated (default: {_listed(defaults['metrics'])}); "
        "any notation: nDCG@10, ndcg_cut.10, P(rel=2)@5; 'ef-eval metrics' lists them all",
    )
    parser.add_argument(
        "--per-query",
        action="store_true",
        help="one row per query instead of the means (the JSON output always has both)",
    )


def add_output_options(
    parser: argparse.ArgumentParser,
    *,
    formats: Sequence[str] = FORMATS,
    format_help: str = "table (default: fits the terminal, or 80 columns when piped), json (full "
    "precision), markdown (a GitHub table), csv or tsv",
) -> None:
    """Add ``--format`` (one of ``formats``), ``--output`` and ``--debug``."""
    parser.add_argument("--format", choices=formats, default="table", help=format_help)
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE instead of standard output ('-' is standard output)",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show the full traceback when something fails"
    )


def read_qrels(source: str, reader: str | None, *, packed: bool = False) -> Qrels:
    """The judgements in a qrels file (TREC or BEIR TSV), or those of a dataset ``reader``
    reads (``--reader``); with ``packed``, a file's as :func:`read_packed_qrels` reads them.

    :raises CliError: for a reader not registered, or judgements of no query (naming the file).
    """
    qrels: Qrels
    if reader is None:
        qrels = read_packed_qrels(source) if packed else read_trec_qrels(source)
    else:
        check_names([reader], registry().readers, "dataset reader")
        _, _, qrels = read_dataset(source, reader=reader)
    if not qrels:
        raise CliError(f"{source}: no judgements in it, so no query can be scored")
    return qrels


def retrieval_table(
    title: str, reports: Mapping[str, RetrievalEvalReport], *, label: str, per_query: bool
) -> Table:
    """One row per report (its mean metrics), or per report and query with ``per_query``.

    :param title: what was evaluated.
    :param reports: the reports by name (a run file, a system), in display order.
    :param label: the name of the first column (``"run"``, ``"system"``).
    :param per_query: whether to show each query's values instead of the means.

    >>> report = RetrievalEvalReport({'ndcg@1': 0.5}, {'q1': {'ndcg@1': 1.0},
    ...     'q2': {'ndcg@1': 0.0}}, 2, (1,))
    >>> retrieval_table("t", {"bm25": report}, label="run", per_query=True).rows
    (('bm25', 'q1', 1.0), ('bm25', 'q2', 0.0))
    """
    keys = list(dict.fromkeys(key for report in reports.values() for key in report.metrics))
    if not per_query:  # the means, with their intervals when asked for (--interval)
        return means_table(title, reports, keys, label)
    rows = [
        (name, query_id, *(values.get(key) for key in keys))
        for name, report in reports.items()
        for query_id, values in report.per_query.items()
    ]
    return Table(title, (label, "query", *keys), rows)


# rendering


def render_text(table: Table, data: Any, output_format: str) -> str:
    """The text of ``table`` (or of ``data``, for JSON) in a file format.

    :param table: what the markdown, CSV and TSV formats show.
    :param data: the JSON-ready value the JSON format shows.
    :param output_format: ``json``, ``markdown``, ``csv`` or ``tsv``.
    :raises CliError: for JSON holding a NaN or an infinity (JSON has neither), naming where.

    >>> print(render_text(Table("t", ["run", "ndcg@10"], [["bm25", 0.63093]]), {}, "markdown"))
    | run | ndcg@10 |
    | --- | ---: |
    | bm25 | 0.6309 |
    <BLANKLINE>
    """
    if output_format == "json":
        try:
            return json_text(data)
        except ValueError as error:
            raise CliError(str(error)) from error
    writer = {"markdown": Table.to_markdown, "csv": Table.to_csv, "tsv": Table.to_tsv}
    if output_format not in writer:
        raise ValueError(f"unknown format {output_format!r}; expected json, markdown, csv or tsv")
    return writer[output_format](table)


def _is_terminal(stream: IO[str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _redacted(table: Table) -> Table:
    """``table`` with the password of every URL in its title, columns and cells hidden."""
    rows = [[redact(cell) for cell in row] for row in table.rows]
    return Table(redact(table.title), redact(list(table.columns)), rows)


def check_outputs(outputs: Mapping[str, str | None], inputs: Iterable[str] = ()) -> None:
    """Refuse, before anything runs, an output that would replace an input or another output.

    Every command applies it to all it writes (:func:`command_outputs`) first.

    :param outputs: each output option (``"--output"``) and its path, or None when not given.
    :param inputs: the command's input files and folders, as given.
    :raises CliError: a usage error naming both.

    >>> check_outputs({"--output": "qrels.txt"}, ["./qrels.txt"])
    Traceback (most recent call last):
    ...
    ef.evaluation.cli._common.CliError: --output qrels.txt would replace the input ./qrels.txt; \
write to another file
    """
    clash = output_clash(outputs, inputs)
    if clash is not None:
        raise CliError(clash, exit_code=EXIT_USAGE)


def emit(args: argparse.Namespace, table: Table, data: Any, *, inputs: Sequence[str] = ()) -> None:
    """Write the result in ``args.format`` to ``args.output`` or standard output.

    The password of every URL is hidden, in the table and in the JSON alike. A file is written
    only once everything is rendered, all at once, so a failure leaves the old file (or none);
    an output that is one of ``inputs`` is refused. The table gets colours and the window's width
    only when it goes to a terminal; anywhere else it is plain text laid out for 80 columns
    (``COLUMNS``), never wrapped (:mod:`ef.evaluation.cli._terminal`).

    :param args: the parsed command line (``format``, ``output``).
    :param table: what the table, markdown, CSV and TSV formats show.
    :param data: what the JSON format shows.
    :param inputs: the command's input files and folders, which ``--output`` may not replace.
    :raises CliError: if the output file cannot be written, or is an input.
    """
    from ef.evaluation.cli import _terminal

    output = None if args.output == "-" else args.output
    check_outputs({"--output": output}, inputs)
    table, data = _redacted(table), redact(data)
    if args.format == "table" and output is None:
        _terminal.print_table(table, sys.stdout, terminal=_is_terminal(sys.stdout))
    elif args.format == "table":
        buffer = io.StringIO()
        _terminal.print_table(table, buffer, terminal=False)
        write_output(output, buffer.getvalue(), inputs=inputs)
    else:  # JSON is written as it is encoded: a big report is never held as text
        json = args.format == "json"
        shown = data if json else render_text(table, data, args.format)
        write_output(output, shown, inputs=inputs, as_json=json)


def write_output(
    output: str | None, text: Any, *, inputs: Sequence[str] = (), as_json: bool = False
) -> None:
    """Write ``text`` to the file ``output``, or to standard output for ``None`` or ``"-"``.

    A file is replaced all at once (a failure keeps the old one), never onto one of ``inputs``
    (checked first, and again as it is written); a FIFO or ``/dev/stdout`` is a stream.

    :param as_json: ``text`` is a value, written as JSON as it is encoded (:func:`write_json`).
    :raises CliError: if the file cannot be written, or is one of ``inputs``; for a NaN in JSON.
    """
    check_outputs({"--output": output}, inputs)
    try:
        if as_json:
            write_json(output, text, inputs)
        else:
            write_text(output, text, inputs)
    except ValueError as error:
        raise CliError(str(error)) from error
    except OSError as error:
        reason = error.strerror or str(error)
        raise CliError(f"cannot write {output}: {reason}") from error
