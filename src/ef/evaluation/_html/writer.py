"""One call from a report to its page: the data of its kind, rendered, written atomically."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ef.evaluation._compare.report import ComparisonReport
from ef.evaluation._html.comparison import comparison_page
from ef.evaluation._html.evaluation import evaluation_page
from ef.evaluation._html.rag import rag_page
from ef.evaluation._html.render import render_page
from ef.evaluation._io.atomic import write_text_atomically
from ef.evaluation._report.reports import RagEvalReport, RetrievalEvalReport

__all__ = ["page_data", "write_html_report"]


def page_data(report: Any, **inputs: Any) -> dict[str, Any]:
    """The data of ``report``'s page (see the ``*_page`` function of its kind).

    :raises TypeError: for anything but a retrieval, RAG or comparison report.
    """
    if isinstance(report, RetrievalEvalReport):
        return evaluation_page(report, **inputs)
    if isinstance(report, RagEvalReport):
        return rag_page(report, **inputs)
    if isinstance(report, ComparisonReport):
        return comparison_page(report, **inputs)
    raise TypeError(
        f"an HTML page is made of a RetrievalEvalReport, RagEvalReport or ComparisonReport, "
        f"not {type(report).__name__}"
    )


def write_html_report(report: Any, path: str | os.PathLike[str], /, **inputs: Any) -> Path:
    """Write ``report`` as one self-contained HTML page at ``path`` (atomically).

    :param inputs: what the page may show beyond the report: ``run``, ``qrels``, ``corpus``,
        ``queries`` for an evaluation; ``runs``, ``qrels``, ``corpus``, ``queries`` for a
        comparison; ``samples`` for RAG; ``title`` for any.
    :returns: ``path``.
    :raises ImportError: naming the ``html`` extra when Jinja2 or vl-convert is missing.
    """
    text = render_page(page_data(report, **inputs))
    with write_text_atomically(path, compress=False) as out:
        out.write(text)
    return Path(path)
