"""Limits that keep the suite finishing: a stuck test fails as itself and the run goes on.

Three layers, each far above the one before it, so the innermost that can end a stuck test does:

1. **Inside the event loop** (async tests): the test's coroutine runs under
   ``anyio.fail_after`` at :data:`LOOP_SHARE` of the test's timeout. A test waiting forever on
   trio or asyncio fails with ``TimeoutError`` and its own traceback. (pytest-timeout's signal
   is no help there: raised while trio waits for I/O, it lands in trio's run loop, not in the
   test, and did not end it.)
2. **pytest-timeout's signal** (``timeout_method = "signal"``): sync code, and async code stuck
   outside the loop's control, fails as that test at its timeout.
3. **A whole-worker backstop**: ``faulthandler`` ends the worker process at
   :data:`BACKSTOP_FACTOR` × the timeout + :data:`BACKSTOP_SLACK` seconds, with every thread's
   traceback, for code that holds the interpreter where no signal is handled (C code that never
   returns). pytest-xdist reports the test the worker was running as failed and starts a new
   worker (``--max-worker-restart``).

A worker that dies is replaced, and with ``--dist loadfile`` pytest-xdist 3.8's scheduler could
then wait forever (pytest-xdist issues 784, 1323 and 1327) and ran the test that killed the
worker again: :func:`pytest_xdist_make_scheduler` gives it a scheduler that requeues only the
dead worker's unfinished tests, never the one it died on, and tells a worker holding its last
test that no more will come.

And the run as a whole: the process pytest was started as interrupts itself after
``EF_EVALUATION_SUITE_TIMEOUT`` seconds (:data:`DEFAULT_SUITE_TIMEOUT` when unset, ``0`` for
none), which ends the run the way Ctrl-C does, with its summary; if that does not end it within
:data:`SUITE_GRACE` seconds, the process exits with status 3 after writing every thread's
traceback. A run can never wait forever, whatever its workers do. A run the limit ended says so
on its last line, with the number of tests that never started (:func:`limit_line`).

A module- or session-scoped fixture whose setup failed fails every test that uses it with the
same, cached error: the first such test reports it in full, each later one in one line naming
the first (:func:`pytest_runtest_makereport`), so that one slow fixture is one error to read.

Loaded by ``tests/conftest.py`` (``pytest_plugins``); another pytest run can load it with
``-p suite_limits`` when ``tests`` is on its path.
"""

from __future__ import annotations

import faulthandler
import functools
import inspect
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Generator
from typing import Any

import pytest

LOOP_SHARE = 0.85
"""The share of a test's timeout its event loop gets before ``fail_after`` fails it (the
``loop_share`` setting)."""

BACKSTOP_FACTOR = 2
BACKSTOP_SLACK = 60.0
"""The whole-worker backstop: ``BACKSTOP_FACTOR`` × the test's timeout + ``BACKSTOP_SLACK``
(the ``backstop_slack`` setting)."""

SUITE_TIMEOUT_VARIABLE = "EF_EVALUATION_SUITE_TIMEOUT"
DEFAULT_SUITE_TIMEOUT = 3600.0
"""An hour: six to ten times a whole run on a quiet 2-core machine, under CI's 90 minutes."""

SUITE_GRACE = 120.0
"""How long the interrupted run has to end with its summary before it is ended outright."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "loop_share",
        "the share of an async test's timeout its event loop gets before fail_after fails it",
        default=str(LOOP_SHARE),
    )
    parser.addini(
        "backstop_slack",
        f"seconds the whole-worker backstop adds to {BACKSTOP_FACTOR} x a test's timeout",
        default=str(BACKSTOP_SLACK),
    )


_stderr: list[int] = []
"""The process's own standard error, as it was before pytest captured it (set at configure)."""

_stdout: list[int] = []
"""The process's own standard output, likewise."""


def _uncaptured(config: pytest.Config, stream: str = "err") -> int:
    """A descriptor of standard error (or output) as pytest found it: what a test prints is
    captured and lost with a process that is ended, so the backstop's tracebacks and the run
    limit's words go there instead (pytest's capture keeps a copy of the original descriptor)."""
    capture = config.pluginmanager.getplugin("capturemanager")
    captured = getattr(getattr(capture, "_global_capturing", None), stream, None)
    saved = getattr(captured, "targetfd_save", None)
    original = sys.__stderr__ if stream == "err" else sys.__stdout__
    return saved if isinstance(saved, int) else original.fileno()


