"""A plugin that imports at once but whose metric registration hangs (at most 100 s)."""

import time
from collections.abc import Callable

from ef.evaluation import hookimpl


@hookimpl
def ef_evaluation_register_metrics(register: Callable[..., None]) -> None:
    time.sleep(100)
    register("never_registered", lambda ranked, relevant, k: 1.0)


@hookimpl
def ef_evaluation_trec_run_parser() -> None:
    time.sleep(100)
