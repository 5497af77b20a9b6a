"""A search service over HTTP on 127.0.0.1 as a suite's system: one HttpRetriever asked on
every dataset, each query once, the cells those of evaluate_retrieval on each dataset alone."""

from __future__ import annotations

from ef.evaluation import HttpRetriever, evaluate_retrieval, evaluate_suite, write_beir
from http_fixtures import Dataset, running_server


def test_a_service_answers_every_dataset_and_is_asked_each_query_once(tmp_path):
    first, second = Dataset(12, seed=1), Dataset(9, seed=2)
    second.queries = {f"x{q}": f"other {text}" for q, text in second.queries.items()}
    second.qrels = {f"x{q}": judged for q, judged in second.qrels.items()}
    second.rankings = {f"other {text}": r for text, r in second.rankings.items()}
    for name, dataset in (("first", first), ("second", second)):
        corpus = {doc: doc for ranking in dataset.rankings.values() for doc, _ in ranking}
        write_beir(tmp_path / name, corpus, dataset.queries, dataset.qrels)
    rankings = {**first.rankings, **second.rankings}
    with running_server(tmp_path, rankings=rankings) as server:
        service = HttpRetriever(server.url(), results="hits", score_field="score")
        report = evaluate_suite(
            {"service": service},
            [tmp_path / "first", tmp_path / "second"],
            k_values=(1, 5, 10),
            max_concurrency=4,
        )
        asked = server.stats()["requests"]
        assert asked == dict.fromkeys(rankings, 1)
        for name, dataset in (("first", first), ("second", second)):
            alone = evaluate_retrieval(
                HttpRetriever(server.url(), results="hits", score_field="score"),
                dataset.qrels,
                dataset.queries,
                k_values=(1, 5, 10),
            )
            assert report.cells[name]["service"].metrics == alone.metrics
            assert report.cells[name]["service"].per_query == alone.per_query
