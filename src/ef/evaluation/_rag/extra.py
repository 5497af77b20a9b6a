"""Lazy imports of the ``rag-metrics`` extra, failing with an error that names the extra."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["INSTALL_HINT", "import_extra"]

INSTALL_HINT = "pip install 'ef-evaluation[rag-metrics]'"


def import_extra(module: str, distribution: str, metric: str) -> ModuleType:
    """Import ``module`` of the ``rag-metrics`` extra for ``metric``, or say how to install it.

    :param module: the module to import (``rouge_score.rouge_scorer``).
    :param distribution: the distribution that provides it, for the message (``rouge-score``).
    :param metric: the RAG metric that needs it, for the message.
    :raises ImportError: naming the metric, the distribution and the extra; a distribution that
        is installed but fails to import is told apart from a missing one.

    >>> try:  # doctest: +ELLIPSIS
    ...     import_extra('no_such_module_here', 'no-such-dist', 'rouge_score')
    ... except ImportError as error:
    ...     print(error)
    RAG metric 'rouge_score' needs no-such-dist, which is not installed (pip install ...)
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        top = module.partition(".")[0]
        if isinstance(error, ModuleNotFoundError) and error.name in (top, module):
            raise ImportError(
                f"RAG metric {metric!r} needs {distribution}, which is not installed "
                f"({INSTALL_HINT})"
            ) from error
        # A broken install must not pass for a missing one.
        raise ImportError(
            f"RAG metric {metric!r} needs {distribution}, which is installed but failed to "
            f"import: {error} (reinstall it: {INSTALL_HINT})"
        ) from error
