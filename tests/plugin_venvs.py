"""Fresh virtual environments with real wheels installed, for the tests of installed plugins.

The runner's pip drives each new environment (``pip --python``), which saves installing pip
there; hatchling is installed once so the wheels build without an isolated build environment
each. The core's own dependencies come from the package index. Commands run there see neither
this checkout's ``sys.path`` nor the caller's plugin selection, so plugins arrive only through
their entry points.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "plugin_fixtures"
_UNSET = {"EF_EVALUATION_PLUGINS", "PYTHONPATH", "PYTHONHOME", "PYTHONWARNINGS"}


def run(command: Sequence[str | os.PathLike[str]], **kwargs: Any) -> str:
    """Run ``command``; its standard output, or a test failure showing both streams."""
    done = subprocess.run(
        [os.fspath(part) for part in command],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        **kwargs,
    )
    if done.returncode != 0:
        pytest.fail(f"{' '.join(map(str, command))} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def build_venv(base: Path, projects: Sequence[Path]) -> Path:
    """A virtual environment under ``base`` with the wheels of ``projects``; its python."""
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(base / "venv")
    python = base / "venv" / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    pip = [sys.executable, "-m", "pip", "--python", python, "--disable-pip-version-check"]
    wheels = base / "wheels"
    run([*pip, "install", "--quiet", "hatchling"])
    run([*pip, "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", wheels, *projects])
    run([*pip, "install", "--quiet", *sorted(wheels.glob("*.whl"))])
    return python


def environment(selection: str | None, **extra: str) -> dict[str, str]:
    """This process's environment for a command in a test venv, with ``EF_EVALUATION_PLUGINS``
    set to ``selection`` (``None``: unset) and ``extra`` added."""
    env = {key: value for key, value in os.environ.items() if key not in _UNSET}
    env["PYTHONNOUSERSITE"] = "1"
    if selection is not None:
        env["EF_EVALUATION_PLUGINS"] = selection
    env.update(extra)
    return env


def scripts(python: Path) -> Path:
    """The folder of the environment's console scripts (``ef-eval``)."""
    return python.parent


def outside_checkout(python: Path) -> Mapping[str, Any]:
    """``subprocess`` options that run in the environment's folder, away from this checkout."""
    return {"cwd": python.parent.parent}
