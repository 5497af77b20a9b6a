"""Where building, saving or loading an index stands, for a ``progress=`` callback or a display.

:func:`ef.source_manager.ingest` reports each stage of its work — ``"tokenizing"`` and
``"indexing"`` for BM25, ``"encoding"`` for a dense index, ``"saving"`` and ``"loading"`` for an
``index_dir`` — as :class:`IndexProgress` values: to a callback, or to a
:class:`~ef._progress.ProgressDisplay` on standard error when ``progress=True``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

import attrs

from ef._progress import ProgressDisplay

__all__ = ["IndexProgress", "IndexProgressArg", "StageReporter"]


@attrs.frozen
class IndexProgress:
    """Where one stage of indexing stands, handed to a ``progress`` callback.

    :param stage: ``"tokenizing"``, ``"indexing"``, ``"encoding"``, ``"saving"`` or
        ``"loading"``.
    :param done: the units of this stage finished so far.
    :param total: the units this stage has in all.
    :param unit: what is counted: ``"segments"`` or ``"files"``.
    :param elapsed: seconds since the stage began.

    >>> IndexProgress("encoding", 64, 5183, "segments", 3.5).total
    5183
    """

    stage: str
    done: int
    total: int
    unit: str
    elapsed: float


IndexProgressArg = bool | Callable[[IndexProgress], None] | None
"""What ``progress=`` accepts: ``True`` (a bar, or plain lines), a callback, or nothing."""


class StageReporter:
    """Turns each stage's advances into :class:`IndexProgress` values for ``progress``.

    :param progress: ``True`` (show each stage on standard error), a callback, or
        ``None``/``False`` (nothing).
    :param describe: what is being indexed with what, for the displayed label
        (e.g. ``"with st:all-MiniLM-L6-v2"``).
    :raises TypeError: for a ``progress`` of another kind.
    """

    def __init__(self, progress: IndexProgressArg, *, describe: str = "") -> None:
        if not (progress is None or isinstance(progress, bool) or callable(progress)):
            raise TypeError(
                f"progress must be True, False, None or a callable; got {type(progress).__name__}"
            )
        self._progress = progress
        self._describe = describe

    @contextlib.contextmanager
    def stage(self, stage: str, total: int, unit: str) -> Iterator[Callable[[int], None]]:
        """A function ``advance(done)`` to call as the stage goes; it reports ``0`` at once."""
        progress = self._progress
        started = time.monotonic()
        if progress is None or progress is False:
            yield _ignore
            return
        if progress is True:
            label = " ".join(filter(None, (stage, f"{total:,} {unit}", self._describe)))
            with ProgressDisplay(label, unit=unit) as display:
                display.update(0, total)
                yield lambda done: display.update(done, total)
            return
        callback = progress

        def advance(done: int) -> None:
            callback(IndexProgress(stage, done, total, unit, time.monotonic() - started))

        advance(0)
        yield advance


def _ignore(done: int) -> None:
    """No one is listening."""
