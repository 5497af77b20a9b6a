"""``ef-eval`` at its edges: Ctrl-C before a command runs, and closed standard streams.

Each case runs the command in a fresh interpreter with this checkout's source first on the path.
Ctrl-C is a real ``KeyboardInterrupt`` raised at a chosen point of the start-up (an audit hook
on an import, a trace function on the parser), and a real SIGINT for the start-up as a whole;
closed streams are closed by the shell (``>&-``), as a user would close them.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ef.evaluation.cli import COMMANDS, main
from ef.evaluation.cli._common import CliError
from foreground import FOREGROUND

SRC = Path(__file__).resolve().parents[1] / "src"
INTERRUPTED = "ef-eval: interrupted\n"

INTERRUPT_AT_IMPORT = """
import sys

TARGET = sys.argv.pop(1)

def interrupt(event, args):
    if event == "import" and args[0] == TARGET:
        raise KeyboardInterrupt  # what Ctrl-C raises, at that very import

sys.addaudithook(interrupt)
"""


def python(code: str, *args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
        **kwargs,
    )


def shell(command: str, *, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``ef-eval`` (this interpreter, this checkout) run by ``sh`` as ``ef-eval ARGS``."""
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    script = f'ef_eval() {{ "$0" -m ef.evaluation.cli "$@"; }}; {command}'
    return subprocess.run(
        ["sh", "-c", script, sys.executable],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
        cwd=cwd,
    )


# Ctrl-C during start-up


def test_ctrl_c_while_the_commands_import_is_one_line_and_130():
    code = INTERRUPT_AT_IMPORT + (
        "from ef.evaluation.cli import main\nsys.exit(main(['plugins']))\n"
    )
    done = python(code, "ef.evaluation.cli.compare")
    assert (done.returncode, done.stdout, done.stderr) == (130, "", INTERRUPTED)


def test_ctrl_c_while_the_command_line_is_parsed_is_one_line_and_130():
    code = (
        "import sys\n"
        "from ef.evaluation.cli import main\n"
        "def interrupt(frame, event, arg):\n"
        "    if event == 'call' and frame.f_code.co_name == 'parse_known_args':\n"
        "        raise KeyboardInterrupt\n"
        "sys.settrace(interrupt)\n"
        "sys.exit(main(['plugins']))\n"
    )
    done = python(code)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", INTERRUPTED)


def test_ctrl_c_while_ef_evaluation_imports_is_caught_by_the_script_entry_point():
    code = INTERRUPT_AT_IMPORT + (
        "from ef._ef_eval import main\nsys.argv[1:] = ['plugins']\nsys.exit(main())\n"
    )
    done = python(code, "ef.evaluation._scoring.scored")
    assert (done.returncode, done.stdout, done.stderr) == (130, "", INTERRUPTED)


def test_the_script_entry_point_runs_the_command():
    code = (
        "import sys\n"
        "from ef._ef_eval import main\n"
        "sys.argv[1:] = ['plugins', '--format', 'json']\n"
        "sys.exit(main())\n"
    )
    done = python(code)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["name"] == "ef.evaluation._builtins"


def test_the_installed_ef_eval_script_is_the_entry_point_that_catches_ctrl_c():
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="ef-eval")
    assert script.value == "ef._ef_eval:main"


@pytest.mark.parametrize("delay", [0.0, 0.02, 0.05, 0.1, 0.2])
def test_a_real_sigint_at_any_moment_of_start_up_never_shows_a_traceback(delay):
    # "ready" is said once main() asks for ef.evaluation, inside its own handler: a signal
    # landing earlier would interrupt this script, not the console script's start-up.
    code = (
        "import sys\n"
        "from ef._ef_eval import main\n"
        "class Ready:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'ef.evaluation':\n"
        "            sys.meta_path.remove(self)\n"
        "            print('ready', file=sys.stderr, flush=True)\n"
        "sys.meta_path.insert(0, Ready())\n"
        "sys.argv[1:] = ['plugins', '--format', 'json']\n"
        "sys.exit(main())\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        **FOREGROUND,
    )
    assert process.stderr is not None
    assert process.stderr.readline() == "ready\n"
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    if process.returncode == 0:  # it finished first: then its output is whole
        assert json.loads(stdout)
    else:
        assert (process.returncode, stdout, stderr) == (130, "", INTERRUPTED)


