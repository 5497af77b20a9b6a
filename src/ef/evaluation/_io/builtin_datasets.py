"""Datasets shipped inside the package, named ``builtin:NAME`` wherever a dataset is accepted.

Each lives in ``ef/evaluation/datasets/NAME/`` as a BEIR folder (``corpus.jsonl``,
``queries.jsonl``, ``qrels.tsv``) with a ``README.md`` giving its provenance, licence and how
it was judged. They are found through :mod:`importlib.resources`, so they work from a wheel as
well as from a source checkout.
"""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path

__all__ = [
    "BUILTIN_PREFIX",
    "builtin_dataset_path",
    "builtin_datasets",
    "builtin_name",
    "resolve_builtin",
]

BUILTIN_PREFIX = "builtin:"
"""The prefix that names a bundled dataset instead of a path."""

_PACKAGE = "ef.evaluation"
_FOLDER = "datasets"


def _root() -> Path:
    root = importlib.resources.files(_PACKAGE) / _FOLDER
    if not isinstance(root, Path):
        # A zipped install gives a Traversable the BEIR reader cannot stream from.
        raise RuntimeError(
            f"the built-in datasets are not on the file system ({root!r}); "
            "install ef-evaluation unzipped (pip installs it so by default)"
        )
    return root


def builtin_datasets() -> list[str]:
    """The names of the bundled datasets, sorted.

    >>> "stdlib-docs" in builtin_datasets()
    True
    """
    root = _root()
    if not root.is_dir():
        return []
    return sorted(
        entry.name
        for entry in root.iterdir()
        if entry.is_dir() and (entry / "corpus.jsonl").is_file()
    )


def builtin_dataset_path(name: str) -> Path:
    """The folder of the bundled dataset ``name``.

    :param name: a name from :func:`builtin_datasets` (without the ``builtin:`` prefix).
    :raises ValueError: for a name that is not bundled; the message lists the bundled ones.

    >>> builtin_dataset_path("stdlib-docs").name
    'stdlib-docs'
    """
    available = builtin_datasets()
    if name not in available:
        raise ValueError(
            f"unknown built-in dataset {name!r}; available: "
            + (", ".join(BUILTIN_PREFIX + known for known in available) or "none")
        )
    return _root() / name


def builtin_name(source: object) -> str | None:
    """The NAME of a ``builtin:NAME`` source, or None for any other source.

    >>> builtin_name("builtin:stdlib-docs"), builtin_name("data/scifact")
    ('stdlib-docs', None)
    """
    if isinstance(source, str) and source.startswith(BUILTIN_PREFIX):
        return source[len(BUILTIN_PREFIX) :]
    return None


def resolve_builtin(source: str | os.PathLike[str]) -> str | os.PathLike[str]:
    """``builtin:NAME`` as the bundled dataset's folder; any other source unchanged.

    The readers call this first, so ``read_beir("builtin:stdlib-docs")`` and
    ``ef-eval retrieval builtin:stdlib-docs`` read the bundled copy. The prefix always names a
    bundled dataset: a folder really called ``builtin:x`` can be read as ``./builtin:x``.

    :param source: what a reader was given — a path, or ``builtin:NAME``.
    :raises ValueError: for ``builtin:NAME`` with a name that is not bundled.

    >>> resolve_builtin("data/scifact")
    'data/scifact'
    >>> resolve_builtin("builtin:stdlib-docs").name
    'stdlib-docs'
    """
    name = builtin_name(source)
    return source if name is None else builtin_dataset_path(name)
