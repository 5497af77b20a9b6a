"""``ef-eval retrieval DATASET --retriever SPEC``: a baseline on a dataset in one command.

The dataset is anything a registered reader reads (a BEIR folder by default, or
``builtin:NAME``). The retriever is named by ``--retriever`` (what each form means is in
:mod:`ef.evaluation.cli._retrievers`); the evaluation is
:func:`~ef.evaluation.evaluate_retrieval` with the runner's options as flags. On a terminal,
progress bars on standard error show the indexing, then the queries done, the rate, the
failures and the running NDCG@10; anywhere else a plain line says the same every 10 s
(``EF_PROGRESS_INTERVAL``): the library's ``progress=True``. What the command writes — the
report, ``--save-run``, the failures — and what it keeps when a step fails is in
:mod:`ef.evaluation.cli._retrieval_outputs`. This module is the command line and the handler.
"""

from __future__ import annotations

import argparse
import os
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ef.evaluation import (
    IncompleteEvaluationWarning,
    RetrievalEvalReport,
    evaluate_retrieval,
    read_dataset,
    redact_url,
    registry,
    resolve_builtin,
)
from ef.evaluation.cli._arguments import add_html_option, add_interval_options
from ef.evaluation.cli._common import (
    EXIT_USAGE,
    CliError,
    add_metric_options,
    add_output_options,
    check_names,
    check_outputs,
    command_outputs,
    count,
    emit,
    keyword_defaults,
    positive_int,
    retrieval_options,
    seconds,
)
from ef.evaluation.cli._extensions import report_finished
from ef.evaluation.cli._groups import add_groups_option, read_groups, report_table
from ef.evaluation.cli._html import runs_html
from ef.evaluation.cli._output import report_data
from ef.evaluation.cli._retrieval_outputs import RunJournal, warn_failures
from ef.evaluation.cli._retrievers import (
    RETRIEVER_FORMS,
    add_http_options,
    http_options,
    resolve_retriever,
)

if TYPE_CHECKING:
    from ef.evaluation.cli._common import Subparsers

__all__ = ["RETRIEVER_FORMS", "add_parser", "handle", "resolve_retriever"]

DESCRIPTION = """\
Score a retriever on a dataset: a BEIR folder (corpus.jsonl, queries.jsonl, qrels) or a
bundled one such as builtin:stdlib-docs. --retriever is 'bm25' or 'st:MODEL' (the dataset's
corpus is indexed first, with ef.source_manager.ingest), 'module:attr' (an object imported from
your code: a class is instantiated with the corpus, {doc_id: text}; anything else - a function
query -> results, an object with search(query, *, limit) - is used as it is; the current
directory is importable), or a URL (a search service over HTTP: POST {"query", "limit"},
answering {"results": [{"id": ...}, ...]}; the --http-* options change that).
"""


def add_parser(subparsers: Subparsers) -> None:
    """Register the ``retrieval`` subcommand."""
    parser = subparsers.add_parser(
        "retrieval",
        help="score a retriever (bm25, st:MODEL, module:attr or a URL) on a dataset",
        description=DESCRIPTION,
    )
    parser.add_argument(
        "dataset", metavar="DATASET", help="a BEIR folder, or builtin:NAME (a bundled dataset)"
    )
    parser.add_argument(
        "--retriever",
        required=True,
        metavar="SPEC",
        help="what answers the queries: " + " | ".join(RETRIEVER_FORMS),
    )
    parser.add_argument(
        "--reader", default="beir", metavar="NAME", help="the dataset reader (default: beir)"
    )
    index = parser.add_argument_group("indexing (bm25 and st:MODEL)")
    index.add_argument(
        "--segment-size",
        type=positive_int,
        metavar="WORDS",
        help="cut documents into segments of at most WORDS words (default: whole documents)",
    )
    index.add_argument(
        "--overlap",
        type=count,
        metavar="WORDS",
        help="words a segment shares with the previous one (default: a quarter of WORDS)",
    )
    index.add_argument(
        "--index-dir",
        metavar="DIR",
        help="reuse the index saved in DIR when it matches the corpus and model, else build it "
        "and save it there",
    )
    defaults = keyword_defaults(evaluate_retrieval)
    runner = parser.add_argument_group("running")
    runner.add_argument(
        "--max-concurrency",
        type=positive_int,
        metavar="N",
        help="queries in flight at once (default: 1 for a sync retriever, 16 for an async one)",
    )
    runner.add_argument(
        "--batch-size",
        type=positive_int,
        metavar="N",
        help="queries per call for a retriever that answers batches (bm25, st:MODEL, an "
        "object with search_batch, a URL with --http-batch-url); 1 asks one query at a time "
        "(default: the retriever's own batch_size, else 32)",
    )
    runner.add_argument(
        "--timeout", type=seconds, metavar="SECONDS", help="time allowed per attempt"
    )
    runner.add_argument(
        "--retries",
        type=count,
        metavar="N",
        help=f"extra attempts after a timeout or connection error (default: {defaults['retries']})",
    )
    runner.add_argument(
        "--on-error",
        choices=("raise", "record"),
        help="stop at the first failed query (raise), or record it and go on (record) "
        f"(default: {defaults['on_error']})",
    )
    runner.add_argument(
        "--journal",
        metavar="PATH",
        help="record each finished query in PATH; rerunning with it resumes where it stopped",
    )
    runner.add_argument(
        "--limit",
        type=positive_int,
        metavar="N",
        help="results to retrieve per query (default: the largest cutoff; bm25 and st:MODEL "
        "count documents)",
    )
    runner.add_argument(
        "--save-run",
        metavar="FILE",
        help="also write the rankings as a run file: TREC, or .json, .jsonl, .parquet by its "
        "name ('.gz' compresses)",
    )
    runner.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar or progress lines",
    )
    add_http_options(parser)
    add_metric_options(parser, evaluate_retrieval, cutoffs=True)
    add_interval_options(parser)
    add_groups_option(parser)
    add_output_options(parser)
    add_html_option(parser, "with the per-query drill-down")
    parser.set_defaults(handler=handle)