def _say(text: str) -> None:
    os.write(_stderr[0] if _stderr else 2, text.encode())


def item_timeout(item: pytest.Item) -> float:
    """The test's timeout in seconds, as pytest-timeout reads it: its ``timeout`` marker, else
    the ``timeout`` setting; ``0`` for none."""
    marker = item.get_closest_marker("timeout")
    if marker is not None:
        value = marker.args[0] if marker.args else marker.kwargs.get("timeout")
        if value is not None:
            return float(value)
    try:
        return float(item.config.getini("timeout") or 0)
    except ValueError:  # pytest-timeout not installed: no ini key
        return 0.0


def _limited(test: Callable[..., Any], seconds: float, share: float) -> Callable[..., Any]:
    """``test`` (a coroutine function) run under ``anyio.fail_after(seconds)``."""
    import anyio

    @functools.wraps(test)
    async def limited(*args: Any, **kwargs: Any) -> Any:
        try:
            with anyio.fail_after(seconds) as scope:
                return await test(*args, **kwargs)
        except TimeoutError as error:
            if not scope.cancelled_caught:
                raise  # the test's own TimeoutError
            raise TimeoutError(
                f"{test.__name__} ran past {seconds:g} s inside its event loop "
                f"({share:.0%} of its timeout): stuck where the traceback above ends"
            ) from error

    return limited


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    """Run an async test's coroutine under the in-loop limit (anyio's plugin then runs it)."""
    timeout = item_timeout(pyfuncitem)
    original = pyfuncitem.obj
    if (
        timeout > 0
        and "anyio_backend" in pyfuncitem.funcargs
        and inspect.iscoroutinefunction(original)
    ):
        share = float(pyfuncitem.config.getini("loop_share"))
        pyfuncitem.obj = _limited(original, timeout * share, share)
        try:
            return (yield)
        finally:
            pyfuncitem.obj = original
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """Arm the whole-worker backstop for the test's setup, call and teardown."""
    timeout = item_timeout(item)
    if timeout <= 0:
        return (yield)
    slack = float(item.config.getini("backstop_slack"))
    faulthandler.dump_traceback_later(
        timeout * BACKSTOP_FACTOR + slack, exit=True, file=_stderr[0] if _stderr else 2
    )
    try:
        return (yield)
    finally:
        faulthandler.cancel_dump_traceback_later()


