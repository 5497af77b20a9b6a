"""A plugin that prints while it is imported and while its hook runs, and works otherwise."""

from collections.abc import Callable, Mapping, Sequence

from ef.evaluation import hookimpl

print("print_at_import: importing")


def judged(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    return sum(doc_id in relevant for doc_id in ranked[:k]) / k


@hookimpl
def ef_evaluation_register_metrics(register: Callable[..., None]) -> None:
    print("print_at_import: registering its metric")
    register("printed_judged", judged)
