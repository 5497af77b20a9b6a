"""``evaluate_retrieval(..., save_run=PATH)`` keeps the scored rankings as ``--save-run`` does."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
import pytest
import pytrec_eval

from ef.evaluation import (
    evaluate_retrieval,
    evaluate_retrieval_async,
    read_run,
    read_trec_run,
    write_beir,
)

EF_EVAL = shutil.which("ef-eval", path=str(Path(sys.executable).parent))
CORPUS = {f"d{i}": f"document {i} about topic {i % 7} and {i % 3}" for i in range(40)}
QUERIES = {f"q{i}": f"topic {i % 7} and {i % 3} (#{i})" for i in range(12)}
BY_TEXT = {text: query for query, text in QUERIES.items()}
QRELS = {f"q{i}": {f"d{(i * 5 + j) % 40}": float(j % 3) for j in range(6)} for i in range(12)}
QRELS["q0"]["d0"] = 1.0  # q0 has a positive judgement whatever its grades
SCORES = {
    query: {f"d{(i * 7 + j) % 40}": round(1.0 - j / 25, 6) for j in range(15)}
    for i, query in enumerate(QUERIES)
}
# Tied scores, so that the saved run must keep trec_eval's tie order (doc id descending).
SCORES["q3"] = dict.fromkeys(["d5", "d17", "d2", "d30"], 0.5)


def retriever(query: str, *, limit: int = 10) -> dict[str, float]:
    return SCORES[BY_TEXT[query]]


def oracle(run: dict[str, dict[str, float]], measure: str) -> dict[str, float]:
    """pytrec_eval's per-query values of ``measure`` over ``run`` (0 for a query it lacks)."""
    judged = {q: {d: int(g) for d, g in docs.items()} for q, docs in QRELS.items()}
    scored = pytrec_eval.RelevanceEvaluator(judged, {measure}).evaluate(run)
    key = measure.replace(".", "_")
    return {q: scored.get(q, {}).get(key, 0.0) for q in QRELS}


def test_the_saved_run_scores_as_the_report_under_trec_eval(tmp_path: Path) -> None:
    target = tmp_path / "run.txt"
    report = evaluate_retrieval(
        retriever, QRELS, QUERIES, k_values=(10,), retriever_id="my search v2", save_run=target
    )
    run = read_trec_run(target)
    assert set(run) == set(QRELS)
    values = oracle(run, "ndcg_cut.10")
    assert {q: v["ndcg@10"] for q, v in report.per_query.items()} == pytest.approx(
        {q: values[q] for q in report.per_query}, abs=1e-12
    )
    assert report.manifest["run_file"] == os.fspath(target)
    assert "journal" not in report.manifest  # the temporary journal is gone
    tags = {line.split()[5] for line in target.read_text().splitlines()}
    assert tags == {"my_search_v2"}  # the retriever's identity, without whitespace


def test_the_retrievers_scores_and_tie_order_are_kept(tmp_path: Path) -> None:
    target = tmp_path / "run.txt"
    evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(20,), save_run=target)
    lines = [line.split() for line in target.read_text().splitlines() if line.startswith("q3 ")]
    assert [(doc, float(score)) for _, _, doc, _, score, _ in lines] == [
        ("d5", 0.5),
        ("d30", 0.5),
        ("d2", 0.5),
        ("d17", 0.5),
    ]


@pytest.mark.parametrize("name", ["run.json", "run.jsonl", "run.parquet", "run.txt.gz"])
def test_the_format_is_the_one_its_name_says(tmp_path: Path, name: str) -> None:
    evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(10,), save_run=tmp_path / "run.txt")
    evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(10,), save_run=tmp_path / name)
    assert read_run(tmp_path / name) == read_trec_run(tmp_path / "run.txt")
    if name.endswith(".gz"):
        assert gzip.decompress((tmp_path / name).read_bytes()).decode().startswith("q")


