"""A plugin that ends the process while it is imported (a stray script-style ``sys.exit``)."""

import sys

sys.exit(3)
