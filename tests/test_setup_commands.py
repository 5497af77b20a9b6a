"""The README's two set-up commands: CI runs exactly the test command, and both install fresh."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    """Every one-line ``sh`` block of the README's set-up section, in order."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Set-up: two commands", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)]


def test_the_set_up_section_has_exactly_two_commands() -> None:
    commands = readme_commands()
    assert len(commands) == 2
    assert all("\n" not in command for command in commands)
    main_job, tests = commands
    assert main_job.endswith("ef-eval demo")
    assert tests.endswith(".venv/bin/python -m pytest")


def test_ci_runs_exactly_the_readme_test_command() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    last = [line for line in script.splitlines() if line.strip()][-1]
    assert last == readme_commands()[1]


def test_every_plugin_distribution_is_installed_by_the_test_command() -> None:
    plugins = sorted(path.name for path in (ROOT / "plugins").iterdir() if path.is_dir())
    installed = re.findall(r"\./plugins/([\w-]+)", readme_commands()[1])
    assert sorted(installed) == plugins


def test_every_plugin_is_installed_editable_by_the_test_command() -> None:
    plugins = sorted(path.name for path in (ROOT / "plugins").iterdir() if path.is_dir())
    editable = re.findall(r"-e \./plugins/([\w-]+)", readme_commands()[1])
    assert sorted(editable) == plugins
    assert "-e '.[test]'" in readme_commands()[1]


def test_the_installed_plugins_run_from_this_checkout() -> None:
    """What the suite tests is what is edited: each plugin's module is this checkout's source."""
    import importlib.metadata

    for folder in sorted(path for path in (ROOT / "plugins").iterdir() if path.is_dir()):
        [package] = [p for p in (folder / "src").iterdir() if (p / "__init__.py").exists()]
        module = importlib.import_module(package.name)
        assert module.__file__ is not None
        assert Path(module.__file__).resolve() == (package / "__init__.py").resolve(), (
            f"{package.name} runs from {module.__file__}, not from {package}: install it with "
            f"pip install -e {folder.relative_to(ROOT)}"
        )
        assert importlib.metadata.distribution(folder.name).version
