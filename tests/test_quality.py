"""The code stays ruff-clean and mypy-strict-clean: checked with every test run.

The checks run as subprocesses started when collection ends (``tests/background_checks.py``,
``tests/conftest.py``), beside the other tests; these tests run last and assert their results.
"""

from __future__ import annotations

import pytest

from background_checks import CHECKS, ROOT, BackgroundChecks


@pytest.mark.timeout(300)
@pytest.mark.parametrize("check", list(CHECKS))
def test_tool_is_clean(check: str, background_checks: BackgroundChecks) -> None:
    # Started when collection ended (a LookupError otherwise), so usually done by now.
    returncode, output = background_checks.result(check, timeout=290)
    assert returncode == 0, output


def test_mypy_is_strict_without_per_module_relaxation():
    config = (ROOT / "pyproject.toml").read_text()
    assert "strict = true" in config
    assert "[[tool.mypy.overrides]]" not in config or "ignore_errors" not in config


def test_the_quality_tests_run_last(request: pytest.FixtureRequest) -> None:
    modules = [item.path.name for item in request.session.items]
    first = modules.index("test_quality.py")
    assert set(modules[first:]) == {"test_quality.py"}, "a test runs after the quality tests"


def test_the_longest_files_run_first_and_each_is_a_test_file(
    request: pytest.FixtureRequest,
) -> None:
    from conftest import _LONGEST_FIRST

    files = {path.name for path in ROOT.glob("**/tests/test_*.py") if ".venv" not in path.parts}
    assert [name for name in _LONGEST_FIRST if name not in files] == []
    order = list(dict.fromkeys(item.path.name for item in request.session.items))
    listed = [name for name in _LONGEST_FIRST if name in order]
    assert order[: len(listed)] == listed
