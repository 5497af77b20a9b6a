"""What ``ef-eval retrieval`` draws on standard error while it works (terminal only)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from ef.evaluation import Progress

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["progress_bar", "stderr_is_terminal"]


def stderr_is_terminal() -> bool:
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


@contextlib.contextmanager
def progress_bar(
    *, show: bool, console: Console | None = None
) -> Iterator[Callable[[Progress], None] | None]:
    """A ``progress=`` callback drawing a bar, or None when not shown.

    The bar shows the queries done out of the total, queries per second, the failures (when
    there are any) and the running primary metric (NDCG@10).

    :param show: whether to draw at all.
    :param console: where to draw; standard error by default.
    """
    if not show:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as RichProgress

    bar = RichProgress(
        TextColumn("queries"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TextColumn("{task.fields[failed]}"),
        TextColumn("{task.fields[metric]}"),
        TimeElapsedColumn(),
        console=console or Console(stderr=True),
    )
    task = bar.add_task("queries", total=None, rate="", failed="", metric="")

    def update(progress: Progress) -> None:
        rate = progress.done / progress.elapsed if progress.elapsed > 0 else 0.0
        metric = (
            f"{progress.primary_name} {progress.primary:.4f}"
            if progress.primary is not None and progress.primary_name
            else ""
        )
        bar.update(
            task,
            completed=progress.done,
            total=progress.total,
            rate=f"{rate:.1f} q/s",
            failed=f"{progress.failed} failed" if progress.failed else "",
            metric=metric,
        )

    with bar:
        yield update
