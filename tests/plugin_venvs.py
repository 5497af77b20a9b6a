"""Fresh virtual environments with real wheels installed, for the tests of installed plugins.

The runner's pip drives each new environment (``pip --python``), which saves installing pip
there; hatchling is installed once so the wheels build without an isolated build environment
each. Nothing is fetched while the tests run: every distribution that is not built from this
checkout (hatchling, the core's dependencies and theirs) comes from the wheelhouse the README's
test command builds into the running environment (:data:`WHEELHOUSE`, from
``tests/plugin_venv_requirements.txt``), installed with ``--no-index`` and no pip configuration
or ``PIP_*`` variable of the caller's, so no index is ever asked. Commands run there see neither
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
REQUIREMENTS = Path(__file__).resolve().parent / "plugin_venv_requirements.txt"
WHEELHOUSE = Path(sys.prefix) / "wheelhouse"
"""The wheels of :data:`REQUIREMENTS` and their dependencies, in the environment running the
tests (``.venv/wheelhouse`` for the README's test command; git never sees it)."""
_UNSET = {"EF_EVALUATION_PLUGINS", "PYTHONPATH", "PYTHONHOME", "PYTHONWARNINGS"}


def wheelhouse_command() -> str:
    """The command that builds :data:`WHEELHOUSE` (a step of the README's test command)."""
    requirements = REQUIREMENTS.relative_to(ROOT).as_posix()
    return f"{sys.executable} -m pip wheel -q -w {WHEELHOUSE} -r {requirements}"


def wheelhouse() -> Path:
    """:data:`WHEELHOUSE`, or a test failure naming the command that builds it."""
    if not any(WHEELHOUSE.glob("*.whl")):
        pytest.fail(
            f"no wheelhouse at {WHEELHOUSE}: the tests' virtual environments install from it "
            f"alone, never from a package index. Build it from the checkout's root with\n"
            f"    {wheelhouse_command()}",
            pytrace=False,
        )
    return WHEELHOUSE


def offline_pip_environment() -> dict[str, str]:
    """This process's environment without pip's own settings: no ``PIP_*`` variable, and no
    configuration file (``PIP_CONFIG_FILE`` set to the null device), so no index, extra index or
    ``find-links`` of the caller's adds a source to the wheelhouse."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    return env


def run(command: Sequence[str | os.PathLike[str]], *, hint: str = "", **kwargs: Any) -> str:
    """Run ``command``; its standard output, or a test failure showing both streams (and
    ``hint``, when given)."""
    done = subprocess.run(
        [os.fspath(part) for part in command],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        **kwargs,
    )
    if done.returncode != 0:
        pytest.fail(f"{' '.join(map(str, command))} failed:\n{done.stdout}\n{done.stderr}{hint}")
    return done.stdout


def pip(python: Path | None, *arguments: str | os.PathLike[str]) -> list[str | os.PathLike[str]]:
    """The runner's pip with ``arguments``, driving ``python``'s environment (``None``: the
    running one)."""
    target: list[str | os.PathLike[str]] = [] if python is None else ["--python", python]
    return [sys.executable, "-m", "pip", *target, "--disable-pip-version-check", *arguments]


def build_wheels(python: Path | None, projects: Sequence[Path], folder: Path) -> list[Path]:
    """The wheels of ``projects`` (folders), built into ``folder`` with the build backends
    installed in ``python``'s environment (``None``: the running one); their paths, sorted."""
    options = ("--quiet", "--no-index", "--no-deps", "--no-build-isolation", "-w", folder)
    run(pip(python, "wheel", *options, *projects), env=offline_pip_environment())
    return sorted(folder.glob("*.whl"))


def install(python: Path, *requirements: str | os.PathLike[str]) -> None:
    """Install ``requirements`` (names or wheel files) into ``python``'s environment, with
    their dependencies from the wheelhouse alone."""
    listed = REQUIREMENTS.relative_to(ROOT).as_posix()
    run(
        pip(
            python, "install", "--quiet", "--no-index", "--find-links", wheelhouse(), *requirements
        ),
        env=offline_pip_environment(),
        hint=f"\nA distribution the wheelhouse lacks belongs in {listed}; then rebuild it:\n"
        f"    {wheelhouse_command()}",
    )


def new_venv(base: Path) -> Path:
    """A fresh virtual environment at ``base / "venv"``, with hatchling; its python."""
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(base / "venv")
    python = base / "venv" / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    install(python, "hatchling")
    return python


def build_venv(base: Path, projects: Sequence[Path]) -> Path:
    """A virtual environment under ``base`` with the wheels of ``projects``; its python."""
    python = new_venv(base)
    install(python, *build_wheels(python, projects, base / "wheels"))
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
