"""``ef-eval check RETRIEVER --dataset DATASET``: the gate runs a retriever itself.

BM25 on the bundled dataset, and a search service on a real 127.0.0.1 server answering from
BM25's saved rankings (faithfully, or losing every relevant document of one query in four).
The values are pytrec_eval's over the saved run file, read here line by line.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval

from ef.evaluation import read_beir, resolve_builtin
from ef.evaluation.cli import main

DATASET = "builtin:stdlib-docs"
CORPUS, QUERIES, QRELS = read_beir(resolve_builtin(DATASET))
RULES = ["ndcg@10 >= 0.3", 'ndcg@10: fail_if = "significantly_worse"', "recall@10: max_drop = 0.05"]


def gate(*args: str) -> list[str]:
    return ["check", *args, *(arg for rule in RULES for arg in ("--rule", rule))]


def trec_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        query, _, doc, _, score, _ = line.split()
        run.setdefault(query, {})[doc] = float(score)
    return run


@pytest.fixture(scope="module")
def bm25_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """BM25's rankings on the bundled dataset, saved by ``ef-eval retrieval``."""
    folder = tmp_path_factory.mktemp("bm25")
    argv = ["retrieval", DATASET, "--retriever", "bm25", "--no-progress", "--format", "json"]
    argv += ["--save-run", str(folder / "bm25.txt"), "--output", str(folder / "scores.json")]
    assert main(argv) == 0
    return folder / "bm25.txt"


def test_bm25_on_the_bundled_dataset_makes_and_passes_its_baseline(
    bm25_run, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    baseline = tmp_path / "baseline.json"
    assert (
        main(gate("bm25", "--dataset", DATASET, "--baseline", str(baseline), "--update-baseline"))
        == 0
    )
    assert "baseline written" in capsys.readouterr().out
    saved = json.loads(baseline.read_text(encoding="utf-8"))
    qrels = {q: {d: int(g) for d, g in docs.items()} for q, docs in QRELS.items()}
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(trec_run(bm25_run))
    assert saved["per_query"].keys() == expected.keys()
    for query, values in expected.items():
        assert saved["per_query"][query]["ndcg@10"] == pytest.approx(values["ndcg_cut_10"])
    # The retriever again, and its saved run file (judged by --qrels, or by the judgements of
    # --dataset), all pass against the retriever's baseline.
    for run in (
        ["bm25", "--dataset", DATASET],
        [str(bm25_run), "--qrels", DATASET, "--reader", "beir"],
        [str(bm25_run), "--dataset", DATASET],
    ):
        assert main([*gate(*run, "--baseline", str(baseline)), "--format", "json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["passed"] is True
        assert report["n_queries"] == len(expected)
        assert {result["difference"] for result in report["results"]} == {0.0}


def test_a_measure_without_a_cutoff_sees_the_ranking_ef_eval_retrieval_saves(
    bm25_run, tmp_path, capsys, monkeypatch
):
    # The reciprocal rank of the first relevant document, wherever it is: the retriever, run by
    # the gate, ranks as deep as the run ef-eval retrieval saved, so the two are the same report.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    rules = ["--rule", "recip_rank: max_drop = 0", "--baseline", "baseline.json"]
    run_file = ["check", str(bm25_run), "--qrels", DATASET, "--reader", "beir", *rules]
    assert main([*run_file, "--update-baseline"]) == 0
    saved = json.loads(Path("baseline.json").read_text(encoding="utf-8"))
    qrels = {q: {d: int(g) for d, g in docs.items()} for q, docs in QRELS.items()}
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(trec_run(bm25_run))
    assert {q: values["recip_rank"] for q, values in saved["per_query"].items()} == pytest.approx(
        {q: values["recip_rank"] for q, values in expected.items()}
    )
    capsys.readouterr()
    assert main(["check", "bm25", "--dataset", DATASET, *rules, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [result["difference"] for result in report["results"]] == [0.0]


def test_the_gate_shows_no_progress_of_the_retriever_it_runs(tmp_path, capsys, monkeypatch):
    # A progress line every 0 s, were any shown: indexing the corpus, then the queries done.
    monkeypatch.setenv("EF_PROGRESS_INTERVAL", "0")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    argv = gate("bm25", "--dataset", DATASET, "--baseline", "baseline.json", "--update-baseline")
    assert main(argv) == 0
    assert capsys.readouterr() == ("baseline written to baseline.json (40 queries)\n", "")


def test_missing_queries_a_run_file_option_is_passed_over_for_a_retriever(
    tmp_path, capsys, monkeypatch
):
    # A retriever is asked every query: no query of it can be missing, whatever the rule says.
    monkeypatch.chdir(tmp_path)
    argv = gate("bm25", "--dataset", DATASET, "--baseline", "baseline.json", "--update-baseline")
    assert main([*argv, "--missing-queries", "error"]) == 0
    assert json.loads(Path("baseline.json").read_text(encoding="utf-8"))["n_queries"] == 40


def test_a_retriever_needs_a_dataset(tmp_path, capsys):
    code = main(gate("bm25", "--qrels", DATASET, "--baseline", str(tmp_path / "b.json")))
    assert code == 2
    assert "RUN 'bm25' is a retriever: give --dataset" in capsys.readouterr().err


class _Search(BaseHTTPRequestHandler):
    """Answers a query from the rankings set on its server: ``{"hits": [{"doc": id}, ...]}``."""

    def do_POST(self) -> None:
        if self.headers["X-Api-Key"] != "secret":
            self.send_error(401)
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        ranked = self.server.rankings.get(body["query"], [])[: body["limit"]]  # type: ignore[attr-defined]
        payload = json.dumps({"hits": [{"doc": doc} for doc in ranked]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def search_server() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Search)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def test_an_http_retriever_is_gated_against_the_bm25_baseline(
    bm25_run, search_server, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    baseline = tmp_path / "baseline.json"
    argv = gate(str(bm25_run), "--qrels", DATASET, "--reader", "beir", "--baseline", str(baseline))
    assert main([*argv, "--update-baseline"]) == 0
    # In the order trec_eval ranks a run: by score, ties by doc id descending.
    ranked = {
        QUERIES[q]: sorted(docs, key=lambda d: (docs[d], d), reverse=True)
        for q, docs in trec_run(bm25_run).items()
    }
    url = f"http://127.0.0.1:{search_server.server_address[1]}/search"
    http = [
        "--http-results",
        "hits",
        "--http-id-field",
        "doc",
        "--http-header",
        "X-Api-Key: secret",
    ]
    checked = gate(
        url, "--dataset", DATASET, "--baseline", str(baseline), *http, "--format", "json"
    )
    capsys.readouterr()

    search_server.rankings = ranked  # type: ignore[attr-defined]
    assert main(checked) == 0
    report = json.loads(capsys.readouterr().out)
    assert {result["difference"] for result in report["results"]} == {0.0}

    worse = {
        text: [d for d in docs if i % 4 or QRELS[q].get(d, 0) <= 0]
        for i, (q, text) in enumerate(QUERIES.items())
        if (docs := ranked.get(text)) is not None
    }
    search_server.rankings = worse  # type: ignore[attr-defined]
    assert main(checked) == 1
    report = json.loads(capsys.readouterr().out)
    verdicts = {result["rule"]["kind"]: result["verdict"] for result in report["results"]}
    assert verdicts["fail_if"] == "fail"
    assert verdicts["max_drop"] == "fail"

    # A wrong header: the service refuses, and the gate says so as an input error, not a pass.
    assert main([*checked[:-2], "--http-header", "X-Api-Key: wrong"]) == 2
    assert "401" in capsys.readouterr().err
