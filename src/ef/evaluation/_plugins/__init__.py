"""Plugins: hookspecs, the isolating host, the registry, and the public functions that ask it."""

from ef.evaluation._plugins.active import (
    HOST,
    RETRIEVAL_METRICS,
    adapt_retriever,
    list_plugins,
    lookup_metrics,
    measure_catalogue,
    metric_for_key,
    rag_metric_functions,
    read_dataset,
    read_trec_run,
    registry,
)

__all__ = [
    "HOST",
    "RETRIEVAL_METRICS",
    "adapt_retriever",
    "list_plugins",
    "lookup_metrics",
    "measure_catalogue",
    "metric_for_key",
    "rag_metric_functions",
    "read_dataset",
    "read_trec_run",
    "registry",
]
