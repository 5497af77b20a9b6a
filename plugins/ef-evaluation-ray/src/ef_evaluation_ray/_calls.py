"""Awaiting Ray's object refs from the ef runner, on asyncio or in worker threads elsewhere."""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["LOST", "await_refs", "on_asyncio", "unwrapped"]

LOST = b""
"""A replica's answer for a search it does not know: abandoned, or sent before it restarted."""


def on_asyncio() -> bool:
    """Whether an asyncio loop runs this code (Ray's refs are asyncio awaitables)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def unwrapped(error: BaseException) -> BaseException:
    """The retriever's own exception inside a Ray task error, so that a failure is recorded as
    the same error an in-process evaluation records; other errors as they are."""
    import ray.exceptions

    if isinstance(error, ray.exceptions.RayTaskError):
        cause = error.cause
        if isinstance(cause, Exception):
            return cause
    return error


async def await_refs(refs: list[Any]) -> list[Any]:
    """The values of ``refs``; a task's error is raised as the retriever raised it.

    On asyncio the refs are awaited in the loop; on trio, ``ray.get`` waits in a worker thread
    that a cancelled query (a timeout) abandons.
    """
    import ray

    try:
        if on_asyncio():
            return list(await asyncio.gather(*refs))
        import anyio.to_thread

        values = await anyio.to_thread.run_sync(ray.get, refs, abandon_on_cancel=True)
        return list(values)
    except Exception as error:
        cause = unwrapped(error)
        if cause is error:
            raise
        raise cause from error
