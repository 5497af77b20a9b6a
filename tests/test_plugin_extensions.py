"""The hooks that let a plugin keep reports elsewhere: report locations read by ``read_report``
and ``ef-eval check --baseline``, and command extensions that add options to the evaluating
commands and receive their reports once the commands' own output is written.

Each test registers a throwaway plugin in-process (an in-memory store of report bytes); the
MLflow plugin's own tests do the same against a real tracking server.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ef.evaluation import (
    PluginWarning,
    RetrievalEvalReport,
    evaluate_run,
    hookimpl,
    read_report,
    read_trec_qrels,
    read_trec_run,
    registry,
)
from ef.evaluation.cli import build_parser, main
from ef.evaluation.testing import registered_plugin

QRELS = "q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 1\nq3 0 d1 1\n"
RUN = "q1 Q0 d2 1 3.0 a\nq1 Q0 d1 2 2.0 a\nq2 Q0 d9 1 1.0 a\nq3 Q0 d1 1 1.0 a\n"
WORSE = "q1 Q0 d9 1 3.0 b\nq2 Q0 d9 1 1.0 b\nq3 Q0 d8 1 1.0 b\n"
COMMANDS = ("run", "retrieval", "rag", "compare", "check", "suite")


class Store:
    """A plugin keeping reports in memory: ``memory:NAME`` reads them, ``--memory NAME``
    stores each finished report under ``NAME/REPORT``."""

    def __init__(self, fetch: Callable[[str], Any] | None = None) -> None:
        self.saved: dict[str, bytes] = {}
        self.finished: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        self.fetch = fetch or self.saved.__getitem__

    @hookimpl
    def ef_evaluation_register_report_locations(self, register: Callable[..., None]) -> None:
        register("memory", lambda name: self.fetch(name), description="reports in memory")

    @hookimpl
    def ef_evaluation_register_command_extensions(self, register: Callable[..., None]) -> None:
        def add_options(parser: Any, command: str) -> None:
            parser.add_argument("--memory", metavar="NAME", help=f"store {command}'s reports")

        def finished(command: str, reports: Any, args: Any, **details: Any) -> None:
            self.finished.append((command, dict(reports), details))
            if args.memory:
                for name, report in reports.items():
                    self.saved[f"{args.memory}/{name}"] = report.to_json().encode()

        register("memory", add_options, finished)


@pytest.fixture
def store() -> Iterator[Store]:
    plugin = Store()
    with registered_plugin(plugin, name="memory-store"):
        yield plugin


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    paths = {"qrels": QRELS, "run.txt": RUN, "worse.txt": WORSE}
    for name, text in paths.items():
        (tmp_path / name).write_text(text)
    return {name: str(tmp_path / name) for name in paths}


def test_read_report_reads_a_registered_location_byte_for_byte(store, tmp_path):
    report = evaluate_run({"q1": {"d1": 1.0}}, {"q1": {"d1": 1, "d2": 1}}, k_values=(1, 2))
    store.saved["best"] = report.to_json().encode()
    assert read_report("memory:best") == report
    # A path object is always a file, and so is a string whose scheme nobody registered.
    (tmp_path / "memory:best").write_text(report.to_json())
    assert read_report(tmp_path / "memory:best") == report
    with pytest.raises(FileNotFoundError):
        read_report("elsewhere:best")


def test_a_location_error_names_the_plugin_and_a_bad_answer_is_refused():
    def missing(name: str) -> bytes:
        raise FileNotFoundError(f"no report {name!r} in memory")

    with registered_plugin(Store(fetch=missing), name="memory-store"):
        with pytest.raises(FileNotFoundError) as caught:
            read_report("memory:gone")
    assert "no report 'gone'" in str(caught.value)
    assert any("'memory'" in note and "memory-store" in note for note in caught.value.__notes__)
    with registered_plugin(Store(fetch=lambda name: "{}"), name="memory-store"):
        with pytest.raises(TypeError, match=r"memory:x: .* returned a str; .* bytes"):
            read_report("memory:x")


def test_a_one_letter_scheme_is_refused_so_drive_letters_stay_paths():
    class DriveLetter:
        @hookimpl
        def ef_evaluation_register_report_locations(self, register):
            register("c", lambda name: b"{}")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with registered_plugin(DriveLetter(), name="drive-letter"):
            with pytest.raises(FileNotFoundError):
                read_report("c:report.json")
            assert "c" not in registry().report_locations
    assert any(
        issubclass(w.category, PluginWarning)
        and "invalid report location scheme 'c'" in str(w.message)
        for w in caught
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_extension_options_appear_on_each_evaluating_command(store, command):
    subparsers = next(
        action for action in build_parser()._actions if action.dest == "command"
    ).choices
    assert "--memory" in subparsers[command].format_help()
    assert "--memory" not in subparsers["fuse"].format_help()


def test_without_the_plugin_the_options_are_unknown(files):
    assert main(["run", files["qrels"], files["run.txt"], "--memory", "x"]) == 2


def test_run_hands_every_report_to_the_extension_after_writing_its_output(store, files, tmp_path):
    output = tmp_path / "out.json"
    argv = ["run", files["qrels"], files["run.txt"], files["worse.txt"], "--k", "1,2"]
    assert main([*argv, "--format", "json", "-o", str(output), "--memory", "night"]) == 0
    [(command, reports, details)] = store.finished
    assert command == "run" and details == {"dataset": files["qrels"]}
    written = json.loads(output.read_text())
    qrels = read_trec_qrels(files["qrels"])
    for name in ("run.txt", "worse.txt"):
        expected = evaluate_run(read_trec_run(files[name]), qrels, k_values=(1, 2))
        assert reports[name].metrics == expected.metrics == written[name]["metrics"]
        assert read_report(f"memory:night/{name}") == reports[name]


def test_an_extension_failure_fails_the_command_after_its_output(files, tmp_path, capsys):
    class Broken(Store):
        @hookimpl
        def ef_evaluation_register_command_extensions(self, register):
            def finished(command, reports, args, **details):
                raise ConnectionError("the store at memory://far is gone")

            register("broken", lambda parser, command: None, finished)

    output = tmp_path / "out.json"
    with registered_plugin(Broken(), name="broken-store"):
        code = main(
            ["run", files["qrels"], files["run.txt"], "--format", "json", "-o", str(output)]
        )
    assert code == 1
    assert "memory://far is gone" in capsys.readouterr().err
    assert "run.txt" in json.loads(output.read_text())


def test_options_that_cannot_be_added_leave_the_extension_out_with_a_warning(files, capsys):
    class Clashing(Store):
        @hookimpl
        def ef_evaluation_register_command_extensions(self, register):
            def add_options(parser, command):
                parser.add_argument("--metrics")  # the commands have it already

            def finished(command, reports, args, **details):
                raise AssertionError("left out: never called")

            register("clashing", add_options, finished)

    with registered_plugin(Clashing(), name="clashing"):
        with warnings.catch_warnings():
            warnings.simplefilter("always", PluginWarning)  # main() shows them as lines
            assert main(["run", files["qrels"], files["run.txt"], "--format", "csv"]) == 0
    err = capsys.readouterr().err
    assert "command extension 'clashing'" in err and "'ef-eval run'" in err


def test_the_gate_takes_its_baseline_from_a_location_and_hands_on_its_outcome(store, files):
    base = ["check", files["run.txt"], "--qrels", files["qrels"], "--rule", "ndcg@2: max_drop=0.01"]
    baseline = files["run.txt"] + ".json"
    assert main([*base[:4], "--baseline", baseline, "--update-baseline", *base[4:]]) == 0
    store.saved["base"] = Path(baseline).read_bytes()
    assert main([*base, "--baseline", "memory:base", "--memory", "gate"]) == 0
    worse = ["check", files["worse.txt"], *base[2:], "--baseline", "memory:base"]
    assert main(worse) == 1  # a regression, judged against the stored baseline
    (_, reports, details), (_, _, worse_details) = store.finished[-2:]
    assert details["check_report"].passed and not worse_details["check_report"].passed
    assert isinstance(reports["run.txt"], RetrievalEvalReport)
    assert read_report("memory:gate/run.txt") == read_report(baseline)
    # A location is read, never written as a baseline.
    assert main([*base, "--baseline", "memory:new", "--update-baseline"]) == 2


def test_the_extension_sees_reports_as_printed_with_url_passwords_hidden(store):
    import argparse

    from ef.evaluation.cli._extensions import report_finished

    url = "http://alice:S3CRET@127.0.0.1:9/search"
    report = RetrievalEvalReport(
        {"ndcg@1": 1.0}, {"q1": {"ndcg@1": 1.0}}, 1, (1,), manifest={"retriever": url}
    )
    plain = RetrievalEvalReport({"ndcg@1": 0.5}, {"q1": {"ndcg@1": 0.5}}, 1, (1,))
    report_finished(argparse.Namespace(memory=None), "retrieval", {url: report, "p": plain})
    [(_, reports, _)] = store.finished
    hidden = "http://alice:***@127.0.0.1:9/search"
    assert list(reports) == [hidden, "p"]
    assert reports[hidden].manifest["retriever"] == hidden
    assert reports[hidden].metrics == report.metrics and reports["p"] is plain