def _check_folders(args: argparse.Namespace) -> None:
    """Refuse, before retrieving anything, an output whose folder does not exist."""
    for path in (args.output, args.save_run):
        if path is None or path == "-":
            continue
        folder = os.path.dirname(os.path.realpath(path))
        if not os.path.isdir(folder):
            raise CliError(f"cannot write {path}: the folder {folder} does not exist")


def handle(args: argparse.Namespace) -> int:
    """Read the dataset, build the retriever, evaluate it and print the metrics.

    The report is written first; ``--save-run`` after it, from the journal (see
    :mod:`ef.evaluation.cli._retrieval_outputs`).
    """
    check_names(args.metrics, registry().metrics, "metric")
    check_names([args.reader], registry().readers, "dataset reader")
    if args.overlap is not None and args.segment_size is None:
        raise CliError(
            "--overlap needs --segment-size: without it documents are indexed whole",
            exit_code=EXIT_USAGE,
        )
    if args.overlap is not None and args.overlap >= args.segment_size:
        raise CliError(
            f"--overlap ({args.overlap}) must be smaller than --segment-size ({args.segment_size})",
            exit_code=EXIT_USAGE,
        )
    source = resolve_builtin(args.dataset)
    check_outputs(command_outputs(args), [os.fspath(source)])
    _check_folders(args)
    groups = read_groups(args)
    corpus, queries, qrels = read_dataset(source, reader=args.reader)
    try:
        retriever = resolve_retriever(
            args.retriever,
            corpus,
            segment_size=args.segment_size,
            overlap=args.overlap,
            http_options=http_options(args),
            index_dir=args.index_dir,
            progress=not args.no_progress,
        )
    except ImportError as error:
        raise CliError(f"--retriever {redact_url(args.retriever)}: {error}") from error
    except FileExistsError as error:
        raise CliError(f"--index-dir: {error}", exit_code=EXIT_USAGE) from error
    options = retrieval_options(args)
    journal = RunJournal(args.journal, args.save_run, rankings=args.html is not None)
    with journal.evaluating(), warnings.catch_warnings():
        # The library's warning speaks of report.failures: the CLI says it in its own terms.
        warnings.simplefilter("ignore", IncompleteEvaluationWarning)
        report = evaluate_retrieval(
            retriever,
            qrels,
            queries,
            **options,
            progress=not args.no_progress,
            journal=journal.path,
            groups=groups,
        )
    warn_failures(report, output_format=args.format)
    if args.index_dir is not None:
        report = _with_index(report, retriever, args.index_dir)
    system = f"{args.retriever} on {_dataset_name(args.dataset)}"
    title = f"{system}: {len(corpus):,} documents, {report.n_queries} queries"
    table = report_table(
        title, {args.retriever: report}, label="retriever", per_query=args.per_query
    )
    try:
        emit(args, table, report_data(report))
    except CliError as error:
        if journal.path is None:
            raise
        raise CliError(f"{error}; {journal.hint()}") from error
    tag = _run_tag(redact_url(args.retriever))
    run = journal.rankings(tag) if args.html else None
    journal.write_run(tag, run)
    if args.html:
        runs = None if run is None else {args.retriever: run}
        reports = {args.retriever: report}
        title = redact_url(system)
        runs_html(
            args.html, reports, runs=runs, qrels=qrels, title=title, corpus=corpus, queries=queries
        )
    journal.discard()
    report_finished(args, "retrieval", {args.retriever: report}, dataset=args.dataset)
    return 0


def _with_index(report: RetrievalEvalReport, retriever: Any, index_dir: str) -> RetrievalEvalReport:
    """``report`` with the manifest saying whether ``--index-dir`` was reused or (re)built."""
    loaded = getattr(retriever, "loaded_from", None)
    index = {"path": index_dir, "reused": loaded is not None}
    return attrs.evolve(report, manifest={**report.manifest, "index": index})


def _dataset_name(source: str) -> str:
    return source if source.startswith("builtin:") else Path(source).name or source


def _run_tag(spec: str) -> str:
    """A TREC run tag from the retriever spec: no whitespace, at most 40 characters."""
    return re.sub(r"\s+", "_", spec)[:40] or "ef"
