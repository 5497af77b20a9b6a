"""The built-in deterministic RAG metrics, as a hook module."""

from __future__ import annotations

from collections.abc import Callable

from ef.evaluation._plugins.hookspecs import hookimpl
from ef.evaluation._rag.sample_metrics import BUILTIN_RAG_METRICS


@hookimpl
def ef_evaluation_register_rag_metrics(register: Callable[..., None]) -> None:
    """The deterministic, reference-based lexical RAG metrics."""
    for name, fn in BUILTIN_RAG_METRICS.items():
        register(name, fn, description=(fn.__doc__ or "").strip().split("\n")[0])
