"""Per-group rules of the quality gate: ``group = "navigational"`` gates that group alone."""

from __future__ import annotations

import json
import random

import attrs
import pytest
from scipy import stats

from ef.evaluation import (
    FailIfSignificantlyWorse,
    Floor,
    GateRule,
    check,
    evaluate_run,
    parse_rule,
    write_trec_qrels,
    write_trec_run,
)
from ef.evaluation._gate.config import rules_from_table
from ef.evaluation.cli import main

N = 60


def _collection(seed: int):
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(50)]
    qrels = {f"q{i}": {d: 1 for d in rng.sample(docs, 4)} for i in range(N)}
    base = {q: rng.sample(docs, 20) for q in qrels}
    # The change hurts the "typo" queries (every third) and leaves the others as they were.
    current = {
        q: (ranked[4:] + ranked[:4] if int(q[1:]) % 3 == 0 else ranked)
        for q, ranked in ((q, [*sorted(qrels[q]), *base[q]]) for q in qrels)
    }
    baseline = {q: [*sorted(qrels[q]), *base[q]] for q in qrels}
    groups = {q: "typo" if int(q[1:]) % 3 == 0 else "clean" for q in qrels}
    return qrels, baseline, current, groups


def _holm(p_values: list[float]) -> list[float]:
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def test_a_group_rule_gates_its_group_alone_with_scipys_test_and_holm():
    qrels, baseline_run, current_run, groups = _collection(1)
    baseline = evaluate_run(baseline_run, qrels, metrics=("ndcg",), k_values=(10,))
    current = evaluate_run(current_run, qrels, metrics=("ndcg",), k_values=(10,), groups=groups)
    rules = [
        FailIfSignificantlyWorse("ndcg@10"),
        FailIfSignificantlyWorse("ndcg@10", group="typo"),
        FailIfSignificantlyWorse("ndcg@10", group="clean"),
        Floor("ndcg@10", 0.95, group="typo"),
    ]
    report = check(current, baseline, rules)
    raw = []
    for group in (None, "typo", "clean"):
        ids = [q for q in qrels if group is None or groups[q] == group]
        ours = [current.per_query[q]["ndcg@10"] for q in ids]
        base = [baseline.per_query[q]["ndcg@10"] for q in ids]
        # Identical values: p = 1, as compare() decides it (scipy gives NaN there).
        same = ours == base
        raw.append(1.0 if same else float(stats.ttest_rel(ours, base).pvalue))
    for result, adjusted in zip(report.results[:3], _holm(raw), strict=True):
        assert result.p_value == pytest.approx(adjusted, rel=1e-9)
    _, typo, clean, floor = report.results
    assert not typo.passed and "group typo (20 queries)" in typo.reason
    assert clean.passed and clean.difference == 0.0
    # The gate's means are compare()'s (math.fsum), the report's summed left to right.
    assert typo.value == pytest.approx(current.groups["typo"].metrics["ndcg@10"], abs=1e-12)
    assert not floor.passed and floor.rule.text == "group typo: ndcg@10 >= 0.95"
    assert "query groups: typo (20 queries), clean (40 queries)" in report.notes


def test_a_rule_on_a_group_the_report_lacks_is_refused():
    qrels, baseline_run, current_run, _ = _collection(2)
    baseline = evaluate_run(baseline_run, qrels, metrics=("ndcg",), k_values=(10,))
    current = evaluate_run(current_run, qrels, metrics=("ndcg",), k_values=(10,))
    with pytest.raises(ValueError, match="gates query group 'typo', which the report lacks"):
        check(current, baseline, [Floor("ndcg@10", 0.1, group="typo")])


def test_group_rules_are_read_from_the_command_line_and_toml():
    assert parse_rule(
        'group navigational: ndcg@10: fail_if = "significantly_worse"'
    ) == FailIfSignificantlyWorse("ndcg@10", group="navigational")
    config = rules_from_table({"ndcg@10": {"min": 0.5, "group": "navigational"}}, "t.toml")
    assert config.rules == (Floor("ndcg@10", 0.5, group="navigational"),)
    with pytest.raises(ValueError, match=r"ndcg@10\.group"):
        rules_from_table({"ndcg@10": {"min": 0.5, "group": 3}}, "t.toml")
    rule = Floor("ndcg@10", 0.5, group="navigational")
    assert parse_rule(rule.text) == rule
    assert GateRule.from_json(rule.to_json()) == rule


def test_ef_eval_check_gates_a_group_of_a_groups_file(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    qrels, baseline_run, current_run, groups = _collection(3)
    write_trec_qrels("qrels.txt", qrels)
    write_trec_run("baseline.txt", baseline_run)
    write_trec_run("current.txt", current_run)
    (tmp_path / "groups.tsv").write_text("".join(f"{q}\t{g}\n" for q, g in groups.items()))
    args = ["check", "baseline.txt", "--qrels", "qrels.txt", "--baseline", "base.json"]
    assert main([*args, "--rule", "ndcg@10 >= 0", "--update-baseline"]) == 0
    capsys.readouterr()
    args = ["check", "current.txt", "--qrels", "qrels.txt", "--baseline", "base.json"]
    rule = 'group clean: ndcg@10: fail_if = "significantly_worse"'
    assert main([*args, "--groups", "groups.tsv", "--rule", rule, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["rule"]["group"] == "clean"
    rule = "group typo: ndcg@10: max_drop = 0.01"
    assert main([*args, "--groups", "groups.tsv", "--rule", rule]) == 1
    shown = capsys.readouterr().out
    assert "group typo: ndcg@10: max_drop = 0.01" in shown
    assert "query groups: typo (20 queries), clean (40 queries)" in shown
    assert main([*args, "--rule", rule]) == 2  # no --groups: the group is unknown
    assert "which the report lacks" in capsys.readouterr().err


def test_a_group_with_no_compared_query_is_refused():
    qrels = {f"q{i}": {f"d{i}": 1} for i in range(4)}
    run = {q: [f"d{i}" for i in range(4)] for q in qrels}
    groups = {q: "fresh" if q == "q3" else "old" for q in qrels}
    # q3, the one query of "fresh", was judged after the baseline was made.
    baseline = evaluate_run(
        {q: run[q] for q in ("q0", "q1", "q2")},
        {q: qrels[q] for q in ("q0", "q1", "q2")},
        metrics=("ndcg",),
        k_values=(10,),
    )
    current = evaluate_run(run, qrels, metrics=("ndcg",), k_values=(10,), groups=groups)
    rule = Floor("ndcg@10", 0.1, group="fresh")
    with pytest.raises(ValueError, match=r"^query group 'fresh' has no compared query"):
        check(current, baseline, [rule], allow_changed_qrels=True)
    old = check(current, baseline, [attrs.evolve(rule, group="old")], allow_changed_qrels=True)
    assert old.passed


def test_a_report_without_groups_gets_no_note_on_groups():
    qrels, baseline_run, current_run, _ = _collection(3)
    baseline = evaluate_run(baseline_run, qrels, metrics=("ndcg",), k_values=(10,))
    current = evaluate_run(current_run, qrels, metrics=("ndcg",), k_values=(10,))
    assert check(current, baseline, [Floor("ndcg@10", 0.1)]).notes == ()
