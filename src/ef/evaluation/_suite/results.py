"""A suite's results on disk, one JSON file per cell, and suites merged from several folders.

The layout of a results folder (``docs/suites.md`` documents it for users)::

    RESULTS/
      suite.json              {"format": "ef-evaluation-suite", "format_version": 1,
                               "datasets": [...], "systems": [...], "metric": "ndcg@10",
                               "baseline": "bm25" | null, "compare_options": {...},
                               "datasets_info": {NAME: {"source", "reader", "split", ...}}}
      DATASET/SYSTEM.json     {"format": "ef-evaluation-suite-cell", "format_version": 1,
                               "dataset": NAME, "system": NAME, "dataset_info": {...},
                               "report": <RetrievalEvalReport.to_dict(), manifest included>}

``DATASET`` and ``SYSTEM`` are the names made safe as file names
(:func:`~ef.evaluation._suite.datasets.file_name`). Every file is written atomically; a cell's
file is written as soon as the cell is done. Folders written by suites on other machines, or
by runs over parts of the datasets or systems, merge into one report
(:func:`merge_suite_results`): the averages and comparisons are computed afresh from the cells,
so a merge of the halves of a suite equals the whole. A merge reads each file as every saved
report is read (a regular file of bounded size, strict JSON naming no key twice) and checks
each cell's means against its per-query values, so a hand-edited mean never reaches the table.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ef.evaluation._io.atomic import write_text_atomically
from ef.evaluation._io.files import read_regular
from ef.evaluation._io.lines import MAX_JSON_DOCUMENT
from ef.evaluation._json import loads_strict
from ef.evaluation._metric_names.api import lookup_metrics
from ef.evaluation._report.intervals import RELATIVE_TOLERANCE
from ef.evaluation._report.reports import RetrievalEvalReport
from ef.evaluation._scoring.aggregation import Aggregation, aggregate
from ef.evaluation._suite.datasets import file_name
from ef.evaluation._suite.report import SuiteReport
from ef.evaluation._suite.summary import suite_report

__all__ = [
    "CELL_FORMAT",
    "SUITE_FORMAT",
    "cell_path",
    "merge_suite_results",
    "write_cell",
    "write_suite_index",
    "write_suite_results",
]

SUITE_FORMAT = "ef-evaluation-suite"
CELL_FORMAT = "ef-evaluation-suite-cell"
FORMAT_VERSION = 1
_INDEX = "suite.json"
_UNSET: Any = object()


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with write_text_atomically(path, compress=False) as out:
        out.write(json.dumps(data, indent=1, allow_nan=False, ensure_ascii=False) + "\n")


def cell_path(folder: str | os.PathLike[str], dataset: str, system: str) -> Path:
    """Where the cell of ``system`` on ``dataset`` is kept in the results ``folder``."""
    return Path(folder) / file_name(dataset) / f"{file_name(system)}.json"


def write_cell(
    folder: str | os.PathLike[str],
    dataset: str,
    system: str,
    report: RetrievalEvalReport,
    dataset_info: Mapping[str, Any],
) -> Path:
    """Write one cell's results file (atomically) and return its path."""
    path = cell_path(folder, dataset, system)
    data = {
        "format": CELL_FORMAT,
        "format_version": FORMAT_VERSION,
        "dataset": dataset,
        "system": system,
        "dataset_info": dict(dataset_info),
        "report": report.to_dict(),
    }
    _write_json(path, data)
    return path


def write_suite_index(folder: str | os.PathLike[str], index: Mapping[str, Any]) -> Path:
    """Write ``suite.json``: the suite's order of datasets and systems and its parameters."""
    path = Path(folder) / _INDEX
    _write_json(path, {"format": SUITE_FORMAT, "format_version": FORMAT_VERSION, **index})
    return path


def _index_of(report: SuiteReport) -> dict[str, Any]:
    return {
        "datasets": list(report.datasets),
        "systems": list(report.systems),
        "metric": report.metric,
        "baseline": report.baseline,
        "compare_options": report.manifest.get("compare_options", {}),
        "datasets_info": report.datasets_info,
    }


def write_suite_results(report: SuiteReport, folder: str | os.PathLike[str]) -> Path:
    """Write ``report`` as a results folder (``suite.json`` and one file per cell).

    :returns: the folder.
    """
    for dataset, row in report.cells.items():
        info = report.datasets_info.get(dataset, {})
        for system, cell in row.items():
            write_cell(folder, dataset, system, cell, info)
    write_suite_index(folder, _index_of(report))
    return Path(folder)


def _read_json(path: Path, expected: str) -> dict[str, Any]:
    text = read_regular(path, MAX_JSON_DOCUMENT)  # a FIFO or a device is refused, not waited on
    try:
        data = loads_strict(text, unique_keys=True)
    except ValueError as error:
        raise ValueError(f"{path}: not a suite results file: {error}") from None
    if not isinstance(data, dict) or data.get("format") != expected:
        raise ValueError(f"{path}: not a suite results file (expected format {expected!r})")
    if data.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{path}: format_version {data.get('format_version')!r}; this release reads "
            f"{FORMAT_VERSION}"
        )
    return data


def _read_cell(path: Path, dataset: str, system: str) -> tuple[RetrievalEvalReport, Any]:
    data = _read_json(path, CELL_FORMAT)
    if (data.get("dataset"), data.get("system")) != (dataset, system):
        raise ValueError(
            f"{path}: holds ({data.get('dataset')!r}, {data.get('system')!r}), "
            f"not ({dataset!r}, {system!r})"
        )
    try:
        report = RetrievalEvalReport.from_dict(data["report"])
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{path}: the report is damaged: {error}") from None
    _check_means(path, report)
    return report, data.get("dataset_info", {})


