"""What the distributions declare, checked on a real wheel: licence, version, classifiers, plugin
requirement ranges, exact tool pins, and types a user's mypy --strict sees.

The core is built as a wheel and installed (not editable) into a fresh virtual environment, the
way ``tests/test_plugin_install.py`` does it; mypy then checks a user's file against that
environment alone, from a directory outside this checkout.
"""

from __future__ import annotations

import configparser
import email
import email.message
import hashlib
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from plugin_venvs import REQUIREMENTS, build_wheels, install, new_venv

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PLUGINS = sorted(path.parent for path in (ROOT / "plugins").glob("*/pyproject.toml"))
# The SHA-256 of the Apache License 2.0 as https://www.apache.org/licenses/LICENSE-2.0.txt has it.
APACHE_2_0_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"

USER_FILE = """\
from typing import assert_type

from ef.segments import Segment
from ef.source_manager import SearchableCorpus, SearchHit, SourceManager, ingest


class Corpus:
    def search(self, query: str, *, limit: int = 10) -> list[SearchHit]:
        return [SearchHit(Segment("d1", query), 1.0)][:limit]


hit = SearchHit(Segment("d1", "some text"), 0.5)
assert_type(hit.score, float)
assert_type(hit.segment, Segment)
assert_type(hit.segment.source_id, str)
manager = SourceManager()
manager.add("docs", Corpus())
assert_type(manager.retrieve("a query", limit=3), list[SearchHit])
assert_type(manager.sources, dict[str, SearchableCorpus])
assert_type(ingest({"d1": "some text"}).search("text"), list[SearchHit])
"""


