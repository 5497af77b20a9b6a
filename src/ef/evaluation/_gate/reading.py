"""Reading any saved report back by its kind: retrieval, RAG, comparison or suite, from a file or
from a place a plugin knows (``scheme:rest``, hook ``ef_evaluation_register_report_locations``).
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

from ef.evaluation._compare.report import ComparisonReport
from ef.evaluation._io.files import read_regular
from ef.evaluation._io.lines import MAX_JSON_DOCUMENT
from ef.evaluation._json import loads_strict
from ef.evaluation._metric_names.catalogue import metric_for_key
from ef.evaluation._plugins import HOST
from ef.evaluation._report.reports import RagEvalReport, RetrievalEvalReport
from ef.evaluation._suite.report import SuiteReport

__all__ = ["read_report", "report_kind"]

_KINDS: dict[str, tuple[str, ...]] = {
    # First: a suite holds a comparison's fields too (baseline, systems, comparisons).
    "suite": ("datasets", "systems", "metric", "cells", "macro", "micro"),
    "comparison": ("baseline", "systems", "comparisons"),
    "rag": ("metrics", "coverage", "n_samples"),
    "retrieval": ("metrics", "per_query", "n_queries", "k_values"),
}


def report_kind(data: Any) -> str | None:
    """The kind of report a JSON value is (``"retrieval"``, ``"rag"``, ``"comparison"``,
    ``"suite"``), told by the fields each kind always has; ``None`` for anything else.

    >>> report_kind({'metrics': {}, 'per_query': {}, 'n_queries': 0, 'k_values': [10]})
    'retrieval'
    >>> report_kind([1, 2]) is None
    True
    """
    if not isinstance(data, dict):
        return None
    return next((kind for kind, keys in _KINDS.items() if all(k in data for k in keys)), None)


_LOCATION = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]+):(.*)", re.DOTALL)


def _saved_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the report at ``path``: a file, or ``scheme:rest`` when an installed
    plugin registered ``scheme`` (a string only; a path object is always a file)."""
    found = _LOCATION.fullmatch(path) if isinstance(path, str) else None
    location = HOST.registry.report_locations.get(found[1]) if found else None
    if location is None or found is None:
        return read_regular(path, MAX_JSON_DOCUMENT)
    try:
        saved = location.fetch(found[2])
    except Exception as error:
        if not HOST.is_builtin(location.plugin):
            error.add_note(
                f"raised by report location {location.name!r} of plugin {location.plugin!r} "
                f"({HOST.describe(location.plugin)})"
            )
        raise
    if not isinstance(saved, bytes):
        raise TypeError(
            f"{path}: report location {location.name!r} of plugin {location.plugin!r} returned "
            f"a {type(saved).__name__}; it must return the report's JSON as bytes"
        )
    return saved


def read_report(
    path: str | os.PathLike[str],
) -> RetrievalEvalReport | RagEvalReport | ComparisonReport | SuiteReport:
    """Load a saved report (``report.to_json()`` written to a file) as the class of its kind:
    a :class:`RetrievalEvalReport`, a :class:`RagEvalReport`, a :class:`ComparisonReport` or a
    :class:`SuiteReport`.

    ``path`` may also be ``scheme:rest`` for a scheme an installed plugin registered (hook
    ``ef_evaluation_register_report_locations``): ``"mlflow:RUN_ID"`` with the MLflow plugin
    reads the report logged to that run. Any other string is a file's path.

    The reports' own ``from_json`` stays the way to read a kind known in advance.

    The file must be a regular file (a FIFO or a device is refused, never waited on) of at
    most 1 GiB, strict JSON naming no key twice in one object; a retrieval report's values of a
    measure bounded to [0, 1] (nDCG, P, R, AP, MRR, success, judged) must lie in it.

    :raises ValueError: naming the file, for a file that is not a regular file, too large, not
        strict JSON or not a report, or a report with a field of the wrong value.
    :raises TypeError: naming the file, for a report field of the wrong type.
    :raises OSError: if the file cannot be read; what a plugin's location raises when the
        report cannot be fetched (with a note naming the plugin).
    """
    name = os.fspath(path)
    text = _saved_bytes(path)
    try:
        data = loads_strict(text, unique_keys=True)
    except ValueError as error:
        raise ValueError(f"{name}: not a report: {error}") from error
    kind = report_kind(data)
    if kind is None:
        what = "a JSON object" if isinstance(data, dict) else f"JSON {type(data).__name__}"
        raise ValueError(
            f"{name}: not a report: {what} without the fields of a retrieval report "
            "(metrics, per_query, n_queries, k_values), a RAG report (metrics, coverage, "
            "n_samples), a comparison report (baseline, systems, comparisons) or a suite report "
            "(datasets, systems, metric, cells, macro, micro)"
        )
    cls = {
        "comparison": ComparisonReport,
        "rag": RagEvalReport,
        "retrieval": RetrievalEvalReport,
        "suite": SuiteReport,
    }
    try:
        report = cls[kind].from_dict(data)  # type: ignore[attr-defined]
    except (TypeError, ValueError) as error:
        raise type(error)(f"{name}: a {kind} report with {error}") from error
    if isinstance(report, RetrievalEvalReport):
        problem = _out_of_range(report)
        if problem is not None:
            raise ValueError(f"{name}: a retrieval report with {problem}")
    return report  # type: ignore[no-any-return]


# The measures whose definition bounds every value to [0, 1] (the registry declares no range):
# ratios of relevant documents, reciprocal ranks, normalised gains.
_UNIT_RANGE = frozenset(
    "ndcg ndcg_cut map map_cut ap trec_map mrr rr recip_rank precision p set_p recall r "
    "trec_recall set_recall hit_rate success r_precision rprec judged".split()
)


def _measure(key: str) -> str:
    """The measure a report key is a value of, by the registry (``P_10`` → ``P``), else by
    its notation (``nDCG@10`` → ``ndcg``), lower case."""
    found = metric_for_key(HOST.registry.metrics, key)
    return (found or re.split(r"[@(.]", key, maxsplit=1)[0]).lower()


def _out_of_range(report: RetrievalEvalReport) -> str | None:
    """The first value of a measure bounded to [0, 1] that lies outside it, described."""
    keys = {key for values in report.per_query.values() for key in values} | set(report.metrics)
    bounded = {key for key in keys if _measure(key) in _UNIT_RANGE}
    if not bounded:
        return None
    for key, value in report.metrics.items():
        if key in bounded and not 0.0 <= value <= 1.0:
            return f"the mean {key} = {value!r}, outside [0, 1], the range of {_measure(key)}"
    for query, values in report.per_query.items():
        for key, value in values.items():
            if key in bounded and not (math.isfinite(value) and 0.0 <= value <= 1.0):
                return (
                    f"per_query[{query!r}][{key!r}] = {value!r}, outside [0, 1], "
                    f"the range of {_measure(key)}"
                )
    return None
