"""RAG samples in JSON Lines files: one :class:`~ef.evaluation.RagSample` object per line."""

from __future__ import annotations

from typing import Any

from ef.evaluation._exceptions import DatasetFormatError
from ef.evaluation._io.files import PathArg, open_text, rereadable
from ef.evaluation._io.lines import MAX_JSONL_LINE, bounded_lines, check_length, load_json_line
from ef.evaluation._json import json_type

__all__ = ["SAMPLE_LINE", "read_rag_samples"]

SAMPLE_LINE = "one JSON object (a RagSample) per line"
"""What each non-blank line of a samples file holds, as error messages say it."""


def read_rag_samples(path: PathArg) -> list[tuple[int, dict[str, Any]]]:
    """Read a JSON Lines file of RAG samples into ``(line number, sample)`` pairs.

    Blank lines are skipped; the line numbers (1-based) let a later error about a sample name
    the line it came from. Each line is strict JSON (no ``NaN``, no lone surrogate, no integer
    of more than 4300 digits, no nesting too deep to decode) of at most 64 MiB, holding a JSON
    object; what the object's fields mean is :func:`evaluate_rag`'s to check. The file may be
    gzip-compressed; a pipe or FIFO is copied once to a temporary file, so an error can still
    name its line.

    :param path: the samples file.
    :returns: every sample with its line number, in file order (empty for an empty file).
    :raises FileNotFoundError: if ``path`` does not exist.
    :raises DatasetFormatError: naming the file and line, for a line that is not strict JSON,
        not a JSON object, too long, or not UTF-8.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "samples.jsonl")
    ...     _ = path.write_text('{"response": "Paris"}\\n\\n{"response": "Rome"}\\n')
    ...     print(read_rag_samples(path))
    [(1, {'response': 'Paris'}), (3, {'response': 'Rome'})]
    """
    with rereadable(path) as source:
        return _read_sample_lines(source)


def _read_sample_lines(path: PathArg) -> list[tuple[int, dict[str, Any]]]:
    samples: list[tuple[int, dict[str, Any]]] = []
    with open_text(path) as lines:
        for number, line in enumerate(bounded_lines(lines, MAX_JSONL_LINE), 1):
            if len(line) > MAX_JSONL_LINE // 4:
                check_length(path, number, line, MAX_JSONL_LINE)
            if not line.strip():
                continue
            record = load_json_line(path, number, line, SAMPLE_LINE)
            if not isinstance(record, dict):
                raise DatasetFormatError(
                    path, number, f"found a JSON {json_type(record)}, not an object", SAMPLE_LINE
                )
            samples.append((number, record))
    return samples
