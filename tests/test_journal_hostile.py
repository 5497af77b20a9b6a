"""Journals that were cut, damaged, edited, shared or starved of disk space lose no result."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ef.evaluation import (
    DatasetFormatError,
    evaluate_retrieval,
    evaluate_run,
    journal_to_trec_run,
    read_trec_run,
)
from ef.evaluation._running.journal import Journal, JournalEntry
from ef.segments import Segment
from ef.source_manager import SearchHit

N = 12
QRELS = {f"q{i}": {f"d{i}": 1.0, f"d{(i + 3) % N}": 2.0} for i in range(N)}
QUERIES = {f"q{i}": f"text {i}" for i in range(N)}
RUN = {f"q{i}": [f"d{(i * 5 + j) % N}" for j in range(10)] for i in range(N)}


class Counting:
    """A retriever scoring 1/rank that counts its calls per query."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def __call__(self, query: str, *, limit: int = 10) -> list[SearchHit]:
        query_id = f"q{query.split()[1]}"
        self.calls[query_id] = self.calls.get(query_id, 0) + 1
        return [SearchHit(Segment(d, ""), 1.0 / (r + 1)) for r, d in enumerate(RUN[query_id])][
            :limit
        ]


def evaluate(journal: Path, retriever: Counting | None = None, **options: object):  # type: ignore[no-untyped-def]
    return evaluate_retrieval(
        retriever or Counting(), QRELS, QUERIES, k_values=(1, 10), journal=journal, **options
    )


def same_report(report, expected) -> bool:  # type: ignore[no-untyped-def]
    return (report.metrics, report.per_query, report.n_queries) == (
        expected.metrics,
        expected.per_query,
        expected.n_queries,
    )


@pytest.fixture
def expected():  # type: ignore[no-untyped-def]
    return evaluate_retrieval(Counting(), QRELS, QUERIES, k_values=(1, 10))


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    """A complete journal of the evaluation."""
    path = tmp_path / "journal.jsonl"
    evaluate(path)
    return path


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


# cut headers


def test_a_header_that_lost_only_its_newline_is_completed(tmp_path: Path, expected) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "journal.jsonl"
    evaluate(path)
    path.write_bytes(lines(path)[0].rstrip(b"\n"))
    first = evaluate(path)
    assert same_report(first, expected)
    assert [json.loads(line)["query_id"] for line in lines(path)[1:]] == list(QRELS)
    again = Counting()
    assert same_report(evaluate(path, again), expected)
    assert again.calls == {}  # the second resume found every query


@pytest.mark.parametrize("limit", [None, 10])
def test_an_empty_journal_is_started_afresh(tmp_path: Path, expected, limit) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "journal.jsonl"
    path.write_bytes(b"")  # killed before the header was written
    assert Journal.read_header(path) == {}
    assert same_report(evaluate(path, limit=limit), expected)
    assert Journal.read_header(path)["limit"] == 10
    again = Counting()
    evaluate(path, again)
    assert again.calls == {}


def test_a_header_cut_mid_way_is_started_afresh(tmp_path: Path, expected) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "journal.jsonl"
    evaluate(path)
    header = lines(path)[0]
    for cut in (1, 14, 30, len(header) - 2):
        path.write_bytes(header[:cut])
        assert Journal.read_header(path) == {}
        assert same_report(evaluate(path), expected)


def test_a_file_that_is_not_a_journal_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"my notes, no newline")
    with pytest.raises(DatasetFormatError, match=r"notes.txt:1: not an ef evaluation journal"):
        evaluate(path)
    assert path.read_bytes() == b"my notes, no newline"


# damaged and edited records


def _record(journal: Path, index: int) -> dict:  # type: ignore[type-arg]
    return json.loads(lines(journal)[index])


