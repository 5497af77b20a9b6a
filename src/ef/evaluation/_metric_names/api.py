"""The public functions on metric names: :func:`measure_catalogue` and :func:`check_metrics`.

Entry points: each asks the process's plugin host for the registered metrics once and hands
them to :mod:`~ef.evaluation._metric_names.resolve` and
:mod:`~ef.evaluation._metric_names.catalogue`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ef.evaluation._metric_names.catalogue import MeasureInfo, catalogue
from ef.evaluation._metric_names.resolve import resolve_names
from ef.evaluation._plugins import HOST
from ef.evaluation._plugins.registry import RetrievalMetric

__all__ = ["check_metrics", "lookup_metrics", "measure_catalogue"]


def measure_catalogue(*, notations: bool = False) -> dict[str, MeasureInfo]:
    """Every registered retrieval metric as a measure: report keys, parameters, aggregation,
    source of truth and plugin, by the name asked for in ``metrics=``.

    With ``notations=True``, also every core measure known only by its notations (``nDCG``,
    ``ERR``, ``RBP`` … under their ir_measures names), and each entry's ``notations`` and
    ``options`` filled: every measure ``metrics=`` accepts, as ``ef-eval metrics`` lists them.

    >>> catalogue = measure_catalogue()
    >>> catalogue['P'].keys[:3], catalogue['P'].source
    (('P_5', 'P_10', 'P_15'), 'trec_eval m_P.c')
    >>> catalogue['gm_map'].aggregation, catalogue['ndcg'].keys  # ndcg: ndcg@k at each k
    ('geometric', None)
    """
    return catalogue(HOST.registry.metrics, notations=notations)


def lookup_metrics(names: Sequence[str]) -> list[RetrievalMetric]:
    """The metrics to compute for ``names``, in order: registered names as they are, any
    other notation (``nDCG@10``, ``ndcg_cut.10``, ``P(rel=2)@5``) as a measure reported under
    the name as written.

    :raises ValueError: for a name that parses nowhere; the message lists the closest names.
    """
    return resolve_names(names, HOST.registry.metrics)


def check_metrics(names: Sequence[str]) -> None:
    """Check that every name in ``names`` is one ``metrics=`` accepts: a registered metric or a
    notation of a measure (``nDCG@10``, ``ndcg_cut.10``, ``P(rel=2)@5``, ``rbp@10``).

    :raises ValueError: for a name that parses nowhere (the message lists the closest names),
        or a measure with a cutoff or parameter it does not take.

    >>> check_metrics(["ndcg", "nDCG@10", "ndcg_cut_10", "RBP(rel=1,p=0.8)"])
    >>> check_metrics(["nDGC@10"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: unknown metric name(s) 'nDGC@10'; closest: 'nDCG@10', ...
    """
    resolve_names(names, HOST.registry.metrics)
