"""Plugins cannot end the process, pollute standard output, or hide which reader failed.

The faulty plugins are real distributions (``tests/plugin_fixtures``), built as wheels and
installed into a fresh virtual environment of this module; each check runs ``ef-eval`` or a
probe script there, so plugins arrive only through their entry points. In-process checks of the
same rules, and of ``ef.evaluation.testing.registered_plugin``, follow them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from ef.evaluation import (
    PluginWarning,
    evaluate_run,
    hookimpl,
    read_dataset,
    read_trec_run,
    registry,
)
from ef.evaluation._plugins import HOST
from ef.evaluation.testing import registered_plugin
from foreground import FOREGROUND
from plugin_venvs import FIXTURES, ROOT, build_venv, environment, outside_checkout, run, scripts

PLUGINS = ("exit_at_import", "exit_in_hook", "print_at_import", "bad_reader")
"""Loaded together: each misbehaves in its own way, and the others must not notice."""
SELECTION = ",".join(PLUGINS)
HANGING = ("hang_at_import", "hang_in_hook")
"""Installed too, and selected only by the tests of plugin code that never finishes."""

PROBE = """
import json, sys, warnings

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import ef.evaluation as ev

    report = ev.evaluate_retrieval(
        lambda query, *, limit: ["d1", "d2"],
        {"q1": {"d1": 1}},
        {"q1": "a query"},
        k_values=(2,),
        metrics=("ndcg", "printed_judged"),
    )
    readers = {}
    for name in ("records", "missing_key", "listed_qrels"):
        try:
            ev.read_dataset("source", reader=name)
        except Exception as error:
            readers[name] = {
                "type": type(error).__name__,
                "message": str(error),
                "notes": getattr(error, "__notes__", []),
            }
json.dump(
    {
        "metrics": report.metrics,
        "registered": sorted(ev.registry().metrics),
        "plugins": sorted(info.name for info in ev.list_plugins() if not info.builtin),
        "readers": readers,
        "warnings": [
            f"{w.category.__module__}.{w.category.__qualname__}: {w.message}" for w in caught
        ],
    },
    sys.stdout,
)
"""


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the core and the misbehaving plugins."""
    base = tmp_path_factory.mktemp("plugin-isolation")
    fixtures = [*PLUGINS, "interrupt_at_import", *HANGING]
    return build_venv(base, [ROOT, *(FIXTURES / name for name in fixtures)])


