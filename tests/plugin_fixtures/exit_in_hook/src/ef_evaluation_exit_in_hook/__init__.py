"""A plugin whose hooks end the process: one after registering a metric, one when asked."""

import sys
from collections.abc import Callable, Mapping, Sequence

from ef.evaluation import hookimpl


def returned(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    return float(len(ranked[:k]))


@hookimpl
def ef_evaluation_register_metrics(register: Callable[..., None]) -> None:
    register("exit_in_hook_metric", returned)
    sys.exit(4)


@hookimpl
def ef_evaluation_doc_id_getter(result_type: type) -> None:
    sys.exit(5)
