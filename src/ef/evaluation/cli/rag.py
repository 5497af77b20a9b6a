"""``ef-eval rag SAMPLES.jsonl``: score RAG samples with the deterministic lexical metrics.

The file holds one JSON object per line in the :class:`~ef.evaluation.RagSample` shape
(``user_input``, ``response``, ``retrieved_contexts``, ``reference``, and the optional
``reference_contexts``, ``retrieved_context_ids``, ``reference_context_ids``); blank lines are
skipped, gzip is accepted. Scoring is :func:`~ef.evaluation.evaluate_rag`; any problem with a
sample is reported with the file and line it came from.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ef.evaluation import RagEvalReport, evaluate_rag, read_rag_samples, registry
from ef.evaluation.cli._arguments import add_html_option, add_interval_options, interval_options
from ef.evaluation.cli._common import (
    Cell,
    CliError,
    Table,
    add_metric_options,
    add_output_options,
    check_names,
    check_outputs,
    command_outputs,
    emit,
)
from ef.evaluation.cli._extensions import report_finished
from ef.evaluation.cli._groups import add_groups_option, grouped_rag_rows, read_groups

if TYPE_CHECKING:
    from ef.evaluation.cli._common import Subparsers

__all__ = ["add_parser", "handle", "rag_table", "read_samples"]

DESCRIPTION = """\
Score RAG samples with deterministic, reference-based lexical metrics (no LLM): exact match
and token F1 of the response against the reference, lexical context recall and precision, and
the share of samples that retrieved any context. --metrics also takes Ragas' deterministic
metrics (rouge_score, bleu_score, chrf_score, non_llm_string_similarity, string_present,
raw_exact_match, non_llm_context_recall, non_llm_context_precision_with_reference,
id_based_context_recall, id_based_context_precision; the rag-metrics extra). SAMPLES is a JSON
Lines file, one RagSample object per line: {"user_input", "response", "retrieved_contexts",
"reference"}, and for the context-matching metrics "reference_contexts",
"retrieved_context_ids", "reference_context_ids".
"""

# evaluate_rag names a sample by its 0-based index; the file:line replaces that prefix.
_SAMPLE_PREFIX = re.compile(r"^sample (\d+): ")
_SAMPLE_LINE = "one JSON object (a RagSample) per line"


def add_parser(subparsers: Subparsers) -> None:
    """Register the ``rag`` subcommand."""
    parser = subparsers.add_parser(
        "rag", help="score RAG samples from a JSON Lines file", description=DESCRIPTION
    )
    parser.add_argument("samples", metavar="SAMPLES", help="a JSON Lines file of RagSample objects")
    add_metric_options(parser, evaluate_rag, cutoffs=False)
    add_interval_options(parser)
    add_groups_option(parser)
    add_output_options(parser)
    add_html_option(parser, "each sample's texts and values")
    parser.set_defaults(handler=handle)


def read_samples(path: str) -> list[tuple[int, dict[str, Any]]]:
    """:func:`~ef.evaluation.read_rag_samples`, refusing a file without any sample.

    :raises DatasetFormatError: naming the file and line, for a line that is not a strict JSON
        object (see :func:`~ef.evaluation.read_rag_samples`).
    :raises CliError: if the file holds no sample at all.
    """
    samples = read_rag_samples(path)
    if not samples:
        raise CliError(f"{path}: no samples; expected {_SAMPLE_LINE}")
    return samples


def _evaluate(
    path: str, samples: list[tuple[int, dict[str, Any]]], **options: Any
) -> RagEvalReport:
    """:func:`evaluate_rag`, with an error about a sample pinned to its file and line."""
    current = 0

    def each() -> Iterator[dict[str, Any]]:
        nonlocal current
        for number, sample in samples:
            current = number  # evaluate_rag checks and scores each sample as it is drawn
            yield sample

    try:
        return evaluate_rag(each(), **options)
    except (ValueError, TypeError) as error:
        if not current:  # nothing was drawn: the error is not about a sample
            raise
        message = str(error)
        named = _SAMPLE_PREFIX.match(message)
        if named is not None:  # the sample named, not always the last one drawn
            current = samples[int(named[1])][0]
            message = message[named.end() :]
        raise CliError(f"{path}:{current}: {message}") from error
    except Exception as error:
        if current:
            error.add_note(f"in {path}:{current}")
        raise


def rag_table(title: str, report: RagEvalReport, lines: list[int], *, per_query: bool) -> Table:
    """The means (one row per metric, with how many samples it applied to), or every sample.

    :param title: what was evaluated.
    :param report: the report of :func:`evaluate_rag`.
    :param lines: the line number of each sample, in order (the per-sample rows show it).
    :param per_query: one row per sample instead of the means.

    >>> report = evaluate_rag([{'response': 'Paris', 'reference': 'Paris'}],
    ...     metrics=['exact_match'])
    >>> rag_table("t", report, [1], per_query=False).rows
    (('exact_match', 1.0, 1),)
    """
    names = list(report.coverage)
    rows: list[tuple[Cell, ...]]
    if per_query and report.groups:
        rows = [
            (line, ", ".join(groups) or None, *(values.get(name) for name in names))
            for line, groups, values in zip(
                lines, report.sample_groups, report.per_sample, strict=True
            )
        ]
        return Table(title, ("line", "groups", *names), rows)
    if per_query:
        rows = [
            (line, *(values.get(name) for name in names))
            for line, values in zip(lines, report.per_sample, strict=True)
        ]
        return Table(title, ("line", *names), rows)
    if report.groups:
        return Table(title, ("group", "samples", *names), grouped_rag_rows(report))
    rows = [(name, report.metrics.get(name), report.coverage[name]) for name in names]
    if report.intervals is None:
        return Table(title, ("metric", "mean", "samples"), rows)
    bounds = [report.intervals.bounds.get(name) or (None, None) for name in names]
    rows = [(*row, *pair) for row, pair in zip(rows, bounds, strict=True)]
    title = f"{title}; {report.intervals.describe()}"
    return Table(title, ("metric", "mean", "samples", "low", "high"), rows)


def handle(args: argparse.Namespace) -> int:
    """Score the samples and print the mean of each metric (or each sample's values)."""
    check_names(args.metrics, registry().rag_metrics, "RAG metric")
    check_outputs(command_outputs(args), [args.samples])
    samples = read_samples(args.samples)
    options: dict[str, Any] = {} if args.metrics is None else {"metrics": args.metrics}
    options |= interval_options(args)
    groups = read_groups(args)
    if groups is not None:
        options["groups"] = groups
    report = _evaluate(args.samples, samples, **options)
    title = f"RAG metrics over {report.n_samples} samples from {Path(args.samples).name}"
    lines = [number for number, _ in samples]
    table = rag_table(title, report, lines, per_query=args.per_query)
    emit(args, table, report.to_dict(), inputs=[args.samples])
    if args.html:
        title = f"RAG evaluation of {Path(args.samples).name}"
        report.to_html(args.html, samples=[sample for _, sample in samples], title=title)
    report_finished(args, "rag", {Path(args.samples).name: report}, dataset=args.samples)
    return 0
