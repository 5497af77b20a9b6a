"""Comparing systems with a baseline: paired per-query values in, a comparison report out."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

from ef.evaluation._compare import rag as _rag_pairs
from ef.evaluation._compare import risk as _risk
from ef.evaluation._compare import stats as _stats
from ef.evaluation._compare.groups import GroupedComparison, group_comparisons
from ef.evaluation._compare.pairing import paired_values, system_per_query
from ef.evaluation._compare.report import ComparisonReport
from ef.evaluation._compare.rows import comparison_rows
from ef.evaluation._groups.inputs import as_query_groups
from ef.evaluation._groups.query_groups import GroupsInput
from ef.evaluation._io.qrels import read_qrels
from ef.evaluation._plugins import HOST
from ef.evaluation._report.reports import RagEvalReport, RetrievalEvalReport
from ef.evaluation._scoring.run_queries import MissingQueries, check_missing_queries
from ef.evaluation._types import Qrels, Run

__all__ = ["compare"]


def _check_options(
    systems: Mapping[str, object],
    baseline: str | None,
    metrics: Sequence[str],
    tests: Sequence[str],
    correction: str | None,
    alpha: float,
    risk_alpha: float | None,
) -> None:
    if baseline is not None and baseline not in systems:
        raise ValueError(
            f"baseline {baseline!r} is not one of the systems ({', '.join(map(repr, systems))})"
        )
    if len(systems) < 2:
        other = "besides the baseline" if baseline is not None else "to compare with another"
        raise ValueError(f"nothing to compare: give at least one system {other}")
    if not metrics or isinstance(metrics, str):
        raise ValueError(f"metrics must be a non-empty sequence of keys, got {metrics!r}")
    if not tests or isinstance(tests, str):
        raise ValueError(f"tests must be a non-empty sequence of names, got {tests!r}")
    for test in tests:
        if test not in _stats.SIGNIFICANCE_TESTS:
            known = ", ".join(_stats.SIGNIFICANCE_TESTS)
            raise ValueError(f"unknown test {test!r}: expected any of {known}")
    if correction is not None and correction not in _stats.CORRECTIONS:
        raise ValueError(
            f"unknown correction {correction!r}: "
            f"expected one of {', '.join(_stats.CORRECTIONS)} or None"
        )
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if risk_alpha is not None and not (math.isfinite(risk_alpha) and risk_alpha >= 0):
        raise ValueError(f"risk_alpha must be a number >= 0, got {risk_alpha}")


def compare(
    systems: Mapping[str, RetrievalEvalReport | RagEvalReport | Run],
    qrels: Qrels | str | os.PathLike[str] | None = None,
    *,
    baseline: str | None = None,
    metrics: Sequence[str] | None = None,
    tests: Sequence[str] = ("t-test", "randomization"),
    correction: str | None = "holm",
    n_permutations: int = 10_000,
    n_resamples: int = 10_000,
    seed: int = 0,
    alpha: float = 0.05,
    confidence_level: float = 0.95,
    relevance_level: int | None = None,
    judged_only: bool = False,
    missing_queries: MissingQueries = "warn",
    risk_alpha: float | None = None,
    depth: int | None = None,
    groups: GroupsInput | None = None,
) -> ComparisonReport:
    """Compare systems with a baseline, or every pair of systems, on per-query values, with
    significance tests.

    Each system is a :class:`RetrievalEvalReport` or a run (``{query_id: ranking}`` or
    ``{query_id: {doc_id: score}}``, scored against ``qrels`` with :func:`evaluate_run`; a
    judged query missing from a run scores 0, with one warning per run, and a run holding no
    judged query is refused, naming the likely cause: see ``missing_queries``). Values are
    paired by query id, never by position: every system must have every query, or a
    :class:`MissingQueriesError` names the missing ones (and the likely cause, when one
    system's ids differ from the others' by a prefix, zero padding or letter case) — a report
    with failed queries is refused rather than compared on fewer queries.

    RAG pipelines compare the same way: each system is then a :class:`RagEvalReport`, its
    samples paired by the report's ``sample_ids`` (from ``evaluate_rag(..., ids=...)``, or the
    ``user_input`` values when they are unique). A sample where a metric does not apply to
    either side is left out of that metric's comparison, and the row's ``not_applicable``
    counts those pairs; the row's means are over the pairs kept, the report's ``means`` over
    each system's own values.

    Tests (``scipy.stats``, the optional ``stats`` extra): ``"t-test"`` (paired Student),
    ``"randomization"`` (Fisher's paired randomisation test, ``n_permutations`` swaps),
    ``"wilcoxon"`` (signed-rank) and ``"bootstrap"`` (a paired bootstrap interval of the mean
    difference at ``confidence_level``, ``n_resamples`` resamples); each random test draws
    from ``numpy.random.default_rng(seed)`` afresh, so the same seed gives the same report.
    Every comparison also carries wins, ties and losses, and Cohen's d for paired data. The
    p-values of one test on one metric, over all systems compared with the baseline, form a
    family adjusted by ``correction``: ``"holm"``, ``"bonferroni"``, ``"bh"``
    (Benjamini–Hochberg) or ``None``.

    Without a ``baseline``, every pair of systems is compared: each system with every system
    listed before it (its row's ``baseline``), and the p-values of one test over all pairs and
    all metrics form one family. ``"tukey"`` (Tukey's HSD, as ranx's ``stat_test="tukey"``
    and statsmodels' ``pairwise_tukeyhsd``) compares the means of all systems at once on each
    metric, adjusted over the pairs by its own construction and not corrected again; it can be
    asked for with a baseline too. :meth:`ComparisonReport.p_value_table` gives the square
    table of p-values of a metric, :meth:`ComparisonReport.groups` the letters of the systems
    that do not differ significantly. See :mod:`ef.evaluation._compare.stats` for the edge cases
    (identical systems give p = 1, effect 0 and the interval (0, 0)).

    :param systems: system name → report or run; the baseline is one of them.
    :param qrels: the judgements that score the runs (unused for reports), or a qrels file's
        path (TREC or BEIR form), read once.
    :param baseline: the name of the system the others are compared with; ``None`` compares
        every pair.
    :param metrics: the metric keys to compare (``"ndcg@10"``, ``"map@100"``, ``"bpref"``, or
        RAG metric names); ``None`` means ``("ndcg@10",)``, or ``("token_f1",)`` for RAG
        reports.
    :param tests: which tests to run (``"t-test"``, ``"randomization"``, ``"wilcoxon"``,
        ``"bootstrap"``, ``"tukey"``); the first decides the significance marks.
    :param correction: the multiple-testing correction.
    :param n_permutations: random swaps of the randomisation test.
    :param n_resamples: resamples of the bootstrap.
    :param seed: the seed of the random tests.
    :param alpha: the significance level.
    :param confidence_level: the coverage of the bootstrap interval.
    :param relevance_level: the smallest relevant grade when scoring runs (trec_eval ``-l``).
    :param judged_only: rank only judged documents when scoring runs (trec_eval ``-J``).
    :param risk_alpha: the risk weight α of URisk, TRisk and GeoRisk (Dinçer, Macdonald and
        Ounis; see :mod:`ef.evaluation._compare.risk`): each row then holds URisk_α and TRisk_α
        against its baseline, and the report GeoRisk_α of every system over all of them;
        ``None`` (the default) computes no risk.
    :param depth: score only each query's first ``depth`` results of every run (trec_eval
        ``-M``), cut as :func:`evaluate_run` cuts them; ``None`` scores every result. Every
        system must be scored at one depth: a report made at another (its manifest's
        ``parameters.depth``) is refused. The report's ``manifest`` records it.
    :param missing_queries: what a judged query a run lacks does, as in :func:`evaluate_run`:
        ``"warn"`` (scored 0, one warning per run), ``"zero"`` (scored 0 silently) or
        ``"error"``. Reports are never scored: they must hold the same queries.
    :param groups: query groups (:class:`QueryGroups`, a mapping of query id to group name or
        names, or a groups file's path; RAG samples by their ids): every test then also runs
        on each group's queries, kept in ``group_comparisons`` with ``group_means`` and
        ``group_counts``; the p-values of one test form one family over the systems and the
        groups of each metric (every pair, metric and group without a baseline), said by
        :func:`~ef.evaluation._compare.render_groups.group_correction` in the tables' captions. A
        query in no group is compared only over all queries (see :doc:`/groups`).
    :raises MissingQueriesError: for a run that holds no judged query (or lacks any, under
        ``missing_queries="error"``), or systems that do not all have the same queries.
    :raises ValueError: for an unknown baseline, test, correction or metric, a run without
        ``qrels``, systems that do not all have the same metrics, or systems scored at
        different depths.
    :raises TypeError: for a system that is neither a report nor a run, or a mix of RAG
        reports and retrieval systems.
    :raises ImportError: if scipy (the ``stats`` extra) is not installed.

    >>> qrels = {'q1': {'d1': 1.0}, 'q2': {'d2': 1.0}, 'q3': {'d3': 1.0}}
    >>> runs = {'bm25': {'q1': ['d9', 'd1'], 'q2': ['d9', 'd2'], 'q3': ['d3']},
    ...         'dense': {'q1': ['d1'], 'q2': ['d2'], 'q3': ['d3']}}
    >>> report = compare(runs, qrels, baseline='bm25', metrics=('mrr@10',))
    >>> row = report.comparison('dense', 'mrr@10')
    >>> row.difference, (row.wins, row.ties, row.losses)
    (0.3333333333333333, (2, 1, 0))
    >>> round(row.p_values['t-test'], 4)
    0.1835
    """
    grouped = as_query_groups(groups, entry_point="compare")
    is_rag = _rag_pairs.check_kinds(systems)
    if metrics is None:
        metrics = (_rag_pairs.DEFAULT_RAG_METRIC,) if is_rag else ("ndcg@10",)
    metrics = list(dict.fromkeys(metrics)) if not isinstance(metrics, str) else metrics
    tests = list(dict.fromkeys(tests)) if not isinstance(tests, str) else tests
    _check_options(systems, baseline, metrics, tests, correction, alpha, risk_alpha)
    names = (
        list(systems) if baseline is None else [baseline, *(n for n in systems if n != baseline)]
    )
    if isinstance(qrels, str | os.PathLike):
        qrels = read_qrels(qrels)
    manifest = {} if is_rag else {"parameters": {"depth": _one_depth(systems, depth)}}
    scoring = {
        "relevance_level": relevance_level,
        "judged_only": judged_only,
        "missing_queries": check_missing_queries(missing_queries),
        "depth": depth,
    }
    per_query = {
        name: system_per_query(name, systems[name], qrels, metrics, scoring, HOST) for name in names
    }
    query_ids, paired = paired_values(per_query, metrics)

    if baseline is None:
        pairs = [(b, a) for i, a in enumerate(names) for b in names[i + 1 :]]
    else:
        pairs = [(name, baseline) for name in names[1:]]
    options: dict[str, Any] = {
        "n_permutations": n_permutations,
        "n_resamples": n_resamples,
        "seed": seed,
        "confidence_level": confidence_level,
        "risk_alpha": risk_alpha,
    }
    rows = comparison_rows(
        paired, pairs, metrics, tests, correction=correction, all_pairs=baseline is None, **options
    )
    by_group = None
    if grouped is not None:
        by_group = group_comparisons(
            paired,
            query_ids,
            grouped,
            pairs,
            metrics,
            tests,
            correction=correction,
            all_pairs=baseline is None,
            stacklevel=3,
            **options,
        )
    georisk = {}
    if risk_alpha is not None:
        georisk = _georisk(paired, names, metrics, risk_alpha)
    return ComparisonReport(
        baseline=baseline,
        systems=names,
        metrics=metrics,
        means={name: {m: _mean(paired[name][m]) for m in metrics} for name in names},
        comparisons=rows,
        n_queries=len(query_ids),
        tests=tests,
        correction=correction,
        alpha=alpha,
        confidence_level=confidence_level,
        n_permutations=n_permutations,
        n_resamples=n_resamples,
        seed=seed,
        risk_alpha=risk_alpha,
        georisk=georisk,
        manifest=manifest,
        per_query={
            name: {
                query_id: {
                    metric: value
                    for metric in metrics
                    if (value := paired[name][metric][index]) is not None
                }
                for index, query_id in enumerate(query_ids)
            }
            for name in names
        },
        **_group_fields(by_group),
    )


def _one_depth(systems: Mapping[str, object], depth: int | None) -> int | None:
    """The one depth every system is scored at: ``depth`` for runs, a report's own.

    :raises ValueError: for a depth that is no int >= 1, or systems scored at different depths.
    """
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise ValueError(f"depth must be an int >= 1 or None, got {depth!r}")
    depths: dict[str, int | None] = {}
    for name, system in systems.items():
        if isinstance(system, RetrievalEvalReport):
            depths[name] = (system.manifest.get("parameters") or {}).get("depth")
        else:
            depths[name] = depth
    found = set(depths.values()) | ({depth} if depth is not None else set())
    if len(found) > 1:
        shown = ", ".join(
            f"{name!r} at {'every result' if d is None else d}" for name, d in depths.items()
        )
        asked = "" if depth is None else f" (depth={depth} asked)"
        raise ValueError(
            f"systems scored at different depths (trec_eval -M): {shown}{asked}; score them at "
            "one depth to compare them"
        )
    return next(iter(found), None)


def _group_fields(by_group: GroupedComparison | None) -> dict[str, Any]:
    if by_group is None:
        return {}
    return {
        "group_means": by_group.means,
        "group_counts": by_group.counts,
        "group_comparisons": by_group.rows,
    }


def _mean(values: Sequence[float | None]) -> float:
    """The mean of the values that apply (a system with none was refused before)."""
    applicable = [value for value in values if value is not None]
    return math.fsum(applicable) / len(applicable)


def _georisk(
    paired: Mapping[str, Mapping[str, Sequence[float | None]]],
    names: Sequence[str],
    metrics: Sequence[str],
    alpha: float,
) -> dict[str, dict[str, float]]:
    """GeoRisk of every system on every metric, over the queries where every system applies."""
    result: dict[str, dict[str, float]] = {name: {} for name in names}
    for metric in metrics:
        columns = list(zip(*(paired[name][metric] for name in names), strict=True))
        kept = [column for column in columns if all(v is not None for v in column)]
        if not kept:
            continue
        scores = {name: [float(c[i] or 0.0) for c in kept] for i, name in enumerate(names)}
        for name, value in _risk.georisk(scores, alpha).items():
            result[name][metric] = value
    return result
