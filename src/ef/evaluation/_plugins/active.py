"""The process's plugin host and the public functions on what the plugins provide.

Built-ins are ordinary plugins registered first, through the same hooks as third parties.
Nothing is loaded at import: the first call that needs the registry loads every plugin (see
:mod:`ef.evaluation._plugins.host` for how a faulty plugin is isolated).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ef.evaluation._io import runs as _runs
from ef.evaluation._io import trec as _trec
from ef.evaluation._io.builtin_datasets import builtin_name, resolve_builtin
from ef.evaluation._io.files import PathArg
from ef.evaluation._io.lines import MAX_JSON_DOCUMENT
from ef.evaluation._plugins.calls import check_dataset, stdout_to_stderr
from ef.evaluation._plugins.host import PluginHost
from ef.evaluation._plugins.registry import PluginInfo, Registry
from ef.evaluation._types import Corpus, Qrels, Queries, RagMetricFn

__all__ = [
    "HOST",
    "RETRIEVAL_METRICS",
    "adapt_retriever",
    "list_plugins",
    "rag_metric_functions",
    "read_dataset",
    "read_run",
    "read_trec_run",
    "registry",
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
    return HOST.adapt_retriever(retriever)


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


def read_run(
    path: PathArg, *, format: str | None = None, max_bytes: int = MAX_JSON_DOCUMENT
) -> dict[str, Any]:
    """Read a run file of any format into ``{query_id: {doc_id: score}}``.

    The format is ``format`` if given, else told from the file name (after a ``.gz``):

    - ``.json``: ranx's run format, one JSON object ``{query_id: {doc_id: score}}``;
    - ``.jsonl`` or ``.ndjson``: one ``{"query_id": ..., "doc_id": ..., "score": ...}`` object
      per line (a doc listed twice for a query is refused, naming both lines);
    - ``.parquet``: a table with ranx's columns ``q_id, doc_id, score``, or any column names
      a DataFrame may use (see :doc:`/dataframes`); needs pyarrow (extra ``dataframes``);
    - anything else: a TREC run file, read by :func:`read_trec_run` (a plugin's faster parser
      included).

    TREC, JSON and JSON Lines files may be gzip-compressed, whatever their name. Scores must be
    finite numbers (a JSON number such as ``1e400`` that overflows a float is refused, as in a
    TREC file); a key given twice in a JSON object (a doc, a query, a record's ``"score"``) is
    refused, not overwritten. A ``.json`` document is read whole: it may hold at most
    ``max_bytes`` characters once decompressed, and no JSON or JSON Lines file more than 1 MiB
    of whitespace or blank lines in a row (a small gzip file could otherwise unpack to
    gigabytes of nothing). A Parquet file's pages are checked against their checksums when it
    has them (:func:`write_run` writes them); damaged data is an error naming the row group and
    the column. The queries keep their file order, the docs too (unsorted).

    :param path: the run file.
    :param format: ``"trec"``, ``"json"``, ``"jsonl"`` or ``"parquet"``, or ``None``.
    :param max_bytes: the largest ``.json`` document read, in characters of decompressed text
        (1 GiB); raise it for a larger run, or write the run as JSON Lines or TREC, which are
        streamed.
    :returns: the scores, ``{query_id: {doc_id: score}}``.
    :raises FileNotFoundError: if ``path`` does not exist.
    :raises ValueError: for an unknown ``format``.
    :raises DatasetFormatError: naming the file and line, for anything the format refuses.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "run.jsonl")
    ...     _ = path.write_text('{"query_id": "q1", "doc_id": "d1", "score": 2.5}\\n')
    ...     print(read_run(path))
    {'q1': {'d1': 2.5}}
    """
    return _runs.read_run(path, format, HOST.trec_run_parser(), max_bytes=max_bytes)


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
