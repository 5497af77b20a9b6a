"""The ``ef-eval`` command: a thin shell over the public API of :mod:`ef.evaluation`.

Each subcommand is a module of this package exposing ``add_parser(subparsers)``, which adds its
parser and sets its handler with ``parser.set_defaults(handler=...)``; :data:`COMMANDS` lists
them in the order ``--help`` shows; installed plugins may add options to the commands that
evaluate (:mod:`~ef.evaluation.cli._extensions`). A handler returns the exit code, and raises
:class:`~ef.evaluation.cli._common.CliError` (or lets a library error through) to fail:
:func:`main` turns every failure into one ``ef-eval: error: ...`` line on standard error, exit
code 2 for a bad command line and 1 for anything else, with the traceback only under
``--debug``. Warnings are shown as ``ef-eval: warning: ...`` lines. Ctrl-C at any point of
:func:`main` — importing the commands, parsing, loading plugins, running — ends it with
``ef-eval: interrupted`` and exit code 130, and a closed standard output is an error line, not
a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import traceback
import warnings
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Any, TextIO

import ef.evaluation
from ef.evaluation import redact_url
from ef.evaluation.cli._common import EXIT_RUNTIME, ArgumentParser, CliError
from ef.evaluation.cli._extensions import add_extension_options

__all__ = ["COMMANDS", "build_parser", "main"]


PROG = "ef-eval"
_EXIT_INTERRUPTED = 130
_STDOUT_CLOSED = "standard output is closed"


def _commands() -> tuple[ModuleType, ...]:
    # Imported when main() builds the parser, not with this package, so that Ctrl-C while they
    # import is caught like Ctrl-C anywhere else in the command.
    from ef.evaluation.cli import (
        check,
        compare,
        demo,
        fuse,
        metrics,
        plugins,
        pool,
        qrels_stats,
        rag,
        report,
        retrieval,
        run,
        suite,
    )

    return (
        run,
        retrieval,
        suite,
        rag,
        compare,
        check,
        report,
        fuse,
        pool,
        qrels_stats,
        metrics,
        plugins,
        demo,
    )


def __getattr__(name: str) -> Any:
    if name == "COMMANDS":
        return _commands()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


COMMANDS: tuple[ModuleType, ...]
"""The subcommand modules, each with ``add_parser(subparsers)``, in ``--help`` order (imported
on first access)."""


def build_parser() -> argparse.ArgumentParser:
    """The ``ef-eval`` parser with every subcommand of :data:`COMMANDS` registered.

    >>> build_parser().parse_args(["demo", "--k", "1,3"]).k
    (1, 3)
    """
    parser = ArgumentParser(
        prog=PROG,
        description="Evaluate retrieval runs and RAG outputs with trec_eval-exact metrics.",
        epilog=f"Run '{PROG} COMMAND --help' for a command's options.",
    )
    parser.add_argument(
        "--version", action="version", version=f"{PROG} {ef.evaluation.__version__}"
    )
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=ArgumentParser
    )
    for module in _commands():
        module.add_parser(subparsers)
    add_extension_options(subparsers.choices)
    return parser


def _to_stderr(line: str) -> None:
    # print(file=None) would write to standard output: with stderr closed, say nothing.
    if sys.stderr is not None:
        print(line, file=sys.stderr)


def _error(message: str) -> None:
    _to_stderr(f"{PROG}: error: {message}")


def _describe(error: BaseException) -> str:
    """One line for an error from the library: its message, where it happened, what it is."""
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        message = f"{os.fsdecode(error.filename)}: {error.strerror}"
    else:
        message = str(error) or type(error).__name__
        if not isinstance(error, ValueError | TypeError):
            message = f"{type(error).__name__}: {message}"
    notes = getattr(error, "__notes__", ())
    # A user's retriever may put a URL with its password into its own error message.
    return redact_url("; ".join([message, *notes]).replace("\n", " "))


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    _to_stderr(f"{PROG}: warning: {message}")


class _ClosedOutput:
    """Standard output when the command was started without one (``ef-eval ... >&-``).

    Python sets ``sys.stdout`` to None then; this stands in so that writing to it is a clear
    :class:`CliError` rather than an AttributeError on None.
    """

    def write(self, text: str) -> int:
        raise CliError(f"{_STDOUT_CLOSED}: nothing can be printed (use --output FILE)")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


@contextlib.contextmanager
def _standard_output() -> Iterator[None]:
    """Stand in for a closed standard output while the command runs; restored afterwards."""
    if sys.stdout is not None:
        yield
        return
    sys.stdout = _ClosedOutput()  # the part of TextIO that is used here
    try:
        yield
    finally:
        sys.stdout = None  # as the interpreter left it


def _run(args: argparse.Namespace) -> int:
    try:
        code: int = args.handler(args)
        sys.stdout.flush()
        return code
    except CliError as error:
        if args.debug:
            traceback.print_exc()
        _error(str(error))
        return error.exit_code
    except BrokenPipeError:
        # The reader went away (`ef-eval ... | head`): stop quietly, and keep Python from
        # complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_RUNTIME
    except Exception as error:
        if args.debug:
            traceback.print_exc()
        hint = "" if args.debug else " (run with --debug for the traceback)"
        known = isinstance(error, OSError | ValueError | TypeError)
        _error(_describe(error) + ("" if known else hint))
        return EXIT_RUNTIME


def _parse(argv: Sequence[str] | None) -> argparse.Namespace | int:
    """The parsed command line, or the exit code when it cannot be run."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except CliError as error:
        _error(str(error))
        return error.exit_code
    if sys.stdout is None and getattr(args, "output", None) in (None, "-"):
        _error(f"{_STDOUT_CLOSED}: write the result to a file with --output FILE")
        return EXIT_RUNTIME
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ef-eval`` with ``argv`` (default: the process's arguments); return the exit code.

    :param argv: the arguments after the program name.
    :returns: 0 on success, 1 when the command failed, 2 for a bad command line, 130 when it
        was interrupted (Ctrl-C).

    >>> main(["demo", "--k", "1", "--metrics", "ndcg,recall", "--format", "csv"])
    retriever,ndcg@1,recall@1
    bm25,0.4583,0.1325
    0
    >>> main(["demo", "--k", "0"])  # the error line goes to standard error
    2
    """
    try:
        with warnings.catch_warnings():  # plugins load as the parser is built
            warnings.showwarning = _show_warning
            args = _parse(argv)
            if isinstance(args, int):
                return args
            with _standard_output():
                return _run(args)
    except KeyboardInterrupt:
        _to_stderr(f"{PROG}: interrupted")
        return _EXIT_INTERRUPTED