CORRUPT = {
    "invalid UTF-8": b'{"query_id":"q1","ranked":["d\xff"]}',
    "an array": b'["q1", ["d1"]]',
    "a string": b'"q1"',
    "null": b"null",
    "an object in ranked": b'{"query_id":"q1","ranked":[{"id":"d1"}]}',
    "a string in retrieved": b'{"query_id":"q1","ranked":["d1"],"retrieved":"10"}',
    "deep nesting": b'{"query_id":"q1","ranked":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "a huge integer": b'{"query_id":"q1","ranked":[],"retrieved":' + b"9" * 5000 + b"}",
    "a repeated doc id": b'{"query_id":"q1","ranked":["d1","d2","d1"]}',
    "NaN latency": b'{"query_id":"q1","ranked":["d1"],"latency":NaN}',
    "an overflowing latency": b'{"query_id":"q1","ranked":["d1"],"latency":1e999}',
    "a text latency": b'{"query_id":"q1","ranked":["d1"],"latency":"fast"}',
    "an_infinite_score": b'{"query_id":"q1","ranked":["d1"],"scores":[1e999]}',
    "scores of another length": b'{"query_id":"q1","ranked":["d1","d2"],"scores":[1.0]}',
    "a numeric query id": b'{"query_id":1,"ranked":["d1"]}',
    "a ranking longer than the limit": b'{"query_id":"q1","ranked":['
    + b",".join(b'"x%d"' % i for i in range(11))
    + b"]}",
    "a bad failure": b'{"query_id":"q1","failure":{"error_type":"E","message":"m"}}',
    "a lone surrogate": b'{"query_id":"q1","ranked":["\\udc80"]}',
    "a damaged checksum": b'{"query_id":"q1","ranked":["d1"],"crc":1}',
}


@pytest.mark.parametrize("kind", list(CORRUPT))
def test_a_corrupt_middle_record_is_refused_with_file_and_line(journal: Path, kind: str) -> None:
    original = lines(journal)
    damaged = [*original[:3], CORRUPT[kind] + b"\n", *original[3:]]
    journal.write_bytes(b"".join(damaged))
    before = journal.read_bytes()
    for attempt in (lambda: evaluate(journal), lambda: journal_to_trec_run(journal, os.devnull)):
        with pytest.raises(DatasetFormatError) as caught:
            attempt()
        assert (caught.value.path, caught.value.line) == (str(journal), 4)
        assert str(caught.value).startswith(f"{journal}:4: bad journal record: ")
    assert journal.read_bytes() == before  # refusing never modifies


def test_an_edited_record_fails_its_checksum(journal: Path) -> None:
    edited = lines(journal)
    edited[2] = edited[2].replace(b'"d', b'"x', 1)
    journal.write_bytes(b"".join(edited))
    with pytest.raises(DatasetFormatError, match=r":3: bad journal record: its checksum does not"):
        evaluate(journal)


def test_an_edited_header_fails_its_checksum(journal: Path) -> None:
    edited = lines(journal)
    edited[0] = edited[0].replace(b'"limit": 10', b'"limit": 11')
    journal.write_bytes(b"".join(edited))
    with pytest.raises(DatasetFormatError, match=r":1: bad journal header: its checksum does not"):
        Journal.read_header(journal)


def test_records_without_a_checksum_are_read(journal: Path, expected) -> None:  # type: ignore[no-untyped-def]
    # What earlier versions wrote: the same records, no "crc" member.
    stripped = [lines(journal)[0]]
    for line in lines(journal)[1:]:
        record = json.loads(line)
        del record["crc"]
        stripped.append(json.dumps(record).encode() + b"\n")
    journal.write_bytes(b"".join(stripped))
    again = Counting()
    assert same_report(evaluate(journal, again), expected)
    assert again.calls == {}


def test_a_whole_last_record_without_its_newline_is_kept(journal: Path, expected) -> None:  # type: ignore[no-untyped-def]
    journal.write_bytes(journal.read_bytes().rstrip(b"\n"))
    again = Counting()
    assert same_report(evaluate(journal, again), expected)
    assert again.calls == {}
    # The next record starts on a line of its own.
    _append(journal, JournalEntry("extra", ("d1",)))
    assert [json.loads(line)["query_id"] for line in lines(journal)[1:]] == [*QRELS, "extra"]


def test_a_cut_record_is_cut_off_before_the_next_one(journal: Path) -> None:
    journal.write_bytes(journal.read_bytes()[:-20])
    _append(journal, JournalEntry("extra", ("d1",)))
    assert [json.loads(line)["query_id"] for line in lines(journal)[1:]] == [
        *list(QRELS)[:-1],
        "extra",
    ]


def _append(path: Path, entry: JournalEntry) -> None:
    header = Journal.read_header(path)
    opened = Journal(path, fingerprint=header["fingerprint"], limit=header["limit"], retriever="r")
    opened.append(entry)
    opened.close()


def test_a_finished_journal_is_rescored_on_a_read_only_disk(journal: Path, tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    shutil.copy(journal, folder / "journal.jsonl")
    # Cut off its last newline too: reading it needs no repair.
    (folder / "journal.jsonl").write_bytes(journal.read_bytes().rstrip(b"\n"))
    mounted = _read_only_mount(folder)
    try:
        again = Counting()
        rescored = evaluate_retrieval(
            again,
            QRELS,
            QUERIES,
            k_values=(3,),
            metrics=("recall",),
            journal=folder / "journal.jsonl",
        )
        assert again.calls == {} and rescored.n_queries == N
    finally:
        _undo_read_only(folder, mounted)


# reading never modifies


def test_journal_to_trec_run_leaves_a_cut_journal_as_it_is(journal: Path, tmp_path: Path) -> None:
    cut = journal.read_bytes()[:-30]
    journal.write_bytes(cut)
    assert journal_to_trec_run(journal, tmp_path / "run.txt") == N - 1
    assert journal.read_bytes() == cut


def test_journal_to_trec_run_reads_a_read_only_journal(journal: Path, tmp_path: Path) -> None:
    read_only = tmp_path / "ro"
    read_only.mkdir()
    shutil.copy(journal, read_only / "journal.jsonl")
    data = (read_only / "journal.jsonl").read_bytes()[:-30]
    (read_only / "journal.jsonl").write_bytes(data)
    mounted = _read_only_mount(read_only)
    try:
        with pytest.raises(OSError) as caught:
            (read_only / "journal.jsonl").open("r+b")
        assert caught.value.errno in (errno.EROFS, errno.EACCES)
        assert journal_to_trec_run(read_only / "journal.jsonl", tmp_path / "run.txt") == N - 1
        assert (read_only / "journal.jsonl").read_bytes() == data
    finally:
        _undo_read_only(read_only, mounted)


def _read_only_mount(folder: Path) -> bool:
    """Make ``folder`` read-only for real: a read-only bind mount as root, else permissions."""
    if os.geteuid() == 0:
        bind = subprocess.run(["mount", "--bind", str(folder), str(folder)], check=False)
        if bind.returncode == 0:
            subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], check=True)
            return True
    for path in folder.iterdir():
        path.chmod(0o444)
    folder.chmod(0o555)
    return False


