"""The process's plugin host and the public functions on what the plugins provide.

Built-ins are ordinary plugins registered first, through the same hooks as third parties.
Nothing is loaded at import: the first call that needs the registry loads every plugin (see
:mod:`ef.evaluation._plugins.host` for how a faulty plugin is isolated).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ef.evaluation._io import trec as _trec
from ef.evaluation._io.builtin_datasets import builtin_name, resolve_builtin
from ef.evaluation._io.files import PathArg
from ef.evaluation._plugins.calls import check_dataset, stdout_to_stderr
from ef.evaluation._plugins.catalogue import (
    MeasureInfo,
    describe_canon,
    describe_metric,
    with_notations,
)
from ef.evaluation._plugins.catalogue import metric_for_key as _metric_for_key
from ef.evaluation._plugins.host import PluginHost
from ef.evaluation._plugins.names import CORE_PLUGIN, resolve_names, same_measure
from ef.evaluation._plugins.names import check_keys as _check_keys
from ef.evaluation._plugins.registry import PluginInfo, Registry, RetrievalMetric
from ef.evaluation._scoring.measures.canon import CANON
from ef.evaluation._types import Corpus, Qrels, Queries, RagMetricFn

__all__ = [
    "HOST",
    "RETRIEVAL_METRICS",
    "adapt_retriever",
    "check_keys",
    "check_metrics",
    "list_plugins",
    "lookup_metrics",
    "measure_catalogue",
    "metric_for_key",
    "rag_metric_functions",
    "read_dataset",
    "read_trec_run",
    "registry",
    "same_measure",
]

HOST = PluginHost()


def registry() -> Registry:
    """A read-only snapshot of the registered metrics, RAG metrics, dataset readers, fusion
    methods and normalisations.

    Each entry names the plugin that provided it.

    >>> list(registry().metrics)[:5]  # built-ins register first
    ['map', 'mrr', 'ndcg', 'precision', 'recall']
    >>> registry().metrics['ndcg'].plugin
    'ef.evaluation._builtins'
    """
    return HOST.registry


def list_plugins() -> list[PluginInfo]:
    """Every loaded plugin — name, distribution, version and hooks — built-ins first.

    >>> [info.name for info in list_plugins() if info.builtin]  # doctest: +NORMALIZE_WHITESPACE
    ['ef.evaluation._builtins', 'ef.evaluation._builtins.ragas_metrics',
     'ef.evaluation._adapters', 'ef.evaluation._builtins.fusion']
    """
    return HOST.plugins()


def rag_metric_functions() -> Mapping[str, RagMetricFn]:
    """The registered RAG metrics, name → ``fn(sample)``."""
    return {name: metric.fn for name, metric in HOST.registry.rag_metrics.items()}


def read_dataset(
    source: str | os.PathLike[str], *, reader: str = "beir", **options: Any
) -> tuple[Corpus, Queries, Qrels]:
    """Read a dataset with a registered reader: ``(corpus, queries, qrels)``.

    A plugin's reader runs like its hooks: what it prints goes to standard error, and an error
    it raises carries a note naming the reader and its plugin.

    :param source: what the reader reads — a directory, a file, a dataset id, or
        ``builtin:NAME`` for a dataset bundled with ef-evaluation (read as BEIR).
    :param reader: the registered reader's name (``beir``, ``trec`` or a plugin's).
    :param options: passed on to the reader.
    :raises ValueError: for an unknown reader name (the message lists the available ones).
    :raises TypeError: if the reader returns anything but a ``(corpus, queries, qrels)``
        triple of mappings (the message names the reader and its plugin).
    """
    if builtin_name(source) is not None:
        source, reader = resolve_builtin(source), "beir"
    readers = HOST.registry.readers
    if reader not in readers:
        raise ValueError(
            f"unknown dataset reader {reader!r}; available: {', '.join(sorted(readers))}"
        )
    entry = readers[reader]
    described = (
        f"dataset reader {reader!r} of plugin {entry.plugin!r} ({HOST.describe(entry.plugin)})"
    )
    try:
        with stdout_to_stderr():
            result = entry.reader(source, **options)
    except Exception as error:
        if not HOST.is_builtin(entry.plugin):  # the built-ins' errors say where already
            error.add_note(f"raised by {described}")
        raise
    return check_dataset(result, described)


def adapt_retriever(retriever: object) -> Callable[..., Any] | None:
    """The plugins' answer to ``ef_evaluation_adapt_retriever``: how to call ``retriever``."""
    adapted: Callable[..., Any] | None = HOST.first_result(
        "ef_evaluation_adapt_retriever", retriever=retriever
    )
    return adapted


