"""Plain progress lines come every interval of wall time, whether or not work finished in it:
checked with a fake clock, and, for the heartbeat thread, with events rather than timing."""

from __future__ import annotations

import io
import sys
import threading

import pytest

from ef._progress import ProgressDisplay
from ef.evaluation import evaluate_retrieval


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def lines_of(out: io.StringIO) -> list[str]:
    return out.getvalue().splitlines()


def test_a_line_is_due_every_interval_even_when_nothing_finished() -> None:
    clock, out = Clock(), io.StringIO()
    display = ProgressDisplay(
        "encoding", unit="segments", stream=out, interval=10, clock=clock, heartbeat=False
    )
    display.update(0, 640)
    written: list[float] = []
    # One batch takes 25 s: nothing finishes for a while, yet a line is due every 10 s.
    for step in range(1, 121):
        clock.now = step * 0.5
        if step % 50 == 0:
            display.update(step // 50 * 64, 640)
        else:
            display.tick()
        if len(lines_of(out)) > len(written):
            written.append(clock.now)
    assert written == [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]
    first, third = lines_of(out)[0], lines_of(out)[2]
    assert first == "encoding: 0/640 segments (0%), 0.0 segments/s"
    # After 30 s, 64 done: the rate and the time left.
    assert third == "encoding: 64/640 segments (10%), 2.1 segments/s, 4m30s left"
    display.close()
    assert lines_of(out)[-1] == "encoding: 128/640 segments in 1m00s (2.1 segments/s)"


def test_updates_within_an_interval_write_one_line() -> None:
    clock, out = Clock(), io.StringIO()
    display = ProgressDisplay("q", unit="queries", stream=out, interval=10, clock=clock)
    for done in range(1, 200):
        clock.now = done * 0.1  # ten queries a second
        display.update(done, 1000)
    (line,) = lines_of(out)  # at 10 s, not at every update
    assert line.startswith("q: 100/1,000 queries (10%), 10.0 queries/s, 1m30s left")
    display.close()


class Signalling(io.StringIO):
    """A stream that tells when something was written to it."""

    def __init__(self) -> None:
        super().__init__()
        self.written = threading.Event()

    def write(self, text: str) -> int:
        count = super().write(text)
        if text.strip():
            self.written.set()
        return count


def test_the_heartbeat_writes_while_no_unit_finishes() -> None:
    out = Signalling()
    with ProgressDisplay("loading", unit="files", stream=out, interval=0.01) as display:
        display.update(0, 3)
        assert out.written.wait(30)
    assert out.getvalue().startswith("loading: 0")  # the state before anything finished


def test_an_evaluation_shows_progress_before_its_first_query_finishes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EF_PROGRESS_INTERVAL", "0.01")
    stream = Signalling()
    monkeypatch.setattr(sys, "stderr", stream)
    seen: list[bool] = []

    def slow_first(query: str, *, limit: int = 10) -> list[str]:
        if not seen:  # a model loading on the first query: no query finishes for a while
            seen.append(stream.written.wait(30))
        return ["d1"]

    evaluate_retrieval(
        slow_first, {"q1": {"d1": 1}, "q2": {"d1": 1}}, {"q1": "a", "q2": "b"}, progress=True
    )
    assert seen == [True]
    assert stream.getvalue().startswith("queries: 0")
