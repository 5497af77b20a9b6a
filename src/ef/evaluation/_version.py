"""The installed version of ef-evaluation, looked up once, when first asked for."""

from __future__ import annotations

import functools

__all__ = ["library_version"]


@functools.cache  # the installed version does not change under a running process
def library_version() -> str | None:
    """The version of the installed ``ef-evaluation`` distribution, or ``None`` from a bare tree.

    ``importlib.metadata`` (~20 ms) is imported here, not with the package.

    >>> library_version() is None or library_version()[0].isdigit()
    True
    """
    import importlib.metadata

    try:
        return importlib.metadata.version("ef-evaluation")
    except importlib.metadata.PackageNotFoundError:
        return None
