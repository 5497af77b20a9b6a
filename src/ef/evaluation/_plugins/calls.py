"""Running third-party plugin code without letting it harm the host or its output.

Plugin code runs while the host imports a plugin, calls one of its hooks or one of its dataset
readers. Two things must hold whatever that code does: standard output carries only what the
program was asked to print (``ef-eval ... --format json`` is read by other programs), so
anything plugin code prints goes to standard error instead; and a plugin that raises — even
``SystemExit`` — is the plugin's failure, not the process's. Only ``KeyboardInterrupt`` passes
through: Ctrl-C stops the program whoever is running.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["PASSED_THROUGH", "check_dataset", "stdout_to_stderr"]

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