def test_the_async_entry_point_saves_the_same_run(tmp_path: Path) -> None:
    async def search(query: str, *, limit: int = 10) -> dict[str, float]:
        return retriever(query, limit=limit)

    evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(10,), save_run=tmp_path / "a.txt")

    async def main() -> None:
        await evaluate_retrieval_async(
            search, QRELS, QUERIES, k_values=(10,), save_run=tmp_path / "b.txt"
        )

    anyio.run(main)
    assert read_trec_run(tmp_path / "b.txt") == read_trec_run(tmp_path / "a.txt")


def test_the_same_run_as_the_command_lines_save_run(tmp_path: Path) -> None:
    (tmp_path / "fh_save.py").write_text(
        "SCORES = " + repr({QUERIES[q]: s for q, s in SCORES.items()}) + "\n"
        "def search(query, *, limit=10):\n    return SCORES[query]\n"
    )
    write_beir(tmp_path / "data", CORPUS, QUERIES, QRELS)
    assert EF_EVAL is not None
    command = ["retrieval", "data", "--retriever", "fh_save:search", "--k", "10"]
    result = subprocess.run(
        [EF_EVAL, *command, "--save-run", "cli.txt", "--no-progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "EF_EVALUATION_PLUGINS": ""},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(10,), save_run=tmp_path / "py.txt")
    assert read_trec_run(tmp_path / "py.txt") == read_trec_run(tmp_path / "cli.txt")


def test_a_missing_folder_is_refused_before_anything_is_retrieved(tmp_path: Path) -> None:
    calls: list[str] = []

    def counted(query: str, *, limit: int = 10) -> dict[str, float]:
        calls.append(query)
        return retriever(query, limit=limit)

    target = tmp_path / "missing" / "run.txt"
    with pytest.raises(FileNotFoundError, match=r"the folder .*missing does not exist"):
        evaluate_retrieval(counted, QRELS, QUERIES, save_run=target)
    assert calls == []
    with pytest.raises(ValueError, match="would replace the input"):
        evaluate_retrieval(counted, QRELS, QUERIES, journal=tmp_path / "j", save_run=tmp_path / "j")
    assert calls == []


def test_a_run_that_cannot_be_written_keeps_the_old_file_and_the_rankings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    target = tmp_path / "run.txt"
    target.write_text("the old run\n")

    def spaced(query: str, *, limit: int = 10) -> dict[str, float]:
        return {"d 1": 1.0, **retriever(query, limit=limit)}

    with pytest.raises(ValueError, match="d 1") as caught:
        evaluate_retrieval(
            spaced, QRELS, QUERIES, k_values=(10,), retriever_id="spaced", save_run=target
        )
    assert target.read_text() == "the old run\n"
    (note,) = caught.value.__notes__
    journal = Path(note.split("kept in the journal ", 1)[1].split(":", 1)[0])
    assert journal.is_file() and journal.is_relative_to(tmp_path / "tmp")
    # The journal holds every ranking: written as JSON Lines, nothing is retrieved again.
    calls: list[str] = []

    def counted(query: str, *, limit: int = 10) -> dict[str, float]:
        calls.append(query)
        return spaced(query, limit=limit)

    evaluate_retrieval(
        counted,
        QRELS,
        QUERIES,
        k_values=(10,),
        journal=journal,
        retriever_id="spaced",
        save_run=tmp_path / "run.jsonl",
    )
    assert calls == []
    assert all("d 1" in ranking for ranking in read_run(tmp_path / "run.jsonl").values())
    assert journal.is_file()  # the caller's journal is kept


def test_a_temporary_journal_is_removed_once_the_run_is_written_or_the_evaluation_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    evaluate_retrieval(retriever, QRELS, QUERIES, save_run=tmp_path / "run.txt")
    assert list((tmp_path / "tmp").iterdir()) == []

    def broken(query: str, *, limit: int = 10) -> list[str]:
        raise ConnectionError("down")

    with pytest.raises(Exception, match="down"):
        evaluate_retrieval(broken, QRELS, QUERIES, save_run=tmp_path / "other.txt")
    assert list((tmp_path / "tmp").iterdir()) == []
    assert not (tmp_path / "other.txt").exists()
