"""The ir_datasets reader through the installed plugin, on a local dataset built with
ir_datasets' own API."""

from __future__ import annotations

import ir_datasets
import pytest

from ef.evaluation import evaluate_run, list_plugins, read_dataset
from ef_evaluation_ir_datasets import DatasetUnavailable

DOCS = {f"d{i}": f"text of document {i}\twith a tab" for i in range(20)}
QUERIES = {"q1": "first question", "q2": "second question"}
QRELS = {"q1": {"d1": 2.0, "d2": 0.0}, "q2": {"d3": 1.0}}


@pytest.fixture(scope="module")
def local_id(tmp_path_factory):
    folder = tmp_path_factory.mktemp("irds")
    (folder / "docs.tsv").write_text(
        "".join(f"{d}\t{t.replace(chr(9), ' ')}\n" for d, t in DOCS.items())
    )
    (folder / "queries.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES.items()))
    (folder / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {int(g)}\n" for q, judged in QRELS.items() for d, g in judged.items())
    )
    dataset = ir_datasets.create_dataset(
        docs_tsv=str(folder / "docs.tsv"),
        queries_tsv=str(folder / "queries.tsv"),
        qrels_trec=str(folder / "qrels.txt"),
    )
    name = f"ef-test/local-{id(folder):x}"
    ir_datasets.registry.register(name, dataset)
    return name


def test_a_local_dataset_reads_as_the_beir_triple(local_id):
    corpus, queries, qrels = read_dataset(local_id, reader="ir_datasets")
    assert corpus == {d: t.replace("\t", " ") for d, t in DOCS.items()}
    assert queries == QUERIES
    assert qrels == QRELS
    report = evaluate_run({"q1": ["d2", "d1"], "q2": ["d3"]}, qrels, k_values=(1,))
    assert report.metrics["ndcg@1"] == 0.5


def test_titles_are_joined_like_read_beir(tmp_path):
    dataset = ir_datasets.create_dataset(
        queries_tsv=str(tmp_path / "q.tsv"), qrels_trec=str(tmp_path / "r.txt")
    )
    (tmp_path / "q.tsv").write_text("q1\tquestion\n")
    (tmp_path / "r.txt").write_text("q1 0 d1 1\n")

    class Titled:
        doc_id = "d1"
        title = "Title"
        text = "body"

    class Untitled(Titled):
        title = ""

    from ef_evaluation_ir_datasets import _text

    assert _text(Titled()) == "Title body"
    assert _text(Untitled()) == "body"
    name = f"ef-test/no-docs-{id(tmp_path):x}"
    ir_datasets.registry.register(name, dataset)
    corpus, queries, qrels = read_dataset(name, reader="ir_datasets")
    assert (corpus, queries, qrels) == ({}, {"q1": "question"}, {"q1": {"d1": 1.0}})


def test_an_unknown_id_is_a_clear_error(local_id):
    with pytest.raises(ValueError, match=r"ir_datasets has no dataset 'ef-test/locl.*did you"):
        read_dataset(local_id.replace("local", "locl"), reader="ir_datasets")


def test_a_dataset_not_available_offline_fails_fast_and_clearly(tmp_path, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path))
    monkeypatch.setenv("IR_DATASETS_DL_TRIES", "1")
    monkeypatch.setenv("IR_DATASETS_DL_TIMEOUT", "5")
    with pytest.raises(DatasetUnavailable, match="'antique/test' is not available offline"):
        read_dataset("antique/test", reader="ir_datasets", corpus=False)


def test_the_plugin_is_loaded_from_its_installed_distribution():
    info = {p.name: p for p in list_plugins()}["ir_datasets"]
    assert info.distribution == "ef-evaluation-ir-datasets"
    assert info.hooks == ("ef_evaluation_register_dataset_readers",)
