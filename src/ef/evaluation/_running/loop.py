"""Whether an event loop runs in this thread: asyncio's or trio's, whichever was imported."""

from __future__ import annotations

import sys

__all__ = ["in_event_loop"]


def in_event_loop() -> bool:
    """Whether this thread runs an asyncio or trio event loop (then ``anyio.run`` cannot)."""
    asyncio = sys.modules.get("asyncio")  # not imported: no asyncio loop can be running
    if asyncio is not None:
        try:
            asyncio.get_running_loop()
            return True
        except RuntimeError:
            pass
    trio = sys.modules.get("trio")
    if trio is not None:
        try:
            trio.lowlevel.current_task()
            return True
        except RuntimeError:
            pass
    return False
