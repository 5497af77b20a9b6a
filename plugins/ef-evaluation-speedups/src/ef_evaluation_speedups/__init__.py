"""Compiled speed-ups for ef-evaluation: a TREC run file parser, a fusion kernel, a first pass
over plain qrels and a whole-run scoring kernel in C.

Installed, it is found through its entry point and :func:`ef.evaluation.read_trec_run` (and so
``ef-eval run``) reads run files with it, :func:`ef.evaluation.fuse` fuses plain runs with
:func:`fusion_kernel` (every built-in unsupervised method but ``condorcet`` and
``w_condorcet``; see its docstring), an evaluation's plan digests and sorts plain judgements
with :func:`qrels_pass`, and :func:`ef.evaluation.evaluate_run` and
:func:`ef.evaluation.compare` score a run in memory with the five cutoff measures through
:func:`ranking_kernel`; nothing else changes. The parser gives exactly the built-in reader's
result (the same dict, in the same order, with the same float values), and for a line the
built-in reader would reject it steps aside, so the built-in reader reports the error. It
reads the same numbers (ASCII decimals only) and refuses the same lines (longer than
:data:`MAX_LINE_BYTES`), in time linear in the file's size.

>>> import io
>>> parse_trec_run(io.BytesIO(b"q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 0.5 bm25\\n"))
({'q1': {'d1': 2.5, 'd2': 0.5}}, 2, 0)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from ef.evaluation import hookimpl

from ef_evaluation_speedups import _fusion, _qrels, _ranking
from ef_evaluation_speedups._trec_run import MAX_LINE_BYTES, LineError, RunParser, fast_float

__all__ = [
    "COMBINES",
    "MAX_LINE_BYTES",
    "LineError",
    "fast_float",
    "fusion_kernel",
    "parse_trec_run",
    "parse_trec_run_by_query",
    "qrels_pass",
    "ranking_kernel",
]

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
    for _ in _fed(stream, parser, chunk_size):
        pass
    return table, parser.lines, parser.blank


def parse_trec_run_by_query(
    stream: _Readable, *, chunk_size: int = CHUNK_SIZE
) -> Iterator[tuple[str, dict[str, float]]]:
    """Parse a TREC run grouped by query, handing over each query as soon as it is complete.

    The streaming form of :func:`parse_trec_run` (``parse_trec_run.by_query``): each query's
    ``{doc_id: score}`` is the dict :func:`parse_trec_run` would build, handed over once its
    lines end and then forgotten, so memory holds about one chunk and one query.

    :returns: ``(query_id, {doc_id: score})`` per query, in file order.
    :raises ValueError: (a :class:`LineError` for a bad line) at the first line the built-in
        reader would not accept, at a query seen again after another one, and at a doc listed
        twice for a query: the caller lets the built-in reader name the line.

    >>> import io
    >>> run = b"q1 Q0 d1 1 2.5 x\\nq1 Q0 d2 2 0.5 x\\nq2 Q0 d1 1 1 x\\n"
    >>> list(parse_trec_run_by_query(io.BytesIO(run)))
    [('q1', {'d1': 2.5, 'd2': 0.5}), ('q2', {'d1': 1.0})]
    """
    table: dict[str, dict[str, float]] = {}
    parser = RunParser(table)
    handed: set[str] = set()
    docs = 0  # docs in the queries handed over
    for final in _fed(stream, parser, chunk_size):
        if parser.groups != len(handed) + len(table) or not handed.isdisjoint(table):
            raise ValueError("a query comes back after another one: the run is not grouped")
        if parser.lines - parser.blank != docs + sum(map(len, table.values())):
            raise ValueError("a doc is listed twice for a query")
        # The last query may go on in the next chunk: the parser keeps adding to its dict.
        done = list(table) if final else list(table)[:-1]
        for query_id in done:
            scores = table.pop(query_id)
            handed.add(query_id)
            docs += len(scores)
            yield query_id, scores


parse_trec_run.by_query = parse_trec_run_by_query  # type: ignore[attr-defined]


def _fed(stream: _Readable, parser: RunParser, chunk_size: int) -> Iterator[bool]:
    """Feed ``stream`` to ``parser`` chunk by chunk; after each feed, whether it was the last.

    A UTF-8 byte-order mark at the start is dropped; an unfinished line waits for the next
    chunk.
    """
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
            yield True
            return
        pending = data[parser.feed(data) :]
        yield False


@hookimpl
def ef_evaluation_trec_run_parser() -> object:
    """Offer :func:`parse_trec_run` to :func:`ef.evaluation.read_trec_run`, and its streaming
    form (``parse_trec_run.by_query``) to :func:`ef.evaluation.evaluate_run` given a path."""
    return parse_trec_run


COMBINES = frozenset(
    {"total", "sum_times", "sum_over", "sum_times_weights", "max", "min", "median", "borda"}
)
"""The ways :func:`fusion_kernel` combines a doc's values (its ``combine`` argument)."""


