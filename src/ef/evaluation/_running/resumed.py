"""The one line an evaluation resumed from a journal says before it retrieves anything."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ef.evaluation._running.driver import RetrieverRun
    from ef.evaluation._running.options import EvaluationOptions

__all__ = ["resumed_line", "say_resumed"]


def resumed_line(resumed: int, planned: int, journal: str | os.PathLike[str]) -> str:
    """What an evaluation resumed from a journal says before it retrieves anything.

    >>> resumed_line(48, 300, "bm25.jsonl")
    'resumed: 48 of 300 queries from the journal bm25.jsonl (252 left to retrieve)'
    """
    left = planned - resumed
    rest = f"{left} left to retrieve" if left else "nothing left to retrieve"
    return f"resumed: {resumed} of {planned} queries from the journal {os.fspath(journal)} ({rest})"


def say_resumed(evaluation: RetrieverRun, options: EvaluationOptions) -> None:
    """With ``progress``, say on standard error how much a journal spared (the manifest's
    ``journal.resumed`` holds it too)."""
    if options.progress and evaluation.journal is not None and evaluation.resumed:
        line = resumed_line(
            evaluation.resumed, len(evaluation.sheet.plan.planned), evaluation.journal.path
        )
        print(line, file=sys.stderr, flush=True)
