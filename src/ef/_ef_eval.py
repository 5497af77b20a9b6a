"""The ``ef-eval`` console script, outside ``ef.evaluation`` so that Ctrl-C is caught even while
that package imports.

A script pointing at ``ef.evaluation.cli:main`` imports ``ef.evaluation`` (most of the start-up
time) before any of the command's code runs, so Ctrl-C then ends in a traceback. This module
imports nothing at all before :func:`main` is inside the ``try`` that says ``ef-eval:
interrupted`` instead: not even :mod:`signal` (its :mod:`enum` takes milliseconds) or
``__future__``, which a Ctrl-C right after the start would otherwise interrupt.
"""

import sys

__all__ = ["main"]

_EXIT_INTERRUPTED = 130


def _interrupt_again(unraisable: "sys.UnraisableHookArgs") -> None:
    """Ctrl-C that landed in a finalizer (a ``__del__``, a weakref callback), where Python can
    only print it and go on: raised again in the main thread, where the command stops on it."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        import _thread

        # Asked from another thread: asked from this one, it would be raised in this hook,
        # and lost again.
        _thread.start_new_thread(_thread.interrupt_main, ())
        return
    sys.__unraisablehook__(unraisable)


def main() -> int:
    """Import and run :func:`ef.evaluation.cli.main`; exit code 130 when interrupted.

    Once the command has returned, its output is written: a Ctrl-C between then and the end of
    the process (the interpreter's shutdown takes a while) is ignored, so the process ends with
    the command's exit code, not killed by the signal.
    """
    try:
        sys.unraisablehook = _interrupt_again
        import signal

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
