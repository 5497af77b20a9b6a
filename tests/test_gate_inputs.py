"""What the gate accepts as a baseline: a report that shows which inputs it was made on, read
strictly (one value per key, values in their measure's range), from a regular file of a sane
size; anything else is refused with exit code 2, naming the file and what is wrong."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ef.evaluation import check, evaluate_run, hookimpl, parse_rule, read_report
from ef.evaluation._gate.check import changed_inputs
from ef.evaluation._io.files import read_regular
from ef.evaluation.cli import main
from ef.evaluation.testing import registered_plugin
from gate_cli import RULE, lay_out

OTHER_QRELS = "".join(f"q{i} 0 x{i} 1\n" for i in range(6))


@pytest.fixture
def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``ef-eval check`` of a run, with its baseline written in ``tmp_path``."""
    argv = [*lay_out(tmp_path, monkeypatch), *RULE]
    assert main([*argv, "--update-baseline"]) == 0
    return argv


def _edit_baseline(change: Any) -> None:
    data = json.loads(Path("base.json").read_text())
    change(data)
    Path("base.json").write_text(json.dumps(data))


def _set_fingerprints(value: Any) -> Any:
    return lambda data: data["manifest"].__setitem__("fingerprints", value)


@pytest.mark.parametrize(
    ("change", "lacking"),
    [
        (lambda data: data["manifest"].pop("fingerprints"), "its manifest has no fingerprints"),
        (_set_fingerprints({}), "its fingerprints have no qrels"),
        (_set_fingerprints("sha256:abc"), "its fingerprints are a str, not a table"),
        (lambda data: data.pop("manifest"), "it has no manifest"),
    ],
    ids=["deleted", "empty", "a string", "no manifest"],
)
def test_a_baseline_without_fingerprints_is_refused_unless_allowed(gate, capsys, change, lacking):
    _edit_baseline(change)
    Path("qrels.txt").write_text(OTHER_QRELS)  # what the missing fingerprint would have caught
    capsys.readouterr()
    assert main(gate) == 2
    err = capsys.readouterr().err
    assert "base.json" in err
    assert f"does not record the fingerprint of its qrels ({lacking})" in err
    assert main([*gate, "--allow-changed-qrels"]) in (0, 1)
    assert "does not record the fingerprint of its qrels" in capsys.readouterr().out


def test_a_baseline_without_its_options_is_refused(gate, capsys):
    argv = ["check", "run.txt", "--qrels", "qrels.txt", "--baseline", "base.json", *RULE]
    assert main([*argv, "--judged-only", "--update-baseline"]) == 0
    _edit_baseline(lambda data: data["manifest"].pop("parameters"))
    capsys.readouterr()
    assert main(argv) == 2  # made under --judged-only, which the baseline no longer says
    assert "base.json: the baseline does not record the options it was made under" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("old", "new", "shown"),
    [
        (
            "a" * 12,
            "b" * 12,
            "qrels (fingerprint 'aaaaaaaaaaaa' in the baseline, 'bbbbbbbbbbbb' now)",
        ),
        (
            "a" * 13,
            "b" * 13,
            "qrels (fingerprint aaaaaaaaaaaa… in the baseline, bbbbbbbbbbbb… now)",
        ),
    ],
    ids=["12 characters, whole", "13 characters, cut"],
)
def test_a_changed_fingerprint_is_shown_whole_up_to_12_characters(old, new, shown):
    assert changed_inputs({"fingerprints": {"qrels": old}}, {"fingerprints": {"qrels": new}}) == (
        [shown],
        [],
    )


def test_no_query_in_common_is_refused_even_when_changed_qrels_are_allowed():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    current = evaluate_run({"q1": {"d1": 1.0}}, {"q1": qrels["q1"]}, metrics=["ndcg@10"])
    baseline = evaluate_run({"q2": {"d2": 1.0}}, {"q2": qrels["q2"]}, metrics=["ndcg@10"])
    with pytest.raises(ValueError, match=r"^no query in common with the baseline"):
        check(current, baseline, [parse_rule("ndcg@10 >= 0")], allow_changed_qrels=True)


