"""Shared fixtures of the speedups plugin's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from speedups_switch import speedups_on


@pytest.fixture(scope="module")
def speedups_loaded() -> Iterator[None]:
    """The plugin loaded as an installed distribution is (or registered, if deselected)."""
    with speedups_on():
        yield
