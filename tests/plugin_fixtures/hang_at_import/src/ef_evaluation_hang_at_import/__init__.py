"""A plugin whose import hangs: it waits for a file that never comes (at most 100 s, so that a
host that does not give up fails its test by the test's own timeout rather than never ends)."""

import os
import time

deadline = time.monotonic() + 100
while time.monotonic() < deadline and not os.path.exists(os.environ.get("HANG_UNTIL", "-")):
    time.sleep(0.1)
