"""``save_run=``: an evaluation's rankings kept as a run file, as ``ef-eval --save-run`` keeps them.

The rankings come from the evaluation's journal (the caller's ``journal=``, or a temporary one
removed once the run file is written), so the file holds exactly what was scored, with the
retriever's scores wherever trec_eval's ordering of them gives the evaluated ranking back
(:func:`~ef.evaluation._running.journal.journal_run`, the scores ``journal_to_trec_run``
writes). The file is written in the format its name says (TREC, ``.json``, ``.jsonl``,
``.parquet``, ``.gz`` compressing), as :func:`~ef.evaluation.write_run` tells it, all at once:
a failure leaves no half-written file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import tempfile
from collections.abc import Iterator

import attrs

from ef.evaluation._report.reports import RetrievalEvalReport
from ef.evaluation._running.journal import journal_run

__all__ = ["RunSaver", "run_tag", "saved", "saving_run"]

PathArg = str | os.PathLike[str]


def run_tag(retriever_id: str) -> str:
    """A TREC run tag from the retriever's identity: no whitespace, at most 40 characters.

    >>> run_tag("bm25(corpus=0123456789ab)"), run_tag("my retriever")
    ('bm25(corpus=0123456789ab)', 'my_retriever')
    """
    return re.sub(r"\s+", "_", retriever_id)[:40] or "ef"


class RunSaver:
    """Where an evaluation journals its rankings, and how they become the ``save_run`` file.

    :param save_run: the run file to write.
    :param journal: the caller's journal, or ``None`` for a temporary one.
    """

    def __init__(self, save_run: PathArg, journal: PathArg | None) -> None:
        self.save_run = save_run
        self.temporary: str | None = None
        if journal is None:
            self.temporary = tempfile.mkdtemp(prefix="ef-evaluation-")
            journal = os.path.join(self.temporary, "journal.jsonl")
        self.journal: PathArg = journal

    def write(self, tag: str) -> None:
        """Write the run file from the journal, then remove a temporary journal.

        :raises OSError: or :class:`ValueError` (a doc id TREC cannot hold), with a note saying
            where the rankings are kept and how to write them without retrieving again.
        """
        from ef.evaluation._io.runs import write_run

        try:
            write_run(self.save_run, journal_run(self.journal), tag=tag)
        except (OSError, ValueError) as error:
            error.add_note(
                f"the rankings are kept in the journal {os.fspath(self.journal)}: "
                f"journal_to_trec_run({os.fspath(self.journal)!r}, FILE) writes them, or "
                "evaluate again with journal= that path to retrieve nothing twice"
            )
            self.temporary = None  # kept for the caller
            raise
        self.discard()

    def discard(self) -> None:
        """Remove a temporary journal (the caller's own is always kept)."""
        if self.temporary is not None:
            shutil.rmtree(self.temporary, ignore_errors=True)
            self.temporary = None


@contextlib.contextmanager
def saving_run(save_run: PathArg | None, journal: PathArg | None) -> Iterator[RunSaver | None]:
    """A :class:`RunSaver` for the evaluation's duration, or None without ``save_run``.

    Checked before anything is retrieved: the run file's folder exists, and the run file is
    not the journal. A temporary journal is removed if the evaluation fails.

    :raises FileNotFoundError: naming ``save_run`` when its folder does not exist.
    :raises ValueError: when ``save_run`` is the journal.
    """
    if save_run is None:
        yield None
        return
    from ef.evaluation._io.overwrite import check_not_input

    folder = os.path.dirname(os.path.realpath(save_run))
    if not os.path.isdir(folder):
        raise FileNotFoundError(
            errno.ENOENT,
            f"cannot save the run there: the folder {folder} does not exist",
            os.fspath(save_run),
        )
    if journal is not None:
        check_not_input(save_run, [journal])
    saver = RunSaver(save_run, journal)
    try:
        yield saver
    except BaseException:
        saver.discard()
        raise


def saved(report: RetrievalEvalReport, saver: RunSaver | None) -> RetrievalEvalReport:
    """``report``, once the run file is written, its manifest naming the file (under
    ``run_file``) instead of a temporary journal, which is gone."""
    if saver is None:
        return report
    manifest = {**report.manifest, "run_file": os.fspath(saver.save_run)}
    if saver.temporary is not None:
        manifest.pop("journal", None)
    saver.write(run_tag(str(report.manifest.get("retriever", ""))))
    return attrs.evolve(report, manifest=manifest)
