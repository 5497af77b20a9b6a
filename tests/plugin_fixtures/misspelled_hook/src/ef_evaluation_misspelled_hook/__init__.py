"""A plugin that implements ``ef_evaluation_register_metric`` (the real hook ends in ``s``)."""

from collections.abc import Callable, Mapping, Sequence

from ef.evaluation import hookimpl


def returned(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    return float(len(ranked[:k]))


@hookimpl
def ef_evaluation_register_metric(register: Callable[..., None]) -> None:
    register("misspelled_hook_metric", returned)
