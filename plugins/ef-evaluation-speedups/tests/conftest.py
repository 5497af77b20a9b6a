"""Shared fixtures of the speedups plugin's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ef.evaluation._plugins import HOST
from ef.evaluation.testing import registered_plugin

import ef_evaluation_speedups

PLUGIN_NAME = "speedups"  # the entry point's name in pyproject.toml


@pytest.fixture(scope="module")
def speedups_loaded() -> Iterator[None]:
    """The plugin loaded as an installed distribution is (or registered, if deselected)."""
    if HOST.manager.get_plugin(PLUGIN_NAME) is not None:
        assert HOST.manager.get_plugin(PLUGIN_NAME) is ef_evaluation_speedups
        yield
        return
    with registered_plugin(ef_evaluation_speedups, name=PLUGIN_NAME):
        yield
