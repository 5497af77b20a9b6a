"""``python -m ef.evaluation.cli``: the same as the ``ef-eval`` script."""

import sys

from ef.evaluation.cli import main

if __name__ == "__main__":
    sys.exit(main())
