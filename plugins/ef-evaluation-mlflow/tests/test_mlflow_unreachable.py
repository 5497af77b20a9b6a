"""A tracking server that cannot be reached — a closed port on 127.0.0.1, a listener that
accepts connections and never answers — is one error naming its URI, raised within the
documented time (each request waits ``timeout`` seconds, never retried: a hang fails these
tests at their own timeout), and the report is kept on disk; the command's own output too. The
tests give 1 s, the least MLflow takes (it counts whole seconds)."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ef.evaluation import evaluate_run, read_report, read_trec_qrels
from ef.evaluation.cli import main
from ef_evaluation_mlflow import ENV_TIMEOUT, TrackingError, log_report

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``--mlflow-uri`` and ``--mlflow-timeout`` set is put back after the test."""
    for name in ("MLFLOW_TRACKING_URI", ENV_TIMEOUT):
        monkeypatch.setenv(name, "unset")
        monkeypatch.delenv(name)


def _kept(message: str) -> Path:
    found = re.search(r"the report \(report\.json\) and its files are kept in (\S+)", message)
    assert found, message
    return Path(found[1])


@pytest.fixture(autouse=True)
def _no_kept_folders_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The folders kept for the failed uploads are made in a temporary folder of the test's own
    and removed after it: never another worker's folders, staged in the shared one meanwhile."""
    own = tmp_path / "tmp"
    own.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(own))
    yield
    shutil.rmtree(own, ignore_errors=True)


@pytest.mark.parametrize("server", ["closed_server", "silent_server"])
def test_logging_to_an_unreachable_server_names_it_and_keeps_the_report(server, request, inputs):
    uri = request.getfixturevalue(server)
    qrels = read_trec_qrels(inputs["qrels.txt"])
    report = evaluate_run(str(inputs["bm25.txt"]), qrels, k_values=(10,))
    with pytest.raises(TrackingError) as caught:
        log_report(report, tracking_uri=uri, timeout=1)
    message = str(caught.value)
    assert f"at the MLflow tracking server {uri}:" in message
    reason = "the connection was refused" if server == "closed_server" else "no answer within 1 s"
    assert reason in message and "each request waits at most 1 s and is not retried" in message
    kept = _kept(message)
    assert (kept / "report.json").read_bytes() == report.to_json().encode()
    assert read_report(kept / "report.json") == report


@pytest.mark.parametrize("server", ["closed_server", "silent_server"])
def test_the_command_writes_its_output_then_fails_naming_the_server(
    server, request, inputs, tmp_path, settings, capsys
):
    uri = request.getfixturevalue(server)
    out = tmp_path / "out.json"
    argv = ["run", str(inputs["qrels.txt"]), str(inputs["bm25.txt"]), "--format", "json"]
    flags = ["--mlflow", "--mlflow-uri", uri, "--mlflow-timeout", "1"]
    assert main([*argv, "-o", str(out), *flags]) == 1
    error = capsys.readouterr().err
    assert f"ef-eval: error: could not log the report at the MLflow tracking server {uri}" in error
    written = json.loads(out.read_text())["bm25.txt"]
    [line] = [line for line in error.splitlines() if line.startswith("ef-eval: error:")]
    assert "(command extension 'mlflow' of plugin 'mlflow', after the command's own output" in line
    assert json.loads((_kept(line) / "report.json").read_text())["metrics"] == written["metrics"]


def test_a_baseline_on_an_unreachable_server_is_an_input_error_naming_it(
    silent_server, inputs, settings, capsys
):
    argv = ["check", str(inputs["bm25.txt"]), "--qrels", str(inputs["qrels.txt"])]
    flags = ["--mlflow-uri", silent_server, "--mlflow-timeout", "1"]
    assert main([*argv, "--rule", "ndcg@10 >= 0.1", "--baseline", "mlflow:0123", *flags]) == 2
    error = capsys.readouterr().err
    assert (
        f"could not read the report of run 0123 at the MLflow tracking server {silent_server}"
        in error
    )
    assert "no answer within 1 s" in error


@pytest.mark.parametrize("given", ["-5", "0", "1.5", "²", "ten"])
def test_a_timeout_that_is_no_whole_number_of_seconds_is_refused_as_given(
    given, closed_server, inputs, settings, monkeypatch, capsys
):
    report = evaluate_run(str(inputs["bm25.txt"]), read_trec_qrels(inputs["qrels.txt"]))
    monkeypatch.setenv(ENV_TIMEOUT, given)
    expected = f"{ENV_TIMEOUT} must be a whole number of seconds >= 1, got {given!r}"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        log_report(report, tracking_uri=closed_server)
    monkeypatch.delenv(ENV_TIMEOUT)
    argv = ["run", str(inputs["qrels.txt"]), str(inputs["bm25.txt"]), "--mlflow"]
    assert main([*argv, "--mlflow-uri", closed_server, "--mlflow-timeout", given]) == 2
    error = capsys.readouterr().err
    assert f"expected a whole number of seconds >= 1, got {given!r}" in error
    assert "Traceback" not in error
