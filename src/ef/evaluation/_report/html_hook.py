"""Where a report's ``to_html`` finds the HTML writer, which lives in a higher layer.

The reports sit near the bottom of the library and the HTML pages near the top (they read
reports, comparisons, runs and trec_eval's interpolated precision). A report therefore cannot
import the writer, not even lazily; instead the package's ``__init__`` registers it here once,
and ``to_html`` calls whatever is registered. Importing any part of :mod:`ef.evaluation` runs
that ``__init__`` first, so a report always finds the writer.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol

__all__ = ["HtmlWriter", "register_html_writer", "write_html"]


class HtmlWriter(Protocol):
    """Writes one report as a self-contained HTML page and returns the path written."""

    def __call__(
        self, report: Any, path: str | os.PathLike[str], /, **inputs: Any
    ) -> Path: ...  # pragma: no cover - a protocol


_writers: list[HtmlWriter] = []


def register_html_writer(writer: HtmlWriter) -> None:
    """Make ``writer`` the one ``to_html`` calls (a later registration replaces it)."""
    _writers[:] = [writer]


def write_html(report: Any, path: str | os.PathLike[str], **inputs: Any) -> Path:
    """Write ``report`` to ``path`` with the registered writer.

    :raises RuntimeError: if no writer is registered (``ef.evaluation`` was never imported).
    """
    if not _writers:
        raise RuntimeError("no HTML writer is registered: import ef.evaluation first")
    return _writers[0](report, path, **inputs)
