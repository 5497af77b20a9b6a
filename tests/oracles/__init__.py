"""Recorded outputs of the peers the tests compare with (ranx), and the inputs they were made
from: ``inputs`` builds the inputs (the tests and ``record.py`` both use it), ``record.py``
records the outputs, ``recorded`` reads them back for the tests. See ``README.md`` here."""