def test_check_refuses_a_baseline_that_cannot_show_its_qrels():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    current = evaluate_run({"q1": {"d1": 1.0}, "q2": {"d1": 1.0}}, qrels, metrics=["ndcg@10"])
    bare = type(current).from_dict({**current.to_dict(), "manifest": {}})
    with pytest.raises(ValueError, match=r"does not record the fingerprint of its qrels"):
        check(current, bare, [parse_rule("ndcg@10 >= 0")])
    # Two reports built in code record nothing: nothing to compare, nothing refused.
    assert check(bare, bare, [parse_rule("ndcg@10 >= 0")]).passed


def test_a_baseline_field_of_the_wrong_type_is_an_input_error_not_a_regression(gate, capsys):
    _edit_baseline(lambda data: data.__setitem__("n_queries", "6"))
    capsys.readouterr()
    assert main(gate) == 2
    wrong = "base.json: a retrieval report with n_queries is a JSON string; expected an integer"
    assert capsys.readouterr().err == f"ef-eval: error: {wrong}\n"


def test_a_baseline_field_of_a_wrong_value_is_named_with_its_file(gate, capsys):
    _edit_baseline(lambda data: data.__setitem__("n_queries", -1))
    wrong = "base.json: a retrieval report with n_queries is -1; expected an integer >= 0"
    with pytest.raises(ValueError) as raised:
        read_report("base.json")
    assert str(raised.value) == wrong
    capsys.readouterr()
    assert main(gate) == 2
    assert capsys.readouterr().err == f"ef-eval: error: {wrong}\n"


def test_a_baseline_naming_a_key_twice_is_refused(gate, capsys):
    text = Path("base.json").read_text()
    Path("base.json").write_text(text.replace('"per_query": {', '"per_query": {"q0": {}, ', 1))
    with pytest.raises(ValueError, match=r"base\.json: not a report: key 'q0' appears twice"):
        read_report("base.json")
    capsys.readouterr()
    assert main(gate) == 2
    assert "appears twice" in capsys.readouterr().err


def _per_query(query: str, key: str, value: float) -> Any:
    return lambda data: data["per_query"][query].__setitem__(key, value)


@pytest.mark.parametrize("value", [-3.0, 1.5, -1e-6])
def test_a_per_query_value_outside_its_measures_range_is_refused(gate, capsys, value):
    _edit_baseline(_per_query("q1", "ndcg@10", value))
    with pytest.raises(ValueError, match=r"base\.json: .*'q1'.*ndcg@10.* \[0, 1\]"):
        read_report("base.json")
    capsys.readouterr()
    assert main(gate) == 2
    assert "[0, 1]" in capsys.readouterr().err


def test_a_measure_without_a_range_takes_any_finite_value(tmp_path):
    qrels = {"q1": {"d1": 1}}
    report = evaluate_run({"q1": {"d9": 1.0}}, qrels, metrics=["utility", "ndcg@10"])
    assert report.per_query["q1"]["utility"] < 0
    path = tmp_path / "report.json"
    path.write_text(report.to_json())
    assert read_report(path) == report


def test_a_fifo_baseline_is_refused_without_waiting(gate, capsys):
    Path("base.json").unlink()
    os.mkfifo("base.json")  # nobody writes it: reading would wait forever
    capsys.readouterr()
    assert main(gate) == 2
    assert "base.json: a FIFO, not a regular file" in capsys.readouterr().err


def test_a_device_baseline_is_refused_without_reading_it(gate, capsys):
    capsys.readouterr()
    assert main([*gate[:-4], "--baseline", "/dev/zero", *RULE]) == 2
    assert "/dev/zero: a character device, not a regular file" in capsys.readouterr().err


def test_a_report_larger_than_the_cap_is_refused_unread(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b" " * 11)
    assert read_regular(path, 11) == b" " * 11
    with pytest.raises(ValueError, match=r"big\.json: larger than 10 bytes"):
        read_regular(path, 10)


@pytest.mark.parametrize("which", ["current", "baseline"])
def test_a_report_that_is_not_a_retrieval_report_is_a_type_error_naming_it(which):
    report = evaluate_run({"q1": {"d1": 1.0}}, {"q1": {"d1": 1}}, metrics=["ndcg@10"])
    reports = {"current": report, "baseline": report, which: report.to_dict()}
    with pytest.raises(TypeError, match=rf"^{which}: expected a RetrievalEvalReport, got dict$"):
        check(reports["current"], reports["baseline"], [parse_rule("ndcg@10 >= 0")])


