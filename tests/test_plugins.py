"""The plugin host, through in-process plugins (the installed-distribution cases are in
test_plugin_install.py)."""

from __future__ import annotations

import gzip
import subprocess
import sys
import warnings

import pytest

from ef.evaluation import (
    RETRIEVAL_METRICS,
    DatasetFormatError,
    PluginWarning,
    QueryError,
    evaluate_rag,
    evaluate_retrieval,
    evaluate_run,
    hookimpl,
    list_plugins,
    read_dataset,
    read_trec_run,
    registry,
    write_beir,
)
from ef.evaluation._plugins import HOST
from ef.evaluation._plugins.hookspecs import PROJECT
from ef.evaluation.testing import registered_plugin

QRELS = {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}
QUERIES = {"q1": "alpha", "q2": "beta"}


def hits(ranked, relevant, k):
    return float(sum(1 for d in list(dict.fromkeys(ranked))[:k] if relevant.get(d, 0) > 0))


class MetricPlugin:
    @hookimpl
    def ef_evaluation_register_metrics(self, register):
        register("hits", hits, description="relevant docs in the top k")
        register("returned", lambda ranked, relevant: float(len(ranked)), cutoff=False)


def test_a_plugin_metric_is_usable_everywhere_while_registered():
    with registered_plugin(MetricPlugin(), name="metric-plugin"):
        assert RETRIEVAL_METRICS["hits"] is hits
        assert registry().metrics["hits"].plugin == "metric-plugin"
        report = evaluate_run(
            {"q1": ["d1", "x"], "q2": ["x", "y", "z"]},
            QRELS,
            k_values=(1, 2),
            metrics=("hits", "returned", "ndcg"),
        )
        assert list(report.per_query["q1"]) == ["hits@1", "hits@2", "returned", "ndcg@1", "ndcg@2"]
        assert report.metrics["hits@2"] == 0.5
        assert report.metrics["returned"] == 2.5
    assert "hits" not in RETRIEVAL_METRICS


def test_all_cutoffs_form_is_used_by_the_scoring_core():
    calls = []

    def per_k(ranked, relevant, k):
        raise AssertionError("the all-cutoffs form should be used")

    def every_cutoff(summary, ks):
        calls.append(tuple(ks))
        return [float(len(summary.positions)) for _ in ks]

    class Plugin:
        @hookimpl
        def ef_evaluation_register_metrics(self, register):
            register("found", per_k, all_cutoffs=every_cutoff)

    with registered_plugin(Plugin()):
        report = evaluate_run({"q1": ["d1"]}, {"q1": {"d1": 1}}, k_values=(5, 1), metrics=["found"])
    assert calls == [(1, 5)]
    assert report.metrics == {"found@1": 1.0, "found@5": 1.0}


def test_unknown_metric_lists_the_available_ones():
    with pytest.raises(ValueError, match=r"unknown metric name\(s\) 'ndgc'.*map, mrr, ndcg"):
        evaluate_run({"q1": ["d1"]}, QRELS, metrics=("ndgc",))


def test_a_raising_register_hook_is_skipped_with_a_warning():
    class Raising:
        @hookimpl
        def ef_evaluation_register_metrics(self, register):
            register("early", hits)
            raise RuntimeError("boom")

    with registered_plugin(Raising(), name="raising"):
        with pytest.warns(PluginWarning, match=r"'raising' .*raised in .*RuntimeError: boom"):
            metrics = registry().metrics
        assert "early" not in metrics
        assert "ndcg" in metrics


def test_a_collision_keeps_the_builtin_and_warns():
    class Colliding:
        @hookimpl
        def ef_evaluation_register_metrics(self, register):
            register("ndcg", hits)

    with registered_plugin(Colliding(), name="colliding"):
        with pytest.warns(PluginWarning, match="'ndcg' from plugin 'colliding'.*registered it"):
            assert registry().metrics["ndcg"].plugin == "ef.evaluation._builtins"


def test_a_misspelled_hook_is_refused_with_the_known_hooks():
    class Misspelled:
        @hookimpl
        def ef_evaluation_register_metric(self, register):  # missing "s"
            register("never", hits)

    with pytest.warns(PluginWarning, match=r"unknown hook\(s\) ef_evaluation_register_metric "):
        HOST.register(Misspelled(), "misspelled")
    assert "misspelled" not in [info.name for info in list_plugins()]
    assert "never" not in registry().metrics


def test_a_bad_registration_name_is_reported():
    class BadName:
        @hookimpl
        def ef_evaluation_register_metrics(self, register):
            register("ndcg@5", hits)

    with registered_plugin(BadName(), name="bad-name"):
        with pytest.warns(PluginWarning, match="invalid metric name 'ndcg@5'"):
            assert "ndcg@5" not in registry().metrics


class Doc:
    def __init__(self, ident):
        self.ident = ident


