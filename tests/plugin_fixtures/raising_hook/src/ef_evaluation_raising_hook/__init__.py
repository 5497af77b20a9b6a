"""A plugin whose metric hook registers one metric, then raises."""

from collections.abc import Callable, Mapping, Sequence

from ef.evaluation import hookimpl


def returned(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    return float(len(ranked[:k]))


@hookimpl
def ef_evaluation_register_metrics(register: Callable[..., None]) -> None:
    register("raising_hook_metric", returned)
    raise RuntimeError("the metric table could not be read")
