"""evaluate_suite: three datasets (the bundled one, a BEIR folder, a local ir_datasets
collection), two systems; every cell is exactly what evaluate_retrieval gives on its own, the
averages and comparisons agree with independent computations, and results folders merge."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
import scipy.stats

from ef.evaluation import (
    IncompleteEvaluationWarning,
    SuiteDataset,
    SuiteReport,
    evaluate_retrieval,
    evaluate_suite,
    merge_suite_results,
    read_dataset,
)
from ef.source_manager import ingest
from suite_fixtures import CosineRetriever, beir_folder, local_ir_dataset, numbers

K = (1, 5, 10)
METRICS = ("ndcg", "recall", "map", "gm_map")


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    root = tmp_path_factory.mktemp("suite-data")
    with pytest.MonkeyPatch.context() as patch:
        # ir_datasets' home is a folder of the test's: nothing is read from or saved to ~.
        patch.setenv("IR_DATASETS_HOME", str(root / "ir_datasets_home"))
        yield [
            "builtin:stdlib-docs",
            str(beir_folder(root, "woods", seed=3)),
            "ir_datasets:" + local_ir_dataset(root / "irds", "ef-test/suite-local", seed=5),
        ]


SYSTEMS = {"bm25": "bm25", "cosine": CosineRetriever}


@pytest.fixture(scope="module")
def suite(datasets, tmp_path_factory):
    index_dir = tmp_path_factory.mktemp("indexes")
    return evaluate_suite(
        SYSTEMS,
        datasets,
        metrics=METRICS,
        k_values=K,
        baseline="bm25",
        index_dir=index_dir,
        tests=("t-test",),
    )


def _alone(system, source, reader):
    corpus, queries, qrels = read_dataset(source, reader=reader)
    retriever = ingest(corpus, embedder="bm25") if system == "bm25" else CosineRetriever(corpus)
    return evaluate_retrieval(retriever, qrels, queries, metrics=METRICS, k_values=K)


def test_each_cell_is_bit_for_bit_what_evaluate_retrieval_gives_alone(suite, datasets):
    assert suite.datasets == ("stdlib-docs", "woods", "ef-test/suite-local")
    assert suite.systems == ("bm25", "cosine")
    sources = [("builtin:stdlib-docs", "beir"), (datasets[1], "beir")]
    sources.append(("ef-test/suite-local", "ir_datasets"))
    for name, (source, reader) in zip(suite.datasets, sources, strict=True):
        for system in suite.systems:
            alone = _alone(system, source, reader)
            cell = suite.cells[name][system]
            assert cell.metrics == alone.metrics
            assert cell.per_query == alone.per_query
            assert suite.table()[name][system] == alone.metrics["ndcg@10"]
            assert suite.value(name, system) == alone.metrics["ndcg@10"]


def test_macro_is_the_mean_over_datasets_and_micro_over_pooled_queries(suite):
    for system in suite.systems:
        cells = [suite.cells[d][system] for d in suite.datasets]
        for key in ("ndcg@10", "recall@5", "map@10"):
            assert suite.macro[system][key] == pytest.approx(
                float(np.mean([c.metrics[key] for c in cells])), rel=1e-12
            )
            pooled = [v[key] for c in cells for v in c.per_query.values()]
            assert len(pooled) == sum(c.n_queries for c in cells)
            assert suite.micro[system][key] == pytest.approx(math.fsum(pooled) / len(pooled))
        # A geometric mean over queries is no plain mean: pooled, it would be a wrong number.
        assert "gm_map" in suite.macro[system]
        assert "gm_map" not in suite.micro[system]
    counts = [suite.cells[d]["bm25"].n_queries for d in suite.datasets]
    assert len(set(counts)) > 1  # the two averages differ in what they weigh


def test_each_dataset_compares_with_the_baseline_as_scipy_does(suite):
    for dataset in suite.datasets:
        comparison = suite.comparisons[dataset]
        bm25, cosine = (suite.cells[dataset][s].per_query for s in ("bm25", "cosine"))
        ids = list(bm25)
        expected = scipy.stats.ttest_rel(
            [cosine[q]["ndcg@10"] for q in ids], [bm25[q]["ndcg@10"] for q in ids]
        ).pvalue
        row = comparison.comparison("cosine", "ndcg@10")
        assert row.p_values["t-test"] == pytest.approx(expected, rel=1e-9)
        mark = suite.significance(dataset, "cosine")
        assert mark == (0 if expected > 0.05 else (1 if row.difference > 0 else -1))
    wins = sum(suite.significance(d, "cosine") > 0 for d in suite.datasets)
    losses = sum(suite.significance(d, "cosine") < 0 for d in suite.datasets)
    assert suite.significant_wins == {"cosine": wins}
    assert suite.significant_losses == {"cosine": losses}
    assert wins + losses >= 1  # the datasets were made for the two systems to differ


def test_the_report_round_trips_through_json_and_gives_frames(suite):
    again = SuiteReport.from_json(suite.to_json())
    assert again == suite
    frame = suite.to_pandas()
    assert list(frame.columns) == ["dataset", "system", "metric", "value"]
    assert len(frame) == sum(len(c.metrics) for row in suite.cells.values() for c in row.values())
    picked = frame[(frame.dataset == "woods") & (frame.system == "cosine")]
    assert (
        dict(zip(picked.metric, picked.value, strict=True))
        == suite.cells["woods"]["cosine"].metrics
    )
    means = suite.to_polars(means=True)
    assert means.columns == ["system", "average", "metric", "value"]
    assert set(means["average"]) == {"macro", "micro"}


def test_a_damaged_report_is_refused_naming_the_field(suite):
    data = json.loads(suite.to_json())
    data["macro"]["bm25"]["ndcg@10"] = "high"
    with pytest.raises(TypeError, match=r"macro\['bm25'\]\['ndcg@10'\] is a JSON string"):
        SuiteReport.from_dict(data)


def test_merging_two_halves_equals_the_whole(datasets, tmp_path):
    options = {"metrics": METRICS, "k_values": K, "baseline": "bm25", "tests": ("t-test",)}
    whole = evaluate_suite(SYSTEMS, datasets, results_dir=tmp_path / "whole", **options)
    evaluate_suite(SYSTEMS, datasets[:2], results_dir=tmp_path / "a", **options)
    evaluate_suite(SYSTEMS, datasets[2:], results_dir=tmp_path / "b", **options)
    merged = merge_suite_results(tmp_path / "a", tmp_path / "b")
    assert numbers(merged) == numbers(whole)
    assert numbers(merge_suite_results(tmp_path / "whole")) == numbers(whole)
    # Halves by system: the comparisons exist only once both sides are merged.
    evaluate_suite({"bm25": "bm25"}, datasets, results_dir=tmp_path / "s1", **options)
    cosine_only = {**options, "baseline": None}
    evaluate_suite(
        {"cosine": CosineRetriever}, datasets, results_dir=tmp_path / "s2", **cosine_only
    )
    by_system = merge_suite_results(tmp_path / "s1", tmp_path / "s2", baseline="bm25")
    assert numbers(by_system) == numbers(whole)


def test_merge_refuses_two_different_results_for_one_cell(datasets, tmp_path):
    options = {"metrics": ("ndcg",), "k_values": (10,)}
    evaluate_suite({"x": "bm25"}, datasets[:1], results_dir=tmp_path / "a", **options)
    evaluate_suite({"x": CosineRetriever}, datasets[:1], results_dir=tmp_path / "b", **options)
    with pytest.raises(ValueError, match=r"two different results for 'x' on 'stdlib-docs'"):
        merge_suite_results(tmp_path / "a", tmp_path / "b")
    shutil.rmtree(tmp_path / "b")
    (tmp_path / "b").mkdir()
    with pytest.raises(ValueError, match=r"no suite\.json; not a suite results folder"):
        merge_suite_results(tmp_path / "a", tmp_path / "b")


def test_dataset_strings_name_reader_and_split(tmp_path):
    folder = beir_folder(tmp_path, "split", seed=9)
    (folder / "qrels").mkdir()
    (folder / "qrels.tsv").rename(folder / "qrels" / "dev.tsv")
    dataset = SuiteDataset.parse(f"{folder}@dev")
    assert (dataset.reader, dataset.split, dataset.name) == ("beir", "dev", "split@dev")
    _, _, qrels = dataset.read()
    assert qrels == read_dataset(folder, qrels="qrels/dev.tsv")[2]
    irds = SuiteDataset.parse("ir_datasets:beir/scifact@test")
    assert (irds.reader, irds.source, irds.split) == ("ir_datasets", "beir/scifact", "test")
    with pytest.raises(ValueError, match="two datasets are named"):
        evaluate_suite(["bm25"], [folder, SuiteDataset("elsewhere", name="split")])


def test_unknown_systems_and_options_are_refused_before_anything_runs():
    with pytest.raises(ValueError, match="unknown system 'sparse'"):
        evaluate_suite(["sparse"], ["builtin:stdlib-docs"])
    with pytest.raises(ValueError, match="unknown option 'journal' for evaluate_suite"):
        evaluate_suite(["bm25"], ["builtin:stdlib-docs"], journal="x.jsonl")
    with pytest.raises(ValueError, match="baseline 'dense' is not one of the systems"):
        evaluate_suite(["bm25"], ["builtin:stdlib-docs"], baseline="dense")


def test_a_dataset_with_failed_queries_is_left_out_of_the_comparisons_with_a_warning(datasets):
    down = read_dataset(datasets[1])[1]["wooq0"]

    def failing(corpus):
        inner = CosineRetriever(corpus)

        def retriever(query, limit=10):
            if query == down:
                raise RuntimeError("the service is down")
            return inner(query, limit)

        return retriever

    with pytest.warns(IncompleteEvaluationWarning) as caught:
        report = evaluate_suite(
            {"bm25": "bm25", "flaky": failing},
            datasets[1:],
            k_values=(10,),
            metrics=("ndcg",),
            baseline="bm25",
            tests=("t-test",),
            on_error="record",
        )
    assert [f.query_id for f in report.cells["woods"]["flaky"].failures] == ["wooq0"]
    assert list(report.comparisons) == ["ef-test/suite-local"]
    assert any("no comparison on the suite's dataset 'woods'" in str(w.message) for w in caught)
    assert report.significance("woods", "flaky") == 0


def test_a_cell_whose_every_query_failed_shows_no_value_and_no_average(datasets):
    def down(corpus):
        def retriever(query, limit=10):
            raise RuntimeError("the service is down")

        return retriever

    with pytest.warns(IncompleteEvaluationWarning):
        report = evaluate_suite(
            {"bm25": "bm25", "down": down},
            datasets[1:2],
            k_values=(10,),
            metrics=("ndcg",),
            on_error="record",
        )
    assert report.table() == {"woods": {"bm25": report.value("woods", "bm25"), "down": None}}
    assert "ndcg@10" not in report.macro["down"]
    assert "| woods | **" in report.to_markdown() and " | — |" in report.to_markdown()
