"""Progress shown to a person: a bar on a terminal, a plain line every few seconds elsewhere.

Long work — encoding a corpus, evaluating thousands of queries — must say where it stands in a
CI log or a file as well as on a terminal. On a terminal a :mod:`rich.progress` bar is drawn on
standard error. Anywhere else rich would draw nothing until the work ends, so one plain line goes
to standard error every ``EF_PROGRESS_INTERVAL`` seconds (10 by default) — done/total, rate and
time left — and a closing line when the work took long enough to have printed one. Work that ends
within the interval prints nothing. A line is due every interval of wall time even while no unit
finishes (a model loading, one long batch): a heartbeat thread writes the last known state when
the work itself has not.

Every ``progress=`` argument (indexing's, the evaluations') goes through :func:`shown`: ``True``
is a :class:`ProgressDisplay`, a callable receives the caller's values (:class:`IndexProgress`
for each stage of indexing, reported by :class:`StageReporter`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, TextIO, TypeVar

import attrs

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "DEFAULT_INTERVAL",
    "IndexProgress",
    "IndexProgressArg",
    "ProgressDisplay",
    "StageReporter",
    "format_seconds",
    "shown",
]

DEFAULT_INTERVAL = 10.0
"""Seconds between two plain progress lines, unless ``EF_PROGRESS_INTERVAL`` says otherwise."""

T = TypeVar("T")


def _interval_from_environment() -> float:
    text = os.environ.get("EF_PROGRESS_INTERVAL", "").strip()
    if not text:
        return DEFAULT_INTERVAL
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise ValueError(f"EF_PROGRESS_INTERVAL must be a number of seconds >= 0; got {text!r}")
    return value


def format_seconds(seconds: float) -> str:
    """A duration the way a person reads it.

    >>> format_seconds(4.2), format_seconds(75), format_seconds(3725)
    ('4s', '1m15s', '1h02m')
    """
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


class ProgressDisplay:
    """One task's progress on ``stream`` (standard error by default), until :meth:`close`.

    :param label: what is being done, e.g. ``"encoding 5,183 documents"``.
    :param unit: what is counted, for the rate (``"documents"``, ``"queries"``).
    :param stream: where to write; standard error by default.
    :param interval: seconds between plain lines; by default ``EF_PROGRESS_INTERVAL``, or 10.
    :param terminal: draw a bar (``True``) or plain lines (``False``); by default a bar when
        ``stream`` is a terminal.
    :param clock: a monotonic clock, in seconds.
    :param heartbeat: write plain lines every ``interval`` from a background thread too, while
        nothing is reported (the default; off for a test driving :meth:`tick` itself).
    :param bar_unit: ``unit`` as the bar's rate spells it, shorter to fit beside the other
        columns (``"q"`` for queries); ``unit`` by default.
    :param console: the rich console to draw on instead of one on ``stream``; by default a bar
        when it is a terminal.
    :raises ValueError: when ``EF_PROGRESS_INTERVAL`` is not a number of seconds >= 0.

    >>> import io
    >>> ticks = iter([0.0, 12.0, 13.0, 13.0])
    >>> out = io.StringIO()
    >>> with ProgressDisplay("encoding", unit="documents", stream=out, interval=10,
    ...                      clock=lambda: next(ticks)) as display:
    ...     display.update(600, 1000)
    ...     display.update(1000, 1000)
    >>> print(out.getvalue(), end="")
    encoding: 600/1,000 documents (60%), 50.0 documents/s, 8s left
    encoding: 1,000/1,000 documents in 13s (76.9 documents/s)
    """

    def __init__(
        self,
        label: str,
        *,
        unit: str = "items",
        stream: TextIO | None = None,
        interval: float | None = None,
        terminal: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        heartbeat: bool = True,
        bar_unit: str | None = None,
        console: Console | None = None,
    ) -> None:
        self.label = label
        self.unit = unit
        self._bar_unit = bar_unit or unit
        self._stream: IO[str] = console.file if console is not None else stream or sys.stderr
        self._interval = _interval_from_environment() if interval is None else interval
        self._clock = clock
        self._started = clock()
        self._last_line = self._started
        self._lines = 0
        self._done = 0
        self._total: int | None = None
        if terminal is None:
            isatty = getattr(self._stream, "isatty", None)
            terminal = console.is_terminal if console is not None else bool(isatty and isatty())
        self._bar: Any = self._start_bar(console) if terminal else None
        self._lock = threading.Lock()
        self._note = ""
        self._stopped = threading.Event()
        self._heart: threading.Thread | None = None
        if heartbeat and self._bar is None and self._interval > 0:
            self._heart = threading.Thread(target=self._beat, name="ef-progress", daemon=True)
            self._heart.start()

    def _beat(self) -> None:
        while not self._stopped.wait(self._interval):
            try:
                self.tick()
            except Exception:  # a closed stream: progress is not worth failing the work
                return

    def tick(self) -> None:
        """Write the last known state if no line was written for an interval (plain lines)."""
        with self._lock:
            if self._bar is None and not self._stopped.is_set():
                self._line_if_due(self._clock())

    def _start_bar(self, console: Console | None) -> Any:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[note]}"),
            console=console or Console(file=self._stream),
        )
        self._task = bar.add_task(self.label, total=None, rate="", note="")
        bar.start()
        return bar

    def update(
        self, done: int, total: int | None = None, *, note: str = "", elapsed: float | None = None
    ) -> None:
        """Record that ``done`` of ``total`` are finished; ``note`` is shown beside.

        :param elapsed: the seconds the work has taken as its caller measures them, for the
            rate; by default since the display began.
        """
        now = self._clock()
        if self._bar is not None:
            self._done, self._total = done, total
            rate = _rate(done, now - self._started if elapsed is None else elapsed)
            self._bar.update(
                self._task,
                completed=done,
                total=total,
                rate=f"{rate:.1f} {self._bar_unit}/s",
                note=note,
            )
            return
        with self._lock:
            self._done, self._total, self._note = done, total, note
            self._line_if_due(now, elapsed)

    def _line_if_due(self, now: float, elapsed: float | None = None) -> None:
        if now - self._last_line < self._interval:
            return
        done, total = self._done, self._total
        rate = _rate(done, now - self._started if elapsed is None else elapsed)
        self._last_line = now
        self._lines += 1
        share = f" ({done / total:.0%})" if total else ""
        left = ""
        if total is not None and rate > 0:
            left = f", {format_seconds((total - done) / rate)} left"
        extra = f", {self._note}" if self._note else ""
        self._write(f"{self._counted()} {self.unit}{share}, {rate:.1f} {self.unit}/s{left}{extra}")

    def _counted(self) -> str:
        return f"{self._done:,}/{self._total:,}" if self._total is not None else f"{self._done:,}"

    def _write(self, text: str) -> None:
        print(f"{self.label}: {text}", file=self._stream, flush=True)

    def close(self) -> None:
        """Stop the bar, or write the closing line when a plain line was written before."""
        self._stopped.set()
        if self._heart is not None:
            self._heart.join()
            self._heart = None
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
            return
        if self._lines:
            elapsed = self._clock() - self._started
            rate = f" ({self._done / elapsed:.1f} {self.unit}/s)" if elapsed > 0 else ""
            self._write(f"{self._counted()} {self.unit} in {format_seconds(elapsed)}{rate}")
            self._lines = 0

    def __enter__(self) -> ProgressDisplay:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _rate(done: int, elapsed: float) -> float:
    return done / elapsed if elapsed > 0 else 0.0


def _check(progress: object) -> None:
    """Refuse a ``progress=`` that is neither a flag, nor ``None``, nor a callable."""
    if not (progress is None or isinstance(progress, bool) or callable(progress)):
        raise TypeError(
            f"progress must be True, False, None or a callable; got {type(progress).__name__}"
        )


@contextlib.contextmanager
def shown(
    progress: bool | Callable[[T], None] | None,
    *,
    label: str,
    unit: str,
    counts: Callable[[T], tuple[int, int | None, str, float]],
    bar_unit: str | None = None,
    console: Console | None = None,
) -> Iterator[Callable[[T], None] | None]:
    """The callback a ``progress=`` argument stands for, for as long as the block runs.

    ``True`` is a :class:`ProgressDisplay` fed through ``counts`` (``(done, total, note,
    elapsed)`` of what the callback receives); a callable is itself; ``None`` and ``False`` are
    ``None``. ``bar_unit`` and ``console`` are the display's.

    :raises TypeError: for anything else.
    """
    _check(progress)
    if progress is True:
        with ProgressDisplay(label, unit=unit, bar_unit=bar_unit, console=console) as display:

            def show(value: T) -> None:
                done, total, note, elapsed = counts(value)
                display.update(done, total, note=note, elapsed=elapsed)

            yield show
    else:
        yield progress if callable(progress) else None


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
    """Reports each stage of building, saving or loading an index to ``progress``.

    :param progress: ``True`` (show each stage on standard error), a callback receiving
        :class:`IndexProgress` values, or ``None``/``False`` (nothing).
    :param describe: what is being indexed with what, for the displayed label
        (e.g. ``"with st:all-MiniLM-L6-v2"``).
    :raises TypeError: for a ``progress`` of another kind.
    """

    def __init__(self, progress: IndexProgressArg, *, describe: str = "") -> None:
        _check(progress)
        self._progress = progress
        self._describe = describe

    @contextlib.contextmanager
    def stage(self, stage: str, total: int, unit: str) -> Iterator[Callable[[int], None]]:
        """A function ``advance(done)`` to call as the stage goes; it reports ``0`` at once."""
        started = time.monotonic()
        label = " ".join(filter(None, (stage, f"{total:,} {unit}", self._describe)))
        with shown(self._progress, label=label, unit=unit, counts=_stage_counts) as callback:

            def advance(done: int) -> None:
                if callback is not None:
                    callback(IndexProgress(stage, done, total, unit, time.monotonic() - started))

            advance(0)
            yield advance


def _stage_counts(progress: IndexProgress) -> tuple[int, int, str, float]:
    return progress.done, progress.total, "", progress.elapsed