def fusion_kernel(
    runs: Sequence[Any],
    *,
    norm: str | None,
    weights: Sequence[float] | None,
    rank_scores: Sequence[float] | None,
    in_rank_order: bool,
    combine: str = "total",
    factors: Sequence[float] | None = None,
) -> dict[str, dict[str, float]] | None:
    """Fuse plain runs in C, as ef.evaluation's built-in fusion methods do, float for float.

    Each query's ranking in each run is put in trec_eval's order (taken as it is when
    ``in_rank_order``), normalised (``norm``: ``None``, ``"min-max"`` or ``"max"``) or replaced
    by ``rank_scores[i]`` at 0-based rank ``i``, multiplied by the run's weight, and combined
    doc by doc; each fused query is in trec_eval's order. ``combine`` says how:

    - ``"total"`` (``sum``, ``wsum``, ``rrf``, ``rbc``): the values added up run after run;
    - ``"sum_times"`` (``mnz``, ``gmnz``, ``isr``, ``log_isr``, ``logn_isr``, ``mixed``):
      Python's ``sum()`` of the values of the runs that retrieved the doc, in run order, times
      ``factors[c - 1]`` for a doc ``c`` runs retrieved; ``"sum_over"`` (``anz``): that sum
      divided by ``factors[c - 1]``;
    - ``"sum_times_weights"`` (``wmnz``): that sum (the values not weighted) times the sum of
      the weights of those runs;
    - ``"max"``, ``"min"``, ``"median"`` (``max``, ``min``, ``med``): Python's ``max()``,
      ``min()`` and ``statistics.median()`` of those values;
    - ``"borda"`` (``bordafuse``, ``w_bordafuse``): Borda points over the query's candidates
      (``c - i`` at rank ``i``, ``(c - n + 1) / 2`` for a doc a run of ``n`` docs missed), times
      the run's weight, added up run after run.

    :returns: ``{query_id: {doc_id: fused score}}``, or ``None`` for input it does not take (a
        run or query that is not a plain ``dict``, an id that is not a ``str``, a score that is
        not a finite ``float`` or ``int``, a fused score that is not finite, ...): ef.evaluation
        then takes its own path, which raises its own error.
    :raises MemoryError: when memory runs out.

    >>> fusion_kernel(
    ...     [{"q1": {"d1": 2.0, "d2": 1.0}}, {"q1": {"d2": 4.0, "d3": 0.0}}],
    ...     norm="min-max", weights=None, rank_scores=None, in_rank_order=False,
    ... )
    {'q1': {'d2': 1.0, 'd1': 1.0, 'd3': 0.0}}
    >>> fusion_kernel(
    ...     [{"q1": {"d1": 2.0, "d2": 1.0}}, {"q1": {"d2": 4.0, "d3": 0.0}}],
    ...     norm="min-max", weights=None, rank_scores=None, in_rank_order=False,
    ...     combine="sum_times", factors=[1.0, 2.0],
    ... )
    {'q1': {'d2': 2.0, 'd1': 1.0, 'd3': 0.0}}
    >>> fusion_kernel([{"q1": {"d1": float("nan")}}, {}], norm=None, weights=None,
    ...               rank_scores=None, in_rank_order=False) is None
    True
    """
    return _fusion.fuse(runs, norm, weights, rank_scores, in_rank_order, combine, factors)


fusion_kernel.combines = COMBINES  # type: ignore[attr-defined]


@hookimpl
def ef_evaluation_fusion_kernel() -> object:
    """Offer :func:`fusion_kernel` to :func:`ef.evaluation.fuse` and
    :func:`ef.evaluation.optimize_fusion`."""
    return fusion_kernel


