"""Starting actors on a Ray cluster, for replicas and shards alike: checking the resources and
the time asked for, waiting until every actor has built what it serves, and saying what is
missing when they do not start."""

from __future__ import annotations

import math
from typing import Any

from ef_evaluation_ray._calls import unwrapped

__all__ = [
    "DEFAULT_START_TIMEOUT",
    "check_resources",
    "check_timeout",
    "not_started",
    "started",
]


def check_resources(num_cpus: float, num_gpus: float) -> None:
    """:raises ValueError: for a negative or non-numeric resource request."""
    for name, value in (("num_cpus", num_cpus), ("num_gpus", num_gpus)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            raise ValueError(f"{name} must be a number >= 0, got {value!r}")


DEFAULT_START_TIMEOUT = 600.0
"""Seconds :meth:`~ef_evaluation_ray.RayRetriever.start` and a
:class:`~ef_evaluation_ray.ShardedIndex` wait for their actors by default."""


def check_timeout(name: str, value: object) -> float | None:
    """:raises ValueError: unless ``value`` is a number of seconds > 0, or None (no limit)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise ValueError(f"{name} must be a number of seconds > 0 or None, got {value!r}")
    return float(value)


def _resources(num_cpus: float, num_gpus: float) -> dict[str, float]:
    asked = {"CPU": float(num_cpus)}
    if num_gpus:
        asked["GPU"] = float(num_gpus)
    return asked


def _shown(resources: dict[str, float]) -> str:
    """The CPUs, GPUs and memory of a Ray resource table (not its per-node entries)."""
    kept = {key: value for key, value in resources.items() if key in ("CPU", "GPU")}
    return ", ".join(f"{key} {value:g}" for key, value in sorted(kept.items())) or "nothing"


def not_started(what: str, timeout: float | None, num_cpus: float, num_gpus: float) -> TimeoutError:
    """The error for actors or tasks that did not start in ``timeout`` seconds: what each asks
    for, and what the cluster has."""
    import ray

    # ray's own functions carry no annotations: their answers are read as what they document.
    ray_api: Any = ray
    in_all: dict[str, float] = ray_api.cluster_resources()
    free: dict[str, float] = ray_api.available_resources()
    return TimeoutError(
        f"{what} did not start in {timeout:g} s (start_timeout): each asks for "
        f"{_shown(_resources(num_cpus, num_gpus))}; the cluster has "
        f"{_shown(in_all)} in all, {_shown(free)} free. "
        "Ask for less (num_cpus, num_gpus, fewer actors), add nodes, or give a factory that "
        "loads slowly a longer start_timeout"
    )


def started(
    handles: list[Any],
    *,
    timeout: float | None,
    what: str,
    num_cpus: float,
    num_gpus: float,
) -> list[dict[str, Any]]:
    """Wait until every actor has built its retriever; where each runs.

    :param timeout: seconds to wait at most (``None``: no limit).
    :param what: the actors, for the message (``"2 replicas"``).
    :raises TimeoutError: when the actors are not all ready in ``timeout`` seconds — the
        resources each asks for and those of the cluster named; the actors are stopped.
    :raises Exception: the factory's own error when an actor could not build its retriever.
    """
    import ray

    refs = [handle.ready.remote() for handle in handles]
    try:
        ready, pending = ray.wait(refs, num_returns=len(refs), timeout=timeout)
        if pending:
            raise not_started(f"{len(pending)} of {what}", timeout, num_cpus, num_gpus)
        return list(ray.get(ready))
    except Exception as error:
        for handle in handles:  # a half-started retriever holds resources nobody can use
            ray.kill(handle)
        cause = unwrapped(error)
        if cause is error:
            raise
        raise cause from error
