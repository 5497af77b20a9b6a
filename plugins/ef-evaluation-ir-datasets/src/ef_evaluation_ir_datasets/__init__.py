"""ef-evaluation plugin: read ir_datasets collections as ``(corpus, queries, qrels)``."""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from typing import Any

from ef.evaluation import hookimpl

__all__ = ["DatasetUnavailable", "read_ir_dataset"]


class DatasetUnavailable(OSError):
    """The dataset is not on disk and could not be downloaded."""


def _text(record: Any) -> str:
    title = getattr(record, "title", None)
    text = getattr(record, "text", None)
    if isinstance(text, str):
        if isinstance(title, str) and title and text:
            return f"{title} {text}"
        return text or (title if isinstance(title, str) else "")
    return str(record.default_text())


def read_ir_dataset(
    source: str | os.PathLike[str], *, corpus: bool = True
) -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, float]]]:
    """Read the ir_datasets dataset ``source`` as ``(corpus, queries, qrels)``.

    :param source: an ir_datasets id, e.g. ``"beir/scifact/test"``.
    :param corpus: ``False`` skips the documents (the corpus comes back empty).
    :raises ValueError: for an id ir_datasets does not know, or a dataset without queries or
        qrels.
    :raises DatasetUnavailable: when the data is not on disk and cannot be downloaded.
    """
    import ir_datasets  # type: ignore[import-untyped]  # it ships no types

    dataset_id = os.fspath(source)
    try:
        dataset = ir_datasets.load(dataset_id)
    except KeyError:
        close = difflib.get_close_matches(dataset_id, list(ir_datasets.registry), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"ir_datasets has no dataset {dataset_id!r}{hint}") from None
    for part in ("queries", "qrels"):
        if not getattr(dataset, f"has_{part}")():
            raise ValueError(f"ir_datasets dataset {dataset_id!r} has no {part}")
    try:
        queries = {q.query_id: _text(q) for q in dataset.queries_iter()}
        qrels: dict[str, dict[str, float]] = {}
        for qrel in dataset.qrels_iter():
            qrels.setdefault(qrel.query_id, {})[qrel.doc_id] = float(qrel.relevance)
        docs = (
            {d.doc_id: _text(d) for d in dataset.docs_iter()}
            if corpus and dataset.has_docs()
            else {}
        )
    except (OSError, ConnectionError) as error:
        raise DatasetUnavailable(
            f"ir_datasets dataset {dataset_id!r} is not available offline and could not be "
            f"downloaded ({type(error).__name__}: {str(error)[:200]}); download it once with "
            "network access, or point IR_DATASETS_HOME at a copy"
        ) from error
    return docs, queries, qrels


@hookimpl
def ef_evaluation_register_dataset_readers(register: Callable[..., None]) -> None:
    """The ``ir_datasets`` reader."""
    register("ir_datasets", read_ir_dataset, description="an ir_datasets id, e.g. beir/scifact")