def ef_eval(
    python: Path, *args: str | Path, selection: str = SELECTION, **extra: str
) -> subprocess.CompletedProcess[str]:
    """Run the installed ``ef-eval`` with ``args`` (``extra``: more environment variables); any
    exit code is returned, not raised."""
    return subprocess.run(
        [scripts(python) / "ef-eval", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env=environment(selection, **extra),
        **outside_checkout(python),
        **FOREGROUND,  # the plugin's Ctrl-C must reach it, however the suite was started
    )


def score_one_run(python: Path, folder: Path, **options: str) -> subprocess.CompletedProcess[str]:
    """``ef-eval run`` with the printing plugin's metric and nDCG at 2, JSON out, on a run of
    one query written to ``folder`` (``options``: as :func:`ef_eval` takes them)."""
    (folder / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\n", encoding="utf-8")
    (folder / "a.run").write_text("q1 Q0 d1 1 2.0 a\nq1 Q0 d3 2 1.0 a\n", encoding="utf-8")
    return ef_eval(
        python,
        "run",
        folder / "qrels.txt",
        folder / "a.run",
        "--k",
        "2",
        "--metrics",
        "printed_judged,ndcg",
        "--format",
        "json",
        **options,
    )


@pytest.fixture(scope="module")
def probed(venv_python: Path) -> dict[str, Any]:
    output = run(
        [venv_python, "-c", PROBE], env=environment(SELECTION), **outside_checkout(venv_python)
    )
    result: dict[str, Any] = json.loads(output)  # nothing printed by a plugin is in the way
    return result


@pytest.fixture(scope="module")
def listed(venv_python: Path) -> subprocess.CompletedProcess[str]:
    return ef_eval(venv_python, "plugins", "--format", "json")


def warned(result: dict[str, Any], needle: str) -> list[str]:
    return [w for w in result["warnings"] if needle in w]


# sys.exit in plugin code


def test_sys_exit_at_import_skips_the_plugin_and_every_command_still_works(listed):
    assert listed.returncode == 0, listed.stderr
    names = {plugin["name"] for plugin in json.loads(listed.stdout)}
    assert {"print_at_import", "bad_reader", "exit_in_hook"} <= names
    assert "exit_at_import" not in names
    assert (
        "ef-eval: warning: plugin 'exit_at_import' (distribution ef-evaluation-exit-at-import "
        "0.5.0) failed to load and is skipped: SystemExit: 3\n"
    ) in listed.stderr


def test_sys_exit_at_import_in_library_use_is_one_warning(probed):
    [message] = warned(probed, "'exit_at_import'")
    assert message.startswith("ef.evaluation.PluginWarning: ")
    assert message.endswith("failed to load and is skipped: SystemExit: 3")
    assert probed["plugins"] == ["bad_reader", "exit_in_hook", "print_at_import"]


def test_sys_exit_in_a_hook_loses_that_plugins_answer_only(probed):
    registering, resolving = warned(probed, "'exit_in_hook'")
    assert "raised in ef_evaluation_register_metrics and its metrics are ignored" in registering
    assert registering.endswith("SystemExit: 4")
    assert "exit_in_hook_metric" not in probed["registered"]
    assert "raised in ef_evaluation_doc_id_getter and was ignored there" in resolving
    assert resolving.endswith("SystemExit: 5")
    # The built-in doc id getter answered instead, so the evaluation went on.
    assert probed["metrics"] == {"ndcg@2": 1.0, "printed_judged@2": 0.5}


# printing plugins


def test_what_plugins_print_goes_to_standard_error(listed):
    assert "print_at_import: importing\n" in listed.stderr
    assert "print_at_import: registering its metric\n" in listed.stderr
    assert "print_at_import: " not in listed.stdout
    assert isinstance(json.loads(listed.stdout), list)  # the JSON, and only the JSON


def test_json_output_of_a_scoring_command_parses_with_a_printing_plugin(venv_python, tmp_path):
    done = score_one_run(venv_python, tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["a.run"]["metrics"] == {"printed_judged@2": 0.5, "ndcg@2": 1.0}
    assert "print_at_import: importing" in done.stderr


# readers that break the contract


def test_a_reader_returning_a_list_is_named_with_its_plugin(probed):
    error = probed["readers"]["records"]
    assert error["type"] == "TypeError"
    assert error["message"] == (
        "dataset reader 'records' of plugin 'bad_reader' (distribution ef-evaluation-bad-reader "
        "0.7.0) returned a list of 2 items; a reader must return a (corpus, queries, qrels) "
        "triple of mappings"
    )


def test_a_reader_returning_qrels_as_a_list_is_named(probed):
    error = probed["readers"]["listed_qrels"]
    assert error["type"] == "TypeError"
    assert "dataset reader 'listed_qrels' of plugin 'bad_reader'" in error["message"]
    assert "returned qrels as a list, not a mapping" in error["message"]


def test_a_reader_raising_keyerror_keeps_its_error_with_a_note_naming_it(probed):
    error = probed["readers"]["missing_key"]
    assert (error["type"], error["message"]) == ("KeyError", "'split'")
    assert error["notes"] == [
        "raised by dataset reader 'missing_key' of plugin 'bad_reader' "
        "(distribution ef-evaluation-bad-reader 0.7.0)"
    ]


@pytest.mark.parametrize(
    ("reader", "expected"),
    [
        ("records", "ef-eval: error: dataset reader 'records' of plugin 'bad_reader'"),
        ("missing_key", "ef-eval: error: KeyError: 'split'; raised by dataset reader"),
    ],
)
def test_the_cli_names_a_failing_reader_in_one_line(venv_python, tmp_path, reader, expected):
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 2.0 a\n", encoding="utf-8")
    done = ef_eval(venv_python, "run", "source", tmp_path / "a.run", "--reader", reader)
    assert done.returncode == 1
    assert done.stdout == ""
    [line] = [line for line in done.stderr.splitlines() if line.startswith("ef-eval: error:")]
    assert line.startswith(expected)
    assert "Traceback" not in done.stderr


# Ctrl-C while a plugin imports


def test_ctrl_c_while_a_plugin_imports_interrupts_the_command(venv_python):
    done = ef_eval(venv_python, "plugins", selection="interrupt_at_import")
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "ef-eval: interrupted\n")


def test_ctrl_c_while_a_plugin_imports_is_not_a_plugin_failure(venv_python):
    probe = (
        "import warnings, ef.evaluation as ev\n"
        "warnings.simplefilter('error')\n"  # a PluginWarning would be raised instead
        "try:\n"
        "    ev.registry()\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted')\n"
    )
    output = run(
        [venv_python, "-c", probe],
        env=environment("interrupt_at_import"),
        **outside_checkout(venv_python),
        **FOREGROUND,
    )
    assert output == "interrupted\n"


# plugin code that never finishes


def test_a_plugin_whose_import_or_hook_hangs_is_skipped_after_the_timeout(venv_python, tmp_path):
    done = score_one_run(
        venv_python,
        tmp_path,
        selection="hang_at_import,hang_in_hook,print_at_import",
        EF_EVALUATION_PLUGIN_TIMEOUT="2",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["a.run"]["metrics"] == {"printed_judged@2": 0.5, "ndcg@2": 1.0}
    hint = (
        " and is skipped (it runs on, unused, until the program ends); "
        "EF_EVALUATION_PLUGIN_TIMEOUT sets how many seconds to wait, EF_EVALUATION_PLUGINS "
        "which plugins to load\n"
    )
    assert (
        "ef-eval: warning: plugin 'hang_at_import' (distribution ef-evaluation-hang-at-import "
        "0.8.0) did not finish loading in 2 s" + hint
    ) in done.stderr
    [hook] = [line for line in done.stderr.splitlines() if "'hang_in_hook'" in line]
    assert hook.startswith(
        "ef-eval: warning: plugin 'hang_in_hook' (distribution ef-evaluation-hang-in-hook "
        "0.8.0) did not answer ef_evaluation_"
    )  # the first of its hooks asked; dropped then, its other hook is never asked
    assert hook.endswith(" in 2 s" + hint.rstrip("\n"))


def test_hung_plugins_are_left_out_of_the_plugin_list(venv_python):
    done = ef_eval(
        venv_python,
        "plugins",
        "--format",
        "json",
        selection=",".join(HANGING),
        EF_EVALUATION_PLUGIN_TIMEOUT="1.5",
    )
    assert done.returncode == 0, done.stderr
    names = {plugin["name"] for plugin in json.loads(done.stdout)}
    assert not names & set(HANGING)
    assert done.stderr.count("ef-eval: warning: plugin 'hang_") == 2


def test_a_bad_plugin_timeout_is_an_error_naming_the_variable(venv_python):
    done = ef_eval(venv_python, "plugins", selection="", EF_EVALUATION_PLUGIN_TIMEOUT="soon")
    assert done.returncode != 0
    assert "EF_EVALUATION_PLUGIN_TIMEOUT must be a number of seconds > 0, got 'soon'" in done.stderr


# the same rules in-process


class PrintingPlugin:
    @hookimpl
    def ef_evaluation_register_metrics(self, register):
        print("registering")
        register("printing", lambda ranked, relevant, k: 1.0)

    @hookimpl
    def ef_evaluation_doc_id_getter(self, result_type):
        print("resolving")


def test_in_process_hooks_print_to_standard_error(capsys):
    with registered_plugin(PrintingPlugin(), name="printing"):
        report = evaluate_run(
            {"q1": ["d1"]}, {"q1": {"d1": 1}}, k_values=(1,), metrics=["printing"]
        )
    assert report.metrics == {"printing@1": 1.0}
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "registering\n" in captured.err


def test_standard_output_is_restored_after_plugin_code(capsys):
    with registered_plugin(PrintingPlugin(), name="printing"):
        registry()
    print("the program's own output")
    assert capsys.readouterr().out == "the program's own output\n"
    assert sys.stdout is not sys.stderr


class ExitingPlugin:
    @hookimpl
    def ef_evaluation_register_metrics(self, register):
        register("exiting", lambda ranked, relevant, k: 1.0)
        raise SystemExit(4)


def test_in_process_sys_exit_in_a_hook_is_a_plugin_warning():
    with registered_plugin(ExitingPlugin(), name="exiting"):
        with pytest.warns(PluginWarning, match=r"'exiting' .*raised in .*: SystemExit: 4$"):
            metrics = registry().metrics
        assert "exiting" not in metrics
        assert "ndcg" in metrics


class InterruptedPlugin:
    @hookimpl
    def ef_evaluation_register_metrics(self, register):
        raise KeyboardInterrupt


def test_keyboard_interrupt_in_a_hook_goes_through():
    with registered_plugin(InterruptedPlugin(), name="interrupted"):
        with pytest.raises(KeyboardInterrupt):
            registry()


class ReaderPlugin:
    @hookimpl
    def ef_evaluation_register_dataset_readers(self, register):
        register("listing", lambda source: [source])
        register("tupled", lambda source: ({}, {}, {}))
        register("listed", lambda source: [{"d": "t"}, {"q": "x"}, {"q": {"d": 1}}])
        register("raising", lambda source: {}["corpus"])


def test_in_process_reader_errors_name_the_reader_and_plugin():
    with registered_plugin(ReaderPlugin(), name="readers"):
        with pytest.raises(TypeError, match=r"^dataset reader 'listing' of plugin 'readers' "):
            read_dataset("x", reader="listing")
        with pytest.raises(KeyError) as caught:
            read_dataset("x", reader="raising")
        assert caught.value.__notes__ == [
            "raised by dataset reader 'raising' of plugin 'readers' (registered in-process)"
        ]
        assert read_dataset("x", reader="tupled") == ({}, {}, {})
        assert read_dataset("x", reader="listed") == ({"d": "t"}, {"q": "x"}, {"q": {"d": 1}})


def test_builtin_reader_errors_carry_no_note(tmp_path):
    with pytest.raises(FileNotFoundError) as caught:
        read_dataset(tmp_path / "missing")
    assert not hasattr(caught.value, "__notes__")


# registered_plugin removes only what it added


class FakeParser:
    @hookimpl
    def ef_evaluation_trec_run_parser(self):
        return None


def test_registered_plugin_under_an_installed_plugins_name_is_refused(tmp_path):
    HOST.reset()
    installed = HOST.manager.get_plugin("speedups")
    assert installed is not None, "ef-evaluation-speedups is not installed"
    with pytest.raises(ValueError, match=r"a plugin named 'speedups' is already registered "):
        with registered_plugin(FakeParser(), name="speedups"):
            pytest.fail("the body must not run")
    assert HOST.manager.get_plugin("speedups") is installed
    assert HOST.trec_run_parser() is not None  # the compiled parser is still there
    run_file = tmp_path / "a.run"
    run_file.write_text("q1 Q0 d1 1 2.0 a\n", encoding="utf-8")
    assert read_trec_run(run_file) == {"q1": {"d1": 2.0}}


def test_registered_plugin_leaves_a_plugin_that_replaced_its_own(monkeypatch):
    monkeypatch.setenv("EF_EVALUATION_PLUGINS", "")
    HOST.reset()
    try:
        fake = FakeParser()
        with registered_plugin(fake, name="speedups"):
            assert HOST.manager.get_plugin("speedups") is fake
            # The body reloads the installed plugins: the name now belongs to the real one.
            monkeypatch.delenv("EF_EVALUATION_PLUGINS")
            HOST.reset()
            installed = HOST.manager.get_plugin("speedups")
            assert installed is not None and installed is not fake
        assert HOST.manager.get_plugin("speedups") is installed
    finally:
        HOST.reset()


def test_registered_plugin_refused_by_the_host_unregisters_nothing():
    class Misspelled:
        @hookimpl
        def ef_evaluation_register_metric(self, register):  # missing "s"
            register("never", lambda ranked, relevant, k: 1.0)

    before = [info.name for info in HOST.plugins()]
    with pytest.warns(PluginWarning, match="unknown hook"):
        with registered_plugin(Misspelled(), name="misspelled") as name:
            assert name == "misspelled"
    assert [info.name for info in HOST.plugins()] == before


class HangingPlugin:
    """Registers one metric, then waits for ``released`` (at most 60 s) before the second."""

    def __init__(self) -> None:
        self.released = threading.Event()

    @hookimpl
    def ef_evaluation_register_metrics(self, register):
        register("before_hanging", lambda ranked, relevant, k: 1.0)
        self.released.wait(60)
        register("after_hanging", lambda ranked, relevant, k: 1.0)


def test_in_process_a_hook_that_hangs_is_dropped_with_all_it_registered(monkeypatch):
    monkeypatch.setenv("EF_EVALUATION_PLUGIN_TIMEOUT", "0.5")
    HOST.reset()
    plugin = HangingPlugin()
    try:
        with registered_plugin(plugin, name="hanging"):
            with pytest.warns(
                PluginWarning,
                match=r"^plugin 'hanging' \(registered in-process\) "
                r"did not answer ef_evaluation_register_metrics in 0\.5 s and is "
                r"skipped .*; EF_EVALUATION_PLUGIN_TIMEOUT sets how many seconds to wait, "
                r"EF_EVALUATION_PLUGINS which plugins to load$",
            ):
                metrics = registry().metrics
            assert "ndcg" in metrics
            assert not {"before_hanging", "after_hanging"} & set(metrics)
            assert "hanging" not in {info.name for info in HOST.plugins()}
            plugin.released.set()  # its abandoned call ends; what it registers then is lost
            assert "after_hanging" not in registry().metrics
    finally:
        plugin.released.set()
        monkeypatch.delenv("EF_EVALUATION_PLUGIN_TIMEOUT")
        HOST.reset()
