"""A plugin whose dataset readers misbehave: one returns a list of records, one raises KeyError,
one returns a triple whose qrels are a list."""

from collections.abc import Callable
from typing import Any

from ef.evaluation import hookimpl


def records(source: str, **options: Any) -> Any:
    return [{"_id": "d1", "text": "a document"}, {"_id": "q1", "text": "a query"}]


def missing_key(source: str, **options: Any) -> Any:
    settings: dict[str, str] = {}
    return settings["split"]


def listed_qrels(source: str, **options: Any) -> Any:
    return {"d1": "a document"}, {"q1": "a query"}, [("q1", "d1", 1)]


@hookimpl
def ef_evaluation_register_dataset_readers(register: Callable[..., None]) -> None:
    register("records", records)
    register("missing_key", missing_key)
    register("listed_qrels", listed_qrels)