def _undo_read_only(folder: Path, mounted: bool) -> None:
    if mounted:
        subprocess.run(["umount", str(folder)], check=True)
    else:
        folder.chmod(0o755)


# saved scores


def _journal_of(tmp_path: Path, hits: dict[str, list[tuple[str, float]]]) -> Path:
    path = tmp_path / "scores.jsonl"

    def retriever(query: str, *, limit: int = 10) -> list[SearchHit]:
        return [SearchHit(Segment(doc, ""), score) for doc, score in hits[query]][:limit]

    evaluate_retrieval(retriever, {q: {"a": 1.0} for q in hits}, {q: q for q in hits}, journal=path)
    return path


def _saved(tmp_path: Path, journal: Path) -> dict[str, list[tuple[str, str]]]:
    journal_to_trec_run(journal, tmp_path / "run.txt")
    saved: dict[str, list[tuple[str, str]]] = {}
    for line in (tmp_path / "run.txt").read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        saved.setdefault(qid, []).append((doc, score))
    return saved


def test_saved_runs_keep_scores_whenever_trec_eval_orders_them_as_evaluated(
    tmp_path: Path,
) -> None:
    hits = {
        "decreasing": [("a", 3.0), ("b", 2.5), ("c", 1.0)],
        "ties_in_trec_eval_order": [("c", 2.0), ("b", 2.0), ("a", 1.0)],
        "ties_in_another_order": [("a", 2.0), ("b", 2.0), ("c", 1.0)],
        "increasing": [("a", 1.0), ("b", 2.0), ("c", 3.0)],
        "an_infinite_score": [("a", float("inf")), ("b", 1.0)],
    }
    journal = _journal_of(tmp_path, hits)
    saved = _saved(tmp_path, journal)
    assert saved == {
        "decreasing": [("a", "3"), ("b", "2.5"), ("c", "1")],
        "ties_in_trec_eval_order": [("c", "2"), ("b", "2"), ("a", "1")],
        "ties_in_another_order": [("a", "3"), ("b", "2"), ("c", "1")],
        "increasing": [("a", "3"), ("b", "2"), ("c", "1")],
        "an_infinite_score": [("a", "2"), ("b", "1")],
    }
    # Whatever the scores, trec_eval's order of the saved run is the evaluated ranking.
    run = read_trec_run(tmp_path / "run.txt")
    qrels = {q: {"a": 1.0} for q in hits}
    rankings = {q: [doc for doc, _ in results] for q, results in hits.items()}
    assert evaluate_run(run, qrels).per_query == evaluate_run(rankings, qrels).per_query


# two processes, one journal

HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from ef.evaluation import evaluate_retrieval
    release = Path(sys.argv[2])

    def retriever(query):
        while not release.exists():
            time.sleep(0.01)
        return ["d1"]

    evaluate_retrieval(retriever, {"q1": {"d1": 1.0}}, {"q1": "x"}, journal=sys.argv[1],
                       retriever_id="shared")
    """
)


def test_a_journal_in_use_is_refused_naming_its_holder(tmp_path: Path) -> None:
    path, release = tmp_path / "journal.jsonl", tmp_path / "release"
    script = tmp_path / "holder.py"
    script.write_text(HOLDER)
    holder = subprocess.Popen([sys.executable, str(script), str(path), str(release)])
    try:
        lock = tmp_path / "journal.jsonl.lock"
        deadline = time.monotonic() + 60
        while not (lock.exists() and lock.read_text()) and time.monotonic() < deadline:
            time.sleep(0.01)
        calls: list[str] = []
        with pytest.raises(BlockingIOError) as caught:
            evaluate_retrieval(
                lambda q: calls.append(q) or ["d1"],
                {"q1": {"d1": 1.0}},
                {"q1": "x"},
                journal=path,
                retriever_id="shared",
            )
        assert caught.value.filename == str(path)
        assert f"in use by another evaluation (process {holder.pid} on " in str(caught.value)
        assert calls == []
    finally:
        release.touch()
        assert holder.wait(timeout=60) == 0
    assert not lock.exists()  # released and removed
    report = evaluate_retrieval(
        lambda q: calls.append(q) or ["d1"],
        {"q1": {"d1": 1.0}},
        {"q1": "x"},
        journal=path,
        retriever_id="shared",
    )
    assert calls == [] and report.n_queries == 1  # resumed, nothing retrieved again


def test_the_lock_is_released_when_the_evaluation_fails(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"

    def broken(query: str) -> list[str]:
        raise RuntimeError("down")

    with pytest.raises(Exception, match="down"):
        evaluate_retrieval(broken, QRELS, QUERIES, k_values=(1, 10), journal=path, retriever_id="r")
    assert not (tmp_path / "journal.jsonl.lock").exists()
    assert evaluate(path, retriever_id="r").n_queries == N


# writing fails


def test_a_full_disk_names_the_journal_and_the_query_and_keeps_what_finished(
    small_disk: Path, tmp_path: Path, expected
) -> None:  # type: ignore[no-untyped-def]
    path = small_disk / "journal.jsonl"
    # Each record holds ten 10 kB doc ids: the 1 MiB file system fills up within 12 queries.
    big = {q: [f"{d}-{'x' * 10_000}" for d in ids] for q, ids in RUN.items()}
    qrels = {q: {f"{d}-{'x' * 10_000}": g for d, g in j.items()} for q, j in QRELS.items()}

    def big_retriever(query: str, *, limit: int = 10) -> list[str]:
        return big[f"q{query.split()[1]}"][:limit]

    with pytest.raises(OSError) as caught:
        evaluate_retrieval(
            big_retriever, qrels, QUERIES, k_values=(1, 10), journal=path, retriever_id="big"
        )
    assert caught.value.errno == errno.ENOSPC
    assert caught.value.filename == str(path)
    assert "(writing query 'q" in str(caught.value)
    data = path.read_bytes()
    assert data.endswith(b"\n")  # the failed record was cut off again
    finished = [json.loads(line)["query_id"] for line in data.splitlines()[1:]]
    assert 0 < len(finished) < N
    # With room again, the finished queries are not retrieved twice.
    roomy = tmp_path / "roomy.jsonl"
    roomy.write_bytes(data)
    calls: list[str] = []

    def counting(query: str, *, limit: int = 10) -> list[str]:
        calls.append(f"q{query.split()[1]}")
        return big_retriever(query, limit=limit)

    resumed = evaluate_retrieval(
        counting, qrels, QUERIES, k_values=(1, 10), journal=roomy, retriever_id="big"
    )
    assert sorted(calls) == sorted(set(QRELS) - set(finished))
    assert (
        resumed.per_query
        == evaluate_retrieval(big_retriever, qrels, QUERIES, k_values=(1, 10)).per_query
    )


def test_a_lone_surrogate_doc_id_is_refused_naming_the_query(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"

    def retriever(query: str) -> list[str]:
        return ["d1", "bad\udc80"] if query == "text 4" else ["d1"]

    with pytest.raises(ValueError, match=r"query 'q4': doc id 'bad\\udc80' cannot be written"):
        evaluate_retrieval(retriever, QRELS, QUERIES, journal=path)
    assert all(json.loads(line) for line in path.read_bytes().splitlines())
