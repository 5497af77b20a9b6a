"""One headless Chromium per test process, shared by every browser test that process runs.

Starting Chromium is the slow part of a browser test, so each pytest process (each pytest-xdist
worker) starts one, for the first test that asks for it, and quits it when its run ends.
Each test still starts from a clean state: one tab (any other closed) on ``about:blank``, no
cookies or storage of the ``file://`` pages, the window size Chromium started with, the console
log emptied, and the network cut.

It is the packaged browser and driver, ``/usr/bin/chromium`` and ``/usr/bin/chromedriver``,
given explicitly, with ``SE_OFFLINE=1`` so that Selenium Manager never tries to download one, and
the network cut through the DevTools protocol before any page loads: a page that needed the
network would show it as a console error or a chart that never renders.

No browser outlives the run: it is quit in the ``finally`` around pytest's session
(``config.add_cleanup``), or by an ``atexit`` hook if the session never got that far, and a
process that dies outright takes it along (chromedriver gets SIGKILL when the process that
started it dies, and Chromium, driven over a pipe rather than a port, exits when chromedriver's
end of the pipe closes).

A test module uses it by importing the fixture::

    from browser import chromium

    __all__ = ["chromium"]  # a fixture
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import functools
import signal
import sys
from collections.abc import Callable
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WINDOW = {"width": 1200, "height": 1500}
"""The size of every test's window (and screenshot)."""
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    f"--window-size={WINDOW['width']},{WINDOW['height']}",
    # DevTools over a pipe: when chromedriver ends, however it ends, Chromium ends too.
    "--remote-debugging-pipe",
)
OFFLINE = {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0}
# What a test's pages may have stored; "all" would add caches of Chromium's own that take ten
# times as long to clear. (local_storage covers sessionStorage too.)
STORAGE = "cookies,file_systems,indexeddb,local_storage,service_workers,cache_storage"
_PR_SET_PDEATHSIG = 1
_OFFLINE_TABS: set[str] = set()
"""The tabs :func:`_cut_network` took offline."""


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the child sent SIGKILL when the thread that started it ends
    (Linux; pytest, and each pytest-xdist worker, runs the tests in the main thread), or
    ``None`` where that is not available. The C function is looked up here, before the fork, so
    the child only calls it."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True).prctl

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)

    return preexec


def _cut_network(driver: webdriver.Chrome) -> None:
    """Take the current tab offline (the DevTools setting holds for that tab, across pages)."""
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", OFFLINE)
    _OFFLINE_TABS.add(driver.current_window_handle)


def start_chromium(profile: str) -> webdriver.Chrome:
    """A new headless Chromium with its profile in the folder ``profile``, its tab offline."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    preexec = _die_with_parent()
    popen: dict[str, Any] = {} if preexec is None else {"preexec_fn": preexec}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SE_OFFLINE", "1")
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER, popen_kw=popen), options=options)
    try:
        _cut_network(driver)
    except BaseException:
        driver.quit()
        raise
    return driver


def reset(driver: webdriver.Chrome) -> None:
    """Give the next test a clean browser: one tab (any other a test opened is closed), on
    ``about:blank``, with no cookies or ``file://`` storage, the window at :data:`WINDOW`'s size,
    the console log empty and the network cut."""
    first, *others = driver.window_handles
    for handle in others:
        driver.switch_to.window(handle)
        driver.close()
    driver.switch_to.window(first)
    driver.get("about:blank")
    if first not in _OFFLINE_TABS:
        _cut_network(driver)
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.execute_cdp_cmd(
        "Storage.clearDataForOrigin", {"origin": "file://", "storageTypes": STORAGE}
    )
    driver.set_window_rect(**WINDOW)
    driver.get_log("browser")


_RUNNING: list[webdriver.Chrome] = []
"""This process's browser, if one runs. It lives here, not in a session-scoped fixture: a
fixture imported into several test modules is a fixture of each, and each would start one."""


def _quit(driver: webdriver.Chrome) -> None:
    """Quit ``driver``'s browser, once (later calls do nothing). A browser that no longer
    answers cannot be told to quit: selenium then stops chromedriver all the same (and Chromium
    ends with it), so that error is not raised."""
    if driver in _RUNNING:
        _RUNNING.remove(driver)
        with contextlib.suppress(Exception):
            driver.quit()


def _running(config: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> webdriver.Chrome:
    """This process's Chromium, started on first use; it is quit in the ``finally`` around
    pytest's session (``config.add_cleanup``) or, if the session never gets there, when the
    interpreter exits (``atexit``)."""
    if not _RUNNING:
        driver = start_chromium(str(tmp_path_factory.mktemp("chromium-profile")))
        _RUNNING.append(driver)
        atexit.register(_quit, driver)
        config.add_cleanup(functools.partial(_quit, driver))
    return _RUNNING[0]


@pytest.fixture
def chromium(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> webdriver.Chrome:
    """This process's one Chromium, reset for this test (:func:`reset`). A browser that fails
    to reset (it crashed, or its driver did) is replaced: a crash costs one test, not the rest
    of the run."""
    driver = _running(request.config, tmp_path_factory)
    try:
        reset(driver)
    except Exception:
        _quit(driver)
        driver = _running(request.config, tmp_path_factory)
        reset(driver)
    return driver
