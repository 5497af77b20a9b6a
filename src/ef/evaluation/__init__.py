"""Evaluation hookpoints — measuring retrieval and RAG quality.

Phase 7 makes an indexed ``ef`` corpus **measurable**. It stays a *facade*: it computes the
standard, deterministic metrics and provides the standard data shapes, but it never synthesizes
an answer and never requires an LLM (the §6 boundary). LLM-judged metrics are reached through a
thin Ragas bridge.

Two journeys (``ef_use_cases.md`` §F7–F8), two evaluation conventions (``ef_design_notes.md``
§6):

- **Retrieval evaluation** — :func:`evaluate_retrieval`, BEIR/MTEB-shaped. The inputs are the
  BEIR triple — a corpus, a set of ``queries`` and ``qrels`` (graded relevance judgements) — and
  the primary metric is **NDCG@10**. The metric primitives (:func:`ndcg_at_k`,
  :func:`recall_at_k`, …) are pure functions, usable on their own. :func:`read_beir` /
  :func:`write_beir` move the triple to and from the on-disk ``corpus.jsonl`` /
  ``queries.jsonl`` / ``qrels.tsv`` format.
- **RAG evaluation** — :func:`evaluate_rag`, Ragas ``SingleTurnSample``-shaped. A sample is
  ``(user_input, response, retrieved_contexts, reference)``; :class:`RagSample` names that
  shape. :func:`evaluate_rag` computes only **deterministic, reference-based lexical metrics**
  (:func:`exact_match`, :func:`token_f1`, :func:`context_recall`, :func:`context_precision`) —
  no LLM. For the LLM-judged metrics (faithfulness, answer relevancy, …) hand the samples to
  :func:`as_ragas_dataset` and run Ragas with your own LLM.

Example — score a retriever against a tiny BEIR-shaped triple:

>>> qrels = {'q1': {'d1': 1.0, 'd2': 1.0}, 'q2': {'d3': 1.0}}
>>> queries = {'q1': 'first query', 'q2': 'second query'}
>>> rankings = {'first query': ['d1', 'd9', 'd2'], 'second query': ['d9', 'd3']}
>>> def retriever(query, *, limit=10):
...     return rankings[query][:limit]
>>> report = evaluate_retrieval(retriever, qrels, queries, k_values=(1, 3))
>>> report.metrics['recall@3']
1.0
>>> round(report.primary_at(1), 3)  # NDCG@1, averaged over the two queries
0.5
"""

from typing import TYPE_CHECKING

from ef.evaluation._beir import read_beir, write_beir
from ef.evaluation._collector import Progress
from ef.evaluation._compare import compare
from ef.evaluation._comparison_report import ComparisonReport, PairedComparison
from ef.evaluation._formats import DatasetFormatError
from ef.evaluation._fusion.api import fuse
from ef.evaluation._fusion.optimize import FusionFold, FusionOptimization, optimize_fusion
from ef.evaluation._hookspecs import hookimpl
from ef.evaluation._journal import JournalMismatchError, journal_to_trec_run
from ef.evaluation._lexical import context_precision, context_recall, exact_match, token_f1
from ef.evaluation._metrics import (
    average_precision,
    dcg_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)
from ef.evaluation._plugins import (
    RETRIEVAL_METRICS,
    PluginWarning,
    list_plugins,
    read_dataset,
    registry,
)
from ef.evaluation._rag import evaluate_rag
from ef.evaluation._ragas import as_ragas_dataset
from ef.evaluation._registry import (
    DatasetReader,
    FusionMethod,
    Normalization,
    PluginInfo,
    RagMetric,
    Registry,
    RetrievalMetric,
)
from ef.evaluation._reports import QueryFailure, RagEvalReport, RetrievalEvalReport
from ef.evaluation._retrieval import (
    IncompleteEvaluationWarning,
    evaluate_retrieval,
    evaluate_retrieval_async,
    evaluate_run,
)
from ef.evaluation._runner_options import QueryError
from ef.evaluation._scoring import RankingSummary
from ef.evaluation._trec import read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run
from ef.evaluation._types import Corpus, Qrels, Queries, RagSample, Run

if TYPE_CHECKING:
    from ef.evaluation._http import (
        HttpClientError,
        HttpConnectionError,
        HttpRetriever,
        HttpServerError,
        HttpStatusError,
        ResponseShapeError,
    )

# Imported on first use, not with the package: the HTTP client brings asyncio (tens of ms),
# which scoring a run or reading a dataset never needs.
_LAZY = dict.fromkeys(
    (
        "HttpClientError",
        "HttpConnectionError",
        "HttpRetriever",
        "HttpServerError",
        "HttpStatusError",
        "ResponseShapeError",
    ),
    "ef.evaluation._http",
)

__all__ = [
    "RETRIEVAL_METRICS",
    "ComparisonReport",
    "Corpus",
    "DatasetFormatError",
    "DatasetReader",
    "FusionFold",
    "FusionMethod",
    "FusionOptimization",
    "HttpClientError",
    "HttpConnectionError",
    "HttpRetriever",
    "HttpServerError",
    "HttpStatusError",
    "IncompleteEvaluationWarning",
    "JournalMismatchError",
    "Normalization",
    "PairedComparison",
    "PluginInfo",
    "PluginWarning",
    "Progress",
    "Qrels",
    "Queries",
    "QueryError",
    "QueryFailure",
    "RagEvalReport",
    "RagMetric",
    "RagSample",
    "RankingSummary",
    "Registry",
    "ResponseShapeError",
    "RetrievalEvalReport",
    "RetrievalMetric",
    "Run",
    "as_ragas_dataset",
    "average_precision",
    "compare",
    "context_precision",
    "context_recall",
    "dcg_at_k",
    "evaluate_rag",
    "evaluate_retrieval",
    "evaluate_retrieval_async",
    "evaluate_run",
    "exact_match",
    "fuse",
    "hookimpl",
    "journal_to_trec_run",
    "list_plugins",
    "ndcg_at_k",
    "optimize_fusion",
    "precision_at_k",
    "read_beir",
    "read_dataset",
    "read_trec_qrels",
    "read_trec_run",
    "recall_at_k",
    "reciprocal_rank",
    "registry",
    "token_f1",
    "write_beir",
    "write_trec_qrels",
    "write_trec_run",
]

for _name in __all__:
    _obj = globals().get(_name)
    if isinstance(_obj, type):
        _obj.__module__ = __name__
del _name, _obj


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    loaded = importlib.import_module(module)
    # Every public name of that module at once, so that each reports itself as
    # ``ef.evaluation.X`` however it is reached (an exception raised inside, say).
    for lazy_name, lazy_module in _LAZY.items():
        if lazy_module == module:
            value = getattr(loaded, lazy_name)
            if isinstance(value, type):
                value.__module__ = __name__
            globals()[lazy_name] = value
    return globals()[name]


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
