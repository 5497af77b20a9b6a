"""Tests of the bundled datasets: ``builtin:NAME`` resolution and the stdlib-docs collection."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Iterator

import pytest

from ef.evaluation import evaluate_retrieval, read_beir, read_dataset
from ef.evaluation._io.builtin_datasets import (
    BUILTIN_PREFIX,
    builtin_dataset_path,
    builtin_datasets,
    resolve_builtin,
)
from ef.source_manager import ingest

NAME = "stdlib-docs"


def test_the_demo_dataset_is_bundled() -> None:
    assert NAME in builtin_datasets()
    folder = builtin_dataset_path(NAME)
    for part in ("corpus.jsonl", "queries.jsonl", "qrels.tsv", "README.md", "LICENSE.txt"):
        assert (folder / part).is_file(), part


def test_builtin_names_resolve_to_the_bundled_folder() -> None:
    assert resolve_builtin(BUILTIN_PREFIX + NAME) == builtin_dataset_path(NAME)


def test_the_readers_accept_builtin_names() -> None:
    expected = read_beir(builtin_dataset_path(NAME))
    assert read_beir(BUILTIN_PREFIX + NAME) == expected
    assert read_dataset(BUILTIN_PREFIX + NAME) == expected
    with pytest.raises(ValueError, match="unknown built-in dataset 'nope'"):
        read_dataset("builtin:nope")


@pytest.mark.parametrize("source", ["data/scifact", "./builtin:x", pathlib.Path("builtin:x")])
def test_other_sources_are_left_alone(source: str | pathlib.Path) -> None:
    assert resolve_builtin(source) is source


def test_an_unknown_builtin_lists_the_bundled_ones() -> None:
    expected = f"unknown built-in dataset 'nope'; available: .*builtin:{NAME}"
    with pytest.raises(ValueError, match=expected):
        resolve_builtin("builtin:nope")
    with pytest.raises(ValueError, match=f"builtin:{NAME}"):
        builtin_dataset_path("")


@pytest.fixture(scope="module")
def dataset() -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, float]]]:
    return read_beir(builtin_dataset_path(NAME))


Dataset = tuple[dict[str, str], dict[str, str], dict[str, dict[str, float]]]


def test_the_collection_is_whole(dataset: Dataset) -> None:
    corpus, queries, qrels = dataset
    assert 300 <= len(corpus) <= 2000
    assert 30 <= len(queries) <= 60
    assert set(qrels) == set(queries)
    for query_id, judged in qrels.items():
        assert set(judged) <= set(corpus), query_id
        assert set(judged.values()) <= {0.0, 1.0, 2.0, 3.0}, query_id
        assert max(judged.values()) > 0, query_id


def test_the_readme_states_what_the_files_hold(dataset: Dataset) -> None:
    corpus, queries, qrels = dataset
    readme = (builtin_dataset_path(NAME) / "README.md").read_text(encoding="utf-8")
    judgements = sum(len(judged) for judged in qrels.values())
    relevant = sum(grade > 0 for judged in qrels.values() for grade in judged.values())
    assert f"{len(corpus):,} documents, {len(queries)} queries, {judgements} graded" in readme
    assert f"{judgements} judgements, {relevant} of them relevant" in readme
    assert "PSF License Agreement" in readme


def test_every_document_is_a_titled_record() -> None:
    path = builtin_dataset_path(NAME) / "corpus.jsonl"
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            assert record["title"] == record["_id"]
            assert record["text"].strip()


@pytest.fixture(scope="module")
def bm25_hits(dataset: Dataset) -> Iterator[dict[str, list[str]]]:
    corpus, queries, _ = dataset
    # As the pool was made (the README): segments of 128 words overlapping by 32, not the
    # whole documents ingest indexes by default since.
    index = ingest(corpus, embedder="bm25", segment_size=128, overlap=32)
    rankings = {}
    for query_id, text in queries.items():
        ranked = [hit.segment.source_id for hit in index.search(text, limit=50)]
        rankings[query_id] = list(dict.fromkeys(ranked))[:10]
    yield rankings


def test_every_document_bm25_ranks_in_a_top_10_was_judged(
    dataset: Dataset, bm25_hits: dict[str, list[str]]
) -> None:
    # The README's judging method: the union of the BM25 and dense top 10 was judged in full.
    _, _, qrels = dataset
    unjudged = {q: [d for d in ranked if d not in qrels[q]] for q, ranked in bm25_hits.items()}
    assert not any(unjudged.values()), unjudged


def test_bm25_is_neither_perfect_nor_useless_on_it(dataset: Dataset) -> None:
    corpus, queries, qrels = dataset
    report = evaluate_retrieval(ingest(corpus, embedder="bm25"), qrels, queries, k_values=(10,))
    assert report.n_queries == len(queries)
    assert 0.2 < report.metrics["ndcg@10"] < 1.0