def qrels_pass(qrels: Any) -> tuple[bytes, dict[str, list[float]]] | None:
    """``marshal.dumps(qrels, 2)`` and each query's ideal grades, in one walk over plain qrels.

    The ideal grades of a query are its positive grades, descending, in a stable sort (equal
    grades keep their judgement order; ``1`` and ``1.0`` stay the objects they are), as
    ef.evaluation's ``plain_ideals`` builds them, queries in qrels order.

    :returns: ``(written, {query_id: ideal grades})``, or ``None`` for qrels it does not take:
        anything but a ``dict`` of ``dict`` with exact ``str`` ids (with a UTF-8 form: no lone
        surrogate) and exact ``float`` or ``int`` grades, finite, an int within ``±2**53``,
        the grades' absolute values adding up to less than ``2**1023`` (beyond, a sum may
        overflow, which ef.evaluation checks itself). ef.evaluation then digests, checks and
        sorts the qrels itself.
    :raises MemoryError: when memory runs out.

    >>> import marshal
    >>> qrels = {"q1": {"d1": 1, "d2": 2.0, "d3": 0, "d4": 1.0}, "q2": {"d1": -1}}
    >>> written, ideals = qrels_pass(qrels)
    >>> written == marshal.dumps(qrels, 2), ideals
    (True, {'q1': [2.0, 1, 1.0], 'q2': []})
    >>> qrels_pass({"q1": {"d1": True}}) is None
    True
    """
    return _qrels.qrels_pass(qrels)


@hookimpl
def ef_evaluation_qrels_pass() -> object:
    """Offer :func:`qrels_pass` to the plan of every evaluation (:func:`ef.evaluation.evaluate`,
    :func:`ef.evaluation.evaluate_run`)."""
    return qrels_pass


def ranking_kernel(
    run: Any,
    qrels: Any,
    ideals: Any,
    query_ids: list[str],
    ks: tuple[int, ...],
    picks: tuple[int, ...],
    keys: tuple[str, ...],
    frozen: type,
    distinct: bool = False,
) -> tuple[list[dict[str, float] | None], list[int]] | None:
    """ef.evaluation's built-in cutoff measures of every query of a run, in C, float for float.

    Each query of ``query_ids`` is scored from its entry in ``run`` (an exact ``dict``): a
    ``list`` of ``str`` doc ids, best first (a repeated id keeps its first rank), or a
    ``{doc_id: score}`` ``dict`` of exact ``float`` or ``int`` scores, ranked as trec_eval orders
    it (score descending, ties by doc id descending) without being ordered; no entry scores 0.
    The relevant ids are those graded ``> 0`` in ``qrels[query_id]``; ``ideals[query_id]`` is
    the query's positive grades, descending. Five measures are computed at every cutoff of
    ``ks`` (ascending): 0 nDCG, 1 recall, 2 precision, 3 reciprocal rank, 4 AP; each key of
    ``keys`` gets the value ``picks`` names for it, ``measure * len(ks) + the cutoff's index``,
    in a new ``frozen`` (a ``dict`` subclass); every query scoring 0 shares one. (Below, q1
    ranks d1 second once the repeated d2 is dropped; q2's tie puts d3, the larger id, first.)

    :param distinct: a ranking's depth is its distinct ids, not its length.
    :returns: ``(values, depths)`` — per query its values, or ``None`` where it declines the
        query (an entry of another type, an id that is not a ``str``, a NaN score, an int
        beyond ``±2**53``), and its entry's length — or ``None`` for a call it declines (a run
        that is not a ``dict``, a cutoff beyond ``2**53``, a pick out of range).
    :raises MemoryError: when memory runs out.

    >>> values, depths = ranking_kernel(
    ...     {"q1": ["d2", "d1", "d2"], "q2": {"d1": 0.5, "d3": 0.5}},
    ...     {"q1": {"d1": 2, "d3": 1}, "q2": {"d3": 1}},
    ...     {"q1": [2, 1], "q2": [1]},
    ...     ["q1", "q2"], (1, 2), (2, 3, 6, 7), ("recall@1", "recall@2", "mrr@1", "mrr@2"), dict,
    ... )
    >>> values, depths
    ([{'recall@1': 0.0, 'recall@2': 0.5, 'mrr@1': 0.0, 'mrr@2': 0.5}, \
{'recall@1': 1.0, 'recall@2': 1.0, 'mrr@1': 1.0, 'mrr@2': 1.0}], [3, 2])
    """
    return _ranking.score_run(run, qrels, ideals, query_ids, ks, picks, keys, frozen, distinct)


@hookimpl
def ef_evaluation_ranking_kernel() -> object:
    """Offer :func:`ranking_kernel` to :func:`ef.evaluation.evaluate_run`, which scores whole
    runs."""
    return ranking_kernel
