"""The visual report without a browser: the data each page is made of, the self-contained file,
the ``to_html`` methods and the ``ef-eval report`` / ``--html`` command lines.

The pages themselves are opened in a real browser by ``tests/test_html_browser.py``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import attrs
import pytest

import in_process_cli
from ef.evaluation import (
    QueryFailure,
    RetrievalEvalReport,
    compare,
    evaluate_rag,
    evaluate_run,
    read_trec_run,
)
from ef.evaluation._html import render
from ef.evaluation._html.charts import bins
from ef.evaluation._html.comparison import comparison_page
from ef.evaluation._html.evaluation import evaluation_page, k_points, primary_metric
from ef.evaluation._html.rag import rag_page
from ef.evaluation._html.rankings import drilldown, precision_recall, ranking, snippets
from ef.evaluation.cli import main

QRELS = {
    "q1": {"d1": 2, "d2": 1, "d30": 1, "d40": 1, "d5": 0},
    "q2": {"d3": 1},
    "q3": {"d4": 1, "d6": 2},
}
# q1 ranks 25 documents, d30 at rank 23 (outside the top 20); d40 is never retrieved.
RUN = {
    "q1": {f"d{i}": 100.0 - i for i in range(1, 24)} | {"d30": 77.5, "d60": 1.0, "d61": 0.5},
    "q2": ["d9", "d3"],
    "q3": ["d6", "d7", "d4"],
}
OTHER_RUN = {"q1": ["d2", "d1"], "q2": ["d3"], "q3": ["d8", "d9"]}
CORPUS = {f"d{i}": f"Document {i} " + "word " * 100 for i in range(70)}
QUERIES = {"q1": "first query", "q2": "second </script><script>alert(1)</script>", "q3": "third"}


def scored(run: dict, **extra: object) -> RetrievalEvalReport:
    return attrs.evolve(evaluate_run(run, QRELS, k_values=(1, 5, 10, 20)), **extra)


@pytest.fixture(scope="module")
def report() -> RetrievalEvalReport:
    return scored(RUN)


def test_a_drilldown_embeds_the_top_20_and_each_missed_relevant_document_with_its_rank():
    page = drilldown(ranking(RUN["q1"]), QRELS["q1"])
    assert [doc for doc, _ in page["ranked"]] == [f"d{i}" for i in range(1, 21)]
    assert page["ranked"][0] == ["d1", 2.0] and page["ranked"][4] == ["d5", 0.0]
    assert page["ranked"][2] == ["d3", None]  # unjudged for q1
    assert page["missed"] == [["d30", 1.0, 23], ["d40", 1.0, None]]
    assert page["retrieved"] == 26


def test_a_scored_run_is_ranked_as_trec_eval_ranks_it():
    page = drilldown(["d30", "d1"], QRELS["q1"])
    by_score = drilldown(ranking({"d1": 1.0, "d30": 1.0}), QRELS["q1"])  # a tie: id descending
    assert [doc for doc, _ in by_score["ranked"]] == ["d30", "d1"] == [d for d, _ in page["ranked"]]


def test_snippets_cover_only_the_documents_shown_and_stop_at_200_characters(report):
    pages = evaluation_page(report, run=RUN, qrels=QRELS, corpus=CORPUS)["drilldowns"]
    texts = snippets(pages.values(), CORPUS)
    shown = {row[0] for page in pages.values() for row in (*page["ranked"], *page["missed"])}
    assert set(texts) == shown & set(CORPUS)
    assert "d60" not in texts and "d61" not in texts  # retrieved below the top 20, not relevant
    assert all(len(text) <= 200 for text in texts.values())
    assert texts["d1"].startswith("Document 1 word") and texts["d1"].endswith("…")


def test_the_precision_recall_curve_is_trec_evals_interpolated_precision(report):
    curve = precision_recall(QRELS, RUN, QRELS)
    reference = evaluate_run(RUN, QRELS, metrics=("iprec_at_recall",)).metrics
    assert [point["recall"] for point in curve] == [i / 10 for i in range(11)]
    for point in curve:
        assert point["precision"] == pytest.approx(
            reference[f"iprec_at_recall_{point['recall']:.2f}"], abs=1e-12
        )


def test_the_curve_is_read_from_the_report_when_it_holds_the_interpolated_precision():
    measured = evaluate_run(RUN, QRELS, metrics=("iprec_at_recall", "ndcg"), k_values=(10,))
    spec = evaluation_page(measured)["charts"]["pr_curve"]
    values = [point["precision"] for point in spec["data"]["values"]]
    assert values == [measured.metrics[f"iprec_at_recall_{i / 10:.2f}"] for i in range(11)]


def test_without_a_run_there_is_no_drilldown_and_no_curve(report):
    data = evaluation_page(report)
    assert data["drilldowns"] == {} and "pr_curve" not in data["charts"]
    assert {"k_curves", "distribution"} <= set(data["charts"])
    with pytest.raises(ValueError, match="both run and qrels"):
        evaluation_page(report, run=RUN)


def test_the_distribution_and_the_cutoff_curves_count_what_the_report_holds(report):
    data = evaluation_page(report)
    binned = data["charts"]["distribution"]["data"]["values"]
    assert len(binned) == 10 and sum(row["count"] for row in binned) == 3
    assert primary_metric(report) == "ndcg@10"
    points = k_points(report.metrics)
    assert {point["metric"] for point in points} == {"ndcg", "recall", "precision", "mrr", "map"}
    assert len(data["charts"]["k_curves"]["data"]["values"]) == len(points) == 20


def test_bins_put_every_value_in_one_bin():
    binned = bins([0.0, 0.05, 0.5, 0.99, 1.0], 10, 0.0, 1.0)
    assert [row["count"] for row in binned] == [2, 0, 0, 0, 0, 1, 0, 0, 0, 2]
    assert [row["count"] for row in bins([2.0, 2.0], 4, 2.0, 2.0)] == [2, 0, 0, 0]


def test_latency_and_failures_reach_the_page(report):
    timed = attrs.evolve(
        report,
        latency={"q1": 0.1, "q2": 0.2, "q3": 0.9},
        failures=[QueryFailure("q9", "TimeoutError", "slow", 3)],
        manifest={"retriever": "bm25", "parameters": {"k_values": [1, 5]}},
    )
    data = evaluation_page(timed)
    assert data["latency"]["p50"] == pytest.approx(0.2)
    assert sum(row["count"] for row in data["charts"]["latency"]["data"]["values"]) == 3
    assert data["failures"] == [["q9", "TimeoutError", "slow", 3]]
    assert ["parameters.k_values", "1, 5"] in data["manifest"]


def test_the_comparison_has_one_difference_per_paired_query(report):
    other = scored(OTHER_RUN)
    comparison = compare(
        {"a": report, "b": other}, baseline="a", tests=("randomization",), n_permutations=500
    )
    data = comparison_page(comparison, runs={"a": RUN, "b": OTHER_RUN}, qrels=QRELS)
    bars = data["charts"]["difference:b"]["data"]["values"]
    assert len(bars) == 3
    assert [bar["difference"] for bar in bars] == sorted(
        (other.per_query[q]["ndcg@10"] - report.per_query[q]["ndcg@10"] for q in QRELS),
        reverse=True,
    )
    assert set(data["drilldowns"]["q1"]) == {"a", "b"}
    assert data["drilldowns"]["q1"]["b"]["ranked"] == [["d2", 1.0], ["d1", 2.0]]
    with pytest.raises(ValueError, match="'c'"):
        comparison_page(comparison, runs={"c": RUN}, qrels=QRELS)


def test_the_rag_page_needs_the_samples_the_report_scored():
    samples = [
        {
            "user_input": "Capital?",
            "response": "Paris",
            "reference": "Paris",
            "retrieved_contexts": ["Paris is the capital."],
        },
        {"user_input": "River?", "response": "Seine", "retrieved_contexts": []},
    ]
    report = evaluate_rag(samples)
    data = rag_page(report, samples=samples)
    assert data["rows"][0][1:5] == ["Capital?", "Paris", "Paris", ["Paris is the capital."]]
    assert data["rows"][1][3] is None  # no reference
    coverage = {name: covered for name, _, covered in data["metrics"]}
    assert coverage == dict(report.coverage)
    with pytest.raises(ValueError, match="holds 1 samples"):
        rag_page(report, samples=samples[:1])


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.scripts += tag == "script"
        self.links += [value or "" for name, value in attrs if name in ("src", "href")]


_REMOTE_IMPORT = re.compile(
    r"""(import\s*(\(\s*)?['"]|from\s*['"]|@import\s*(url\()?\s*['"]?|url\(\s*['"]?)https?://"""
)


def pages(tmp_path: Path, report: RetrievalEvalReport) -> list[Path]:
    other = scored(OTHER_RUN)
    comparison = compare(
        {"a": report, "b": other}, baseline="a", tests=("randomization",), n_permutations=500
    )
    samples = [{"user_input": "Q", "response": "A", "reference": "A", "retrieved_contexts": []}]
    return [
        report.to_html(tmp_path / "e.html", run=RUN, qrels=QRELS, corpus=CORPUS, queries=QUERIES),
        comparison.to_html(tmp_path / "c.html"),
        evaluate_rag(samples).to_html(tmp_path / "r.html", samples=samples),
    ]


def test_each_page_is_one_file_that_refers_to_no_address(tmp_path, report):
    for page in pages(tmp_path, report):
        text = page.read_text(encoding="utf-8")
        parser = _Links()
        parser.feed(text)
        assert parser.links == [], page  # no src, no href: everything is inline
        # The page's three scripts: its data, the charting library and its own script. A query
        # text holding "</script>" stays inside the data.
        assert parser.scripts == 3, page
        assert not _REMOTE_IMPORT.search(text), page
        assert "<link" not in text


def test_a_page_keeps_its_data_as_json(tmp_path, report):
    page = pages(tmp_path, report)[0].read_text(encoding="utf-8")
    found = re.search(r'<script id="ef-data" type="application/json">(.*?)</script>', page, re.S)
    assert found
    data = json.loads(found.group(1))
    assert data["rows"][1][1] == QUERIES["q2"]
    assert data["drilldowns"]["q1"]["missed"] == [["d30", 1.0, 23], ["d40", 1.0, None]]


def test_an_html_page_without_the_extra_names_it(tmp_path, report, monkeypatch):
    monkeypatch.setitem(sys.modules, "jinja2", None)
    with pytest.raises(ImportError, match=r"needs jinja2: pip install 'ef-evaluation\[html\]'"):
        report.to_html(tmp_path / "e.html")
    assert not (tmp_path / "e.html").exists()
    monkeypatch.setitem(sys.modules, "vl_convert", None)
    # The bundle is built once per process: call the function behind the cache.
    with pytest.raises(ImportError, match=r"needs vl-convert-python: pip install"):
        render.vega_bundle.__wrapped__()


def test_a_page_is_written_atomically_and_an_unwritable_path_is_named(tmp_path, report):
    target = tmp_path / "missing" / "e.html"
    with pytest.raises(OSError, match="missing"):
        report.to_html(target)
    assert list(tmp_path.iterdir()) == []


def test_only_reports_make_pages(tmp_path):
    from ef.evaluation._html.writer import write_html_report

    with pytest.raises(TypeError, match="not dict"):
        write_html_report({}, tmp_path / "x.html")


def _files(tmp_path: Path) -> dict[str, Path]:
    files = {"qrels": tmp_path / "qrels.txt", "a": tmp_path / "a.run", "b": tmp_path / "b.run"}
    files["qrels"].write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items())
    )
    for name, run in (("a", RUN), ("b", OTHER_RUN)):
        ranked = {
            q: list(docs) if isinstance(docs, list) else sorted(docs, key=docs.get, reverse=True)
            for q, docs in run.items()
        }
        files[name].write_text(
            "".join(
                f"{q} Q0 {d} {i} {100 - i} {name}\n"
                for q, docs in ranked.items()
                for i, d in enumerate(docs, 1)
            )
        )
    return files


def _data(page: Path) -> dict:
    found = re.search(
        r'<script id="ef-data" type="application/json">(.*?)</script>',
        page.read_text(encoding="utf-8"),
        re.S,
    )
    assert found
    return json.loads(found.group(1))


def test_ef_eval_report_makes_an_evaluation_and_a_comparison_page(tmp_path, capsys):
    files = _files(tmp_path)
    saved = tmp_path / "runs.json"
    assert (
        main(
            [
                "run",
                str(files["qrels"]),
                str(files["a"]),
                str(files["b"]),
                "--format",
                "json",
                "-o",
                str(saved),
            ]
        )
        == 0
    )
    one = tmp_path / "one.json"
    assert (
        main(
            [
                "run",
                str(files["qrels"]),
                str(files["a"]),
                "--format",
                "json",
                "-o",
                str(one),
                "--html",
                str(tmp_path / "run.html"),
            ]
        )
        == 0
    )
    assert _data(tmp_path / "run.html")["drilldowns"]["q1"]["missed"][0] == ["d30", 1.0, 23]
    page = tmp_path / "report.html"
    assert (
        main(
            [
                "report",
                str(one),
                "-o",
                str(page),
                "--run",
                str(files["a"]),
                "--qrels",
                str(files["qrels"]),
            ]
        )
        == 0
    )
    assert _data(page)["kind"] == "evaluation" and "pr_curve" in _data(page)["charts"]
    assert (
        main(
            [
                "report",
                str(saved),
                "-o",
                str(page),
                "--run",
                str(files["a"]),
                "--run",
                str(files["b"]),
                "--qrels",
                str(files["qrels"]),
                "--baseline",
                "b.run",
            ]
        )
        == 0
    )
    data = _data(page)
    assert data["kind"] == "comparison" and data["baseline"] == "b.run"
    assert len(data["charts"]["difference:a.run"]["data"]["values"]) == 3
    assert set(data["drilldowns"]["q2"]) == {"a.run", "b.run"}


def test_compare_and_rag_write_their_pages_too(tmp_path):
    files = _files(tmp_path)
    page = tmp_path / "compare.html"
    assert (
        main(
            [
                "compare",
                str(files["qrels"]),
                str(files["a"]),
                str(files["b"]),
                "--baseline",
                "a.run",
                "--tests",
                "randomization",
                "--permutations",
                "100",
                "--html",
                str(page),
                "-o",
                str(tmp_path / "c.txt"),
            ]
        )
        == 0
    )
    data = _data(page)
    assert len(data["charts"]["difference:b.run"]["data"]["values"]) == 3
    assert data["drilldowns"]["q1"]["b.run"]["ranked"][0] == ["d2", 1.0]
    samples = tmp_path / "s.jsonl"
    samples.write_text(
        '{"user_input": "Q", "response": "A", "reference": "A", "retrieved_contexts": []}\n'
    )
    assert (
        main(
            [
                "rag",
                str(samples),
                "--html",
                str(tmp_path / "rag.html"),
                "-o",
                str(tmp_path / "r.txt"),
            ]
        )
        == 0
    )
    assert _data(tmp_path / "rag.html")["rows"][0][1:4] == ["Q", "A", "A"]


def test_the_command_lines_refuse_what_would_go_wrong(tmp_path, capsys):
    files = _files(tmp_path)
    saved = tmp_path / "runs.json"
    main(
        [
            "run",
            str(files["qrels"]),
            str(files["a"]),
            str(files["b"]),
            "--format",
            "json",
            "-o",
            str(saved),
        ]
    )
    capsys.readouterr()
    # A page name that is no .html cannot replace an input by a slip of the command line.
    assert main(["run", str(files["qrels"]), str(files["a"]), "--html", str(files["b"])]) == 2
    assert "ending in .html" in capsys.readouterr().err
    assert (
        main(
            [
                "report",
                str(saved),
                "-o",
                str(tmp_path / "x.html"),
                "--run",
                str(files["a"]),
                "--qrels",
                str(files["qrels"]),
            ]
        )
        == 2
    )
    assert "one --run per report" in capsys.readouterr().err
    assert (
        main(
            [
                "report",
                str(saved),
                "-o",
                str(tmp_path / "x.html"),
                "--run",
                str(files["a"]),
                "--run",
                str(files["b"]),
            ]
        )
        == 2
    )
    assert "--run needs --qrels" in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()


def test_retrieval_passes_its_dataset_and_saved_run_to_the_page(tmp_path, monkeypatch):
    from ef.evaluation import write_beir

    corpus = {"d1": "Sort the items of a list.", "d2": "Open a file.", "d3": "A sorted copy."}
    write_beir(
        tmp_path / "tiny",
        corpus,
        {"q1": "sort a list", "q2": "open a file"},
        {"q1": {"d1": 2.0, "d3": 1.0}, "q2": {"d2": 1.0}},
    )
    name = f"html_retriever_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(
        "def search(query, *, limit=10):\n"
        "    return {'sort a list': ['d2', 'd1'], 'open a file': ['d2']}[query][:limit]\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    page = tmp_path / "retrieval.html"
    assert (
        main(
            [
                "retrieval",
                str(tmp_path / "tiny"),
                "--retriever",
                f"{name}:search",
                "--save-run",
                str(tmp_path / "saved.run"),
                "--html",
                str(page),
                "--no-progress",
                "-o",
                str(tmp_path / "out.txt"),
            ]
        )
        == 0
    )
    sys.modules.pop(name, None)
    data = _data(page)
    assert data["drilldowns"]["q1"]["ranked"] == [["d2", None], ["d1", 2.0]]
    assert data["drilldowns"]["q1"]["missed"] == [["d3", 1.0, None]]
    assert data["snippets"] == {"d1": corpus["d1"], "d2": corpus["d2"], "d3": corpus["d3"]}
    assert [row[:2] for row in data["rows"]] == [["q1", "sort a list"], ["q2", "open a file"]]
    # The same page from the saved report, the saved run and the dataset folder.
    (tmp_path / "report.json").write_text(
        json.dumps(
            evaluate_run(
                read_trec_run(tmp_path / "saved.run"),
                {"q1": {"d1": 2.0, "d3": 1.0}, "q2": {"d2": 1.0}},
            ).to_dict()
        )
    )
    again = tmp_path / "again.html"
    assert (
        main(
            [
                "report",
                str(tmp_path / "report.json"),
                "-o",
                str(again),
                "--run",
                str(tmp_path / "saved.run"),
                "--dataset",
                str(tmp_path / "tiny"),
            ]
        )
        == 0
    )
    assert _data(again)["drilldowns"] == data["drilldowns"]
    assert _data(again)["snippets"] == data["snippets"]


def test_retrieval_gives_the_page_its_drill_down_without_save_run(tmp_path, monkeypatch):
    from ef.evaluation import write_beir

    corpus = {"d1": "Sort the items of a list.", "d2": "Open a file.", "d3": "A sorted copy."}
    qrels = {"q1": {"d1": 2.0, "d3": 1.0}, "q2": {"d2": 1.0}}
    write_beir(tmp_path / "tiny", corpus, {"q1": "sort a list", "q2": "open a file"}, qrels)
    name = f"html_retriever_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(
        "def search(query, *, limit=10):\n"
        "    return {'sort a list': ['d2', 'd1'], 'open a file': ['d2']}[query][:limit]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    scratch = tmp_path / "scratch"  # where the rankings are kept until the page is written
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    done = _ef_eval(
        tmp_path, "retrieval", "tiny", "--retriever", f"{name}:search", "--html", "page.html",
        "--no-progress", "-o", "out.txt",
    )  # fmt: skip
    sys.modules.pop(name, None)
    assert done.returncode == 0, done.stderr
    data = _data(tmp_path / "page.html")
    assert data["drilldowns"]["q1"]["ranked"] == [["d2", None], ["d1", 2.0]]
    assert data["drilldowns"]["q1"]["missed"] == [["d3", 1.0, None]]
    assert data["drilldowns"]["q2"]["ranked"] == [["d2", 1.0]]
    assert list(scratch.iterdir()) == []
    assert sorted(path.name for path in tmp_path.iterdir() if path.is_file()) == [
        f"{name}.py",
        "out.txt",
        "page.html",
    ]


def test_to_html_without_a_registered_writer_says_so(tmp_path, report, monkeypatch):
    from ef.evaluation._report import html_hook

    monkeypatch.setattr(html_hook, "_writers", [])
    with pytest.raises(RuntimeError, match="no HTML writer is registered"):
        report.to_html(tmp_path / "e.html")


def test_a_report_without_queries_still_makes_a_page(tmp_path):
    empty = RetrievalEvalReport({}, {}, 0, (10,))
    data = _data(empty.to_html(tmp_path / "empty.html", run={}, qrels={}))
    assert data["rows"] == [] and data["charts"] == {} and data["primary"] is None


def test_a_huge_query_text_is_cut_like_a_snippet(tmp_path, report):
    from ef.evaluation._html.rankings import QUERY_TEXT_LENGTH

    query = next(iter(report.per_query))
    huge = "word " * 4_000_000  # 20 MB
    data = evaluation_page(report, queries={query: huge, "unscored": "not shown"})
    (row,) = [row for row in data["rows"] if row[0] == query]
    assert len(row[1]) == QUERY_TEXT_LENGTH and row[1].endswith(" …")
    assert all(row[1] is None for row in data["rows"] if row[0] != query)
    page = report.to_html(tmp_path / "page.html", queries={query: huge})
    assert page.stat().st_size < 5 * 2**20  # the 20 MB query made a 31 MB page
    comparison = compare({"a": report, "b": report}, baseline="a", tests=("randomization",))
    compared = comparison_page(comparison, queries={query: huge})
    assert max(len(row[1] or "") for row in compared["rows"]) == QUERY_TEXT_LENGTH


@pytest.mark.parametrize("case", ["</script>", "</SCRIPT>", "</ScRiPt >", "< /script>"])
def test_no_inlined_script_can_end_its_element_early(case):
    script = f'const s = "{case}";'
    inlined = render._inline(script)
    assert not re.search(r"</script", inlined, re.IGNORECASE)
    assert inlined.replace("<\\/", "</") == script  # JavaScript reads the same string
    for asset in (render.vega_bundle(), render._inline(render._asset("page.js"))):
        assert not re.search(r"</script", asset, re.IGNORECASE)


def _ef_eval(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return in_process_cli.ef_eval(*args, cwd=cwd)


@pytest.mark.parametrize(
    "metrics",
    ["nDCG@10,R@100", "R@100,nDCG@10", "P(rel=2)@5,ndcg_cut.10", "MRR@10,map@5,Rprec"],
)
def test_html_takes_every_notation_a_command_takes_and_leads_with_the_first(
    tmp_path: Path, metrics: str
) -> None:
    _files(tmp_path)
    first = metrics.split(",")[0]
    compared = _ef_eval(
        tmp_path, "compare", "qrels.txt", "a.run", "b.run", "--baseline", "a.run",
        "--metrics", metrics, "--permutations", "100", "--html", "c.html", "-o", "c.txt",
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    page = _data(tmp_path / "c.html")
    assert page["metrics"] == metrics.split(",") and page["chart_metric"] == first
    assert len(page["charts"]["difference:b.run"]["data"]["values"]) == 3
    for runs, name in ((["a.run", "b.run"], "r.html"), (["a.run"], "one.html")):
        scored = _ef_eval(
            tmp_path, "run", "qrels.txt", *runs, "--metrics", metrics, "--html", name,
            "-o", "r.txt",
        )  # fmt: skip
        assert scored.returncode == 0, scored.stderr
        data = _data(tmp_path / name)
        if len(runs) == 2:
            assert data["metrics"] == metrics.split(",") and data["chart_metric"] == first
        else:
            assert data["primary"] == first


def test_the_headline_of_metrics_at_each_cutoff_is_their_value_at_10(tmp_path: Path) -> None:
    _files(tmp_path)
    scored = _ef_eval(
        tmp_path, "run", "qrels.txt", "a.run", "b.run", "--metrics", "recall,ndcg",
        "--html", "r.html", "-o", "r.txt",
    )  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    assert _data(tmp_path / "r.html")["chart_metric"] == "recall@10"
