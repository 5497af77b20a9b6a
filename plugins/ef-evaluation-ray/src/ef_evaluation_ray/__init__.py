"""ef-evaluation plugin: evaluate retrievers and indexes spread over a Ray cluster.

:class:`RayRetriever` builds a retriever in each of N Ray actors and searches through them;
:meth:`RayRetriever.sharded` splits a corpus's index over actors. Both are async retrievers
with ``describe()``, so ``evaluate_retrieval`` runs them as any other retriever and records
their replicas, shards, nodes and resources in ``manifest["retriever_info"]``.

Loading the plugin imports nothing of Ray: Ray is imported when a retriever starts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ef.evaluation import hookimpl
from ef_evaluation_ray._hits import RankedHit, ranked_hit_doc_id
from ef_evaluation_ray._retriever import RayRetriever
from ef_evaluation_ray._sharded import ShardedIndex

__all__ = ["RankedHit", "RayRetriever", "ShardedIndex"]


@hookimpl
def ef_evaluation_adapt_retriever(retriever: Any) -> Callable[..., Any] | None:
    """A :class:`RayRetriever` or :class:`ShardedIndex` is searched through its actors."""
    if isinstance(retriever, RayRetriever | ShardedIndex):
        return retriever.search
    return None


@hookimpl
def ef_evaluation_doc_id_getter(result_type: type) -> Callable[[Any], str] | None:
    """A replica's compact hit, :class:`~ef_evaluation_ray.RankedHit`, is its doc id."""
    if issubclass(result_type, RankedHit):
        return ranked_hit_doc_id
    return None
