"""The ``ef-eval`` command: a thin shell over the public API of :mod:`ef.evaluation`.

Each subcommand is a module of this package exposing ``add_parser(subparsers)``, which adds its
parser and sets its handler with ``parser.set_defaults(handler=...)``; :data:`COMMANDS` lists
them in the order ``--help`` shows. A handler returns the exit code, and raises
:class:`~ef.evaluation.cli._common.CliError` (or lets a library error through) to fail:
:func:`main` turns every failure into one ``ef-eval: error: ...`` line on standard error, exit
code 2 for a bad command line and 1 for anything else, with the traceback only under
``--debug``. Warnings are shown as ``ef-eval: warning: ...`` lines.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
import traceback
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import TextIO

from ef.evaluation.cli import compare, demo, plugins, rag, retrieval, run
from ef.evaluation.cli._common import EXIT_RUNTIME, ArgumentParser, CliError

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS: tuple[ModuleType, ...] = (run, retrieval, rag, compare, plugins, demo)
"""The subcommand modules, each with ``add_parser(subparsers)``."""

PROG = "ef-eval"
_EXIT_INTERRUPTED = 130


def _version() -> str:
    try:
        return importlib.metadata.version("ef-evaluation")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - run from a bare tree
        return "unknown"


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
    parser.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=ArgumentParser
    )
    for module in COMMANDS:
        module.add_parser(subparsers)
    return parser


def _error(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)


def _describe(error: BaseException) -> str:
    """One line for an error from the library: its message, where it happened, what it is."""
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        message = f"{os.fsdecode(error.filename)}: {error.strerror}"
    else:
        message = str(error) or type(error).__name__
        if not isinstance(error, ValueError | TypeError):
            message = f"{type(error).__name__}: {message}"
    notes = getattr(error, "__notes__", ())
    return "; ".join([message, *notes]).replace("\n", " ")


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    print(f"{PROG}: warning: {message}", file=sys.stderr)


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
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return _EXIT_INTERRUPTED
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ef-eval`` with ``argv`` (default: the process's arguments); return the exit code.

    :param argv: the arguments after the program name.
    :returns: 0 on success, 1 when the command failed, 2 for a bad command line.

    >>> main(["demo", "--k", "1", "--metrics", "ndcg,recall", "--format", "csv"])
    retriever,ndcg@1,recall@1
    bm25,0.5083,0.1419
    0
    >>> main(["demo", "--k", "0"])  # the error line goes to standard error
    2
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except CliError as error:
        _error(str(error))
        return error.exit_code
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        return _run(args)