@pytest.mark.parametrize(
    ("rules", "given"), [("ndcg@10 >= 0", "str"), (parse_rule("ndcg@10 >= 0"), "GateRule")]
)
def test_one_rule_where_a_list_is_expected_is_a_type_error_saying_so(rules, given):
    report = evaluate_run({"q1": {"d1": 1.0}}, {"q1": {"d1": 1}}, metrics=["ndcg@10"])
    with pytest.raises(TypeError, match=rf"^rules: expected a list of GateRule, got one {given}$"):
        check(report, report, rules)


def test_no_rule_and_an_unknown_test_are_refused_before_anything_is_compared():
    report = evaluate_run({"q1": {"d1": 1.0}}, {"q1": {"d1": 1}}, metrics=["ndcg@10"])
    with pytest.raises(ValueError, match=r"^no rule to check: give at least one"):
        check(report, report, [])
    rules = [parse_rule("ndcg@10 >= 0")]
    with pytest.raises(ValueError, match=r"^unknown test 'bootstrap': expected one of t-test, "):
        check(report, report, rules, test="bootstrap")


def test_a_json_string_naming_every_field_is_not_a_report(tmp_path):
    path = tmp_path / "base.json"
    path.write_text('"metrics per_query n_queries k_values"')
    with pytest.raises(ValueError, match=r"base\.json: not a report: JSON str without the fields"):
        read_report(path)


class _Unreachable:
    @hookimpl
    def ef_evaluation_register_report_locations(self, register):  # type: ignore[no-untyped-def]
        def fetch(name: str) -> bytes:
            raise ConnectionError(f"no answer for {name}")

        register("faraway", fetch, description="reports out of reach")


def test_a_plugins_location_that_fails_is_named_in_a_note():
    with registered_plugin(_Unreachable(), name="faraway-store"):
        with pytest.raises(ConnectionError, match="no answer for base") as raised:
            read_report("faraway:base")
    assert any(
        "raised by report location 'faraway' of plugin 'faraway-store'" in note
        for note in raised.value.__notes__
    )


class _Lost:
    def __init__(self, store: str) -> None:
        self.store = store

    @hookimpl
    def ef_evaluation_register_report_locations(self, register):  # type: ignore[no-untyped-def]
        def fetch(name: str) -> bytes:
            raise FileNotFoundError(2, "No such file or directory", f"{self.store}/{name}.json")

        register("lost", fetch, description="reports that are gone")


# Where the plugin looked, in the order of names before and after the baseline's 'lost:base'.
@pytest.mark.parametrize("store", ["/store", "~/store"])
def test_a_plugins_missing_file_is_its_own_message_not_a_missing_baseline(gate, capsys, store):
    argv = [*gate[:-4], "--baseline", "lost:base", *RULE]
    capsys.readouterr()
    with registered_plugin(_Lost(store), name="lost-store"):
        assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{store}/base.json: No such file or directory" in err
    assert "--update-baseline" not in err


def test_a_baseline_named_like_a_location_no_plugin_registered_is_a_file(gate, capsys):
    # 'nightly' looks like a scheme, but no installed plugin reads reports from it.
    Path("nightly:base.json").write_bytes(Path("base.json").read_bytes())
    assert read_report("nightly:base.json") == read_report("base.json")
    argv = [*gate[:-4], "--baseline", "nightly:base.json", *RULE]
    capsys.readouterr()
    assert main(argv) == 0
    assert "quality gate passed: 6 queries" in capsys.readouterr().out


@pytest.mark.parametrize("mean", [1.5, -0.5])
def test_a_mean_outside_its_measures_range_is_refused(gate, mean):
    _edit_baseline(lambda data: data["metrics"].__setitem__("ndcg@10", mean))
    with pytest.raises(
        ValueError, match=rf"base\.json: .*the mean ndcg@10 = {mean}, outside \[0, 1\]"
    ):
        read_report("base.json")


class _Text:
    @hookimpl
    def ef_evaluation_register_report_locations(self, register):  # type: ignore[no-untyped-def]
        register("text", lambda name: "{}", description="reports as text")


def test_a_plugins_location_must_return_bytes():
    with registered_plugin(_Text(), name="text-store"):
        with pytest.raises(TypeError, match=r"^text:base: .* returned a str; .* bytes$"):
            read_report("text:base")
