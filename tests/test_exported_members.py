"""The public API is exactly what we think it is."""

from __future__ import annotations

import ef.evaluation

SPEC_NAMES = {
    "Qrels",
    "RETRIEVAL_METRICS",
    "dcg_at_k",
    "ndcg_at_k",
    "recall_at_k",
    "precision_at_k",
    "reciprocal_rank",
    "average_precision",
    "evaluate_retrieval",
    "read_beir",
    "write_beir",
    "exact_match",
    "token_f1",
    "context_recall",
    "context_precision",
    "evaluate_rag",
    "as_ragas_dataset",
    "RagSample",
    "RetrievalEvalReport",
    "RagEvalReport",
}

ADDED_NAMES = {
    "PackedQrels",
    "read_packed_qrels",
    "JudgementAgreement",
    "JudgementPool",
    "MeanIntervals",
    "QrelsStatistics",
    "judgement_agreement",
    "pool_runs",
    "qrels_statistics",
    "CORRECTIONS",
    "DEFAULT_K_VALUES",
    "EvaluationError",
    "EvaluationWarning",
    "JournalCorruptError",
    "SIGNIFICANCE_TESTS",
    "is_stream",
    "overwritten_input",
    "loads_strict",
    "read_rag_samples",
    "read_diversity_qrels",
    "subtopic_judgements",
    "SubtopicJudgements",
    "redact_url",
    "resolve_builtin",
    "write_text_atomically",
    "ComparisonReport",
    "PairedComparison",
    "compare",
    "SuiteDataset",
    "SuiteReport",
    "evaluate_suite",
    "merge_suite_results",
    "suite_report",
    "write_suite_results",
    "RETRIEVER_FORMS",
    "is_retriever_spec",
    "retriever_from_spec",
    "HttpClientError",
    "HttpConnectionError",
    "HttpRetriever",
    "HttpServerError",
    "HttpStatusError",
    "ResponseShapeError",
    "Corpus",
    "DatasetFormatError",
    "DatasetReader",
    "FusionFold",
    "FusionMethod",
    "FusionOptimization",
    "Normalization",
    "fuse",
    "optimize_fusion",
    "IncompleteEvaluationWarning",
    "JournalMismatchError",
    "ParameterError",
    "RelevanceLevelWarning",
    "PluginInfo",
    "PluginWarning",
    "Progress",
    "Queries",
    "QueryError",
    "QueryFailure",
    "MeasureInfo",
    "MissingQueriesError",
    "MissingQueriesWarning",
    "RagMetric",
    "RankingSummary",
    "Registry",
    "RetrievalMetric",
    "Run",
    "evaluate_retrieval_async",
    "evaluate_run",
    "hookimpl",
    "journal_to_trec_run",
    "list_plugins",
    "measure_catalogue",
    "check_metrics",
    "read_dataset",
    "read_run",
    "read_trec_qrels",
    "read_trec_run",
    "registry",
    "write_run",
    "write_trec_qrels",
    "write_trec_run",
    "CheckReport",
    "GateConfig",
    "GateRule",
    "Floor",
    "MaxDrop",
    "FailIfSignificantlyWorse",
    "read_gate_config",
    "RuleResult",
    "check",
    "parse_rule",
    "read_report",
    "GroupResult",
    "QueryGroups",
    "QueryGroupsWarning",
    "read_query_groups",
}


def test_all_is_exactly_the_public_api():
    assert set(ef.evaluation.__all__) == SPEC_NAMES | ADDED_NAMES


def test_all_is_sorted_and_every_name_exists():
    def isort_style(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert list(ef.evaluation.__all__) == sorted(ef.evaluation.__all__, key=isort_style)
    for name in ef.evaluation.__all__:
        assert getattr(ef.evaluation, name) is not None


def test_exported_classes_present_as_ef_evaluation():
    for name in ef.evaluation.__all__:
        obj = getattr(ef.evaluation, name)
        if isinstance(obj, type):
            assert obj.__module__ == "ef.evaluation", name
