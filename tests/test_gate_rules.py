"""Reading the gate's rules: each wrong rule, table or file is refused with a message naming
where it was written and what was expected; each right one reads as written."""

from __future__ import annotations

import re

import pytest

from ef.evaluation import GateConfig, GateRule, parse_rule, read_gate_config
from ef.evaluation._gate.rules import rules_from_table

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
    assert parse_rule("ndcg@10: max_drop = 0") == GateRule("ndcg@10", "max_drop", 0.0)


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
            GateRule("ndcg@10", "min", 0.5, group="nav"),
            GateRule("ndcg@10", "fail_if", group="nav"),
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
    assert read_gate_config(tmp_path / "pyproject.toml").rules == (GateRule("ndcg@10", "min", 0.5),)
    (tmp_path / "rules.toml").write_text('["ndcg@10"]\nmin = 0.5\n')
    assert read_gate_config(tmp_path / "rules.toml").rules == (GateRule("ndcg@10", "min", 0.5),)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    with pytest.raises(ValueError, match=r"pyproject\.toml: no \[tool\.ef-evaluation\.check\]"):
        read_gate_config(tmp_path / "pyproject.toml")
    (tmp_path / "other.toml").write_text("[tool.black]\nline-length = 100\n")
    with pytest.raises(ValueError, match=r"other\.toml: no \[tool\.ef-evaluation\.check\]"):
        read_gate_config(tmp_path / "other.toml")
    (tmp_path / "broken.toml").write_text("[oops\n")
    with pytest.raises(ValueError, match=r"broken\.toml: not TOML: "):
        read_gate_config(tmp_path / "broken.toml")
