"""The speedups plugin on and off in-process, for its tests: loaded as an installed
distribution is (or registered, where it was deselected), or switched off for a block."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ef.evaluation._plugins import HOST
from ef.evaluation.testing import registered_plugin

import ef_evaluation_speedups

PLUGIN_NAME = "speedups"  # the entry point's name in pyproject.toml


@contextlib.contextmanager
def speedups_on() -> Iterator[None]:
    """The plugin loaded as an installed distribution is (or registered, if deselected)."""
    if HOST.manager.get_plugin(PLUGIN_NAME) is not None:
        assert HOST.manager.get_plugin(PLUGIN_NAME) is ef_evaluation_speedups
        yield
        return
    with registered_plugin(ef_evaluation_speedups, name=PLUGIN_NAME):
        yield


@contextlib.contextmanager
def speedups_off() -> Iterator[None]:
    """The plugin switched off for the block; afterwards loaded again as installed (its
    distribution and version known), as before the switch — registered by hand only where it
    was not loaded from its distribution."""
    plugin = HOST.manager.get_plugin(PLUGIN_NAME)
    assert plugin is ef_evaluation_speedups
    HOST.unregister(PLUGIN_NAME)
    try:
        yield
    finally:
        HOST.reset()
        if HOST.manager.get_plugin(PLUGIN_NAME) is None:
            HOST.register(plugin, PLUGIN_NAME)
