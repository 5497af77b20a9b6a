"""A small disk for tests of what happens when it is full.

A real 1 MiB tmpfs when the tests run as root (CI does); where mounting is refused, ENOSPC is
injected at the operating system's ``write`` once the folder's files would pass 1 MiB.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

SIZE = 1 << 20


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on a 1 MiB file system: a real tmpfs, or ENOSPC injected past 1 MiB."""
    folder = tmp_path / "small"
    folder.mkdir()
    mounted = False
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        result = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)],
            capture_output=True,
            check=False,
        )
        mounted = result.returncode == 0
    if not mounted:
        _inject_enospc(folder, monkeypatch)
    try:
        yield folder
    finally:
        if mounted:
            subprocess.run(["umount", str(folder)], check=True)


def _inject_enospc(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail ``os.write`` with ENOSPC once files under ``folder`` would pass 1 MiB together."""
    real_write = os.write

    def write(fd: int, data: bytes | memoryview) -> int:
        try:
            name = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            name = ""
        if name.startswith(str(folder)):
            used = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
            if used + len(data) > SIZE:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
