"""Diversity qrels fingerprint with their subtopics: a report's manifest and a journal tell apart
two qrels that differ only in which subtopic a document is judged for."""

from __future__ import annotations

from pathlib import Path

import pytest

from ef.evaluation import (
    JournalMismatchError,
    evaluate_retrieval,
    evaluate_run,
    read_diversity_qrels,
    subtopic_judgements,
)

# Both judge d1 and d2 relevant with grade 1 for q1: the same ordinary judgements, other
# subtopics (A: one subtopic each; B: both documents for subtopic 1).
A = {"q1": {"1": {"d1": 1, "d2": 0}, "2": {"d1": 0, "d2": 1}}}
B = {"q1": {"1": {"d1": 1, "d2": 1}, "2": {"d1": 0, "d2": 0}}}
RUN = {"q1": {"d1": 2.0, "d2": 1.0}}


def _qrels_digest(qrels: object) -> str:
    report = evaluate_run(RUN, qrels, metrics=["P@1"])  # type: ignore[arg-type]
    return str(report.manifest["fingerprints"]["qrels"])


def test_qrels_differing_only_in_subtopics_have_other_fingerprints() -> None:
    a, b = subtopic_judgements(A), subtopic_judgements(B)
    assert {q: dict(j) for q, j in a.items()} == {q: dict(j) for q, j in b.items()}
    # The difference matters: subtopic recall reads it.
    strecall = [evaluate_run(RUN, q, metrics=["StRecall@1"]).metrics["StRecall@1"] for q in (a, b)]
    assert strecall[0] != strecall[1]
    assert _qrels_digest(a) != _qrels_digest(b)
    # Equal judgements, however built, fingerprint alike; the ordinary view is other qrels.
    assert _qrels_digest(a) == _qrels_digest(subtopic_judgements(A))
    assert _qrels_digest(a) != _qrels_digest({q: dict(j) for q, j in a.items()})


def test_a_file_read_twice_fingerprints_alike_and_a_changed_subtopic_does_not(
    tmp_path: Path,
) -> None:
    lines = ["q1 1 d1 1", "q1 1 d2 0", "q1 2 d1 0", "q1 2 d2 1"]
    (tmp_path / "a.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "b.txt").write_text("\n".join(lines).replace("q1 1 d2 0", "q1 3 d2 0") + "\n")
    first, again = (read_diversity_qrels(tmp_path / "a.txt") for _ in range(2))
    other = read_diversity_qrels(tmp_path / "b.txt")
    assert _qrels_digest(first) == _qrels_digest(again)
    assert _qrels_digest(first) != _qrels_digest(other)


def test_a_journal_written_with_other_subtopics_is_refused(tmp_path: Path) -> None:
    def retriever(query: str, *, limit: int = 10) -> list[str]:
        return ["d1", "d2"][:limit]

    journal = tmp_path / "run.jsonl"
    queries = {"q1": "text"}
    evaluate_retrieval(retriever, subtopic_judgements(A), queries, journal=journal)
    evaluate_retrieval(retriever, subtopic_judgements(A), queries, journal=journal)  # resumes
    with pytest.raises(JournalMismatchError, match="written for another evaluation"):
        evaluate_retrieval(retriever, subtopic_judgements(B), queries, journal=journal)
