"""``progress=True`` made a display of the queries done, for the retrieval entry points."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import attrs

from ef._progress import as_callback
from ef.evaluation._running.options import EvaluationOptions
from ef.evaluation._scoring.score_sheet import Progress

__all__ = ["progress_shown"]


@contextlib.contextmanager
def progress_shown(options: EvaluationOptions) -> Iterator[EvaluationOptions]:
    """``options`` with ``progress=True`` made a display of the queries done, while it runs.

    A callback or ``None`` is kept as it is; the display (a bar on a terminal, else a plain
    line every ``EF_PROGRESS_INTERVAL`` seconds) is closed when the block ends.
    """
    with as_callback(options.progress, label="queries", unit="queries", counts=_counts) as callback:
        yield options if callback is options.progress else attrs.evolve(options, progress=callback)


def _counts(progress: Progress) -> tuple[int, int | None, str]:
    """What ``progress=True`` shows: queries done, the total, failures and the running metric."""
    notes = [f"{progress.failed} failed"] if progress.failed else []
    if progress.primary is not None and progress.primary_name:
        notes.append(f"{progress.primary_name} {progress.primary:.4f}")
    return progress.done, progress.total, ", ".join(notes)
