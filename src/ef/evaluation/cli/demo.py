"""``ef-eval demo``: the built-in BM25 retriever scored on the bundled dataset, nothing to set up.

The dataset is ``builtin:stdlib-docs`` — 1,098 docstrings of Python's standard library, 40
"how do I …" queries and graded judgements (its README says how they were made); the retriever
is ``ingest(corpus, embedder="bm25")``, which needs the ``bm25`` extra. Both sit behind one
function each, :func:`demo_dataset` and :func:`demo_retriever`, so either can be swapped for a
real one — ``ef-eval retrieval`` does exactly that.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ef.evaluation import Corpus, Qrels, Queries, evaluate_retrieval, read_beir, registry
from ef.evaluation.cli._arguments import add_interval_options
from ef.evaluation.cli._common import (
    CliError,
    add_metric_options,
    add_output_options,
    check_names,
    emit,
    retrieval_options,
    retrieval_table,
)
from ef.source_manager import SearchableCorpus, ingest

if TYPE_CHECKING:
    from ef.evaluation.cli._common import Subparsers

__all__ = [
    "DEMO_DATASET",
    "DEMO_K_VALUES",
    "DEMO_SOURCE",
    "add_parser",
    "demo_dataset",
    "demo_retriever",
    "handle",
]

DEMO_DATASET = "stdlib-docs"
"""The bundled dataset the demo scores on, ``builtin:stdlib-docs``."""

DEMO_SOURCE = f"builtin:{DEMO_DATASET}"
"""How the readers and ``ef-eval retrieval`` name that dataset."""

DEMO_K_VALUES = (1, 5, 10)
"""The demo's default cutoffs: NDCG@10, the headline number, and two shallower views."""


def demo_dataset() -> tuple[Corpus, Queries, Qrels]:
    """The demo's ``(corpus, queries, qrels)``: the bundled ``stdlib-docs`` collection.

    >>> corpus, queries, qrels = demo_dataset()
    >>> len(corpus), len(queries), queries['q02']
    (1098, 40, 'check whether a file exists')
    >>> qrels['q02']['os.path.exists']
    3.0
    """
    return read_beir(DEMO_SOURCE)


def demo_retriever(corpus: Corpus) -> SearchableCorpus:
    """The built-in BM25 retriever over ``corpus``: ``ingest(corpus, embedder="bm25")``.

    :param corpus: ``{doc_id: text}``.
    :raises ImportError: naming the ``bm25`` extra when it is not installed.

    >>> index = demo_retriever({'a': 'red apples', 'b': 'green apples and pears'})
    >>> [hit.segment.source_id for hit in index.search('pears')]
    ['b']
    """
    return ingest(corpus, embedder="bm25")


def add_parser(subparsers: Subparsers) -> None:
    """Register the ``demo`` subcommand."""
    parser = subparsers.add_parser(
        "demo",
        help="score the built-in BM25 retriever on the bundled dataset (no files needed)",
        description="Score the built-in BM25 retriever (ingest(corpus, embedder='bm25'), the "
        f"bm25 extra) on the bundled dataset {DEMO_SOURCE}: 1,098 docstrings "
        "of Python's standard library, 40 questions, graded judgements. Cutoffs default to "
        f"{','.join(map(str, DEMO_K_VALUES))} here. 'ef-eval retrieval "
        f"{DEMO_SOURCE} --retriever ...' scores another retriever on it.",
    )
    add_metric_options(parser, evaluate_retrieval, cutoffs=True)
    add_interval_options(parser)
    add_output_options(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run the demo evaluation and print the metrics."""
    check_names(args.metrics, registry().metrics, "metric")
    corpus, queries, qrels = demo_dataset()
    try:
        retriever = demo_retriever(corpus)
    except ImportError as error:
        raise CliError(str(error)) from error
    options = {"k_values": DEMO_K_VALUES, **retrieval_options(args)}
    report = evaluate_retrieval(retriever, qrels, queries, **options)
    title = f"BM25 on {DEMO_SOURCE}: {len(corpus):,} documents, {report.n_queries} queries"
    table = retrieval_table(title, {"bm25": report}, label="retriever", per_query=args.per_query)
    emit(args, table, report.to_dict())
    return 0