# Loaded by the interpreter before the script runs (site imports sitecustomize): it says "ready"
# on standard error when the script first asks for the module EF_TEST_ANNOUNCE_AT names and,
# as EF_TEST_HOLD says, waits there for the signal the test then sends: in that very import, or
# in a finalizer (__del__), where Python can only print an exception and go on.
ANNOUNCE = """
import os, sys, time

def hold():
    for _ in range(600):  # short sleeps: a signal come before the first is seen after it
        time.sleep(0.1)

class Held:
    def __del__(self):
        hold()

class Announce:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ["EF_TEST_ANNOUNCE_AT"]:
            sys.meta_path.remove(self)
            print("ready", file=sys.stderr, flush=True)
            if os.environ["EF_TEST_HOLD"] == "import":
                hold()
            elif os.environ["EF_TEST_HOLD"] == "finalizer":
                Held()
        return None

sys.meta_path.insert(0, Announce())
"""


@pytest.mark.parametrize(
    ("module", "hold", "delay"),
    [
        ("signal", "import", 0.0),  # the first import the script makes: right after its start
        ("ef.evaluation", "finalizer", 0.0),
        ("ef._ef_eval", "", 0.05),
        ("ef._ef_eval", "", 0.1),
        ("ef._ef_eval", "", 0.15),
    ],
)
def test_a_real_sigint_early_in_ef_eval_demo_is_one_line_and_130(tmp_path, module, hold, delay):
    script = shutil.which("ef-eval", path=str(Path(sys.executable).parent))
    assert script is not None
    (tmp_path / "sitecustomize.py").write_text(ANNOUNCE)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(SRC)]),
        "EF_TEST_ANNOUNCE_AT": module,
        "EF_TEST_HOLD": hold,
    }
    process = subprocess.Popen(
        [script, "demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
        process_group=0,
        **FOREGROUND,
    )
    try:
        assert process.stderr is not None
        assert process.stderr.readline() == "ready\n"
        time.sleep(delay)
        os.killpg(process.pid, signal.SIGINT)  # as a terminal sends Ctrl-C to its command
        stdout, stderr = process.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert (process.returncode, stdout, stderr) == (130, "", INTERRUPTED)


def test_a_sigint_after_the_command_returned_leaves_its_exit_code_and_output():
    # The moment a late Ctrl-C lands in: the command is done, the interpreter not yet gone.
    code = (
        "import os, signal, sys\n"
        "from ef._ef_eval import main\n"
        "sys.argv[1:] = ['plugins', '--format', 'json']\n"
        "code = main()\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "sys.exit(code)\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        **FOREGROUND,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)


def test_importing_the_cli_imports_no_command_until_main_runs():
    code = (
        "import sys, ef.evaluation.cli as cli\n"
        "print(sorted(m for m in sys.modules if m.startswith('ef.evaluation.cli.')))\n"
    )
    done = python(code)
    loaded = ast.literal_eval(done.stdout)
    # Shared helpers (private modules) only: no command module (run, retrieval, ...) yet.
    assert "ef.evaluation.cli._common" in loaded, done.stderr
    assert [name for name in loaded if not name.rpartition(".")[2].startswith("_")] == []


def test_commands_are_still_listed_in_help_order():
    assert [module.__name__.rpartition(".")[2] for module in COMMANDS] == [
        "run",
        "retrieval",
        "suite",
        "rag",
        "compare",
        "check",
        "report",
        "fuse",
        "pool",
        "qrels_stats",
        "metrics",
        "plugins",
        "demo",
    ]


# closed standard streams


def test_closed_standard_output_is_one_error_line(tmp_path):
    done = shell("ef_eval plugins >&-", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == (
        "ef-eval: error: standard output is closed: write the result to a file with --output FILE\n"
    )


def test_closed_standard_output_with_dash_output_is_the_same_error(tmp_path):
    done = shell("ef_eval plugins --output - >&-", cwd=tmp_path)
    assert done.returncode == 1
    assert "standard output is closed" in done.stderr
    assert "Traceback" not in done.stderr and "AttributeError" not in done.stderr


def test_closed_standard_output_does_not_stop_a_command_writing_a_file(tmp_path):
    done = shell("ef_eval plugins --format json --output plugins.json >&-", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads((tmp_path / "plugins.json").read_text(encoding="utf-8"))


def test_closed_standard_error_keeps_errors_out_of_standard_output(tmp_path):
    done = shell("ef_eval run missing-qrels.txt missing.run 2>&-", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "")


def test_in_process_main_restores_a_closed_standard_output(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "stdout", None)
    assert main(["plugins", "--format", "json", "--output", str(tmp_path / "p.json")]) == 0
    assert sys.stdout is None
    assert json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))


def test_writing_to_a_closed_standard_output_is_a_cli_error(monkeypatch):
    from ef.evaluation.cli import _ClosedOutput

    with pytest.raises(CliError, match=r"^standard output is closed: nothing can be printed"):
        _ClosedOutput().write("anything")
