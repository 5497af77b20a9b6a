"""The extension API: what a plugin needs of ef beyond the hooks, in names that stay.

A plugin registers metrics, readers and adapters through the hooks (:data:`ef.evaluation.hookimpl`).
Some plugins do more: run a retriever in another process, or spread the built-in index over
machines (the Ray plugin does both). They need what ``evaluate_retrieval`` does inside — adapt a
retriever, name it in a journal, map its results to doc ids, build the built-in BM25 index from
parts — and their tests need to switch a plugin off, or compare a compiled hook with the pure
Python it replaces. This module gives exactly that, and nothing else; everything here keeps its
name and meaning across releases, whatever the modules behind it are called.

Retrievers, as the runner sees them:

- :func:`prepare_retriever` and :class:`PreparedRetriever`: a retriever adapted by the installed
  plugins, ``limit`` bound, ready to call with a query.
- :func:`retriever_identity`: the identity an evaluation records in journals and manifests.
- :func:`doc_id_getter`: how the installed plugins map one result type to its doc id.

The built-in index, built from parts:

- :func:`whole_documents`: one :class:`~ef.segments.Segment` per document, as ``ingest``
  indexes a corpus by default.
- :func:`index_retriever_id`: the ``retriever_id`` of a built-in index, without building it.
- :class:`Bm25Index`, :func:`bm25_tokenizer`, :func:`bm25_engine`: the built-in BM25 index, and
  its tokenizer and scorer, to build an index whose scores come from elsewhere (a shard scored
  with the whole collection's statistics) with :meth:`Bm25Index.from_engine`.

Tables, as ef shows them:

- :class:`Table`, :class:`Figure` and :data:`Cell`: rows under named columns, written as the
  library and ``ef-eval`` write every table (a terminal's plain text or rich table, Markdown,
  CSV, TSV), for a plugin's command or report.

For plugins' tests:

- :func:`plugin_disabled`: run a block without one installed plugin.
- :func:`reference_ideal_grades`, :func:`reference_trec_run_groups`,
  :func:`reference_trec_queries`: the pure-Python code a compiled hook must match.

>>> prepared = prepare_retriever(lambda query, *, limit: ["d1", "d2", "d3"][:limit], limit=2)
>>> prepared.is_async, prepared.call("any query")
(False, ['d1', 'd2'])
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ef._bm25_index import Bm25Index, bm25_engine, bm25_tokenizer
from ef._segment_index import index_retriever_id
from ef._segmenting import whole_documents
from ef.evaluation._io.files import PathArg
from ef.evaluation._io.stream import trec_groups, trec_queries
from ef.evaluation._plugins import HOST, adapt_retriever
from ef.evaluation._report.table import Cell, Figure, Table
from ef.evaluation._running.adapters import PreparedRetriever
from ef.evaluation._running.adapters import prepare_retriever as _prepare
from ef.evaluation._running.driver import retriever_identity as _identity
from ef.evaluation._scoring import query_plan as _plan
from ef.evaluation._scoring.grades import plain_ideals

__all__ = [
    "Bm25Index",
    "Cell",
    "Figure",
    "PreparedRetriever",
    "Table",
    "bm25_engine",
    "bm25_tokenizer",
    "doc_id_getter",
    "index_retriever_id",
    "plugin_disabled",
    "prepare_retriever",
    "reference_ideal_grades",
    "reference_trec_queries",
    "reference_trec_run_groups",
    "retriever_identity",
    "whole_documents",
]


def prepare_retriever(retriever: object, limit: int) -> PreparedRetriever:
    """``retriever`` as an evaluation calls it: adapted by the installed plugins (hook
    ``ef_evaluation_adapt_retriever``; built-ins for callables, ``search`` methods and
    ``SourceManager``), with ``limit=`` bound when it takes one.

    Prepare once, call per query: ``prepared.call(query)`` gives the retriever's results as it
    returns them (an awaitable when ``prepared.is_async``), ``prepared.adapter`` is what the
    plugin adapted it to. A retriever that does not take ``limit`` returns what it returns; the
    runner cuts the results to ``limit`` when it maps them to doc ids.

    :param retriever: anything ``evaluate_retrieval`` accepts as a retriever.
    :param limit: how many results to ask for, an int >= 1.
    :raises TypeError: when no plugin knows how to call ``retriever``.

    >>> async def search(query, *, limit=10):
    ...     return ["d1"]
    >>> prepare_retriever(search, 5).is_async
    True
    """
    return _prepare(retriever, limit, adapt_retriever)


def retriever_identity(retriever: object, retriever_id: str | None = None) -> str:
    """The identity an evaluation records for ``retriever`` in its journal and manifest: a
    journal resumes only under the same identity.

    ``retriever_id`` when given; else the retriever's own ``retriever_id`` attribute when it is
    a string (the built-in indexes and ``HttpRetriever`` have one); else its qualified name. A
    retriever that runs elsewhere (another process, a cluster) should report the identity of
    what it runs, so its journals are interchangeable with an in-process evaluation's.

    >>> class Index:
    ...     retriever_id = "bm25(corpus=0123456789ab)"
    >>> retriever_identity(Index()), retriever_identity(Index(), "mine")
    ('bm25(corpus=0123456789ab)', 'mine')
    """
    return _identity(retriever, retriever_id)


def doc_id_getter(result_type: type) -> Callable[[Any], str] | None:
    """How the installed plugins map one result of ``result_type`` to its source doc id (hook
    ``ef_evaluation_doc_id_getter``), or ``None`` when none does.

    Resolved once per type: ask once, then call the getter per result. A plugin that sends
    results somewhere else in a compact form uses it to send the doc ids the runner would read.

    >>> from ef.segments import Segment
    >>> doc_id_getter(Segment)(Segment("d1", "some text"))
    'd1'
    """
    return HOST.doc_id_getter(result_type)


def _forget_plugin_answers() -> None:
    # Plans keep the ideal grades of the last few qrels, maybe computed by a plugin's pass.
    _plan._KNOWN_QRELS.clear()


@contextlib.contextmanager
def plugin_disabled(name: str) -> Iterator[None]:
    """Run the block as if the installed plugin ``name`` were not selected
    (``EF_EVALUATION_PLUGINS`` without it), then load it again as before.

    Its hooks are not called in the block: its metrics and readers are gone, and where it
    provides a faster path (a compiled parser, kernel or pass), the core's own code runs. What
    the core remembers of plugins' answers is forgotten on entry and on exit, so neither side
    reuses the other's results. Afterwards the installed plugins are loaded again, and the plugins
    registered in-process (:func:`ef.evaluation.testing.registered_plugin`) registered again.

    :param name: the plugin's name, as :func:`ef.evaluation.list_plugins` shows it.
    :raises ValueError: when no plugin of that name is loaded, or it is a built-in (built-ins
        are never switched off).

    >>> from ef.evaluation import hookimpl, list_plugins
    >>> from ef.evaluation.testing import registered_plugin
    >>> class Nothing:
    ...     @hookimpl
    ...     def ef_evaluation_register_metrics(self, register):
    ...         pass
    >>> with registered_plugin(Nothing(), name="nothing"):
    ...     with plugin_disabled("nothing"):
    ...         print("nothing" in [info.name for info in list_plugins()])
    ...     print("nothing" in [info.name for info in list_plugins()])
    False
    True
    """
    plugin = HOST.manager.get_plugin(name)
    if plugin is None:
        loaded = ", ".join(info.name for info in HOST.plugins() if not info.builtin)
        raise ValueError(f"no plugin named {name!r} is loaded; loaded: {loaded or 'none'}")
    if HOST.is_builtin(name):
        raise ValueError(f"{name!r} is a built-in plugin: built-ins are never switched off")
    in_process = [
        (info.name, HOST.manager.get_plugin(info.name))
        for info in HOST.plugins()
        if info.distribution is None and not info.builtin
    ]
    HOST.unregister(name, plugin)
    _forget_plugin_answers()
    try:
        yield
    finally:
        HOST.reset()  # the installed plugins load again, their distributions known
        _forget_plugin_answers()
        for known, registered in in_process:
            if HOST.manager.get_plugin(known) is None:
                HOST.register(registered, known)


def reference_ideal_grades(
    qrels: Mapping[str, Mapping[str, float]],
) -> dict[str, list[float]] | None:
    """Each query's ideal grades as the scoring core computes them from plain qrels: its
    positive grades, descending, in a stable sort (equal grades keep their judgement order, and
    ``1`` and ``1.0`` stay the objects they are), queries in qrels order.

    The reference for a compiled first pass over qrels (hook ``ef_evaluation_qrels_pass``).

    :returns: the grades, or ``None`` for qrels that are not plain (anything but a ``dict`` of
        ``dict`` with ``str`` ids and finite ``float`` or ``int`` grades), which the core
        checks more carefully.

    >>> reference_ideal_grades({"q1": {"d1": 1, "d2": 2.0, "d3": 0}, "q2": {"d1": -1}})
    {'q1': [2.0, 1], 'q2': []}
    """
    return plain_ideals(qrels)


def reference_trec_run_groups(
    path: PathArg,
) -> Iterator[tuple[str, dict[str, float], int, int, int]]:
    """Each run of consecutive lines of one query in the TREC run file ``path``: the one loop
    over a run file's lines behind :func:`ef.evaluation.read_trec_run`, without its final check.

    A doc listed twice keeps its last score, and a query may come back after another: the
    callers decide what either means (``read_trec_run`` refuses a doc listed twice).

    :returns: ``(query_id, {doc_id: score}, first line, lines, blank lines)`` per run of lines.
    :raises DatasetFormatError: naming the file and line, for a line ``read_trec_run`` refuses.
    """
    return trec_groups(path)


def reference_trec_queries(path: PathArg) -> Iterator[tuple[str, dict[str, float]]]:
    """The queries of the grouped TREC run file ``path``, one at a time, in file order: the
    built-in streaming reader behind ``evaluate_run(path, ...)``.

    :raises DatasetFormatError: naming the file and line, for every line ``read_trec_run``
        refuses, a doc listed twice for a query, and a query seen again after another one.
    """
    return trec_queries(path)
