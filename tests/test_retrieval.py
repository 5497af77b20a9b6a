"""evaluate_retrieval and evaluate_run: adapters, aggregation rules, and the pytrec_eval oracle."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import RETRIEVAL_METRICS, evaluate_retrieval, evaluate_run
from ef.segments import Segment
from ef.source_manager import SearchHit, SourceManager
from oracle import as_trec_run, trec_eval_values

QRELS = {"q1": {"d1": 1.0, "d2": 1.0}, "q2": {"d3": 1.0}}
QUERIES = {"q1": "first query", "q2": "second query"}
RANKINGS = {"first query": ["d1", "d9", "d2"], "second query": ["d9", "d3"]}

DOCS = [f"d{i}" for i in range(15)]
METRICS = ["ndcg", "recall", "precision", "mrr", "map"]


class Corpus:
    """A SearchableCorpus whose sources are split into two segments each."""

    def search(self, query, *, limit=10):
        hits = []
        for rank, doc_id in enumerate(RANKINGS[query]):
            for part in range(2):
                segment = Segment(doc_id, f"{doc_id} part {part}", start=part * 10)
                hits.append(SearchHit(segment, score=100.0 - rank - part / 10))
        return hits[:limit]


def test_every_result_type_maps_to_source_ids_at_best_rank():
    plain = evaluate_retrieval(lambda q, limit: RANKINGS[q][:limit], QRELS, QUERIES)

    def segments(query, limit):
        return [hit.segment for hit in Corpus().search(query, limit=limit)]

    for retriever in (Corpus(), segments):
        report = evaluate_retrieval(retriever, QRELS, QUERIES, limit=200)
        assert report.per_query == plain.per_query
        assert report.short_rankings == ()


def test_source_manager_merges_sources_by_score():
    manager = SourceManager()
    manager.add("a", Corpus())
    report = evaluate_retrieval(manager, QRELS, QUERIES, k_values=(3,), limit=6)
    assert report.metrics["recall@3"] == 1.0
    assert report.manifest["retriever"] == "ef.source_manager.SourceManager"


def test_a_callable_without_limit_is_truncated():
    seen = []

    def retriever(query):
        seen.append(query)
        return ["x", "y", "z", *RANKINGS[query]]

    report = evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(3,))
    assert report.metrics["recall@3"] == 0.0
    assert seen == ["first query", "second query"]


def test_limit_too_low_for_segmented_sources_is_flagged():
    report = evaluate_retrieval(Corpus(), QRELS, QUERIES, k_values=(3,))
    assert report.short_rankings == ("q1", "q2")
    assert report.per_query["q1"]["recall@3"] == 0.5


def test_skipped_queries_are_listed_with_the_reason():
    qrels = {"q1": {"d1": 1}, "q2": {"d3": 0, "d4": -1}, "q3": {"d1": 2}}
    report = evaluate_retrieval(lambda q: ["d1"], qrels, {"q1": "a", "q2": "b"})
    assert report.n_queries == 1
    assert report.skipped == {"q2": "no positive judgement", "q3": "no query text"}


def test_no_scorable_query_is_a_value_error():
    with pytest.raises(ValueError, match="no query can be scored"):
        evaluate_retrieval(lambda q: [], {"q1": {"d1": 0}}, {"q1": "a"})
    with pytest.raises(ValueError, match="no query can be scored"):
        evaluate_retrieval(lambda q: [], {}, {})


def test_a_judged_query_with_empty_results_scores_zero():
    report = evaluate_retrieval(
        lambda q: [] if q == "a" else ["d2"],
        QRELS | {"q2": {"d2": 1}},
        {"q1": "a", "q2": "b"},
        k_values=(1,),
    )
    assert report.per_query["q1"] == {f"{m}@1": 0.0 for m in METRICS}
    assert report.metrics["ndcg@1"] == 0.5


def test_ignore_identical_ids_is_opt_in_and_recorded():
    qrels = {"q1": {"d1": 1}}
    kept = evaluate_retrieval(lambda q: ["q1", "d1"], qrels, {"q1": "a"}, k_values=(1,))
    dropped = evaluate_retrieval(
        lambda q: ["q1", "d1"], qrels, {"q1": "a"}, k_values=(1,), ignore_identical_ids=True
    )
    assert kept.metrics["ndcg@1"] == 0.0
    assert dropped.metrics["ndcg@1"] == 1.0
    assert dropped.manifest["parameters"]["ignore_identical_ids"] is True


def test_bad_limit_and_cutoffs_are_value_errors():
    with pytest.raises(ValueError, match="limit"):
        evaluate_retrieval(lambda q: [], QRELS, QUERIES, limit=0)
    with pytest.raises(ValueError, match="cutoff"):
        evaluate_retrieval(lambda q: [], QRELS, QUERIES, k_values=(0,))
    with pytest.raises(ValueError, match="k_values is empty"):
        evaluate_retrieval(lambda q: [], QRELS, QUERIES, k_values=())


def test_manifest_records_parameters_and_fingerprints():
    report = evaluate_retrieval(lambda q: [], QRELS, QUERIES, k_values=(10, 1, 10))
    assert report.k_values == (1, 10)
    manifest = report.manifest
    assert manifest["library"] == "ef-evaluation"
    assert manifest["parameters"]["limit"] == 10
    assert manifest["fingerprints"]["qrels"].startswith("sha256-m2:")
    other = evaluate_retrieval(lambda q: [], QRELS, QUERIES | {"q1": "changed"})
    assert other.manifest["fingerprints"]["queries"] != manifest["fingerprints"]["queries"]
    assert other.manifest["fingerprints"]["qrels"] == manifest["fingerprints"]["qrels"]


def test_default_metrics_and_cutoffs():
    report = evaluate_retrieval(lambda q: RANKINGS[q], QRELS, QUERIES)
    assert list(report.metrics) == [f"{m}@{k}" for m in METRICS for k in (1, 5, 10, 100)]
    assert set(RETRIEVAL_METRICS) >= set(METRICS)


qrels_strategy = st.dictionaries(
    st.sampled_from([f"q{i}" for i in range(8)]),
    st.dictionaries(st.sampled_from(DOCS), st.sampled_from([-1, 0, 1, 1, 2, 3]), max_size=6),
    min_size=1,
)


@settings(max_examples=120, deadline=None)
@given(
    qrels_strategy,
    st.dictionaries(
        st.sampled_from([f"q{i}" for i in range(8)]),
        st.lists(st.sampled_from([*DOCS, "u"]), max_size=14),
    ),
    st.lists(st.integers(1, 15), min_size=1, max_size=3, unique=True),
)
def test_evaluate_run_matches_trec_eval_per_query_and_in_the_means(qrels, run, ks):
    scorable = [q for q, rel in qrels.items() if any(g > 0 for g in rel.values())]
    if not scorable:
        with pytest.raises(ValueError):
            evaluate_run(run, qrels, k_values=ks)
        return
    expected = trec_eval_values(run, qrels, METRICS, ks)
    for as_scores in (False, True):
        given_run = {q: as_trec_run(r) for q, r in run.items()} if as_scores else run
        # Queries missing from the run score 0, as trec_eval -c counts them: no warning here.
        report = evaluate_run(
            given_run, qrels, k_values=ks, metrics=METRICS, missing_queries="zero"
        )
        assert list(report.per_query) == scorable
        for q in scorable:
            for key, value in report.per_query[q].items():
                assert value == pytest.approx(expected[q][key], abs=1e-9), (q, key)
        for key, value in report.metrics.items():
            mean = sum(expected[q][key] for q in scorable) / len(scorable)
            assert value == pytest.approx(mean, abs=1e-9), key
    texts = {q: q for q in qrels}
    live = evaluate_retrieval(
        lambda q, limit: run.get(q, [])[:limit], qrels, texts, k_values=ks, limit=20
    )
    saved = evaluate_run(run, qrels, k_values=ks, missing_queries="zero")
    assert (live.per_query, live.metrics) == (saved.per_query, saved.metrics)
