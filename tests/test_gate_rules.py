"""Reading the gate's rules: each wrong rule, table or file is refused with a message naming
where it was written and what was expected; each right one reads as written."""

from __future__ import annotations

import re

import pytest

from ef.evaluation import (
    FailIfSignificantlyWorse,
    Floor,
    GateConfig,
    GateRule,
    MaxDrop,
    parse_rule,
    read_gate_config,
)
from ef.evaluation._gate.config import rules_from_table
from ef.evaluation._gate.rules import rule_from_json

EXPECTED = (
    "expected 'METRIC >= FLOOR', 'METRIC: max_drop = DROP' or "
    "'METRIC: fail_if = \"significantly_worse\"'"
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("garbage", f"rule 'garbage': {EXPECTED}"),
        ("ndcg@10 >= abc", "rule 'ndcg@10 >= abc': expected a number, got 'abc'"),
        ("ndcg@10 >= inf", "rule 'ndcg@10 >= inf': expected a finite number, got 'inf'"),
        (
            "ndcg@10: fail_if = maybe",
            "rule 'ndcg@10: fail_if = maybe': fail_if takes \"significantly_worse\", got 'maybe'",
        ),
        (  # after "significantly_worse" in the alphabet: refused all the same
            "ndcg@10: fail_if = worse",
            "rule 'ndcg@10: fail_if = worse': fail_if takes \"significantly_worse\", got 'worse'",
        ),
        (
            "ndcg@10: floor = 1",
            "rule 'ndcg@10: floor = 1': unknown rule 'floor': expected one of min, max_drop, "
            "fail_if",
        ),
        (
            "ndcg@10: max_drop = -0.1",
            "rule 'ndcg@10: max_drop = -0.1': max_drop of 'ndcg@10' must be 0 or more",
        ),
    ],
)
def test_a_wrong_rule_is_refused_naming_it(text, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        parse_rule(text)


def test_a_tolerated_drop_of_zero_is_a_rule():
    assert parse_rule("ndcg@10: max_drop = 0") == MaxDrop("ndcg@10", 0.0)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"ndcg@10": {"min": True}}, "f.toml: ndcg@10.min: expected a number, got True"),
        ({"ndcg@10": {"group": ""}}, "f.toml: ndcg@10.group: expected a group name, got ''"),
        (
            {"ndcg@10": {"group": 3, "min": 0.5}},
            "f.toml: ndcg@10.group: expected a group name, got 3",
        ),
        (
            {"ndcg@10": {"group": "nav"}},
            "f.toml: ndcg@10: no rule (expected min, max_drop or fail_if)",
        ),
        ({"alpha": "x"}, "f.toml: alpha: expected a number, got 'x'"),
        (
            {"test": 3},
            "f.toml: unknown key 'test' = 3 (expected alpha, test, correction, or a table of "
            "rules per metric)",
        ),
        (  # a number under a key before "alpha" in the alphabet
            {"ab": 0.1},
            "f.toml: unknown key 'ab' = 0.1 (expected alpha, test, correction, or a table of "
            "rules per metric)",
        ),
        (  # a text value under a key after "test" in the alphabet
            {"zz": "x"},
            "f.toml: unknown key 'zz' = 'x' (expected alpha, test, correction, or a table of "
            "rules per metric)",
        ),
        (  # a text value under a key before "correction" in the alphabet
            {"bogus": "x"},
            "f.toml: unknown key 'bogus' = 'x' (expected alpha, test, correction, or a table of "
            "rules per metric)",
        ),
        (
            {"correction": 3},
            "f.toml: unknown key 'correction' = 3 (expected alpha, test, correction, or a "
            "table of rules per metric)",
        ),
        (
            {"ndcg@10": {"max_drop": -0.1}},
            "f.toml: ndcg@10.max_drop: max_drop of 'ndcg@10' must be 0 or more",
        ),
    ],
)
def test_a_wrong_table_is_refused_naming_the_file_and_key(table, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        rules_from_table(table, "f.toml")


def test_a_table_reads_its_options_and_grouped_rules():
    table = {
        "alpha": 0.01,
        "test": "wilcoxon",
        "correction": "bonferroni",
        "ndcg@10": {"group": "nav", "min": 0.5, "fail_if": "significantly_worse"},
    }
    assert rules_from_table(table, "f.toml") == GateConfig(
        rules=(
            Floor("ndcg@10", 0.5, group="nav"),
            FailIfSignificantlyWorse("ndcg@10", group="nav"),
        ),
        alpha=0.01,
        test="wilcoxon",
        correction="bonferroni",
        has_correction=True,
    )
    none = rules_from_table({"correction": "none"}, "f.toml")
    assert (none.correction, none.has_correction) == (None, True)
    assert none.check_options() == {"correction": None}
    assert rules_from_table({}, "f.toml").check_options() == {}


def test_a_later_config_wins_where_it_sets_an_option():
    first = GateConfig(alpha=0.01, test="wilcoxon", correction="bonferroni", has_correction=True)
    assert first.updated(GateConfig()) == first
    second = GateConfig(alpha=0.1, test="t-test", correction=None, has_correction=True)
    assert first.updated(second) == second


def test_the_rules_file_is_pyproject_or_any_toml(tmp_path):
    rule = '[tool.ef-evaluation.check."ndcg@10"]\nmin = 0.5\n'
    (tmp_path / "pyproject.toml").write_text(rule)
    assert read_gate_config(tmp_path / "pyproject.toml").rules == (Floor("ndcg@10", 0.5),)
    for name in ("rules.toml", "gate.toml"):  # named after "pyproject.toml" and before it
        (tmp_path / name).write_text('["ndcg@10"]\nmin = 0.5\n')
        assert read_gate_config(tmp_path / name).rules == (Floor("ndcg@10", 0.5),)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    with pytest.raises(ValueError, match=r"pyproject\.toml: no \[tool\.ef-evaluation\.check\]"):
        read_gate_config(tmp_path / "pyproject.toml")
    (tmp_path / "other.toml").write_text("[tool.black]\nline-length = 100\n")
    with pytest.raises(ValueError, match=r"other\.toml: no \[tool\.ef-evaluation\.check\]"):
        read_gate_config(tmp_path / "other.toml")
    (tmp_path / "broken.toml").write_text("[oops\n")
    with pytest.raises(ValueError, match=r"broken\.toml: not TOML: "):
        read_gate_config(tmp_path / "broken.toml")


@pytest.mark.parametrize(
    ("rule", "form"),
    [
        (Floor("ndcg@10", 0.5), '{"metric": "ndcg@10", "kind": "min", "threshold": 0.5, '),
        (MaxDrop("ndcg@10", 0), '{"metric": "ndcg@10", "kind": "max_drop", "threshold": 0, '),
        (
            FailIfSignificantlyWorse("ndcg@10"),
            '{"metric": "ndcg@10", "kind": "fail_if", "threshold": null, ',
        ),
    ],
)
def test_a_rule_keeps_its_json_form_and_comes_back_as_its_class(rule, form):
    assert rule.to_json() == form + '"group": null}'
    assert GateRule.from_json(rule.to_json()) == rule
    assert type(rule).from_json(rule.to_json()) == rule


@pytest.mark.parametrize(
    ("data", "error", "message"),
    [
        ({"metric": "m", "threshold": 0.5, "group": None}, TypeError, "^missing field 'kind'$"),
        (
            {"metric": "m", "kind": "floor", "threshold": 0.5},
            ValueError,
            "^kind is 'floor'; expected one of min, max_drop, fail_if$",
        ),
        ({"metric": "m", "kind": 1}, TypeError, "^kind is a JSON number; expected a string$"),
        (
            {"metric": "m", "kind": "fail_if", "threshold": 0.5},
            ValueError,
            "^threshold is 0.5; a 'fail_if' rule has None$",
        ),
        ({"metric": "m", "kind": "min"}, TypeError, "^missing field 'threshold'$"),
        (
            {"metric": "m", "kind": "max_drop", "threshold": -1},
            ValueError,
            "^max_drop of 'm' must be 0 or more$",
        ),
    ],
)
def test_a_wrong_json_rule_is_refused(data, error, message):
    with pytest.raises(error, match=message):
        GateRule.from_dict(data)


def test_a_rule_read_as_another_class_is_refused():
    with pytest.raises(ValueError, match=r"^kind 'min' is a Floor, not a MaxDrop$"):
        MaxDrop.from_json(Floor("ndcg@10", 0.5).to_json())


def test_a_rule_shows_its_settings_and_takes_its_group_by_name_only():
    assert repr(Floor("ndcg@10", 0.6, group="nav")) == (
        "Floor(metric='ndcg@10', threshold=0.6, group='nav')"
    )
    assert repr(MaxDrop("ndcg@10", 0.01)) == "MaxDrop(metric='ndcg@10', threshold=0.01, group=None)"
    assert repr(FailIfSignificantlyWorse("ndcg@10")) == (
        "FailIfSignificantlyWorse(metric='ndcg@10', group=None)"
    )
    for make, given in (
        (lambda: Floor("ndcg@10", 0.6, "nav"), 4),
        (lambda: MaxDrop("ndcg@10", 0.1, "nav"), 4),
        (lambda: FailIfSignificantlyWorse("ndcg@10", "nav"), 3),
    ):
        with pytest.raises(TypeError, match=f"positional arguments but {given} were given"):
            make()


@pytest.mark.parametrize(
    ("p_value", "judged"),
    [
        (0.01, (False, "significantly worse (p = 0.0100, alpha 0.05)")),
        (0.2, (True, "lower, but not significantly (p = 0.2000, alpha 0.05)")),
        (None, (True, "lower, but not significantly (p undefined, alpha 0.05)")),
    ],
)
def test_the_significance_rule_says_its_p_value_as_a_statement(p_value, judged):
    assert FailIfSignificantlyWorse("ndcg@10").judge(0.5, 0.6, -0.1, p_value, 0.05) == judged


def test_a_json_rule_that_is_no_object_is_refused_as_the_rule():
    with pytest.raises(TypeError, match=r"^the rule is a JSON string; expected an object$"):
        rule_from_json("x", "")


def test_a_table_passes_a_correction_on_as_written_and_none_as_no_correction():
    assert rules_from_table({"correction": "none"}, "f.toml").check_options() == {
        "correction": None
    }
    # Checked where it is used (check() refuses an unknown correction), not lost here.
    assert rules_from_table({"correction": "zzz"}, "f.toml").check_options() == {
        "correction": "zzz"
    }
