"""The built-in dataset readers (BEIR folders, TREC qrels files), as a hook module."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ef.evaluation._io.beir import read_beir
from ef.evaluation._io.trec import read_trec_qrels
from ef.evaluation._plugins.hookspecs import hookimpl
from ef.evaluation._types import Corpus, Qrels, Queries


def _read_beir(source: str | os.PathLike[str], **options: Any) -> tuple[Corpus, Queries, Qrels]:
    return read_beir(os.fspath(source), **options)


def _read_trec(source: str | os.PathLike[str], **options: Any) -> tuple[Corpus, Queries, Qrels]:
    if options:
        raise TypeError(f"the trec reader takes no options, got {', '.join(sorted(options))}")
    return {}, {}, read_trec_qrels(source)


@hookimpl
def ef_evaluation_register_dataset_readers(register: Callable[..., None]) -> None:
    """The BEIR folder reader and the TREC qrels reader."""
    register("beir", _read_beir, description="a BEIR folder: corpus.jsonl, queries.jsonl, qrels")
    register("trec", _read_trec, description="a TREC qrels file (qid iter docid grade): qrels only")
