"""What ``--retriever SPEC`` names: an index built over the corpus, a service, or your object."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from ef.evaluation import (
    RETRIEVER_FORMS,
    Corpus,
    is_retriever_spec,
    redact_url,
    retriever_from_spec,
)
from ef.evaluation.cli._common import EXIT_USAGE, CliError

__all__ = [
    "RETRIEVER_FORMS",
    "add_http_options",
    "http_options",
    "is_retriever_spec",
    "resolve_retriever",
]


def _header(text: str) -> tuple[str, str]:
    name, colon, value = text.partition(":")
    if not colon or not name.strip():
        raise argparse.ArgumentTypeError(f"expected 'Name: value', got {text!r}")
    return name.strip(), value.strip()


def add_http_options(parser: argparse.ArgumentParser) -> None:
    """The ``--http-*`` options of a URL retriever, as one argument group."""
    http = parser.add_argument_group("HTTP retriever (a URL)")
    http.add_argument("--http-method", choices=("POST", "GET"), default="POST")
    http.add_argument(
        "--http-results",
        default="results",
        metavar="PATH",
        help="dotted path to the results in the answer ('' for the answer itself)",
    )
    http.add_argument("--http-id-field", default="id", metavar="NAME", help="a result's doc id")
    http.add_argument(
        "--http-score-field", metavar="NAME", help="a result's score, saved with --save-run"
    )
    http.add_argument(
        "--http-batch-url",
        metavar="URL",
        help="the service's endpoint for a batch of queries (a path such as /search/batch, or a "
        'URL on the same service): POST {"queries": [...], "query_ids": [...], "limit"}, '
        'answering {"answers": [one answer per query, each shaped as the one-query answer]}',
    )
    http.add_argument(
        "--http-batch-answers",
        default="answers",
        metavar="PATH",
        help="dotted path to the list of answers in a batch's answer",
    )
    http.add_argument(
        "--http-batch-id-field",
        default="query_id",
        metavar="PATH",
        help="dotted path to the query id an answer of a batch carries, matching it to its "
        "query; answers that carry none are taken in the order asked",
    )
    http.add_argument(
        "--http-batch-require-ids",
        action="store_true",
        help="fail each query of a batch whose answers carry no query ids, instead of taking "
        "them in the order asked",
    )
    http.add_argument(
        "--http-header",
        type=_header,
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="a request header (repeatable)",
    )


def http_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of :class:`~ef.evaluation.HttpRetriever` the options give."""
    return {
        "method": args.http_method,
        "results": args.http_results,
        "id_field": args.http_id_field,
        "score_field": args.http_score_field,
        "headers": dict(args.http_header) or None,
        "batch_url": args.http_batch_url,
        "batch_answers": args.http_batch_answers,
        "batch_id_field": args.http_batch_id_field,
        "batch_require_ids": args.http_batch_require_ids,
    }


def resolve_retriever(
    spec: str,
    corpus: Corpus,
    *,
    segment_size: int | None = None,
    overlap: int | None = None,
    http_options: Mapping[str, Any] | None = None,
    index_dir: str | None = None,
    progress: bool = False,
) -> Any:
    """The retriever ``--retriever SPEC`` names, built over ``corpus`` when it needs it.

    - ``bm25``, ``st:MODEL`` — ``ingest(corpus, embedder=SPEC, ...)``, whole documents unless
      given a ``segment_size``; ``evaluate_retrieval`` asks it for documents, so ``--limit``
      counts documents;
    - ``http://…``, ``https://…`` — an :class:`~ef.evaluation.HttpRetriever` for the URL;
    - ``module:attr`` — the object imported from ``module`` (``attr`` may be dotted): a class is
      instantiated with the corpus, ``attr(corpus)``; anything else — a callable
      ``query -> results``, an object with ``search(query, *, limit)``, a ``SourceManager`` —
      is the retriever as it is.

    :param spec: the ``--retriever`` value.
    :param corpus: the dataset's documents, ``{doc_id: text}``.
    :param segment_size: passed to ``ingest`` (``None``: whole documents).
    :param overlap: passed to ``ingest`` (``None``: a quarter of ``segment_size``).
    :param http_options: keyword arguments for the HTTP retriever.
    :param index_dir: passed to ``ingest``: reuse the index saved there, or save it there.
    :param progress: passed to ``ingest``: show each stage of indexing on standard error.
    :raises CliError: for a spec of no known form (a usage error listing the forms), or a
        module or attribute that cannot be imported.

    >>> resolve_retriever("ef.evaluation:evaluate_run", {}).__name__
    'evaluate_run'
    """
    if not is_retriever_spec(spec):
        forms = "; ".join(RETRIEVER_FORMS)
        message = f"unknown retriever {redact_url(spec)!r}; expected one of: {forms}"
        raise CliError(message, exit_code=EXIT_USAGE)
    if spec == "bm25" or spec.startswith("st:"):
        return retriever_from_spec(
            spec,
            corpus,
            segment_size=segment_size,
            overlap=overlap,
            index_dir=index_dir,
            progress=progress,
        )
    if spec.startswith(("http://", "https://")):
        try:
            return retriever_from_spec(spec, corpus, http_options=http_options)
        except (ValueError, TypeError) as error:
            # A bad header, a bad port, URL credentials beside an Authorization header: the
            # command line is wrong, and nothing has been sent. The message holds no secret.
            message = f"--retriever {redact_url(spec)}: {error}"
            raise CliError(message, exit_code=EXIT_USAGE) from None
    try:
        return retriever_from_spec(spec, corpus)
    except ImportError as error:  # the module, or the attribute in it, is not there
        raise CliError(f"--retriever {spec}: {error}") from error
