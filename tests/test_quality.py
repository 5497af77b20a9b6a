"""The code stays ruff-clean and mypy-strict-clean: checked with every test run."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).parents[1]
LINTED = ["src", "tests", "plugins", "benchmarks"]


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["ruff", "check", *LINTED], id="ruff-check"),
        pytest.param(["ruff", "format", "--check", *LINTED], id="ruff-format"),
        pytest.param(["mypy"], id="mypy-strict"),
    ],
)
def test_tool_is_clean(command):
    result = subprocess.run(
        [sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_strict_without_per_module_relaxation():
    config = (ROOT / "pyproject.toml").read_text()
    assert "strict = true" in config
    assert "[[tool.mypy.overrides]]" not in config or "ignore_errors" not in config
