"""The runs and judgements the judgement tools take, checked once at the door.

Runs come as ``{name: run}`` or a sequence of runs, each a ``{query_id: ranking}`` mapping, a
DataFrame, or a run file's path (any format :func:`~ef.evaluation.read_run` reads). A run is
ranked as everywhere in the library: a scored run in trec_eval's order (score descending, ties
by doc id descending), a list as given with a repeated doc id kept at its first rank.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ef.evaluation._io.frames import as_qrels, as_run
from ef.evaluation._io.scores import score_problem
from ef.evaluation._running.run_files import read_run
from ef.evaluation._scoring.order import as_ranking, rank_query

__all__ = ["check_depth", "checked_qrels", "named_runs", "top_documents"]

RunsArg = Mapping[str, Any] | Sequence[Any]


def _looks_like_one_run(runs: Mapping[str, Any]) -> bool:
    """Whether ``runs`` is a single run (``{query_id: ranking}``), not ``{name: run}``."""
    for value in runs.values():
        if isinstance(value, list | tuple):
            return True
        if isinstance(value, Mapping):
            return any(isinstance(score, numbers.Real) for score in value.values())
    return False


def _run_names(runs: Sequence[Any]) -> list[str]:
    """A name per run: a path's file name (the path when file names collide), else its place."""
    names = [
        Path(run).name if isinstance(run, str | os.PathLike) else f"run {index}"
        for index, run in enumerate(runs, 1)
    ]
    if len(set(names)) == len(names):
        return names
    return [
        os.fspath(run) if isinstance(run, str | os.PathLike) else f"run {index}"
        for index, run in enumerate(runs, 1)
    ]


def named_runs(runs: RunsArg) -> dict[str, Mapping[str, Any]]:
    """Each run by name, read if given by path and checked (:func:`~ef.evaluation._io.frames.
    as_run`).

    :raises TypeError: for a single run where several are expected, or anything that is no run.
    :raises ValueError: when no run is given, or a score is not a finite number.
    """
    if isinstance(runs, str | os.PathLike):
        runs = [runs]
    if isinstance(runs, Mapping):
        if _looks_like_one_run(runs):
            raise TypeError(
                "runs maps query ids to rankings: that is one run; give {name: run} or a list "
                "of runs"
            )
        items = list(runs.items())
    elif isinstance(runs, Sequence):
        items = list(zip(_run_names(runs), runs, strict=True))
    else:
        raise TypeError(
            f"runs is a {type(runs).__qualname__}; expected {{name: run}} or a list of runs "
            "(mappings, DataFrames or run files' paths)"
        )
    if not items:
        raise ValueError("no runs given: at least one is needed")
    named: dict[str, Mapping[str, Any]] = {}
    for name, run in items:
        if not isinstance(name, str):
            raise TypeError(f"a run's name must be a string, got {name!r}")
        if isinstance(run, str | os.PathLike):
            named[name] = read_run(run)
        else:
            named[name] = as_run(run, f"run {name!r}")
    return named


def top_documents(query_id: str, entry: Any, depth: int) -> list[str]:
    """The first ``depth`` doc ids of one query's entry, in the library's ranking order."""
    if isinstance(entry, Mapping):
        ranked = rank_query(query_id, entry)
    else:
        ranked = list(dict.fromkeys(as_ranking(query_id, entry)))
    top = ranked[:depth]
    for doc_id in top:
        if not isinstance(doc_id, str):
            raise TypeError(
                f"query {query_id!r}: doc id {doc_id!r} is a {type(doc_id).__qualname__}; "
                "expected a string"
            )
    return top


def checked_qrels(qrels: Any, what: str = "qrels") -> Mapping[str, Mapping[str, float]]:
    """``qrels`` as a mapping (or read from a path), every grade a finite number.

    :raises TypeError: for a grade that is no number, naming the query and the doc.
    :raises ValueError: for a NaN or infinite grade, naming the query and the doc.
    """
    table = as_qrels(qrels, what)
    for query_id, judgements in table.items():
        for doc_id, grade in judgements.items():
            problem = score_problem(grade)
            if problem is None:
                continue
            wrong_type = isinstance(grade, bool) or not isinstance(grade, numbers.Real)
            error = TypeError if wrong_type else ValueError
            raise error(
                f"{what}, query {query_id!r}: doc {doc_id!r} has grade {problem}; expected a "
                "finite number"
            )
    return table


def check_depth(depth: int) -> int:
    """``depth`` if it is an integer >= 1.

    :raises ValueError: otherwise.
    """
    if type(depth) is bool or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"depth must be an integer >= 1, got {depth!r}")
    return depth
