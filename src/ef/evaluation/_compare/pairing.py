"""Each system's per-query values, paired by query id: a report's own, or a run's scored."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ef.evaluation._compare import rag as _rag_pairs
from ef.evaluation._exceptions import MissingQueriesError
from ef.evaluation._io.frames import is_frame
from ef.evaluation._metric_names.resolve import check_keys, same_measure
from ef.evaluation._report.reports import RagEvalReport, RetrievalEvalReport
from ef.evaluation._running.options import RunOptions
from ef.evaluation._running.run_scoring import score_run
from ef.evaluation._scoring.run_queries import likely_cause
from ef.evaluation._types import Qrels

if TYPE_CHECKING:
    from ef.evaluation._plugins.host import PluginHost

__all__ = ["paired_values", "system_per_query"]

_SHOWN_IDS = 10


def _metric_plan(metrics: Sequence[str], plugins: PluginHost) -> tuple[list[str], list[int]]:
    """The metric names and cutoffs :func:`evaluate_run` needs to produce ``metrics``' keys:
    the keys themselves, each read by the one resolver ``metrics=`` uses (``P@5``, ``nDCG@10``,
    ``map@100``, ``P_10``, ``bpref``); a name that reports other keys (``ndcg``) is refused."""
    check_keys(metrics, plugins.registry.metrics)
    # Every key names its own cutoff (or none); the plan's cutoff adds no key.
    return list(metrics), [1]


def _naming_rule(key: str, available: Sequence[str] | None) -> str | None:
    """How ``key`` should be written when its metric is reported in the other form (with or
    without a cutoff), judged by the keys ``available`` (``None``: it is, for certain)."""
    name, at, _ = key.partition("@")
    if at:
        if available is None or name in available:
            return f"{name!r} has no cutoff: name it {name!r}"
        return None
    prefix = f"{name}@"
    example = next((k for k in available or () if k.startswith(prefix)), f"{name}@10")
    if available is None or example in available:
        return (
            f"{name!r} is reported at a cutoff: name it '{name}@K', such as {example!r} "
            "(only metrics without a cutoff are named alone)"
        )
    return None


def _respelled(
    per_query: Mapping[str, Mapping[str, float]], metrics: Sequence[str]
) -> Mapping[str, Mapping[str, float]]:
    """A report's values, with each key of ``metrics`` it holds under another spelling of the
    same measure (``P@5`` for its ``P_5``) added under the key asked for."""
    held = list(dict.fromkeys(key for row in per_query.values() for key in row))
    spelled = {
        key: other
        for key in metrics
        if key not in held and (other := same_measure(key, held)) is not None
    }
    if not spelled:
        return per_query
    return {
        query_id: {**row, **{key: row[other] for key, other in spelled.items() if other in row}}
        for query_id, row in per_query.items()
    }


def _shown(ids: Sequence[str]) -> str:
    more = len(ids) - _SHOWN_IDS
    listed = ", ".join(repr(i) for i in ids[:_SHOWN_IDS])
    return listed + (f" and {more} more" if more > 0 else "")


def system_per_query(
    name: str,
    system: object,
    qrels: Qrels | None,
    metrics: Sequence[str],
    scoring: Mapping[str, Any],
    plugins: PluginHost,
) -> Mapping[str, Mapping[str, float | None]]:
    """A system's per-query values: a report's own, or a run's scored against ``qrels`` with
    the metrics of ``plugins``."""
    if isinstance(system, RagEvalReport):
        return _rag_pairs.rag_per_sample(name, system)
    if isinstance(system, RetrievalEvalReport):
        if system.failures:
            failed = [failure.query_id for failure in system.failures]
            raise ValueError(
                f"system {name!r}: its report has {len(failed)} failed queries "
                f"({_shown(failed)}) with no values; comparing on the rest would pair fewer "
                "queries than were judged: evaluate them again first"
            )
        return _respelled(system.per_query, metrics)
    if not isinstance(system, Mapping) and not is_frame(system):
        raise TypeError(
            f"system {name!r}: expected a RetrievalEvalReport or a run "
            f"({{query_id: ranking or {{doc_id: score}}}}), or a RagEvalReport, "
            f"got {type(system).__name__}"
        )
    if qrels is None:
        raise ValueError(f"system {name!r} is a run: pass qrels= to score it")
    names, cutoffs = _metric_plan(metrics, plugins)
    options = RunOptions(k_values=cutoffs, metrics=names, **scoring)
    # Named as the system, and warned at the caller of compare().
    report = score_run(system, qrels, options, plugins, name=f"system {name!r}", stacklevel=4)
    for key in metrics:
        if key not in report.metrics:
            # The keys the plan produced instead are its own doing: name the rule, not them.
            raise ValueError(f"metric key {key!r}: {_naming_rule(key, None)}")
    return report.per_query


def paired_values(
    per_query: Mapping[str, Mapping[str, Mapping[str, float | None]]], metrics: Sequence[str]
) -> tuple[list[str], dict[str, dict[str, list[float | None]]]]:
    """The query ids, and each system's values of each metric over them, in their order."""
    query_ids = list(dict.fromkeys(q for values in per_query.values() for q in values))
    if not query_ids:
        raise ValueError("no query to compare: every system has empty per-query values")
    problems = []
    holders = Counter(q for values in per_query.values() for q in values)
    for name, values in per_query.items():
        missing = [q for q in query_ids if q not in values]
        if missing:
            own = [q for q in values if holders[q] < len(per_query)]  # what the others lack
            problems.append(
                f"system {name!r} lacks {len(missing)} queries: {_shown(missing)}"
                + _mismatch(missing, own, name)
            )
    if problems:
        raise MissingQueriesError(
            "systems are paired by query id, and every system must have every query; "
            + "; ".join(problems)
        )
    paired: dict[str, dict[str, list[float | None]]] = {}
    for name, values in per_query.items():
        paired[name] = {}
        for metric in metrics:
            lacking = [q for q in query_ids if metric not in values[q]]
            if lacking:
                available = sorted(values[lacking[0]])
                rule = _naming_rule(metric, available)
                hint = f"; {rule}" if rule else ""
                raise ValueError(
                    f"system {name!r} has no {metric!r} for queries {_shown(lacking)} "
                    f"(it has: {', '.join(available) or 'nothing'}){hint}"
                )
            # None (a RAG metric that does not apply to that sample) stays, to be paired out.
            paired[name][metric] = [
                None if (value := values[q][metric]) is None else float(value) for q in query_ids
            ]
    return query_ids, paired


def _mismatch(missing: Sequence[str], held: Sequence[str], name: str) -> str:
    """The likely cause when a system's own ids differ from the others' by a simple pattern."""
    found = likely_cause(missing[:2000], held[:2000])
    if found is None:
        return ""
    cause, (theirs, its) = found
    return f" (likely cause: {cause}, {its!r} in system {name!r} is {theirs!r} elsewhere)"