_AGGREGATE_NAMES: dict[Aggregation, str] = {
    "mean": "mean",
    "sum": "sum",
    "geometric": "geometric mean",
}


def _aggregation(key: str) -> Aggregation:
    """How ``key``'s per-query values become its mean: its measure family's rule (a sum for
    the ``num_*`` counts, a geometric mean for ``gm_map``), else a plain mean."""
    try:
        resolved = lookup_metrics([key])
    except ValueError:  # a plugin's metric, the plugin not installed here: plugins' are means
        return "mean"
    family = resolved[0].family if len(resolved) == 1 else None
    return family.aggregation if family is not None and key in family.keys else "mean"


def _check_means(path: Path, report: RetrievalEvalReport) -> None:
    """Refuse a cell whose means are not those of its per-query values (an edited file), up to
    the rounding noise the reports allow (:data:`RELATIVE_TOLERANCE`)."""
    for key, mean in report.metrics.items():
        values = [values[key] for values in report.per_query.values() if key in values]
        if not values:
            raise ValueError(f"{path}: the mean {key} = {mean!r} has no per-query values")
        how = _aggregation(key)
        recomputed = aggregate(values, how)
        scale = max(1.0, abs(mean), abs(recomputed))
        if abs(recomputed - mean) > RELATIVE_TOLERANCE * scale:
            raise ValueError(
                f"{path}: the mean {key} = {mean!r} is not the {_AGGREGATE_NAMES[how]} of its "
                f"{len(values):,} per-query values ({recomputed!r}); the file was changed "
                "after it was written"
            )


def _agree(name: str, values: dict[str, Any], given: Any) -> Any:
    if given is not _UNSET:
        return given
    distinct = {json.dumps(v, sort_keys=True) for v in values.values()}
    if len(distinct) > 1:
        shown = "; ".join(f"{folder}: {value!r}" for folder, value in values.items())
        raise ValueError(f"the folders disagree on the {name} ({shown}); give {name}= to choose")
    return next(iter(values.values()))


def merge_suite_results(
    *folders: str | os.PathLike[str],
    metric: str | None = None,
    baseline: str | None = _UNSET,
    compare_options: Mapping[str, Any] | None = None,
) -> SuiteReport:
    """One :class:`SuiteReport` from the results folders of several suites (or one).

    Datasets and systems keep their order, each folder's after the last's; the averages and
    comparisons are computed afresh from the cells. A cell found in two folders must hold the
    same values in both.

    :param folders: results folders written by :func:`evaluate_suite` (``results_dir=``) or
        :func:`write_suite_results`.
    :param metric: the table's metric (default: the folders', which must agree).
    :param baseline: the baseline system (default: the folders', which must agree; ``None``
        for no comparison).
    :param compare_options: keyword arguments for :func:`compare` (default: the folders').
    :raises ValueError: naming the file, for a folder without ``suite.json``, a file that is
        not a regular file (a FIFO is refused, never waited on) or is too large, not strict
        JSON (a key named twice in one object) or damaged, a cell whose mean of a metric is
        not that of its per-query values; for folders that disagree, or two different results
        for one cell.
    """
    if not folders:
        raise ValueError("nothing to merge: give at least one results folder")
    cells: dict[str, dict[str, RetrievalEvalReport]] = {}
    found_in: dict[tuple[str, str], Path] = {}
    info: dict[str, Any] = {}
    datasets: dict[str, None] = {}
    systems: dict[str, None] = {}
    indexes: dict[str, dict[str, Any]] = {}
    for folder in map(Path, folders):
        index_path = folder / _INDEX
        if not os.path.lexists(index_path):
            raise ValueError(f"{folder}: no {_INDEX}; not a suite results folder")
        index = _read_json(index_path, SUITE_FORMAT)
        indexes[str(folder)] = index
        for dataset in index.get("datasets", []):
            datasets.setdefault(dataset)
            for system in index.get("systems", []):
                systems.setdefault(system)
                path = cell_path(folder, dataset, system)
                if not os.path.lexists(path):  # a cell not run there
                    continue
                report, dataset_info = _read_cell(path, dataset, system)
                _add_cell(cells, found_in, (dataset, system), report, path)
                info.setdefault(dataset, dataset_info)
    metric = metric or _agree("metric", {f: i.get("metric") for f, i in indexes.items()}, _UNSET)
    baseline = _agree("baseline", {f: i.get("baseline") for f, i in indexes.items()}, baseline)
    options = _agree(
        "compare_options",
        {f: i.get("compare_options", {}) for f, i in indexes.items()},
        _UNSET if compare_options is None else dict(compare_options),
    )
    return suite_report(
        cells,
        systems=tuple(systems),
        datasets=tuple(datasets),
        metric=metric,
        baseline=baseline,
        compare_options=options,
        datasets_info=info,
        manifest={"merged_from": [os.fspath(f) for f in folders]},
    )


def _add_cell(
    cells: dict[str, dict[str, RetrievalEvalReport]],
    found_in: dict[tuple[str, str], Path],
    key: tuple[str, str],
    report: RetrievalEvalReport,
    path: Path,
) -> None:
    dataset, system = key
    earlier = cells.get(dataset, {}).get(system)
    if earlier is None:
        cells.setdefault(dataset, {})[system] = report
        found_in[key] = path
    elif (earlier.metrics, earlier.per_query) != (report.metrics, report.per_query):
        raise ValueError(
            f"two different results for {system!r} on {dataset!r}: {found_in[key]} and {path}"
        )