@pytest.fixture(scope="module")
def installed_core(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The core's wheel, built from this checkout, and the Python of a fresh virtual environment
    it is installed in, with its dependencies from the wheelhouse and nothing else."""
    base = tmp_path_factory.mktemp("packaging")
    python = new_venv(base)
    [wheel] = build_wheels(python, [ROOT], base / "wheels")
    install(python, wheel)
    return wheel, python


def wheel_metadata(wheel: Path) -> tuple[email.message.Message, dict[str, bytes]]:
    """The wheel's METADATA, parsed, and every file of its ``.dist-info`` folder by name."""
    with zipfile.ZipFile(wheel) as archive:
        info = {
            name.split(".dist-info/", 1)[1]: archive.read(name)
            for name in archive.namelist()
            if ".dist-info/" in name
        }
    return email.message_from_bytes(info["METADATA"]), info


def test_the_licence_file_is_the_full_apache_2_0_text() -> None:
    text = (ROOT / "LICENSE").read_bytes()
    assert hashlib.sha256(text).hexdigest() == APACHE_2_0_SHA256
    assert PYPROJECT["project"]["license"] == "Apache-2.0"


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda path: path.name)
def test_each_plugin_ships_the_same_licence(plugin: Path) -> None:
    project = tomllib.loads((plugin / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0"
    assert (plugin / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()


def test_the_wheel_carries_the_licence_version_and_classifiers(
    installed_core: tuple[Path, Path],
) -> None:
    wheel, _ = installed_core
    metadata, info = wheel_metadata(wheel)
    assert metadata["Name"] == "ef-evaluation"
    assert metadata["Version"] == "0.2.0"
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata.get_all("License-File") == ["LICENSE"]
    assert info["licenses/LICENSE"] == (ROOT / "LICENSE").read_bytes()
    classifiers = metadata.get_all("Classifier") or []
    assert "Typing :: Typed" in classifiers
    assert "Programming Language :: Python :: 3.11" in classifiers
    # A licence classifier beside License-Expression is an error under PEP 639.
    assert not [c for c in classifiers if c.startswith("License ::")]
    # No home page, repository or documentation host exists yet: no invented links.
    assert metadata.get_all("Project-URL") is None


def test_the_wheel_marks_every_ef_module_as_typed(installed_core: tuple[Path, Path]) -> None:
    wheel, _ = installed_core
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {"ef/py.typed", "ef/segments.py", "ef/source_manager.py"} <= names
    assert "ef/__init__.py" not in names, "ef must stay a namespace package"
    assert "ef/evaluation/py.typed" in names


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda path: path.name)
def test_each_plugin_requires_the_core_minor_series_it_was_built_for(plugin: Path) -> None:
    project = tomllib.loads((plugin / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    [core] = [r for r in map(Requirement, project["dependencies"]) if r.name == "ef-evaluation"]
    assert core.specifier == Requirement("ef-evaluation>=0.2,<0.3").specifier
    assert Version(PYPROJECT["project"]["version"]) in core.specifier
    # 0.1 lacks the hooks the plugins use (the speedups parser hook among them).
    assert Version("0.1.0") not in core.specifier
    assert Version("0.3.0") not in core.specifier


def test_the_wheelhouse_holds_what_the_fresh_environments_install() -> None:
    """The fresh environments install from the wheelhouse alone (tests/plugin_venvs.py): its
    requirements name the wheels' build backend and every dependency of the core, at the bounds
    pyproject.toml gives them."""
    lines = [line.split("#", 1)[0].strip() for line in REQUIREMENTS.read_text().splitlines()]
    listed = {r.name: r.specifier for r in map(Requirement, filter(None, lines))}
    needed = [*PYPROJECT["build-system"]["requires"], *PYPROJECT["project"]["dependencies"]]
    assert {r.name: r.specifier for r in map(Requirement, needed)} == listed


def test_ruff_and_mypy_are_pinned_exactly_everywhere_they_are_installed() -> None:
    test_extra = {
        r.name: r for r in map(Requirement, PYPROJECT["project"]["optional-dependencies"]["test"])
    }
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    for tool, env in (("ruff", "testenv:lint"), ("mypy", "testenv:type")):
        [spec] = test_extra[tool].specifier
        assert spec.operator == "==", f"{tool} is not pinned to one version: {spec}"
        assert tox[env]["deps"].strip() == f"{tool}=={spec.version}"
        # The suite's own checks run the pinned version, or they check nothing the pin promises.
        assert importlib.metadata.version(tool) == spec.version


def test_mypy_strict_sees_the_ef_types_in_the_installed_wheel(
    installed_core: tuple[Path, Path], tmp_path: Path
) -> None:
    _, python = installed_core
    (tmp_path / "user.py").write_text(USER_FILE, encoding="utf-8")
    (tmp_path / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in {"MYPYPATH", "PYTHONPATH"}}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            "mypy.ini",
            "--strict",
            "--python-executable",
            python,
            "--cache-dir",
            ".mypy_cache",
            "--verbose",
            "user.py",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # The modules came from the wheel installed in the fresh environment, not this checkout.
    found = re.findall(r"Parsing (\S*[/\\]ef[/\\](?:segments|source_manager)\.py)", done.stderr)
    assert len(found) == 2, done.stderr
    assert all(Path(path).is_relative_to(python.parent.parent) for path in found), found


def plugin_project(plugin: Path) -> dict[str, Any]:
    return dict(tomllib.loads((plugin / "pyproject.toml").read_text(encoding="utf-8"))["project"])


@pytest.fixture(scope="module")
def plugin_wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every plugin's wheel by its distribution's name, built as a user's ``pip wheel`` builds
    them (one call for all), from copies of their folders in this checkout without what earlier
    builds and editable installs left there."""
    sources = tmp_path_factory.mktemp("plugin-sources")
    for plugin in PLUGINS:
        shutil.copytree(
            plugin,
            sources / plugin.name,
            ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "*.so", ".*"),
        )
    wheels = build_wheels(
        None, [sources / plugin.name for plugin in PLUGINS], tmp_path_factory.mktemp("wheels")
    )
    assert len(wheels) == len(PLUGINS), wheels
    return {wheel_metadata(wheel)[0]["Name"]: wheel for wheel in wheels}


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda path: path.name)
def test_each_plugin_wheel_carries_its_package_entry_point_and_licence(
    plugin: Path, plugin_wheels: dict[str, Path]
) -> None:
    project = plugin_project(plugin)
    wheel = plugin_wheels[project["name"]]
    metadata, info = wheel_metadata(wheel)
    assert metadata["Name"] == project["name"]
    assert metadata["Version"] == project["version"]
    assert metadata["License-Expression"] == "Apache-2.0"
    [licence] = [value for name, value in info.items() if name.endswith("LICENSE")]
    assert licence == (ROOT / "LICENSE").read_bytes()
    entry_points = configparser.ConfigParser()
    entry_points.read_string(info["entry_points.txt"].decode())
    # ef.evaluation's group for ef plugins; pytest11 for the pytest plugin.
    groups = {group: dict(entry_points[group]) for group in entry_points.sections()}
    assert groups == project["entry-points"]
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    [package] = [path for path in (plugin / "src").iterdir() if (path / "__init__.py").exists()]
    sources = {
        path.relative_to(plugin / "src").as_posix()
        for path in package.rglob("*")
        if path.suffix in {".py", ".pyi"} or path.name == "py.typed"
    }
    assert sources, plugin
    assert sources <= names, sorted(sources - names)
    assert f"{package.name}/py.typed" in names
    # Nothing but the package and its metadata: no tests, no build leftovers.
    assert all(name.startswith(f"{package.name}/") or ".dist-info/" in name for name in names)
    compiled = {name for name in names if name.endswith(".so")}
    if package.name == "ef_evaluation_speedups":
        # The C modules come compiled; their sources stay out of the wheel.
        for module in ("_trec_run", "_fusion", "_qrels"):
            assert any(
                re.fullmatch(rf"ef_evaluation_speedups/{module}\.cpython-\d+.*\.so", name)
                for name in compiled
            ), (module, sorted(compiled))
        assert not [name for name in names if name.endswith(".c")]
    else:
        assert not compiled
