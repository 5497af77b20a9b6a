"""``ef-eval`` run in the test's own process, answering as :func:`subprocess.run` would.

For a test that checks what a command prints, writes and exits with: a new interpreter imports
the library, scipy and the plugins again for each command (0.3 to 1.5 CPU-seconds each). The
command sees the environment it is given (by default this one with no third-party plugins, as
the tests' subprocesses had), its working folder, a standard input, pipes for its standard
output and error, and Python's default warning filters; all of it is put back afterwards, and
the plugins it loaded are forgotten. A test of the process itself (a signal, the installed
script, a plugin that ends the interpreter) starts ``ef-eval`` as a subprocess instead.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path

from ef.evaluation._plugins.active import HOST
from ef.evaluation.cli import main
from ef.evaluation.extending import _forget_plugin_answers

NO_PLUGINS = {"EF_EVALUATION_PLUGINS": ""}
"""The setting the tests' commands run with unless told otherwise: only the built-ins."""


def ef_eval(
    *args: object,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``ef-eval args...`` here; its exit code, standard output and standard error.

    :param env: the whole environment of the command (default: this one with
        :data:`NO_PLUGINS`).
    :param cwd: its working folder (default: this one). Its standard input is empty, as
        ``/dev/null`` is.
    """
    argv = [str(arg) for arg in args]
    environment = {**os.environ, **NO_PLUGINS} if env is None else dict(env)
    out, err = _pipe(), _pipe()
    stdin = io.StringIO("")
    with _environment(environment), _folder(cwd), _default_warnings(), _plugins_reloaded():
        saved = sys.stdin, sys.stdout, sys.stderr
        sys.stdin, sys.stdout, sys.stderr = stdin, out, err
        try:
            code = main(argv)
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else 1
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved
    return subprocess.CompletedProcess(["ef-eval", *argv], code, _text(out), _text(err))


def _pipe() -> io.TextIOWrapper:
    """A text stream over bytes, as a pipe is: it has a buffer, and is not a terminal."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="\n", write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    data = stream.buffer.getvalue()  # type: ignore[attr-defined]
    return str(data.decode("utf-8"))


@contextlib.contextmanager
def _environment(environment: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(environment)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _folder(cwd: str | Path | None) -> Iterator[None]:
    if cwd is None:
        yield
        return
    with contextlib.chdir(cwd):
        yield


@contextlib.contextmanager
def _default_warnings() -> Iterator[None]:
    """Python's own warning filters (the tests turn warnings into errors; a command does not)."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        for action, category in (
            ("ignore", ResourceWarning),
            ("ignore", ImportWarning),
            ("ignore", PendingDeprecationWarning),
            ("ignore", DeprecationWarning),
        ):
            warnings.filterwarnings(action, category=category)
        warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
        yield


@contextlib.contextmanager
def _plugins_reloaded() -> Iterator[None]:
    """The command loads the plugins its environment selects; the next use loads them again."""
    HOST.reset()
    _forget_plugin_answers()
    try:
        yield
    finally:
        HOST.reset()
        _forget_plugin_answers()
