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

from ef.evaluation import _builtins, _plugins
from ef.evaluation._compare.compare import compare
from ef.evaluation._compare.report import ComparisonReport, PairedComparison
from ef.evaluation._compare.stats import CORRECTIONS, SIGNIFICANCE_TESTS
from ef.evaluation._exceptions import (
    DatasetFormatError,
    EvaluationError,
    EvaluationWarning,
    HttpClientError,
    HttpConnectionError,
    HttpServerError,
    HttpStatusError,
    IncompleteEvaluationWarning,
    JournalCorruptError,
    JournalMismatchError,
    MissingQueriesError,
    MissingQueriesWarning,
    ParameterError,
    PluginWarning,
    QueryError,
    QueryGroupsWarning,
    RelevanceLevelWarning,
    ResponseShapeError,
)
from ef.evaluation._fusion.api import fuse
from ef.evaluation._fusion.optimize import FusionFold, FusionOptimization, optimize_fusion
from ef.evaluation._gate.check import check
from ef.evaluation._gate.config import GateConfig, parse_rule, read_gate_config
from ef.evaluation._gate.reading import read_report
from ef.evaluation._gate.report import CheckReport, RuleResult
from ef.evaluation._gate.rules import FailIfSignificantlyWorse, Floor, GateRule, MaxDrop
from ef.evaluation._groups.query_groups import QueryGroups
from ef.evaluation._groups.reading import read_query_groups
from ef.evaluation._html.writer import write_html_report as _write_html_report
from ef.evaluation._io.atomic import is_stream, write_text_atomically
from ef.evaluation._io.beir import read_beir, write_beir
from ef.evaluation._io.builtin_datasets import resolve_builtin
from ef.evaluation._io.diversity_qrels import read_diversity_qrels
from ef.evaluation._io.overwrite import overwritten_input
from ef.evaluation._io.rag_samples import read_rag_samples
from ef.evaluation._io.runs import write_run
from ef.evaluation._io.trec import (
    read_packed_qrels,
    read_trec_qrels,
    write_trec_qrels,
    write_trec_run,
)
from ef.evaluation._json import loads_strict
from ef.evaluation._judgements.agreement import JudgementAgreement, judgement_agreement
from ef.evaluation._judgements.pool import JudgementPool, pool_runs
from ef.evaluation._judgements.stats import QrelsStatistics, qrels_statistics
from ef.evaluation._metric_names.api import check_metrics, measure_catalogue
from ef.evaluation._metric_names.catalogue import MeasureInfo
from ef.evaluation._plugins.active import (
    RETRIEVAL_METRICS,
    list_plugins,
    read_dataset,
    registry,
)
from ef.evaluation._plugins.hookspecs import hookimpl
from ef.evaluation._plugins.registry import (
    DatasetReader,
    FusionMethod,
    Normalization,
    PluginInfo,
    RagMetric,
    Registry,
    RetrievalMetric,
)
from ef.evaluation._rag.evaluate import evaluate_rag
from ef.evaluation._rag.lexical import context_precision, context_recall, exact_match, token_f1
from ef.evaluation._rag.ragas import as_ragas_dataset
from ef.evaluation._redact import redact_url
from ef.evaluation._report.groups import GroupResult
from ef.evaluation._report.html_hook import register_html_writer as _register_html_writer
from ef.evaluation._report.intervals import MeanIntervals
from ef.evaluation._report.reports import QueryFailure, RagEvalReport, RetrievalEvalReport
from ef.evaluation._running.evaluate import (
    DEFAULT_K_VALUES,
    evaluate_retrieval,
    evaluate_retrieval_async,
    evaluate_run,
)
from ef.evaluation._running.journal import journal_to_trec_run
from ef.evaluation._running.run_files import read_run, read_trec_run
from ef.evaluation._scoring.measures.subtopics import SubtopicJudgements, subtopic_judgements
from ef.evaluation._scoring.metrics import (
    average_precision,
    dcg_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)
from ef.evaluation._scoring.packed_qrels import PackedQrels
from ef.evaluation._scoring.ranked import RankingSummary
from ef.evaluation._scoring.score_sheet import Progress
from ef.evaluation._suite.datasets import SuiteDataset
from ef.evaluation._suite.report import SuiteReport
from ef.evaluation._suite.results import merge_suite_results, write_suite_results
from ef.evaluation._suite.run import evaluate_suite
from ef.evaluation._suite.specs import RETRIEVER_FORMS, is_retriever_spec, retriever_from_spec
from ef.evaluation._suite.summary import suite_report
from ef.evaluation._types import Corpus, Qrels, Queries, RagSample, Run

