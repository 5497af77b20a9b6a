"""A plugin during whose import the user presses Ctrl-C: it sends its own process SIGINT."""

import os
import signal
import time

os.kill(os.getpid(), signal.SIGINT)
time.sleep(30)  # the signal's KeyboardInterrupt arrives first; never reached in full
