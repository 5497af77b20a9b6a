"""Child processes that take Ctrl-C as a terminal's foreground command takes it.

A shell starts a background job with SIGINT ignored, and a child inherits that: a test that
sends its command SIGINT (or whose plugin sends it) would then see the signal ignored and pass
or fail for the wrong reason, depending on how the suite was started.
"""

from __future__ import annotations

import signal
from typing import Any


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


FOREGROUND: dict[str, Any] = {"preexec_fn": _default_sigint}
"""``subprocess`` options: the child starts with SIGINT's default action (Python then turns it
into KeyboardInterrupt), whatever this process inherited."""
