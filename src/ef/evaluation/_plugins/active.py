"""The process's plugin host and the public functions on what the plugins provide.

Built-ins are ordinary plugins registered first, through the same hooks as third parties.
Nothing is loaded at import: the first call that needs the registry loads every plugin (see
:mod:`ef.evaluation._plugins.host` for how a faulty plugin is isolated).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ef.evaluation._io.builtin_datasets import builtin_name, resolve_builtin
from ef.evaluation._plugins.calls import check_dataset, stdout_to_stderr
from ef.evaluation._plugins.host import PluginHost
from ef.evaluation._plugins.registry import PluginInfo, Registry
from ef.evaluation._types import Corpus, Qrels, Queries, RagMetricFn

__all__ = [
    "HOST",
    "RETRIEVAL_METRICS",
    "adapt_retriever",
    "list_plugins",
    "rag_metric_functions",
    "read_dataset",
    "registry",
]

HOST = PluginHost()


def registry() -> Registry:
    """A read-only snapshot of the registered metrics, RAG metrics, dataset readers, fusion
    methods and normalisations.

    Each entry names the plugin that provided it.

    >>> list(registry().metrics)[:5]  # built-ins register first
    ['map', 'mrr', 'ndcg', 'precision', 'recall']
    >>> registry().metrics['ndcg'].plugin
    'ef.evaluation._builtins'
    """
    return HOST.registry


def list_plugins() -> list[PluginInfo]:
    """Every loaded plugin — name, distribution, version and hooks — built-ins first.

    >>> [info.name for info in list_plugins() if info.builtin]  # doctest: +NORMALIZE_WHITESPACE
    ['ef.evaluation._builtins', 'ef.evaluation._builtins.ragas_metrics',
     'ef.evaluation._adapters', 'ef.evaluation._builtins.fusion']
    """
    return HOST.plugins()


def rag_metric_functions() -> Mapping[str, RagMetricFn]:
    """The registered RAG metrics, name → ``fn(sample)``."""
    return {name: metric.fn for name, metric in HOST.registry.rag_metrics.items()}


def read_dataset(
    source: str | os.PathLike[str], *, reader: str = "beir", **options: Any
) -> tuple[Corpus, Queries, Qrels]:
    """Read a dataset with a registered reader: ``(corpus, queries, qrels)``.

    A plugin's reader runs like its hooks: what it prints goes to standard error, and an error
    it raises carries a note naming the reader and its plugin.

    :param source: what the reader reads — a directory, a file, a dataset id, or
        ``builtin:NAME`` for a dataset bundled with ef-evaluation (read as BEIR).
    :param reader: the registered reader's name (``beir``, ``trec`` or a plugin's).
    :param options: passed on to the reader.
    :raises ValueError: for an unknown reader name (the message lists the available ones).
    :raises TypeError: if the reader returns anything but a ``(corpus, queries, qrels)``
        triple of mappings (the message names the reader and its plugin).
    """
    if builtin_name(source) is not None:
        source, reader = resolve_builtin(source), "beir"
    readers = HOST.registry.readers
    if reader not in readers:
        raise ValueError(
            f"unknown dataset reader {reader!r}; available: {', '.join(sorted(readers))}"
        )
    entry = readers[reader]
    described = (
        f"dataset reader {reader!r} of plugin {entry.plugin!r} ({HOST.describe(entry.plugin)})"
    )
    try:
        with stdout_to_stderr():
            result = entry.reader(source, **options)
    except Exception as error:
        if not HOST.is_builtin(entry.plugin):  # the built-ins' errors say where already
            error.add_note(f"raised by {described}")
        raise
    return check_dataset(result, described)


def adapt_retriever(retriever: object) -> Callable[..., Any] | None:
    """The plugins' answer to ``ef_evaluation_adapt_retriever``: how to call ``retriever``."""
    return HOST.adapt_retriever(retriever)


class _MetricsView(Mapping[str, Callable[..., float]]):
    """``RETRIEVAL_METRICS``: name → metric function, read-only, built-ins and plugins alike."""

    def __getitem__(self, name: str) -> Callable[..., float]:
        return HOST.registry.metrics[name].fn

    def __iter__(self) -> Iterator[str]:
        return iter(HOST.registry.metrics)

    def __len__(self) -> int:
        return len(HOST.registry.metrics)

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{name!r}: {fn!r}" for name, fn in self.items()) + "}"


RETRIEVAL_METRICS: Mapping[str, Callable[..., float]] = _MetricsView()
"""The retrieval metrics :func:`evaluate_retrieval` can compute, each keyed by the short name used
in the ``metrics=`` argument and in report keys.

Public so downstream packages (e.g. ``ir.eval``) can consume this single source of truth — the
name→function registry *and* the set of valid metric names — instead of hand-mirroring it.
It is a read-only mapping that loads plugins on first access and shows built-in and plugin
metrics alike.
"""