class Index:
    def lookup(self, text, n):
        return [Doc("d1"), Doc("d2")][:n]


class AdapterPlugin:
    getter_calls = 0

    @hookimpl
    def ef_evaluation_adapt_retriever(self, retriever):
        if isinstance(retriever, Index):
            return lambda query, limit: retriever.lookup(query, limit)
        return None

    @hookimpl
    def ef_evaluation_doc_id_getter(self, result_type):
        if issubclass(result_type, Doc):
            AdapterPlugin.getter_calls += 1
            return lambda doc: doc.ident
        return None


def test_adapter_and_doc_id_plugins_teach_new_types():
    AdapterPlugin.getter_calls = 0
    with registered_plugin(AdapterPlugin()):
        report = evaluate_retrieval(Index(), QRELS, QUERIES, k_values=(1, 2))
    assert report.per_query["q1"]["ndcg@1"] == 1.0
    assert report.per_query["q2"]["mrr@2"] == 0.5
    assert AdapterPlugin.getter_calls == 1  # resolved once per type, not per result
    assert report.manifest["retriever"].endswith("test_plugins.Index")


def test_a_specific_adapter_wins_over_the_builtin_fallback():
    def callable_retriever(query):
        return ["d2"]

    class Override:
        @hookimpl
        def ef_evaluation_adapt_retriever(self, retriever):
            if retriever is callable_retriever:
                return lambda query, limit: ["d1"]
            return None

    with registered_plugin(Override()):
        report = evaluate_retrieval(callable_retriever, {"q1": {"d1": 1}}, QUERIES, k_values=(1,))
    assert report.metrics["ndcg@1"] == 1.0


def test_an_unknown_retriever_or_result_type_is_a_type_error():
    with pytest.raises(TypeError, match="cannot evaluate a int"):
        evaluate_retrieval(42, QRELS, QUERIES)
    # A result nothing maps fails its query, like any error of the retriever's.
    with pytest.raises(QueryError, match=r"query 'q1'.*cannot map a result of type Doc") as raised:
        evaluate_retrieval(lambda q: [Doc("d1")], QRELS, QUERIES)
    assert isinstance(raised.value.__cause__, TypeError)


def test_rag_metric_plugins_reach_evaluate_rag():
    class RagPlugin:
        @hookimpl
        def ef_evaluation_register_rag_metrics(self, register):
            register("answer_length", lambda sample: float(len(sample["response"])))

    with registered_plugin(RagPlugin()):
        report = evaluate_rag(
            [{"user_input": "q", "response": "four", "retrieved_contexts": []}],
            metrics=["answer_length"],
        )
    assert report.metrics == {"answer_length": 4.0}


def test_dataset_reader_plugins_reach_read_dataset(tmp_path):
    class ReaderPlugin:
        @hookimpl
        def ef_evaluation_register_dataset_readers(self, register):
            register(
                "fixed", lambda source, **options: ({"d": "t"}, {"q": source}, {"q": {"d": 1}})
            )

    with registered_plugin(ReaderPlugin()):
        assert read_dataset("text", reader="fixed") == ({"d": "t"}, {"q": "text"}, {"q": {"d": 1}})
    write_beir(tmp_path, {"d1": "doc"}, {"q1": "query"}, {"q1": {"d1": 1.0}})
    assert read_dataset(tmp_path)[2] == {"q1": {"d1": 1.0}}
    with pytest.raises(ValueError, match="unknown dataset reader 'nope'; available: beir"):
        read_dataset(tmp_path, reader="nope")


def test_builtins_are_ordinary_plugins():
    infos = {info.name: info for info in list_plugins()}
    metrics = infos["ef.evaluation._builtins"]
    assert metrics.builtin and metrics.distribution == "ef-evaluation"
    assert "ef_evaluation_register_metrics" in metrics.hooks
    adapters = infos["ef.evaluation._adapters"]
    assert set(adapters.hooks) == {"ef_evaluation_adapt_retriever", "ef_evaluation_doc_id_getter"}
    assert list(RETRIEVAL_METRICS)[:5] == ["map", "mrr", "ndcg", "precision", "recall"]
    assert set(registry().rag_metrics) >= {
        "exact_match",
        "token_f1",
        "context_recall",
        "context_precision",
        "non_empty_rate",
    }
    assert set(registry().readers) >= {"beir", "trec"}