def suite_timeout() -> float:
    """``EF_EVALUATION_SUITE_TIMEOUT`` in seconds (:data:`DEFAULT_SUITE_TIMEOUT` when unset)."""
    text = os.environ.get(SUITE_TIMEOUT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_SUITE_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        raise pytest.UsageError(
            f"{SUITE_TIMEOUT_VARIABLE}={text!r}: expected a number of seconds (0 for no limit)"
        ) from None
    if value < 0:
        raise pytest.UsageError(f"{SUITE_TIMEOUT_VARIABLE}={text!r}: expected 0 or more seconds")
    return value


_stopped: list[float] = []
"""The run's limit in seconds, once the limit has interrupted the run."""

_started: set[str] = set()
"""The tests that started (their setup was reported), in the process that owns the run."""

_collected: list[int] = []
"""How many tests the run collected, once its collection ended (a pytest-xdist worker's, in the
process that owns the run)."""


def limit_line(seconds: float) -> str:
    """The last line of a run the limit ended: the limit and the tests that never started, or
    that it struck before the tests were collected."""
    head = f"ef-evaluation suite limit: stopped after {seconds:g} s"
    if not _collected:
        started = len(_started)
        return (
            f"{head}, before its tests were collected; "
            f"{started} test{'' if started == 1 else 's'} started"
        )
    never = max(_collected[0] - len(_started), 0)
    return f"{head}; {never} test{'' if never == 1 else 's'} never run"


def _end_run_after(seconds: float) -> None:
    """Interrupt the main thread after ``seconds``; exit outright if that does not end the run."""
    time.sleep(seconds)
    _stopped.append(seconds)
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(SUITE_GRACE)
    _say(f"\n{SUITE_TIMEOUT_VARIABLE}: the run did not end {SUITE_GRACE:g} s after its interrupt\n")
    faulthandler.dump_traceback(file=_stderr[0] if _stderr else 2, all_threads=True)
    # Ending outright skips pytest's end and atexit: the run's processes are ended here
    # (tests/process_groups.py, when loaded).
    process_groups = sys.modules.get("process_groups")
    if process_groups is not None:
        process_groups.end_run()
    os.write(_stdout[0] if _stdout else 1, f"{limit_line(seconds)}\n".encode())
    os._exit(3)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Called even when the limit interrupted the collection: then its count is not the run's."""
    if not _stopped:
        _collected[:] = [len(session.items)]


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's: unknown without it
def pytest_xdist_node_collection_finished(node: object, ids: list[str]) -> None:
    """In the process that owns the run: every worker collects the whole run."""
    _collected[:] = [len(ids)]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count the tests that started (in the owner, pytest-xdist's workers' reports too)."""
    _started.add(report.nodeid)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """A run the limit ended says so on its very last line (after the summary, and after the
    run's processes were ended)."""
    if not _stopped or hasattr(config, "workerinput"):
        return
    line = limit_line(_stopped[0])
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.ensure_newline()
        reporter.write_line(line)
        reporter._tw.flush()
    else:
        os.write(_stdout[0] if _stdout else 1, f"{line}\n".encode())


_fixture_errors: dict[int, tuple[BaseException, str]] = {}
"""Setup errors seen in this process, by the exception's id: the exception (kept, so that its id
is not reused) and the first test it failed."""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A setup that failed with an error already reported (a module- or session-scoped
    fixture's cached error, raised again for each test using it) is reported in one line."""
    report = yield
    if call.when != "setup" or call.excinfo is None or not report.failed:
        return report
    error = call.excinfo.value
    seen = _fixture_errors.get(id(error))
    if seen is None or seen[0] is not error:
        _fixture_errors[id(error)] = (error, item.nodeid)
        return report
    message = str(error).strip().splitlines()
    first = f": {message[0]}" if message else ""
    report.longrepr = (
        f"the same setup error as {seen[1]} (a fixture's, reported in full there): "
        f"{type(error).__name__}{first}"
    )
    return report


def pytest_configure(config: pytest.Config) -> None:
    """In the process pytest was started as (not in a pytest-xdist worker), start the run's
    outer limit."""
    _stderr[:] = [_uncaptured(config, "err")]
    _stdout[:] = [_uncaptured(config, "out")]
    seconds = suite_timeout()
    if hasattr(config, "workerinput") or seconds == 0:
        return
    # Started as a background job, the run inherits SIGINT ignored: the limit needs Ctrl-C's
    # own handling (KeyboardInterrupt, then pytest's summary).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(
        target=_end_run_after, args=(seconds,), name="ef-suite-limit", daemon=True
    ).start()


@pytest.hookimpl(optionalhook=True, tryfirst=True)  # a hook of pytest-xdist's: unknown without it
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile``'s scheduler, safe when a worker dies (see the module)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class RestartSafeLoadFileScheduling(LoadFileScheduling):
        def remove_node(self, node: Any) -> str | None:
            workload: dict[str, dict[str, bool]] = self.assigned_work.pop(node)
            pending = [
                nodeid for unit in workload.values() for nodeid, done in unit.items() if not done
            ]
            if not pending:
                return None
            crashed = pending[0]  # reported failed by pytest-xdist: never run again
            for scope, unit in workload.items():
                left = {nodeid: False for nodeid, done in unit.items() if not done}
                left.pop(crashed, None)
                if left:  # a unit with nothing left would give a worker no test to run
                    self.workqueue[scope] = left
            for other in self.assigned_work:
                self._reschedule(other)
            return crashed

        def _reschedule(self, node: Any) -> None:
            # A replacement worker still collecting has no collection to take work from: when
            # another one finishes first, pytest-xdist reschedules every node, this one too (a
            # KeyError in its scheduler). Its own collection's end schedules it.
            if node in self.registered_collections:
                super()._reschedule(node)

        def _assign_work_unit(self, node: Any) -> None:
            super()._assign_work_unit(node)
            # A worker starts a test once it holds the next one or its shutdown: with the queue
            # empty, a worker given a single test would wait for either forever.
            if not self.workqueue and not node.shutting_down:
                node.shutdown()

    return RestartSafeLoadFileScheduling(config, log)
