"""The built-in plugins: plain hook modules the package's wiring hands to the plugin host.

Nothing is imported here at import time: :func:`load` imports the hook modules when the host
first loads plugins, so ``import ef.evaluation`` stays cheap.
"""

from __future__ import annotations

import types

from ef.evaluation._plugins.registry import CORE_PLUGIN

__all__ = ["ADAPTERS_PLUGIN", "CORE_PLUGIN", "FUSION_PLUGIN", "RAGAS_METRICS_PLUGIN", "load"]

RAGAS_METRICS_PLUGIN = "ef.evaluation._builtins.ragas_metrics"
"""The name Ragas' deterministic RAG metrics (the ``rag-metrics`` extra) are registered under.

A plugin of its own, so ``ef-eval plugins`` tells the metrics that need the extra apart.
"""

ADAPTERS_PLUGIN = "ef.evaluation._adapters"
"""The name the built-in retriever adapters and doc id getters are registered under.

This name and the core one are those these plugins have always been listed under
(``ef-eval plugins``, ``registry().metrics['ndcg'].plugin``), kept so that output does not
change.
"""

FUSION_PLUGIN = "ef.evaluation._builtins.fusion"
"""The name the built-in fusion methods and normalisations are registered under."""


def load() -> list[tuple[str, object]]:
    """The built-in plugins, ``[(name, plugin), ...]`` in registration order."""
    from ef.evaluation._builtins import (
        adapters,
        fusion,
        metrics,
        rag_metrics,
        ragas_metrics,
        readers,
    )

    core = types.SimpleNamespace(
        ef_evaluation_register_metrics=metrics.ef_evaluation_register_metrics,
        ef_evaluation_register_rag_metrics=rag_metrics.ef_evaluation_register_rag_metrics,
        ef_evaluation_register_dataset_readers=readers.ef_evaluation_register_dataset_readers,
    )
    return [
        (CORE_PLUGIN, core),
        (RAGAS_METRICS_PLUGIN, ragas_metrics),
        (ADAPTERS_PLUGIN, adapters),
        (FUSION_PLUGIN, fusion),
    ]