def read_trec_run(path: PathArg) -> dict[str, dict[str, float]]:
    """Read a TREC run file into ``{query_id: {doc_id: score}}``.

    Each non-blank line is ``query-id Q0 doc-id rank score tag``, columns separated by any
    whitespace. As in trec_eval, only the query id, doc id and score matter: the ``Q0``, rank and
    tag columns are ignored, so the order of a query's documents comes from their scores alone
    (see :func:`rankings_from_run`). The scores are returned as read, in file order, unsorted.
    A score is an ASCII decimal number (``12``, ``-0.5``, ``1.5e-3``); ``inf``, ``nan``,
    underscores (``1_0``) and non-ASCII digits are refused, although :func:`float` reads them,
    because trec_eval reads them otherwise. The file may be gzip-compressed, carry a UTF-8
    byte-order mark and use CRLF line ends; it is streamed, so memory holds the result, not the
    file, and a line longer than 1 MiB is refused. A pipe or FIFO (``<(zcat run.gz)``) is
    copied once to a temporary file, removed afterwards. A plugin may provide a faster parser
    (hook ``ef_evaluation_trec_run_parser``; the ``ef-evaluation-speedups`` distribution parses
    in C) with exactly the same result and errors.

    :param path: the run file.
    :returns: the scores, ``{query_id: {doc_id: score}}``.
    :raises FileNotFoundError: if ``path`` does not exist.
    :raises DatasetFormatError: naming the file and line, for a line without exactly six
        columns, a score that is not a finite ASCII decimal number, a doc id listed twice for
        one query (both lines named), a line longer than 1 MiB, or bytes that are not UTF-8.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "run.txt")
    ...     _ = path.write_text("q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 0.5 bm25\\n")
    ...     print(read_trec_run(path))
    {'q1': {'d1': 2.5, 'd2': 0.5}}
    """
    return _trec.read_trec_run(path, HOST.trec_run_parser())


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
    metrics = HOST.registry.metrics
    if not notations:
        return {name: describe_metric(metric) for name, metric in metrics.items()}
    catalogue = {
        name: with_notations(describe_metric(metric), metric) for name, metric in metrics.items()
    }
    for name, canon in CANON.items():
        if name not in catalogue:
            catalogue[name] = describe_canon(canon, CORE_PLUGIN)
    return catalogue


def metric_for_key(key: str) -> str | None:
    """The registered metric whose report keys include ``key`` (``P_10`` → ``P``), if any."""
    return _metric_for_key(HOST.registry.metrics, key)


def lookup_metrics(names: Sequence[str]) -> list[RetrievalMetric]:
    """The metrics to compute for ``names``, in order: registered names as they are, any
    other notation (``nDCG@10``, ``ndcg_cut.10``, ``P(rel=2)@5``) as a measure reported under
    the name as written.

    :raises ValueError: for a name that parses nowhere; the message lists the closest names.
    """
    return resolve_names(names, HOST.registry.metrics)


def check_keys(keys: Sequence[str]) -> None:
    """Check that each of ``keys`` is one value's key, as ``metrics=[key]`` reports it
    (``nDCG@10``, ``P@5``, ``map@100``, ``bpref``; not ``ndcg`` or trec_eval's ``P``).

    :raises ValueError: for a name no metric takes, or one that reports other keys.
    """
    _check_keys(keys, HOST.registry.metrics)


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


class _MetricsView(Mapping[str, Callable[..., float]]):
    """``RETRIEVAL_METRICS``: name → metric function, read-only, built-ins and plugins alike."""

    def __getitem__(self, name: str) -> Callable[..., float]:
        return HOST.registry.metrics[name].fn

    def __iter__(self) -> Iterator[str]:
        return iter(HOST.registry.metrics)

    def __len__(self) -> int:
        return len(HOST.registry.metrics)

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{name!r}: {fn!r}" for name, fn in self.items()) + "}"


RETRIEVAL_METRICS: Mapping[str, Callable[..., float]] = _MetricsView()
"""The retrieval metrics :func:`evaluate_retrieval` can compute, each keyed by the short name used
in the ``metrics=`` argument and in report keys.

Public so downstream packages (e.g. ``ir.eval``) can consume this single source of truth — the
name→function registry *and* the set of valid metric names — instead of hand-mirroring it.
It is a read-only mapping that loads plugins on first access and shows built-in and plugin
metrics alike.
"""