if TYPE_CHECKING:
    from ef.evaluation._http.retriever import HttpRetriever

# The one wiring call: the plugin host is handed the built-in plugins (imported when plugins
# first load, not now).
_plugins.HOST.use_builtins(_builtins.load)
# The reports' to_html reaches the page writer, a higher layer, through this registration.
_register_html_writer(_write_html_report)

# Imported on first use, not with the package: the HTTP client brings asyncio (tens of ms),
# which scoring a run or reading a dataset never needs.
_LAZY = {"HttpRetriever": "ef.evaluation._http.retriever"}

__all__ = [
    "CORRECTIONS",
    "DEFAULT_K_VALUES",
    "RETRIEVAL_METRICS",
    "RETRIEVER_FORMS",
    "SIGNIFICANCE_TESTS",
    "CheckReport",
    "ComparisonReport",
    "Corpus",
    "DatasetFormatError",
    "DatasetReader",
    "EvaluationError",
    "EvaluationWarning",
    "FailIfSignificantlyWorse",
    "Floor",
    "FusionFold",
    "FusionMethod",
    "FusionOptimization",
    "GateConfig",
    "GateRule",
    "GroupResult",
    "HttpClientError",
    "HttpConnectionError",
    "HttpRetriever",
    "HttpServerError",
    "HttpStatusError",
    "IncompleteEvaluationWarning",
    "JournalCorruptError",
    "JournalMismatchError",
    "JudgementAgreement",
    "JudgementPool",
    "MaxDrop",
    "MeanIntervals",
    "MeasureInfo",
    "MissingQueriesError",
    "MissingQueriesWarning",
    "Normalization",
    "PackedQrels",
    "PairedComparison",
    "ParameterError",
    "PluginInfo",
    "PluginWarning",
    "Progress",
    "Qrels",
    "QrelsStatistics",
    "Queries",
    "QueryError",
    "QueryFailure",
    "QueryGroups",
    "QueryGroupsWarning",
    "RagEvalReport",
    "RagMetric",
    "RagSample",
    "RankingSummary",
    "Registry",
    "RelevanceLevelWarning",
    "ResponseShapeError",
    "RetrievalEvalReport",
    "RetrievalMetric",
    "RuleResult",
    "Run",
    "SubtopicJudgements",
    "SuiteDataset",
    "SuiteReport",
    "as_ragas_dataset",
    "average_precision",
    "check",
    "check_metrics",
    "compare",
    "context_precision",
    "context_recall",
    "dcg_at_k",
    "evaluate_rag",
    "evaluate_retrieval",
    "evaluate_retrieval_async",
    "evaluate_run",
    "evaluate_suite",
    "exact_match",
    "fuse",
    "hookimpl",
    "is_retriever_spec",
    "is_stream",
    "journal_to_trec_run",
    "judgement_agreement",
    "list_plugins",
    "loads_strict",
    "measure_catalogue",
    "merge_suite_results",
    "ndcg_at_k",
    "optimize_fusion",
    "overwritten_input",
    "parse_rule",
    "pool_runs",
    "precision_at_k",
    "qrels_statistics",
    "read_beir",
    "read_dataset",
    "read_diversity_qrels",
    "read_gate_config",
    "read_packed_qrels",
    "read_query_groups",
    "read_rag_samples",
    "read_report",
    "read_run",
    "read_trec_qrels",
    "read_trec_run",
    "recall_at_k",
    "reciprocal_rank",
    "redact_url",
    "registry",
    "resolve_builtin",
    "retriever_from_spec",
    "subtopic_judgements",
    "suite_report",
    "token_f1",
    "write_beir",
    "write_run",
    "write_suite_results",
    "write_text_atomically",
    "write_trec_qrels",
    "write_trec_run",
]

for _name in __all__:
    _obj = globals().get(_name)
    if isinstance(_obj, type):
        _obj.__module__ = __name__
del _name, _obj


def __getattr__(name: str) -> object:
    if name == "__version__":
        # The installed distribution's version, or "unknown" from a bare source tree; read on
        # first access (importlib.metadata is not imported with the package).
        from ef.evaluation._version import library_version

        return library_version() or "unknown"
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
