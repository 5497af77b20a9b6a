"""Plugins: hookspecs, the isolating host, the registry, and the public functions that ask it.

The process's host (``HOST``, in :mod:`~ef.evaluation._plugins.active`) is asked only by the
public entry points; they hand it, or what it answered, to everything below them. What plugins
do (metrics, notations, fusion) is not known here: the registry holds what they registered.
"""

from ef.evaluation._plugins import active
from ef.evaluation._plugins.active import *  # noqa: F403 - the package is its active module

__all__ = active.__all__
