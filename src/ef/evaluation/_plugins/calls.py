"""Running third-party plugin code without letting it harm the host or its output.

Plugin code runs while the host imports a plugin, calls one of its hooks or one of its dataset
readers. Two things must hold whatever that code does: standard output carries only what the
program was asked to print (``ef-eval ... --format json`` is read by other programs), so
anything plugin code prints goes to standard error instead; and a plugin that raises — even
``SystemExit`` — is the plugin's failure, not the process's. Only ``KeyboardInterrupt`` passes
through: Ctrl-C stops the program whoever is running.

Nor may plugin code hang the program: it runs in a daemon thread that the host waits for at
most :func:`plugin_timeout` seconds (``EF_EVALUATION_PLUGIN_TIMEOUT``, 30 by default). Python
cannot interrupt an import or a call, so a plugin that does not finish in time is abandoned —
its thread runs on, unused, and ends with the process — and skipped.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from ef.evaluation._exceptions import EvaluationError

__all__ = [
    "DEFAULT_PLUGIN_TIMEOUT",
    "ENV_SELECT",
    "ENV_TIMEOUT",
    "PASSED_THROUGH",
    "Unfinished",
    "bounded",
    "check_dataset",
    "plugin_origin",
    "plugin_timeout",
    "selected_names",
    "stdout_to_stderr",
    "unfinished",
]

_T = TypeVar("_T")

ENV_TIMEOUT = "EF_EVALUATION_PLUGIN_TIMEOUT"
ENV_SELECT = "EF_EVALUATION_PLUGINS"
DEFAULT_PLUGIN_TIMEOUT = 30.0
"""Seconds a plugin's import, or one call of one of its hooks, may take by default."""

PASSED_THROUGH = (KeyboardInterrupt,)
"""What plugin code may raise through the host; everything else is contained."""


class _Redirection:
    """``sys.stdout`` pointed at ``sys.stderr`` while at least one caller needs it.

    A depth count under a lock, not :func:`contextlib.redirect_stdout`: that one restores what
    it saw on entry, so two threads overlapping in plugin code could leave standard output
    pointing at standard error for good.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._saved: Any = None

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                self._saved = sys.stdout
                sys.stdout = sys.stderr
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    sys.stdout = self._saved
                    self._saved = None


stdout_to_stderr = _Redirection()
"""A context manager: what is printed inside it goes to standard error (nests, thread-safe).

>>> import io, sys
>>> out, err = io.StringIO(), io.StringIO()
>>> saved = sys.stdout, sys.stderr
>>> sys.stdout, sys.stderr = out, err
>>> with stdout_to_stderr():
...     print("from a plugin")
>>> print("the result")
>>> sys.stdout, sys.stderr = saved
>>> out.getvalue(), err.getvalue()
('the result\\n', 'from a plugin\\n')
"""


def selected_names() -> set[str] | None:
    """The plugins ``EF_EVALUATION_PLUGINS`` selects: ``None`` (unset) for all of them."""
    raw = os.environ.get(ENV_SELECT)
    if raw is None:
        return None
    return {name.strip() for name in raw.split(",") if name.strip()}


def plugin_timeout() -> float:
    """Seconds plugin code may run at once: ``EF_EVALUATION_PLUGIN_TIMEOUT``, or 30.

    :raises ValueError: naming the variable when it is not a number of seconds > 0.
    """
    raw = os.environ.get(ENV_TIMEOUT)
    if raw is None or not raw.strip():
        return DEFAULT_PLUGIN_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise ValueError(f"{ENV_TIMEOUT} must be a number of seconds > 0, got {raw!r}")
    return value


class Unfinished(EvaluationError, TimeoutError):
    """Plugin code that did not finish in time; its thread is abandoned."""


def plugin_origin(dist_name: str | None, version: str | None) -> str:
    """Where a plugin comes from, for messages: its distribution and version, or in-process."""
    if dist_name is None:
        return "registered in-process"
    return f"distribution {dist_name} {version or '(unknown version)'}"


def unfinished(plugin: str, origin: str, doing: str, timeout: float) -> str:
    """The warning for a plugin skipped because it did not ``doing`` in ``timeout`` seconds."""
    return (
        f"plugin {plugin!r} ({origin}) did not {doing} in {timeout:g} s and is skipped (it runs "
        f"on, unused, until the program ends); {ENV_TIMEOUT} sets how many seconds to wait, "
        "EF_EVALUATION_PLUGINS which plugins to load"
    )


def bounded(function: Callable[[], _T], timeout: float) -> _T:
    """``function()``, run in a daemon thread (with this thread's context variables) and waited
    for at most ``timeout`` seconds; what it raises is raised here.

    :raises Unfinished: when it has not finished in time (it runs on, abandoned).
    """
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, function()))
        except BaseException as error:  # handed to the waiting thread, which decides
            outcome.append((False, error))

    context = contextvars.copy_context()
    thread = threading.Thread(target=context.run, args=(run,), name="ef-plugin", daemon=True)
    thread.start()
    thread.join(timeout)  # Ctrl-C interrupts the wait, as it would the plugin code itself
    if not outcome:
        raise Unfinished(f"did not finish in {timeout:g} s")
    finished, value = outcome[0]
    if finished:
        result: _T = value
        return result
    raise value


_PARTS = ("corpus", "queries", "qrels")


def check_dataset(result: object, reader: str) -> tuple[Any, Any, Any]:
    """``result`` as the ``(corpus, queries, qrels)`` triple of mappings a reader must return.

    :param result: what the reader returned (a tuple or list of three mappings is accepted).
    :param reader: the reader and where it comes from, for the message.
    :raises TypeError: naming ``reader`` and what it returned instead.

    >>> check_dataset(({"d": "t"}, {"q": "x"}, {"q": {"d": 1}}), "dataset reader 'r'")[1]
    {'q': 'x'}
    >>> check_dataset([{"_id": "d1"}], "dataset reader 'r'")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: dataset reader 'r' returned a list of 1 item; a reader must return a (corpus, ...
    """
    expected = "a reader must return a (corpus, queries, qrels) triple of mappings"
    if not isinstance(result, tuple | list) or len(result) != len(_PARTS):
        got = f"a {type(result).__name__}"
        if isinstance(result, tuple | list):
            got += f" of {len(result)} item{'' if len(result) == 1 else 's'}"
        raise TypeError(f"{reader} returned {got}; {expected}")
    for part, value in zip(_PARTS, result, strict=True):
        if not isinstance(value, Mapping):
            raise TypeError(
                f"{reader} returned {part} as a {type(value).__name__}, not a mapping; {expected}"
            )
    corpus, queries, qrels = result
    return corpus, queries, qrels
