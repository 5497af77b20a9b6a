"""The speedups plugin on and off in-process, for its tests: loaded as an installed
distribution is (or registered, where it was deselected), or switched off for a block."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ef.evaluation import list_plugins
from ef.evaluation.extending import plugin_disabled
from ef.evaluation.testing import registered_plugin

import ef_evaluation_speedups

PLUGIN_NAME = "speedups"  # the entry point's name in pyproject.toml


def speedups_hooks() -> tuple[str, ...] | None:
    """The hooks the plugin implements, as ``list_plugins()`` shows them, or None when it is
    not loaded."""
    for info in list_plugins():
        if info.name == PLUGIN_NAME:
            return info.hooks
    return None


@contextlib.contextmanager
def speedups_on() -> Iterator[None]:
    """The plugin loaded as an installed distribution is (or registered, if deselected)."""
    if speedups_hooks() is not None:
        yield
        return
    with registered_plugin(ef_evaluation_speedups, name=PLUGIN_NAME):
        yield


@contextlib.contextmanager
def speedups_off() -> Iterator[None]:
    """The plugin switched off for the block; afterwards loaded again as before the switch."""
    with plugin_disabled(PLUGIN_NAME):
        assert speedups_hooks() is None
        yield
    assert speedups_hooks() is not None
