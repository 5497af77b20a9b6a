"""Shared fixtures: async tests run on asyncio and on trio; TREC runs read both ways."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["speedups", "builtin"])
def trec_run_parser(request: pytest.FixtureRequest) -> Iterator[str]:
    """Read TREC run files with the compiled parser of ef-evaluation-speedups, then without it.

    The README's test command installs that plugin; the built-in reader must give the same
    results and the same errors, so every test using this fixture runs once with each.
    """
    from ef.evaluation._plugins import HOST

    HOST.reset()
    if request.param == "speedups":
        assert HOST.manager.has_plugin("speedups"), "ef-evaluation-speedups is not installed"
        assert HOST.trec_run_parser() is not None
        yield "speedups"
        return
    if HOST.manager.has_plugin("speedups"):
        HOST.unregister("speedups")
    try:
        assert HOST.trec_run_parser() is None
        yield "builtin"
    finally:
        HOST.reset()  # the next use loads the installed plugins again
