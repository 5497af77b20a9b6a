"""Resumable evaluation journals: one JSON line per finished query, appended and flushed.

The first line is a header carrying the fingerprint of what determines retrieval — the qrels,
the queries, the retriever's identity and ``limit`` — but not the scoring parameters, so a
journal can be re-scored with other metrics or cutoffs (up to its ``limit``) without retrieving
again. Each further line is a finished query: its ranked source doc ids (with scores when the
retriever gave them), latency and attempts, or its failure. A journal cut off mid-line by a
crash is read up to its last complete record, and the partial line is dropped before appending.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import attrs

from ef.evaluation._formats import DatasetFormatError
from ef.evaluation._reports import QueryFailure

__all__ = ["Journal", "JournalEntry", "JournalMismatchError", "journal_to_trec_run"]

FORMAT_VERSION = 1


class JournalMismatchError(ValueError):
    """The journal was written for another evaluation (other inputs, retriever or limit)."""


@attrs.frozen
class JournalEntry:
    """One finished query as the journal holds it."""

    query_id: str
    ranked: tuple[str, ...] = ()
    scores: tuple[float, ...] | None = None
    retrieved: int | None = None
    latency: float | None = None
    attempts: int = 1
    failure: QueryFailure | None = None

    def to_json(self) -> str:
        record: dict[str, Any] = {"query_id": self.query_id}
        if self.failure is not None:
            record["failure"] = attrs.asdict(self.failure)
        else:
            record["ranked"] = list(self.ranked)
            record["scores"] = None if self.scores is None else list(self.scores)
            record["retrieved"] = self.retrieved
        record["latency"] = self.latency
        record["attempts"] = self.attempts
        return json.dumps(record, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> JournalEntry:
        failure = record.get("failure")
        scores = record.get("scores")
        return cls(
            query_id=str(record["query_id"]),
            ranked=tuple(record.get("ranked") or ()),
            scores=None if scores is None else tuple(float(s) for s in scores),
            retrieved=record.get("retrieved"),
            latency=record.get("latency"),
            attempts=int(record.get("attempts", 1)),
            failure=None if failure is None else QueryFailure(**failure),
        )


class Journal:
    """An append-only JSONL journal bound to one evaluation's fingerprint.

    :param path: the journal file; created with its header when absent.
    :param fingerprint: what determines retrieval (see the module docstring).
    :param limit: how many results per query the journal's rankings were retrieved with.
    :param retriever: the retriever's identity, for messages.
    :raises JournalMismatchError: when an existing journal has another fingerprint.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, fingerprint: str, limit: int, retriever: str
    ) -> None:
        self.path = Path(path)
        self.fingerprint = fingerprint
        self.limit = limit
        self.retriever = retriever
        self.entries: dict[str, JournalEntry] = {}
        self._file: TextIO | None = None
        if self.path.exists() and self.path.stat().st_size > 0:
            self._load()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("w", encoding="utf-8") as file:
                file.write(json.dumps(self.header(), ensure_ascii=False) + "\n")

    def header(self) -> dict[str, Any]:
        return {
            "ef_journal": FORMAT_VERSION,
            "fingerprint": self.fingerprint,
            "limit": self.limit,
            "retriever": self.retriever,
        }

    @staticmethod
    def read_header(path: str | os.PathLike[str]) -> dict[str, Any]:
        """The header of the journal at ``path``."""
        with Path(path).open(encoding="utf-8") as file:
            first = file.readline()
        try:
            header = json.loads(first)
        except json.JSONDecodeError:
            header = None
        if not isinstance(header, dict) or "ef_journal" not in header:
            raise DatasetFormatError(
                path, 1, "not an ef evaluation journal header", 'a JSON object with "ef_journal"'
            )
        return header

    def _load(self) -> None:
        header = self.read_header(self.path)
        if header.get("fingerprint") != self.fingerprint:
            raise JournalMismatchError(
                f"{self.path}: this journal was written for another evaluation "
                f"(retriever {header.get('retriever')!r}, limit {header.get('limit')}); "
                f"this one is retriever {self.retriever!r}, limit {self.limit}, and its qrels, "
                "queries, retriever or limit differ. Use a new journal path."
            )
        with self.path.open("rb") as file:
            data = file.read()
        complete = data[: data.rfind(b"\n") + 1]
        if len(complete) != len(data):
            # A crash cut the last record off mid-line: drop it so appends start clean.
            with self.path.open("r+b") as file:
                file.truncate(len(complete))
        for number, line in enumerate(complete.decode("utf-8").splitlines()[1:], start=2):
            if not line.strip():
                continue
            try:
                entry = JournalEntry.from_record(json.loads(line))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
                raise DatasetFormatError(
                    self.path,
                    number,
                    f"bad journal record ({error})",
                    "a JSON object with query_id and ranked or failure",
                ) from error
            self.entries[entry.query_id] = entry

    def finished(self) -> dict[str, JournalEntry]:
        """The queries that were retrieved successfully (failed ones are retried)."""
        return {q: e for q, e in self.entries.items() if e.failure is None}

    def append(self, entry: JournalEntry) -> None:
        """Append one record and flush it to the operating system."""
        if self._file is None:
            self._file = self.path.open("a", encoding="utf-8")
        self._file.write(entry.to_json() + "\n")
        self._file.flush()
        self.entries[entry.query_id] = entry

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _strictly_decreasing(scores: Sequence[float]) -> bool:
    return all(a > b for a, b in itertools.pairwise(scores))


def journal_to_trec_run(
    journal: str | os.PathLike[str], path: str | os.PathLike[str], *, tag: str = "ef"
) -> int:
    """Write the rankings a journal holds as a TREC run file; returns the number of queries.

    Scores reproduce the evaluated ranking under trec_eval's ordering (score descending, ties
    by doc id descending): the retriever's scores when they are strictly decreasing, otherwise
    ``n - rank``.

    :param journal: the journal file.
    :param path: the run file to write (``.gz`` compresses).
    :param tag: the run tag column.
    """
    from ef.evaluation._trec import write_trec_run

    header = Journal.read_header(journal)
    loaded = Journal(
        journal,
        fingerprint=header["fingerprint"],
        limit=header["limit"],
        retriever=header.get("retriever", ""),
    )
    run: dict[str, dict[str, float]] = {}
    for query_id, entry in loaded.finished().items():
        scores = entry.scores
        if scores is None or not _strictly_decreasing(scores):
            scores = tuple(float(len(entry.ranked) - i) for i in range(len(entry.ranked)))
        run[query_id] = dict(zip(entry.ranked, scores, strict=True))
    write_trec_run(path, run, tag=tag)
    return len(run)
