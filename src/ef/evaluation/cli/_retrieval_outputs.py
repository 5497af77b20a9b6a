"""What ``ef-eval retrieval`` leaves behind: the report first, then the run file, the failures.

Retrieval is the slow part, so nothing it produced is thrown away when a later step fails:

- ``--save-run`` is written from a journal (``--journal``, or a temporary one), in the format its
  name says (TREC, JSON, JSON Lines or Parquet, as :func:`~ef.evaluation.write_run` tells it).
  The report is written first; if the run file then cannot be written (a missing folder, a doc
  id TREC cannot hold, a full disk), the error names the user's path and the journal is kept,
  with the command that writes the run file from it without retrieving again.
- When the evaluation itself stops (a failed query in ``--on-error raise``, Ctrl-C), a
  temporary journal that holds finished queries is kept too, and the error says how to resume.
- ``--on-error record``: the failed queries are listed on standard error (the first few, each
  with its error, and how many in all), in command-line terms.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ef.evaluation import (
    IncompleteEvaluationWarning,
    RetrievalEvalReport,
    journal_to_trec_run,
    read_trec_run,
    redact_url,
    write_run,
)
from ef.evaluation.cli._common import CliError

if TYPE_CHECKING:
    from ef.evaluation import Run

__all__ = ["FAILURES_SHOWN", "RunJournal", "warn_failures"]

FAILURES_SHOWN = 5
"""How many failed queries the warning lists; the JSON report has them all."""
_MESSAGE_WIDTH = 160


class RunJournal:
    """The journal an evaluation writes: the user's ``--journal``, or a temporary one when only
    ``--save-run`` or the page's drill-down needs it (removed once they are written).

    :param journal: ``--journal``, or None.
    :param save_run: ``--save-run``, or None.
    :param rankings: whether the rankings are wanted (``--html``'s drill-down).
    """

    def __init__(
        self, journal: str | None, save_run: str | None, *, rankings: bool = False
    ) -> None:
        self.temporary_folder: str | None = None
        if journal is None and (save_run is not None or rankings):
            self.temporary_folder = tempfile.mkdtemp(prefix="ef-eval-")
            journal = os.path.join(self.temporary_folder, "journal.jsonl")
        self.path = journal
        self.save_run = save_run

    def _finished(self) -> bool:
        """Whether the journal holds at least one record beyond its header."""
        try:
            with open(self.path or "", "rb") as file:
                return sum(1 for line in file if line.strip()) > 1
        except OSError:
            return False

    def hint(self) -> str:
        """Where the rankings are kept, and how to use them without retrieving again."""
        return (
            f"the rankings retrieved so far are kept in {self.path}: rerun with "
            f"'--journal {self.path}' to go on without retrieving them again"
        )

    @contextlib.contextmanager
    def evaluating(self) -> Iterator[None]:
        """Around the evaluation: keep a temporary journal that holds something if it stops."""
        try:
            yield
        except BaseException as error:
            if self.temporary_folder is not None and not self._finished():
                self.discard()
            elif self.path is not None and self._finished():
                if isinstance(error, Exception):
                    error.add_note(self.hint())
                else:
                    print(f"ef-eval: {self.hint()}", file=sys.stderr)
            raise

    def rankings(self, tag: str) -> Run | None:
        """The rankings the journal holds, as a run (None without a journal)."""
        if self.path is None:
            return None
        with tempfile.TemporaryDirectory(prefix="ef-eval-") as folder:
            trec = os.path.join(folder, "run.txt")
            journal_to_trec_run(self.path, trec, tag=tag)
            return read_trec_run(trec)

    def write_run(self, tag: str, run: Run | None = None) -> None:
        """Write ``--save-run`` from the journal, or from its ``run`` already read (after the
        report was written).

        :raises CliError: naming the run file and where the rankings are kept.
        """
        if self.save_run is None or self.path is None:
            return
        try:
            # The file is written in the format of its name.
            write_run(self.save_run, run or self.rankings(tag) or {}, tag=tag)
        except (OSError, ValueError) as error:
            if isinstance(error, OSError) and error.strerror:
                reason = error.strerror
            else:
                reason = str(error)
            raise CliError(
                f"the report was written, but not the run file {self.save_run}: {reason}; "
                f"{self.hint()} (with '--save-run FILE'), or convert it in Python with "
                f"ef.evaluation.journal_to_trec_run({self.path!r}, FILE)"
            ) from error
        self.discard()

    def discard(self) -> None:
        """Remove a temporary journal (the user's own is always kept)."""
        if self.temporary_folder is not None:
            shutil.rmtree(self.temporary_folder, ignore_errors=True)
            self.temporary_folder = None


def _one_line(text: str) -> str:
    text = " ".join(redact_url(text).split())
    return text if len(text) <= _MESSAGE_WIDTH else text[: _MESSAGE_WIDTH - 1] + "…"


def warn_failures(report: RetrievalEvalReport, *, output_format: str) -> None:
    """Warn that queries failed (``--on-error record``), listing the first few and the count.

    :param report: the evaluation's report.
    :param output_format: ``--format``, to say where the full list is.
    """
    failures = report.failures
    if not failures:
        return
    planned = report.n_queries + len(failures)
    plural = "query" if len(failures) == 1 else "queries"
    lines = [f"{len(failures)} of {planned} {plural} failed and are left out of the means:"]
    for failure in failures[:FAILURES_SHOWN]:
        attempts = f"{failure.attempts} attempt{'s' if failure.attempts != 1 else ''}"
        message = f"{failure.error_type}: {failure.message}" if failure.message else ""
        lines.append(
            f"  {failure.query_id}: {_one_line(message or failure.error_type)} ({attempts})"
        )
    if len(failures) > FAILURES_SHOWN:
        lines.append(f"  … and {len(failures) - FAILURES_SHOWN} more")
    if output_format == "json":
        lines.append('  the JSON report lists every failure under "failures"')
    else:
        lines.append('  --format json lists every failure (under "failures")')
    warnings.warn("\n".join(lines), IncompleteEvaluationWarning, stacklevel=2)