def test_importing_ef_evaluation_loads_no_plugin():
    code = (
        "import sys, ef.evaluation\n"
        "from ef.evaluation._plugins import HOST\n"
        "assert HOST._pm is None, 'plugins loaded at import'\n"
        "assert 'ragas' not in sys.modules\n"
        "assert 'ef.evaluation._builtins.metrics' not in sys.modules\n"
        "len(ef.evaluation.RETRIEVAL_METRICS)\n"
        "assert HOST._pm is not None\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_hook_has_a_test_and_docs():
    import pathlib

    from ef.evaluation._plugins import hookspecs as _hookspecs

    hooks = [name for name in dir(_hookspecs) if name.startswith("ef_evaluation_")]
    assert len(hooks) == 13
    root = pathlib.Path(__file__).parents[1]
    # The fusion hooks are tested beside fusion itself, the fusion kernel, the qrels pass and
    # the ranking kernel beside their C ones.
    tests = "".join(
        (root / name).read_text()
        for name in (
            "tests/test_plugins.py",
            "tests/test_fusion.py",
            "tests/test_plugin_extensions.py",
            "plugins/ef-evaluation-speedups/tests/test_fusion_kernel.py",
            "plugins/ef-evaluation-speedups/tests/test_qrels_pass.py",
            "plugins/ef-evaluation-speedups/tests/test_ranking_kernel.py",
        )
    )
    docs = (root / "docs" / "plugins.md").read_text()
    for hook in hooks:
        assert f"def {hook}(" in tests, hook
        assert f"`{hook}" in docs, hook
    assert PROJECT == "ef.evaluation"


def test_no_warning_when_nothing_is_wrong():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        HOST.reset()
        assert "ndcg" in registry().metrics


class SplitParser:
    """A TREC run parser plugin in plain Python: what the built-in reader does, counted."""

    def __init__(self, fail_with: Exception | None = None):
        self.fail_with = fail_with
        self.streams = 0

    def parse(self, stream):
        self.streams += 1
        if self.fail_with is not None:
            raise self.fail_with
        table, lines, blank = {}, 0, 0
        for raw in stream.read().removeprefix(b"\xef\xbb\xbf").split(b"\n"):
            lines += 1
            parts = raw.decode().split()
            if not parts:
                blank += 1
                continue
            qid, _, doc, _, score, _ = parts
            table.setdefault(qid, {})[doc] = float(score)
        return table, lines - 1, blank - 1  # split() gives one piece after the last "\n"

    @hookimpl
    def ef_evaluation_trec_run_parser(self):
        return self.parse


RUN_TEXT = "q1 Q0 d1 1 2.5 t\n\nq2 Q0 d2 1 1.0 t\nq1 Q0 d3 2 0.5 t\n"


def test_a_trec_run_parser_plugin_reads_run_files(tmp_path):
    path = tmp_path / "run.txt.gz"  # gzip is undone before the parser sees the bytes
    path.write_bytes(gzip.compress(("\ufeff" + RUN_TEXT).encode()))
    parser = SplitParser()
    with registered_plugin(parser):
        assert HOST.trec_run_parser() == parser.parse
        run = read_trec_run(path)
    assert parser.streams == 1
    assert run == {"q1": {"d1": 2.5, "d3": 0.5}, "q2": {"d2": 1.0}}
    assert HOST.trec_run_parser() != parser.parse  # unregistered: resolved again


def test_the_line_count_from_a_parser_plugin_reveals_repeated_doc_ids(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text(RUN_TEXT + "q1 Q0 d1 3 0.1 t\n")
    with registered_plugin(SplitParser()), pytest.raises(DatasetFormatError) as caught:
        read_trec_run(path)
    assert caught.value.line == 5
    assert "first on line 1" in str(caught.value)


@pytest.mark.parametrize(
    "error", [ValueError("line 2"), UnicodeDecodeError("utf-8", b"", 0, 1, "not UTF-8")]
)
def test_a_line_the_parser_declines_is_reported_by_the_builtin_reader(tmp_path, error):
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 2.5 t\nq1 Q0 d2 1 x t\n")
    parser = SplitParser(error)
    with registered_plugin(parser), pytest.raises(DatasetFormatError) as caught:
        read_trec_run(path)
    assert parser.streams == 1
    assert caught.value.line == 2
    assert "score 'x' is not a number" in str(caught.value)


def test_a_broken_parser_plugin_costs_speed_not_results(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text(RUN_TEXT)
    with (
        registered_plugin(SplitParser(RuntimeError("bug"))),
        pytest.warns(PluginWarning, match="RuntimeError: bug; the file is read by the built-in"),
    ):
        run = read_trec_run(path)
    assert run == {"q1": {"d1": 2.5, "d3": 0.5}, "q2": {"d2": 1.0}}


def test_a_parser_hook_that_raises_is_skipped_with_a_warning(tmp_path):
    class Raising:
        @hookimpl
        def ef_evaluation_trec_run_parser(self):
            raise LookupError("no parser today")

    path = tmp_path / "run.txt"
    path.write_text(RUN_TEXT)
    with (
        registered_plugin(Raising(), name="raising-parser"),
        pytest.warns(PluginWarning, match="'raising-parser'.*LookupError: no parser today"),
    ):
        run = read_trec_run(path)
    assert run["q1"] == {"d1": 2.5, "d3": 0.5}
