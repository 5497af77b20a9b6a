"""The datasets of a suite: what each one is, its name, and how it is read.

A suite's dataset is a :class:`SuiteDataset` — a source, the reader that reads it, a split and
a name — or a string that says the same in one go: ``builtin:NAME`` or a BEIR folder (the
``beir`` reader), ``READER:SOURCE`` for any other registered reader (``ir_datasets:beir/scifact``),
each optionally ending in ``@SPLIT``. Every dataset is read through :func:`read_dataset`, so a
plugin's reader serves a suite as it serves ``ef-eval retrieval``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import PurePath
from typing import Any

import attrs

from ef.evaluation._io.builtin_datasets import builtin_name, resolve_builtin
from ef.evaluation._plugins.active import read_dataset, registry
from ef.evaluation._types import Corpus, Qrels, Queries

__all__ = [
    "SuiteDataset",
    "as_suite_datasets",
    "file_name",
    "queries_source",
    "read_suite_dataset",
]

_SPLIT = re.compile(r"^(?P<source>.+)@(?P<split>[A-Za-z0-9_.-]+)$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_name(name: str) -> str:
    """``name`` as one safe file name: runs of anything but letters, digits, ``.``, ``_`` and
    ``-`` become ``_`` (a leading dot too, so nothing is hidden).

    >>> file_name("beir/scifact/test"), file_name("st:all-MiniLM-L6-v2"), file_name("..")
    ('beir_scifact_test', 'st_all-MiniLM-L6-v2', '_.')
    """
    safe = _UNSAFE.sub("_", name)
    return "_" + safe[1:] if safe.startswith(".") else safe or "_"


def _default_name(source: str, reader: str, split: str | None) -> str:
    builtin = builtin_name(source)
    if builtin is not None:
        base = builtin
    elif reader == "beir" or os.path.isdir(source):
        base = PurePath(source).name or source
    else:
        base = source
    return base if split is None else f"{base}@{split}"


@attrs.frozen
class SuiteDataset:
    """One dataset of a suite.

    :param source: what the reader reads: a BEIR folder, ``builtin:NAME``, an ``ir_datasets``
        id, a file …
    :param reader: the registered reader's name (``beir`` by default).
    :param split: which judgements: for ``beir``, the qrels file ``qrels/SPLIT.tsv``; for
        ``ir_datasets``, the id ``SOURCE/SPLIT``; any other reader gets ``split=SPLIT``.
        ``None``: the reader's default.
    :param name: the dataset's name in tables and file names (default: the folder's or built-in
        dataset's name, or the source, with ``@SPLIT`` when a split is given).
    :param options: further keyword arguments for the reader.

    >>> SuiteDataset("builtin:stdlib-docs").name
    'stdlib-docs'
    >>> SuiteDataset("data/scifact", split="dev").name
    'scifact@dev'
    """

    source: str = attrs.field(converter=os.fspath)
    reader: str = attrs.field(default="beir", kw_only=True)
    split: str | None = attrs.field(default=None, kw_only=True)
    name: str = attrs.field(kw_only=True)
    options: Mapping[str, Any] = attrs.field(factory=dict, kw_only=True)

    @name.default
    def _name(self) -> str:
        return _default_name(self.source, self.reader, self.split)

    @classmethod
    def parse(cls, text: str | os.PathLike[str]) -> SuiteDataset:
        """The dataset a string names: ``[READER:]SOURCE[@SPLIT]``.

        ``READER:`` is taken only for a registered reader's name (``builtin:`` stays a
        built-in dataset); without it the reader is ``beir``.

        >>> SuiteDataset.parse("builtin:stdlib-docs@test")
        SuiteDataset(source='builtin:stdlib-docs', reader='beir', split='test', name='stdlib-docs@test', options={})
        """  # noqa: E501
        text = os.fspath(text)
        split = None
        matched = _SPLIT.match(text)
        if matched is not None and not os.path.exists(text):
            text, split = matched["source"], matched["split"]
        reader, colon, rest = text.partition(":")
        if colon and reader != "builtin" and reader in registry().readers:
            return cls(rest, reader=reader, split=split)
        return cls(text, split=split)

    def read(self) -> tuple[Corpus, Queries, Qrels]:
        """``(corpus, queries, qrels)`` through :func:`read_dataset`."""
        return read_suite_dataset(self)


def read_suite_dataset(dataset: SuiteDataset) -> tuple[Corpus, Queries, Qrels]:
    """Read ``dataset`` with its reader, its split turned into what that reader takes."""
    source, options = dataset.source, dict(dataset.options)
    if dataset.split is not None:
        if dataset.reader == "beir":
            options.setdefault("qrels", f"qrels/{dataset.split}.tsv")
        elif dataset.reader == "ir_datasets":
            source = f"{source.rstrip('/')}/{dataset.split}"
        else:
            options.setdefault("split", dataset.split)
    try:
        return read_dataset(source, reader=dataset.reader, **options)
    except Exception as error:
        error.add_note(f"while reading the suite's dataset {dataset.name!r}")
        raise


def queries_source(dataset: SuiteDataset) -> str:
    """Where ``dataset``'s queries are read from, for messages: a BEIR folder's
    ``queries.jsonl`` (or ``queries.jsonl.gz``), else what its reader reads.

    >>> queries_source(SuiteDataset("data/scifact"))
    'data/scifact/queries.jsonl'
    >>> queries_source(SuiteDataset("beir/scifact/test", reader="ir_datasets"))
    'ir_datasets:beir/scifact/test'
    """
    if dataset.reader != "beir":
        return f"{dataset.reader}:{dataset.source}"
    folder = os.fspath(resolve_builtin(dataset.source))
    queries = os.path.join(folder, "queries.jsonl")
    compressed = f"{queries}.gz"
    return compressed if not os.path.exists(queries) and os.path.exists(compressed) else queries


def as_suite_datasets(
    datasets: Iterable[SuiteDataset | str | os.PathLike[str]],
) -> tuple[SuiteDataset, ...]:
    """``datasets`` as :class:`SuiteDataset`\\ s, their names and file names unique.

    :raises ValueError: for no dataset, or two datasets whose names (or file names) clash.
    """
    if isinstance(datasets, str | os.PathLike):
        raise TypeError("datasets must be a list of datasets, not one string or path")
    found = tuple(d if isinstance(d, SuiteDataset) else SuiteDataset.parse(d) for d in datasets)
    if not found:
        raise ValueError("a suite needs at least one dataset")
    seen: dict[str, str] = {}
    for dataset in found:
        key = file_name(dataset.name)
        if key in seen:
            raise ValueError(
                f"two datasets are named {seen[key]!r} and {dataset.name!r} (file name {key!r}); "
                "give one a name=: SuiteDataset(source, name=...)"
            )
        seen[key] = dataset.name
    return found
