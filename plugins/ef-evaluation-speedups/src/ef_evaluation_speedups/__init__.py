"""Compiled speed-ups for ef-evaluation: a TREC run file parser in C.

Installed, it is found through its entry point and :func:`ef.evaluation.read_trec_run` (and so
``ef-eval run``) reads run files with it; nothing else changes. It gives exactly the built-in
reader's result (the same dict, in the same order, with the same float values), and for a line
the built-in reader would reject it steps aside, so the built-in reader reports the error. It
reads the same numbers (ASCII decimals only) and refuses the same lines (longer than
:data:`MAX_LINE_BYTES`), in time linear in the file's size.

>>> import io
>>> parse_trec_run(io.BytesIO(b"q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 0.5 bm25\\n"))
({'q1': {'d1': 2.5, 'd2': 0.5}}, 2, 0)
"""

from __future__ import annotations

from typing import Protocol

from ef.evaluation import hookimpl

from ef_evaluation_speedups._trec_run import MAX_LINE_BYTES, LineError, RunParser, fast_float

__all__ = ["MAX_LINE_BYTES", "LineError", "fast_float", "parse_trec_run"]

_BOM = b"\xef\xbb\xbf"
CHUNK_SIZE = 1 << 20


class _Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


def parse_trec_run(
    stream: _Readable, *, chunk_size: int = CHUNK_SIZE
) -> tuple[dict[str, dict[str, float]], int, int]:
    """Parse a TREC run from a byte stream, ``chunk_size`` bytes at a time.

    :param stream: the file's bytes, gzip already undone; a UTF-8 byte-order mark is dropped.
    :returns: ``({query_id: {doc_id: score}}, lines, blank_lines)``.
    :raises LineError: (a :class:`ValueError`) at the first line the built-in reader would not
        accept, its number in ``args[0]``; a line longer than :data:`MAX_LINE_BYTES` as soon as
        that much of it is read, so no more than that is ever held.
    """
    table: dict[str, dict[str, float]] = {}
    parser = RunParser(table)
    pending = b""
    at_start = True
    while True:
        chunk = stream.read(chunk_size)
        data = pending + chunk if pending else chunk
        if at_start:
            if chunk and len(data) < len(_BOM):
                pending = data  # too short to tell whether it starts with a byte-order mark
                continue
            if data.startswith(_BOM):
                data = data[len(_BOM) :]
            at_start = False
        if not chunk:
            parser.feed(data, True)
            return table, parser.lines, parser.blank
        pending = data[parser.feed(data) :]


@hookimpl
def ef_evaluation_trec_run_parser() -> object:
    """Offer :func:`parse_trec_run` to :func:`ef.evaluation.read_trec_run`."""
    return parse_trec_run
