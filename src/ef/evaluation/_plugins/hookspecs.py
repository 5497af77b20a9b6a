"""The hooks a plugin implements (pluggy project ``ef.evaluation``)."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import pluggy

if TYPE_CHECKING:  # a type name only: the hooks know no more of scoring
    from ef.evaluation._scoring.compiled import RankingKernel
    from ef.evaluation._scoring.query_plan import QrelsPass

__all__ = ["PROJECT", "FusionKernel", "TrecRunParser", "hookimpl", "hookspec"]

PROJECT = "ef.evaluation"
"""The pluggy project name, and the entry-point group plugins are installed under."""

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
"""The marker plugin authors put on their hook functions: ``@hookimpl``."""


@hookspec
def ef_evaluation_register_metrics(register: Callable[..., None]) -> None:
    """Register retrieval metrics:
    ``register(name, fn, *, all_cutoffs, cutoff, description, parameters)``.

    ``fn(ranked, relevant, k) -> float``; ``all_cutoffs(summary, ks) -> [float, ...]`` optionally
    gives every cutoff at once from the scoring core's ``RankingSummary``; ``cutoff=False`` marks
    a metric reported without ``@k``, called as ``fn(ranked, relevant)`` on the whole ranking.
    ``parameters={"w": 2.0}`` declares keyword parameters with their defaults: ``name(w=0.5)@10``
    then calls ``fn(ranked, relevant, 10, w=0.5)``.
    """


@hookspec
def ef_evaluation_register_rag_metrics(register: Callable[..., None]) -> None:
    """Register RAG metrics through ``register(name, fn, *, description)``.

    ``fn(sample) -> float``, or ``None`` when the metric does not apply to that sample.
    """


@hookspec
def ef_evaluation_register_dataset_readers(register: Callable[..., None]) -> None:
    """Register dataset readers: ``register(name, reader, *, description="")``."""


@hookspec
def ef_evaluation_register_fusion_methods(register: Callable[..., None]) -> None:
    """Register fusion methods: ``register(name, fn, *, rank_based, weighted, defaults,
    required, train, trained, train_params, grid, aliases, description)``.

    ``fn(rankings, **params) -> {doc_id: score}`` fuses one query: ``rankings`` holds one
    ``{doc_id: score}`` per run, iterated best first (see ``FusionMethod``).
    """


@hookspec
def ef_evaluation_register_normalizations(register: Callable[..., None]) -> None:
    """Register score normalisations: ``register(name, fn, *, order_based, description)``.

    ``fn(rankings) -> [{doc_id: score}, ...]`` normalises one query, one dict per run.
    """


@hookspec
def ef_evaluation_register_report_locations(register: Callable[..., None]) -> None:
    """Register places saved reports are read from: ``register(scheme, fetch, *, description)``.

    ``read_report("scheme:rest")`` (and ``ef-eval check --baseline scheme:rest``) then calls
    ``fetch("rest")``, which returns the bytes of the report's JSON exactly as they were saved,
    or raises an error saying what could not be read and where (a :class:`LookupError` for a
    report that is not there, an :class:`OSError` for a place that cannot be reached). A
    scheme is at least two characters (letters, digits, ``+ . -``, a letter first), so a
    Windows drive letter stays a path.
    """


@hookspec
def ef_evaluation_register_command_extensions(register: Callable[..., None]) -> None:
    """Extend ``ef-eval``'s evaluating commands: ``register(name, add_options, finished, *,
    description)``.

    The commands are ``run``, ``retrieval``, ``rag``, ``compare`` and ``check``.
    ``add_options(parser, command)`` adds the plugin's options to each one's
    :class:`argparse.ArgumentParser`; ``finished(command, reports, args, **details)`` is called
    once the command has written its own output, with its reports by name (a run file's name,
    a retriever, a system; URL passwords hidden) and the parsed ``args``. ``details`` are
    ``dataset`` (what was evaluated on, as given) and, for ``check``, ``check_report`` (the
    :class:`~ef.evaluation.CheckReport`, ``None`` with ``--update-baseline``). An error it
    raises fails the command, after its own output was written.
    """


@hookspec(firstresult=True)
def ef_evaluation_adapt_retriever(retriever: Any) -> Callable[..., Any] | None:
    """Turn ``retriever`` into ``fn(query, limit) -> results`` (sync or async), or return None."""


@hookspec(firstresult=True)
def ef_evaluation_doc_id_getter(result_type: type) -> Callable[[Any], str] | None:
    """Return a function mapping one result of ``result_type`` to its source doc id, or None."""


TrecRunParser = Callable[[io.BufferedIOBase], tuple[dict[str, dict[str, float]], int, int]]
"""``parser(stream) -> (table, lines, blank_lines)``: see :func:`ef_evaluation_trec_run_parser`."""


@hookspec(firstresult=True)
def ef_evaluation_trec_run_parser() -> TrecRunParser | None:
    """Return a faster parser for :func:`~ef.evaluation.read_trec_run`, or None.

    ``parser(stream)`` reads the file's bytes from ``stream`` (gzip already undone; a UTF-8
    byte-order mark, if any, still at the start) and returns ``(table, lines, blank_lines)``:
    exactly what the built-in reader makes of the same bytes, ``{query_id: {doc_id: score}}`` in
    file order, and how many lines (split on ``"\\n"``) and blank lines it read. For any line it
    does not accept it raises :class:`ValueError`, and the built-in reader reads the file again
    and reports the line, so error messages never depend on the parser.

    The streaming form (optional; a parser without it is still accepted): an attribute
    ``parser.by_query(stream)`` yielding ``(query_id, {doc_id: score})`` per query, in file
    order, each as soon as its lines end, for :func:`~ef.evaluation.evaluate_run` given a run
    file's path. It raises :class:`ValueError` for any line the first form refuses, for a query
    seen again after another one (a file not grouped by query) and for a doc listed twice for a
    query; the built-in reader then reads the file and names the line.
    """


class FusionKernel(Protocol):
    """A compiled fusion of plain runs: see :func:`ef_evaluation_fusion_kernel`."""

    def __call__(
        self,
        runs: Sequence[Any],
        *,
        norm: str | None,
        weights: Sequence[float] | None,
        rank_scores: Sequence[float] | None,
        in_rank_order: bool,
        combine: str = ...,
        factors: Sequence[float] | None = ...,
    ) -> dict[str, dict[str, float]] | None: ...


@hookspec(firstresult=True)
def ef_evaluation_fusion_kernel() -> FusionKernel | None:
    """Return a faster fusion of plain runs for :func:`~ef.evaluation.fuse`, or None.

    ``kernel(runs, norm=..., weights=..., rank_scores=..., in_rank_order=...)`` fuses runs of
    ``{query_id: {doc_id: score}}`` the way the additive built-in methods do, float for float:
    each query's ranking in each run put in trec_eval's order (score descending, ties by doc id
    descending; taken as it is when ``in_rank_order``), normalised by ``norm`` (``None``,
    ``"min-max"`` or ``"max"``), or replaced by ``rank_scores[i]`` for the doc at 0-based rank
    ``i`` when ``rank_scores`` is given, multiplied by the run's weight when ``weights`` is
    given, and added up doc by doc, run after run (the first run with docs for the query gives
    each its value as it is, a later run adds to a doc's total, a doc first met there starting
    from ``0.0``); each fused query in trec_eval's order, the queries in order of first
    appearance across the runs. A kernel whose ``combines`` attribute lists more ways to combine
    a doc's values is also asked for the other built-in methods, with ``combine=`` one of them
    (``"sum_times"``, ``"sum_over"``, ``"sum_times_weights"``, ``"max"``, ``"min"``,
    ``"median"``, ``"borda"``: see ``ef_evaluation_speedups.fusion_kernel``) and ``factors=``
    the per-count factors where the method has them; a kernel without it is asked for the
    additive methods only, with the arguments above. It returns None, and
    :func:`~ef.evaluation.fuse` takes its own path (raising its own errors), for anything it
    does not take: a run or query that is not a plain ``dict``, an id that is not a ``str``, a
    score that is not a finite ``float`` or ``int``, an unknown ``norm``, a fused score that is
    not finite.
    """


@hookspec(firstresult=True)
def ef_evaluation_qrels_pass() -> QrelsPass | None:
    """Return a faster first pass over plain judgements for an evaluation's plan, or None.

    ``qrels_pass(qrels)`` walks ``{query_id: {doc_id: grade}}`` once and returns ``(written,
    ideals)``: ``written`` the very bytes of ``marshal.dumps(qrels, 2)`` (the manifest's qrels
    digest is their SHA-256), ``ideals`` each query's positive grades, descending, in a stable
    sort (equal grades keep their judgement order), the grade objects themselves, queries in
    qrels order. It takes plain qrels only — a ``dict`` of ``dict``, exact ``str`` ids, exact
    ``float`` or ``int`` grades (no ``bool``, no subclass), all finite — and returns None for
    anything else (and may for any input it chooses not to take): the evaluation then checks,
    digests and sorts the judgements itself, and raises its own errors.
    """


@hookspec(firstresult=True)
def ef_evaluation_ranking_kernel() -> RankingKernel | None:
    """Return a compiled kernel that scores a whole run with ef's five cutoff measures, or None.

    ``kernel(run, qrels, ideals, query_ids, ks, picks, keys, frozen, distinct)`` scores each
    query of ``query_ids`` from its entry in ``run`` (an exact ``dict``: a ``list`` of doc ids,
    best first, a repeated id keeping its first rank, or a ``{doc_id: score}`` ``dict`` in
    trec_eval's order; no entry scores 0), its judgements ``qrels[query_id]`` and its positive
    grades, descending, ``ideals[query_id]``: nDCG, recall, precision, reciprocal rank and AP
    (0 to 4) at every cutoff of ``ks``, each key of ``keys`` getting the value ``picks`` names
    (``measure * len(ks) + the cutoff's index``), in a new ``frozen`` mapping. It returns
    ``(values, depths)`` — per query its values, or None where it declines the query, and the
    entry's length (a ranking's distinct ids with ``distinct``) — or None for a call it
    declines. Each value must be the pure path's float for float (the evaluation reads them as
    they are); a declined query is scored by the pure path, which raises its own errors. Asked
    where every key is one of those measures with default parameters (ef's built-in metrics,
    ``nDCG@10`` …), over plain judgements, with no relevance level, ``judged_only``,
    ``ignore_identical_ids`` or progress callback.
    """
