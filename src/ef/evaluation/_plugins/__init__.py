"""Plugins: hookspecs, the isolating host, the registry, and the public functions that ask it."""

from ef.evaluation._plugins import active
from ef.evaluation._plugins.active import *  # noqa: F403 - the package is its active module

__all__ = active.__all__
