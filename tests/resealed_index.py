"""Rewrite a saved index's list of files after a test changed one on purpose, so a load gets past
the size and hash checks to the checks behind them (what a hand-made manifest would reach)."""

from __future__ import annotations

import json
from pathlib import Path

from ef._index_files import list_files
from ef._index_store import MANIFEST


def reseal(folder: Path) -> None:
    """List every file of ``folder`` in its manifest again, with its present size and hash."""
    path = folder / MANIFEST
    manifest = json.loads(path.read_text())
    manifest["files"] = list_files(folder, leave_out=MANIFEST)
    path.write_text(json.dumps(manifest, indent=2))
