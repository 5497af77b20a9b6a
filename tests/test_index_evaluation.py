"""The built-in index inside an evaluation: ``progress=`` as an evaluation option, and the
built-in adapter asking the index for documents without the package importing the engines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ef.evaluation import evaluate_retrieval, evaluate_retrieval_async
from ef.evaluation._running.options import EvaluationOptions
from ef.source_manager import SearchHit, ingest

CORPUS = {f"d{i}": f"topic{i} text" for i in range(12)}
QUERIES = {f"q{i}": f"topic{i}" for i in range(12)}
QRELS = {f"q{i}": {f"d{i}": 1} for i in range(12)}


def test_a_bad_progress_is_refused_by_its_option() -> None:
    with pytest.raises(
        TypeError, match="progress must be True, False, None or a callable; got str"
    ):
        EvaluationOptions(progress="yes")  # type: ignore[arg-type]
    for value in (True, False, None, print):
        assert EvaluationOptions(progress=value).progress is value


def test_the_manifest_never_records_progress() -> None:
    report = evaluate_retrieval(ingest(CORPUS), QRELS, QUERIES, k_values=(1,), progress=False)
    assert "progress" not in report.manifest["parameters"]


def test_progress_false_is_silent(capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.setenv("EF_PROGRESS_INTERVAL", "0")
    evaluate_retrieval(ingest(CORPUS), QRELS, QUERIES, k_values=(10,), progress=False)
    assert capsys.readouterr().err == ""


@pytest.mark.anyio
async def test_the_async_entry_point_shows_progress_lines_too(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EF_PROGRESS_INTERVAL", "0")
    report = await evaluate_retrieval_async(
        ingest(CORPUS), QRELS, QUERIES, k_values=(10,), max_concurrency=3, progress=True
    )
    assert report.metrics["ndcg@10"] == 1.0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("queries: 1/12 queries (8%), ")
    assert lines[-1].startswith("queries: 12/12 queries in ")


def test_a_look_alike_search_is_not_asked_per_document() -> None:
    # Only the built-in index takes per_document=: another corpus with a search method is
    # called as before (passing it the keyword would fail every query).
    index = ingest({"long": " ".join(["filler"] * 40), "short": "filler once"}, segment_size=8)

    class Passages:
        def search(self, query: str, *, limit: int = 10) -> list[SearchHit]:
            return index.search(query, limit=limit)

    qrels, queries = {"q": {"short": 1}}, {"q": "filler"}
    by_segment = evaluate_retrieval(Passages(), qrels, queries, k_values=(2,), limit=2)
    by_document = evaluate_retrieval(index, qrels, queries, k_values=(2,), limit=2)
    assert by_segment.short_rankings == ("q",)  # two segments of one document
    assert by_document.short_rankings == ()
    assert by_document.metrics["recall@2"] == 1.0 > by_segment.metrics["recall@2"]


def test_evaluating_without_an_index_loads_no_index_module(tmp_path: Path) -> None:
    probe = (
        "import json, sys\n"
        "from ef.evaluation import evaluate_retrieval\n"
        "evaluate_retrieval(lambda q: ['d1'], {'q': {'d1': 1}}, {'q': 'x'}, k_values=(1,))\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('ef.'))))\n"
    )
    environment = {**os.environ, "EF_EVALUATION_PLUGINS": ""}
    environment["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "src")
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=100,
        check=True,
    )
    loaded = set(json.loads(result.stdout))
    assert "ef.evaluation._builtins.adapters" in loaded  # the adapter did run
    engines = {"ef._indexing", "ef._segment_index", "ef._bm25_index", "ef._dense_index"}
    assert not loaded & engines
