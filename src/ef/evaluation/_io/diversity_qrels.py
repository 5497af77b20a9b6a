"""TREC Web track diversity qrels: lines ``topic subtopic doc grade``, read per subtopic.

The same four columns as ordinary TREC qrels, but the second is the subtopic a document is
judged for, not an ignored iteration: a document appears once per subtopic. ndeval reads this
format; so does :func:`read_diversity_qrels`, into the judgements the diversity measures
(``alpha_nDCG@k``, ``ERR_IA@k``, ``NRBP``, ``P_IA@k``, ``StRecall@k`` …) read, which every other
measure reads as ordinary qrels (a document's grade: its largest over the subtopics).
"""

from __future__ import annotations

from ef.evaluation._exceptions import DatasetFormatError
from ef.evaluation._io.files import PathArg, open_text, rereadable
from ef.evaluation._io.lines import (
    MAX_TREC_LINE,
    NUMBER_EXPECTED,
    bounded_lines,
    check_length,
    number_problem,
    read_number,
)
from ef.evaluation._scoring.measures.subtopics import SubtopicJudgements

__all__ = ["DIVERSITY_QRELS_LINE", "read_diversity_qrels"]

DIVERSITY_QRELS_LINE = "4 whitespace-separated columns 'topic subtopic doc-id grade'"


def read_diversity_qrels(path: PathArg) -> dict[str, SubtopicJudgements]:
    """Read TREC Web track diversity qrels (``topic subtopic doc grade``, as ndeval reads them).

    Each query's judgements are a :class:`SubtopicJudgements`: ``{doc_id: grade}`` as every
    measure reads judgements (a document's largest grade over its subtopics), with the grades
    per subtopic for the diversity measures. Blank lines are skipped; ids are kept as written
    (ndeval reads only numeric topics and subtopics, ef any id).

    :param path: the qrels file (gzip-compressed too); a pipe is copied once, to be read again.
    :raises FileNotFoundError: if ``path`` does not exist.
    :raises DatasetFormatError: naming the file and line, for a line without 4 columns, a grade
        that is no number, or a (topic, subtopic, doc) judged twice (naming the first line).

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "qrels.txt")
    ...     _ = path.write_text("51 1 d1 1\\n51 2 d1 0\\n51 2 d2 1\\n")
    ...     qrels = read_diversity_qrels(path)
    >>> dict(qrels['51']), qrels['51'].by_doc
    ({'d1': 1.0, 'd2': 1.0}, {'d1': {'1': 1.0, '2': 0.0}, 'd2': {'2': 1.0}})
    """
    with rereadable(path) as source:
        return _read(source)


def _read(path: PathArg) -> dict[str, SubtopicJudgements]:
    table: dict[str, dict[str, dict[str, float]]] = {}
    first_line: dict[tuple[str, str, str], int] = {}
    with open_text(path) as text:
        for number, line in enumerate(bounded_lines(text, MAX_TREC_LINE), 1):
            if len(line) > MAX_TREC_LINE // 4:
                check_length(path, number, line, MAX_TREC_LINE)
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 4:
                problem = f"found {len(parts)} columns"
                raise DatasetFormatError(path, number, problem, DIVERSITY_QRELS_LINE)
            topic, subtopic, doc, written = parts
            grade = read_number(written)
            if grade is None:
                raise DatasetFormatError(
                    path, number, number_problem("grade", written), NUMBER_EXPECTED
                )
            seen = first_line.setdefault((topic, subtopic, doc), number)
            if seen != number:
                raise DatasetFormatError(
                    path,
                    number,
                    f"doc {doc!r} judged again for topic {topic!r}, subtopic {subtopic!r} "
                    f"(first on line {seen})",
                    "each (topic, subtopic, doc) once",
                )
            table.setdefault(topic, {}).setdefault(doc, {})[subtopic] = grade
    return {topic: SubtopicJudgements(by_doc) for topic, by_doc in table.items()}
