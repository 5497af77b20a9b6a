"""The ``ef-eval`` console script, outside ``ef.evaluation`` so that Ctrl-C is caught even while
that package imports.

A script pointing at ``ef.evaluation.cli:main`` imports ``ef.evaluation`` (most of the start-up
time) before any of the command's code runs, so Ctrl-C then ends in a traceback. This module
imports nothing of it until it is ready to say ``ef-eval: interrupted`` instead.
"""

from __future__ import annotations

import signal
import sys

__all__ = ["main"]

_EXIT_INTERRUPTED = 130


def main() -> int:
    """Import and run :func:`ef.evaluation.cli.main`; exit code 130 when interrupted.

    Once the command has returned, its output is written: a Ctrl-C between then and the end of
    the process (the interpreter's shutdown takes a while) is ignored, so the process ends with
    the command's exit code, not killed by the signal.
    """
    try:
        from ef.evaluation.cli import main as run_command

        code = run_command()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except KeyboardInterrupt:
        if sys.stderr is not None:
            print("ef-eval: interrupted", file=sys.stderr)
        return _EXIT_INTERRUPTED
    return code


if __name__ == "__main__":
    sys.exit(main())
