"""Resumable evaluation journals: one JSON line per finished query, appended and flushed.

The first line is a header carrying the fingerprint of what determines retrieval — the qrels,
the queries, the retriever's identity and ``limit`` — but not the scoring parameters, so a
journal can be re-scored with other metrics or cutoffs (up to its ``limit``) without retrieving
again. Each further line is a finished query: its ranked source doc ids (with scores when the
retriever gave finite ones), latency and attempts, or its failure (:mod:`._journal_records`
holds the format and checks every record read back).

No finished query is lost, and none is retrieved twice:

- a crash that cut the last record mid-line leaves it out (the query is retrieved again), and
  the writer cuts it off before it appends; a whole last record that lost only its newline is
  kept; a file holding only the start of a header (a kill before anything was journaled) is
  started afresh. Repairs wait for the first record appended, so a finished journal can be
  re-scored where it cannot be written;
- a process writing a journal holds an exclusive lock on ``<journal>.lock``, which names it
  (pid and host): a second evaluation on the same journal is refused instead of retrieving
  everything again beside it;
- a failed write (a full disk) names the journal and the query, and is cut back off the file.

Reading — :func:`journal_to_trec_run`, :meth:`Journal.read_header` — never modifies the file.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ef.evaluation._exceptions import JournalMismatchError
from ef.evaluation._redact import redact_url
from ef.evaluation._running.journal_records import (
    JournalEntry,
    header_line,
    parse_header,
    parse_records,
    unfinished_header,
)

__all__ = ["Journal", "JournalEntry", "journal_run", "journal_to_trec_run"]

_MAX_HEADER = 1 << 20


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class _Lock:
    """An exclusive ``flock`` on ``<journal>.lock``, which holds who took it.

    The file is removed on release. A taker checks, once it holds the lock, that the name still
    leads to the file it locked: a releasing holder may have removed it in between. Where no
    lock file can be made (a read-only folder, to re-score a finished journal), the journal
    itself is locked, without saying who holds it.
    """

    def __init__(self, journal: Path) -> None:
        # Imported here so that importing the package stays cheap; fcntl is POSIX only.
        import datetime
        import socket

        self.journal = journal
        self.path: Path | None = journal.with_name(journal.name + ".lock")
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        while True:
            try:
                fd = os.open(self.path, flags, 0o666)
            except OSError as error:
                if error.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                    raise
                self.fd = self._lock_the_journal(error)
                return
            self._take(fd)
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        self.fd = fd
        since = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
        holder = f"process {os.getpid()} on {socket.gethostname()}, since {since}\n"
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder.encode("utf-8", "replace"), 0)

    def _lock_the_journal(self, error: OSError) -> int:
        self.path = None
        try:
            fd = os.open(self.journal, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise error from None
        self._take(fd)
        return fd

    def _take(self, fd: int) -> None:
        import fcntl

        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 400, 0).decode("utf-8", "replace").strip()
            if self.path is None or not holder:
                holder = "a process that has not said who it is"
            os.close(fd)
            where = f"; lock file {self.path}" if self.path is not None else ""
            raise BlockingIOError(
                errno.EWOULDBLOCK,
                f"the journal is in use by another evaluation ({holder}{where}); wait for it "
                "to finish, or give this evaluation another journal",
                os.fspath(self.journal),
            ) from None
        except BaseException:
            os.close(fd)
            raise

    def release(self) -> None:
        if self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
        os.close(self.fd)


class Journal:
    """An append-only JSONL journal bound to one evaluation's fingerprint, locked while open.

    :param path: the journal file; created with its header when absent.
    :param fingerprint: what determines retrieval (see the module docstring).
    :param limit: how many results per query the journal's rankings were retrieved with.
    :param retriever: the retriever's identity, for messages (URL passwords are hidden).
    :raises JournalMismatchError: when an existing journal has another fingerprint.
    :raises JournalCorruptError: for a damaged header or record, naming the file and line.
    :raises BlockingIOError: when another process has the journal open.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, fingerprint: str, limit: int, retriever: str
    ) -> None:
        self.path = Path(path)
        self.fingerprint = fingerprint
        self.limit = limit
        self.retriever = redact_url(retriever)
        self.entries: dict[str, JournalEntry] = {}
        self._fd: int | None = None
        # A repair the file needs before the next record (a newline to finish the last line,
        # or the length to cut a cut-off record back to): made only when something is written,
        # so that a finished journal can be re-scored where it cannot be written.
        self._repair: bytes | int = b""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock: _Lock | None = _Lock(self.path)
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    @staticmethod
    def read_header(path: str | os.PathLike[str]) -> dict[str, Any]:
        """The header of the journal at ``path``, or ``{}`` when it has none yet.

        A file that is empty or holds only the start of a header was stopped before any query
        was journaled: it has no header yet, and a new evaluation starts it afresh.

        :raises JournalCorruptError: if the first line is not a journal header.
        """
        with Path(path).open("rb") as file:
            first = file.readline(_MAX_HEADER)
        if not first.endswith(b"\n") and unfinished_header(first):
            return {}
        return parse_header(path, first)

    def _open(self) -> None:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            data = b""
        end = data.find(b"\n")
        if end < 0 and unfinished_header(data):
            self._start()
            return
        header = parse_header(self.path, data if end < 0 else data[: end + 1])
        self._check(header)
        if end < 0:
            self._repair = b"\n"  # a header that lost its newline
            return
        records = parse_records(self.path, data, end + 1, self.limit)
        self.entries = records.entries
        if records.tail_entry is not None:
            self._repair = b"\n"  # a whole last record that lost its newline
        elif records.tail:
            self._repair = records.complete  # a record cut off mid-line: dropped

    def _start(self) -> None:
        line = header_line(self.fingerprint, self.limit, self.retriever)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
        with self._errors_named("the header"):
            fd = os.open(self.path, flags, 0o666)
            try:
                _write_all(fd, line)
            finally:
                os.close(fd)

    def _check(self, header: dict[str, Any]) -> None:
        if header["fingerprint"] != self.fingerprint:
            raise JournalMismatchError(
                f"{self.path}: this journal was written for another evaluation "
                f"(retriever {header.get('retriever')!r}, limit {header.get('limit')}); "
                f"this one is retriever {self.retriever!r}, limit {self.limit}, and its qrels, "
                "queries, retriever or limit differ. Use a new journal path."
            )

    @contextlib.contextmanager
    def _errors_named(self, what: str) -> Iterator[None]:
        """Re-raise an operating-system error naming the journal and what was being written."""
        try:
            yield
        except OSError as error:
            if error.errno is None:
                raise
            raise OSError(
                error.errno, f"{error.strerror} (writing {what})", os.fspath(self.path)
            ) from None

    def finished(self) -> dict[str, JournalEntry]:
        """The queries that were retrieved successfully (failed ones are retried)."""
        return {q: e for q, e in self.entries.items() if e.failure is None}

    def append(self, entry: JournalEntry) -> None:
        """Append one record and hand it to the operating system.

        :raises ValueError: naming the query, for a doc id UTF-8 cannot encode.
        :raises OSError: naming the journal and the query, when the write fails (what was
            written of the record is cut off again).
        """
        try:
            data = (entry.to_json() + "\n").encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(
                f"query {entry.query_id!r}: {entry.unencodable()} cannot be written to the "
                f"journal {self.path}: it holds a lone surrogate; expected text UTF-8 can encode"
            ) from None
        self._append_bytes(data, what=f"query {entry.query_id!r}")
        self.entries[entry.query_id] = entry

    def _append_bytes(self, data: bytes, *, what: str) -> None:
        with self._errors_named(what):
            if self._fd is None:
                flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
                self._fd = os.open(self.path, flags)
            if isinstance(self._repair, int):
                os.ftruncate(self._fd, self._repair)
                self._repair = b""
            size = os.fstat(self._fd).st_size
            try:
                _write_all(self._fd, self._repair + data)
            except OSError:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, size)  # no partial record left behind
                raise
            self._repair = b""

    def close(self) -> None:
        """Close the file and release the lock."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __del__(self) -> None:
        # A journal dropped unclosed (its evaluation failed while starting) frees its lock.
        with contextlib.suppress(Exception):
            self.close()


def journal_to_trec_run(
    journal: str | os.PathLike[str], path: str | os.PathLike[str], *, tag: str = "ef"
) -> int:
    """Write the rankings a journal holds as a TREC run file; returns the number of queries.

    Scores reproduce the evaluated ranking under trec_eval's ordering (score descending, ties
    by doc id descending): each query keeps the retriever's scores whenever that ordering of
    them gives back the evaluated ranking (ties included, when they are in doc id descending
    order), otherwise it gets ``n - rank``. The journal is only read, never modified (it may be
    read-only, or still being written: its last complete record counts).

    :param journal: the journal file.
    :param path: the run file to write (``.gz`` compresses); replaced only once complete.
    :param tag: the run tag column.
    :raises JournalCorruptError: for a damaged journal, naming the file and line.
    :raises ValueError: when ``path`` is the journal itself (it would be replaced).
    """
    from ef.evaluation._io.overwrite import check_not_input
    from ef.evaluation._io.trec import write_trec_run

    check_not_input(path, [journal])
    run = journal_run(journal)
    write_trec_run(path, run, tag=tag)
    return len(run)


def journal_run(journal: str | os.PathLike[str]) -> dict[str, dict[str, float]]:
    """The scored run a journal holds, ``{query_id: {doc_id: score}}``, with the scores
    :func:`journal_to_trec_run` writes (failed queries left out).

    :raises JournalCorruptError: for a damaged journal, naming the file and line.
    """
    from ef.evaluation._scoring.order import rank_by_score

    data = Path(journal).read_bytes()
    end = data.find(b"\n")
    entries: dict[str, JournalEntry] = {}
    if end >= 0 or not unfinished_header(data):
        header = parse_header(journal, data if end < 0 else data[: end + 1])
        if end >= 0:
            entries = parse_records(journal, data, end + 1, header["limit"]).entries
    run: dict[str, dict[str, float]] = {}
    for query_id, entry in entries.items():
        if entry.failure is not None:
            continue
        ranked, scores = list(entry.ranked), entry.scores
        if scores is None or rank_by_score(dict(zip(ranked, scores, strict=True))) != ranked:
            scores = tuple(float(len(ranked) - i) for i in range(len(ranked)))
        run[query_id] = dict(zip(ranked, scores, strict=True))
    return run
