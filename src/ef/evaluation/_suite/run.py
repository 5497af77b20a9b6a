"""``evaluate_suite``: every system on every dataset through the runner, resumable, one report.

Each dataset is read once; each (dataset, system) cell is :func:`evaluate_retrieval` with its own
journal (``JOURNAL_DIR/DATASET/SYSTEM.jsonl``) and index folder (``INDEX_DIR/DATASET/SYSTEM/``),
so a suite killed at any point and started again retrieves no finished query twice and builds
no index twice. The cells are then summarised (:mod:`ef.evaluation._suite.summary`).
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ef.evaluation._metric_names.api import check_metrics
from ef.evaluation._redact import redact_url
from ef.evaluation._report.reports import RetrievalEvalReport
from ef.evaluation._running.evaluate import evaluate_retrieval
from ef.evaluation._running.options import DEFAULT_K_VALUES, DEFAULT_METRICS
from ef.evaluation._suite.datasets import (
    SuiteDataset,
    as_suite_datasets,
    file_name,
    queries_source,
)
from ef.evaluation._suite.report import SuiteReport
from ef.evaluation._suite.results import write_cell, write_suite_index
from ef.evaluation._suite.summary import suite_report
from ef.evaluation._suite.systems import as_systems, system_retriever
from ef.evaluation._types import Qrels, Queries

__all__ = ["RETRIEVAL_OPTIONS", "evaluate_suite"]

PathArg = str | os.PathLike[str]

_OWN = {"retriever", "qrels", "queries", "k_values", "metrics", "progress", "journal"}
_PER_CELL = {"retriever_id", "save_run"}
RETRIEVAL_OPTIONS = tuple(
    name
    for name in inspect.signature(evaluate_retrieval).parameters
    if name not in _OWN | _PER_CELL
)
"""The keyword arguments of :func:`evaluate_retrieval` a suite passes on to every cell."""


def _count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def _say(progress: bool, line: str) -> None:
    if progress:
        print(line, file=sys.stderr, flush=True)


def _resumed(report: RetrievalEvalReport) -> int:
    journal = report.manifest.get("journal")
    resumed = journal.get("resumed", 0) if isinstance(journal, Mapping) else 0
    return resumed if isinstance(resumed, int) else 0


def _cell_line(report: RetrievalEvalReport, metric: str) -> str:
    value = report.metrics.get(metric)
    shown = "—" if value is None else f"{value:.4f}"
    said = f"{metric} = {shown} over {_count(report.n_queries, 'query', 'queries')}"
    resumed = _resumed(report)
    if resumed:
        said += f" ({resumed:,} resumed from the journal)"
    if report.failures:
        said += f", {len(report.failures):,} failed"
    return said


def _folder(root: PathArg | None, dataset: SuiteDataset, system: str) -> Path | None:
    return None if root is None else Path(root) / file_name(dataset.name) / file_name(system)


def _journal(root: PathArg | None, dataset: SuiteDataset, system: str) -> Path | None:
    if root is None:
        return None
    folder = Path(root) / file_name(dataset.name)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{file_name(system)}.jsonl"


def evaluate_suite(
    systems: Mapping[str, Any] | Sequence[str],
    datasets: Sequence[SuiteDataset | str | os.PathLike[str]],
    *,
    metrics: Sequence[str] = DEFAULT_METRICS,
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    metric: str = "ndcg@10",
    baseline: str | None = None,
    index_dir: PathArg | None = None,
    journal_dir: PathArg | None = None,
    results_dir: PathArg | None = None,
    progress: bool = False,
    tests: Sequence[str] = ("t-test", "randomization"),
    correction: str | None = "holm",
    alpha: float = 0.05,
    seed: int = 0,
    n_permutations: int = 10_000,
    **retrieval_options: Any,
) -> SuiteReport:
    """Evaluate every system on every dataset — a benchmark suite — and report it as BEIR does:
    a row per dataset, a column per system, the averages, and significance against a baseline.

    Each dataset is read once, through :func:`read_dataset`; each (dataset, system) cell is one
    :func:`evaluate_retrieval` with the same metrics, cutoffs and runner options, so a cell's
    numbers are exactly those of that call. With ``journal_dir``, each cell keeps a journal
    there (``DATASET/SYSTEM.jsonl``): a suite stopped at any point — killed, out of memory, a
    failed service — and run again resumes every cell where it stopped, asking no finished
    query again. With ``index_dir``, the index a ``bm25`` or ``st:MODEL`` system builds on a
    dataset is saved in ``DATASET/SYSTEM/`` there and reused. With ``results_dir``, each
    cell's report is written there as soon as it is done, in the layout
    :func:`merge_suite_results` reads (see :mod:`ef.evaluation._suite.results`). A retriever
    the suite built for a cell (from a spec or a factory) is shut down when the cell is done,
    if it has a ``shutdown()`` method: a factory returning a Ray plugin retriever spreads each
    cell's queries over a cluster, and its actors are freed before the next cell starts.

    :param systems: ``{name: system}``, or a list of spec strings named by themselves. A system
        is a spec as ``ef-eval retrieval --retriever`` takes it (``bm25``, ``st:MODEL``, a URL,
        ``module:attr``), a factory (a class, or a callable with a ``corpus`` parameter, and
        optionally ``index_dir``) called with each dataset's corpus, or a retriever used as it
        is on every dataset.
    :param datasets: :class:`SuiteDataset`\\ s, or strings ``[READER:]SOURCE[@SPLIT]``: a BEIR
        folder, ``builtin:NAME``, ``ir_datasets:ID`` (with the ir-datasets plugin) …
    :param metrics: the metrics of every cell, as :func:`evaluate_retrieval` takes them.
    :param k_values: the cutoffs of every cell.
    :param metric: the table's metric key, compared and counted in wins (``"ndcg@10"``).
    :param baseline: the system every other one is compared with on each dataset
        (:func:`compare`, needing the ``stats`` extra); ``None``: no comparison.
    :param index_dir: the folder of saved indexes, one per (dataset, system).
    :param journal_dir: the folder of journals, one per cell.
    :param results_dir: the folder of results files, one per cell, and ``suite.json``.
    :param progress: say on standard error which dataset and cell runs, what a journal spared,
        and each cell's result (and, within a cell, the runner's progress lines).
    :param tests: the significance tests of :func:`compare`.
    :param correction: the multiple-testing correction of :func:`compare`, over the systems
        compared with the baseline on one dataset.
    :param alpha: the significance level.
    :param seed: the seed of the randomised tests.
    :param n_permutations: the permutations of the randomisation test.
    :param retrieval_options: passed to every :func:`evaluate_retrieval` (``limit``,
        ``max_concurrency``, ``timeout``, ``retries``, ``on_error`` …; see
        :data:`RETRIEVAL_OPTIONS`).
    :raises ValueError: for no system or dataset, names that clash, an unknown spec, option or
        ``metric`` name, or a baseline that is not a system (all before anything runs); for a
        dataset where no judged query has a text (naming it and its queries file).

    >>> from ef.evaluation import evaluate_suite
    >>> report = evaluate_suite({"bm25": "bm25"}, ["builtin:stdlib-docs"], k_values=(10,))
    >>> report.datasets, report.systems, round(report.value("stdlib-docs", "bm25"), 4)
    (('stdlib-docs',), ('bm25',), 0.5316)
    """
    unknown = sorted(set(retrieval_options) - set(RETRIEVAL_OPTIONS))
    if unknown:
        raise ValueError(
            f"unknown option {unknown[0]!r} for evaluate_suite; the cells take: "
            f"{', '.join(RETRIEVAL_OPTIONS)}"
        )
    named = as_systems(systems)
    suite = as_suite_datasets(datasets)
    check_metrics([metric])  # an unknown name fails now, not once every cell has run
    if baseline is not None and baseline not in named:
        raise ValueError(f"baseline {baseline!r} is not one of the systems: {', '.join(named)}")
    compare_options = {
        "tests": list(tests),
        "correction": correction,
        "alpha": alpha,
        "seed": seed,
        "n_permutations": n_permutations,
    }
    parameters = {
        "metrics": list(metrics),
        "k_values": list(k_values),
        "metric": metric,
        "baseline": baseline,
        **{key: _plain(value) for key, value in retrieval_options.items()},
    }
    index = {
        "datasets": [d.name for d in suite],
        "systems": list(named),
        "metric": metric,
        "baseline": baseline,
        "compare_options": compare_options,
        "datasets_info": {},
    }
    if results_dir is not None:
        write_suite_index(results_dir, index)
    total = len(suite) * len(named)
    sizes = (_count(len(suite), "dataset"), _count(len(named), "system"), _count(total, "cell"))
    _say(progress, "suite: {} × {} = {}".format(*sizes))
    cells: dict[str, dict[str, RetrievalEvalReport]] = {}
    info: dict[str, Any] = {}
    done = 0
    for position, dataset in enumerate(suite, 1):
        corpus, queries, qrels = dataset.read()
        _check_queries(dataset, queries, qrels)
        info[dataset.name] = {
            "source": redact_url(dataset.source),
            "reader": dataset.reader,
            "split": dataset.split,
            "documents": len(corpus),
            "queries": len(queries),
            "judged_queries": len(qrels),
        }
        _say(
            progress,
            f"dataset {position}/{len(suite)} {dataset.name}: {_count(len(corpus), 'document')}, "
            f"{_count(len(qrels), 'judged query', 'judged queries')}",
        )
        for name, system in named.items():
            done += 1
            _say(progress, f"cell {done}/{total} {dataset.name} × {name}: running")
            retriever = system_retriever(
                system, corpus, index_dir=_folder(index_dir, dataset, name), progress=progress
            )
            try:
                report = evaluate_retrieval(
                    retriever,
                    qrels,
                    queries,
                    metrics=metrics,
                    k_values=k_values,
                    progress=progress or None,
                    journal=_journal(journal_dir, dataset, name),
                    retriever_id=name,
                    **retrieval_options,
                )
            finally:
                if retriever is not system:
                    _release(retriever)
            cells.setdefault(dataset.name, {})[name] = report
            _say(
                progress,
                f"cell {done}/{total} {dataset.name} × {name}: {_cell_line(report, metric)}",
            )
            if results_dir is not None:
                write_cell(results_dir, dataset.name, name, report, info[dataset.name])
        if results_dir is not None:
            write_suite_index(results_dir, {**index, "datasets_info": info})
    return suite_report(
        cells,
        systems=tuple(named),
        datasets=tuple(d.name for d in suite),
        metric=metric,
        baseline=baseline,
        compare_options=compare_options,
        datasets_info=info,
        manifest={"parameters": parameters},
    )


def _check_queries(dataset: SuiteDataset, queries: Queries, qrels: Qrels) -> None:
    """Refuse a dataset where no judged query has a text, naming it and where its queries
    come from, before any of its cells runs."""
    if qrels and not any(query_id in queries for query_id in qrels):
        held = _count(len(queries), "query", "queries")
        judged = _count(len(qrels), "judged query", "judged queries")
        raise ValueError(
            f"the suite's dataset {dataset.name!r}: {queries_source(dataset)} holds {held}, "
            f"none of its {judged}, so no query can be scored"
        )


def _release(retriever: Any) -> None:
    """Stop what the suite built for one cell once the cell is done: a retriever holding
    workers (a Ray plugin retriever's actors) frees them through its ``shutdown()``."""
    shutdown = getattr(retriever, "shutdown", None)
    if callable(shutdown):
        shutdown()


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, type):
        return value.__qualname__
    return repr(value)
