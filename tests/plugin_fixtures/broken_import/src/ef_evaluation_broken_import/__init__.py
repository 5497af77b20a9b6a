"""A plugin whose import fails: it needs a module that is not installed."""

from collections.abc import Callable

from ef_evaluation_missing_dependency import score

from ef.evaluation import hookimpl


@hookimpl
def ef_evaluation_register_metrics(register: Callable[..., None]) -> None:
    register("broken_import_metric", score)
