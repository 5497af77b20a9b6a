"""The quality gate: check() and ``ef-eval check`` against generated runs with known quality.

The runs are generated: each query has one relevant document placed in a known rank. A seeded
regression loses the relevant document on 10 % of the queries; rank noise moves it one place
up or down at random, which leaves the quality the same in expectation. The numbers are checked
against pytrec_eval and scipy, the verdicts against what the generated data says.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from xml.etree import ElementTree

import pytest
import pytrec_eval
from scipy import stats

from ef.evaluation import (
    CheckReport,
    Floor,
    check,
    compare,
    evaluate_run,
    parse_rule,
    write_trec_qrels,
    write_trec_run,
)
from ef.evaluation.cli import main

N_QUERIES = 200
QRELS = {f"q{i}": {f"rel{i}": 1} for i in range(N_QUERIES)}
RULES = [
    parse_rule("ndcg@10 >= 0.3"),
    parse_rule('ndcg@10: fail_if = "significantly_worse"'),
    parse_rule("recall@10: max_drop = 0.02"),
    parse_rule('recall@10: fail_if = "significantly_worse"'),
]


def _positions(seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    return {q: rng.randrange(1, 5) for q in QRELS}


def generated_run(
    positions: dict[str, int], *, lose: float = 0.0, noise: bool = False, seed: int = 0
) -> dict[str, dict[str, float]]:
    """One relevant document per query at its position (0-based) among nine others; ``lose``
    of the queries (exactly, chosen by ``seed``) lose it. ``noise`` moves the relevant document
    of each query to the position of another's (a random permutation of the positions over the
    queries) and shuffles the others: every ranking changes, the mean quality does not."""
    rng = random.Random(seed)
    lost = set(rng.sample(sorted(QRELS), round(lose * len(QRELS))))
    if noise:
        moved = list(positions.values())
        rng.shuffle(moved)
        positions = dict(zip(positions, moved, strict=True))
    run = {}
    for i, query in enumerate(QRELS):
        docs = [f"other{i}_{j}" for j in range(9)]
        if noise:
            rng.shuffle(docs)
        if query not in lost:
            docs.insert(positions[query], f"rel{i}")
        run[query] = {doc: float(100 - rank) for rank, doc in enumerate(docs)}
    return run


def _oracle(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    evaluator = pytrec_eval.RelevanceEvaluator(QRELS, {"ndcg_cut.10", "recall.10"})
    return evaluator.evaluate(run)


def _holm(p_values: list[float]) -> list[float]:
    order = sorted(range(len(p_values)), key=p_values.__getitem__)
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


BASE = generated_run(_positions(0))
BASELINE = evaluate_run(BASE, QRELS, metrics=["ndcg@10", "recall@10"], k_values=(1,))


def _checked(run: dict[str, dict[str, float]], **options: object) -> CheckReport:
    current = evaluate_run(run, QRELS, metrics=["ndcg@10", "recall@10"], k_values=(1,))
    return check(current, BASELINE, RULES, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_seeded_regression_fails_the_gate(seed):
    worse = generated_run(_positions(0), lose=0.10, seed=seed)
    report = _checked(worse)
    assert not report.passed
    verdicts = {result.rule.text: result.verdict for result in report.results}
    # Exactly 10 % of the queries lose their one relevant document: recall falls by 0.10.
    assert verdicts["recall@10: max_drop = 0.02"] == "fail"
    assert verdicts['recall@10: fail_if = "significantly_worse"'] == "fail"
    assert verdicts['ndcg@10: fail_if = "significantly_worse"'] == "fail"
    recall = next(r for r in report.results if r.rule.kind == "max_drop")
    assert recall.difference == pytest.approx(-0.10)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rank_noise_that_keeps_the_quality_passes(seed):
    noisy = generated_run(_positions(0), noise=True, seed=seed)
    report = _checked(noisy)
    assert report.passed, [(r.rule.text, r.reason) for r in report.failures]
    old, new = _oracle(BASE), _oracle(noisy)
    changed = sum(old[q]["ndcg_cut_10"] != new[q]["ndcg_cut_10"] for q in QRELS)
    assert changed > N_QUERIES // 2  # the noise is real: most queries score otherwise


def test_the_numbers_are_pytrec_eval_and_scipy():
    worse = generated_run(_positions(0), lose=0.10, noise=True, seed=7)
    report = _checked(worse)
    old, new = _oracle(BASE), _oracle(worse)
    raw = []
    for measure in ("ndcg_cut_10", "recall_10"):
        base = [old[q][measure] for q in QRELS]
        now = [new[q][measure] for q in QRELS]
        raw.append(stats.ttest_rel(now, base).pvalue)
    adjusted = dict(zip(("ndcg@10", "recall@10"), _holm(raw), strict=True))
    for result in report.results:
        measure = {"ndcg@10": "ndcg_cut_10", "recall@10": "recall_10"}[result.rule.metric]
        assert result.value == pytest.approx(sum(new[q][measure] for q in QRELS) / N_QUERIES)
        assert result.baseline == pytest.approx(sum(old[q][measure] for q in QRELS) / N_QUERIES)
        low, high = result.interval
        assert low <= result.difference <= high
        if result.rule.kind == "fail_if":
            assert result.p_value == pytest.approx(adjusted[result.rule.metric])
        else:
            assert result.p_value is None


def test_the_gate_permutes_and_resamples_as_documented_by_default():
    # check()'s defaults: 10,000 permutations and resamples from seed 0, as compare() makes them.
    worse = generated_run(_positions(0), lose=0.05, noise=True, seed=11)
    current = evaluate_run(worse, QRELS, metrics=["ndcg@10", "recall@10"], k_values=(1,))
    rule = parse_rule('ndcg@10: fail_if = "significantly_worse"')
    [result] = check(current, BASELINE, [rule], test="randomization").results
    row = compare(
        {"baseline": BASELINE, "current": current},
        baseline="baseline",
        metrics=["ndcg@10"],
        tests=("randomization", "bootstrap"),
        correction=None,
        n_permutations=10_000,
        n_resamples=10_000,
        seed=0,
    ).comparison("current", "ndcg@10")
    assert result.p_value == row.p_values["randomization"]
    assert result.interval == row.confidence_interval


def test_a_floor_and_alpha_decide_as_configured():
    report = check(BASELINE, BASELINE, [Floor("ndcg@10", 0.99), parse_rule("ndcg@10 >= 0.1")])
    assert [result.verdict for result in report.results] == ["fail", "pass"]
    worse = generated_run(_positions(0), lose=0.10, seed=1)
    strict = _checked(worse, alpha=1e-12)
    significance = [r for r in strict.results if r.rule.text.startswith("ndcg@10: fail_if")]
    assert significance[0].p_value > 1e-12
    assert significance[0].verdict == "pass"


def _with_manifest(report, **changes):
    manifest = {**report.manifest}
    for key, value in changes.items():
        section = dict(manifest.get(key) or {})
        section.update(value)
        manifest[key] = section
    return type(report).from_dict({**report.to_dict(), "manifest": manifest})


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"fingerprints": {"qrels": "sha256:other"}}, "qrels"),
        ({"fingerprints": {"queries": "sha256:other"}}, "queries"),
        ({"parameters": {"relevance_level": 2}}, "option relevance_level"),
        ({"parameters": {"judged_only": True}}, "option judged_only"),
        ({"parameters": {"depth": 5}}, "option depth"),
    ],
)
def test_a_baseline_made_on_other_inputs_is_refused_naming_what_changed(changes, named):
    current = BASELINE
    if "queries" in changes.get("fingerprints", {}):
        current = _with_manifest(BASELINE, fingerprints={"queries": "sha256:mine"})
    baseline = _with_manifest(BASELINE, **changes)
    with pytest.raises(ValueError, match=named):
        check(current, baseline, RULES)


def test_a_run_cut_to_another_depth_is_refused_against_its_baseline():
    cut = evaluate_run(BASE, QRELS, metrics=["ndcg@10", "recall@10"], k_values=(1,), depth=5)
    with pytest.raises(ValueError, match=r"option depth \(None in the baseline, 5 now\)"):
        check(cut, BASELINE, RULES)


def test_changed_qrels_allowed_compare_the_common_queries_and_say_so():
    fewer = {q: QRELS[q] for q in list(QRELS)[:150]}
    current = evaluate_run(BASE, fewer, metrics=["ndcg@10", "recall@10"], k_values=(1,))
    with pytest.raises(ValueError, match="qrels"):
        check(current, BASELINE, RULES)
    report = check(current, BASELINE, RULES, allow_changed_qrels=True)
    assert report.n_queries == 150
    assert report.passed
    assert any("qrels" in note for note in report.notes)
    assert any(
        "150 common queries (50 only in the baseline, 0 only now)" in n for n in report.notes
    )


def test_the_report_round_trips_through_json():
    report = _checked(generated_run(_positions(0), lose=0.1, seed=2))
    assert CheckReport.from_json(report.to_json()) == report


# The command line.


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {name: tmp_path / f"{name}.txt" for name in ("base", "worse", "noisy")}
    write_trec_qrels(tmp_path / "qrels.txt", QRELS)
    write_trec_run(paths["base"], BASE)
    write_trec_run(paths["worse"], generated_run(_positions(0), lose=0.1, seed=1))
    write_trec_run(paths["noisy"], generated_run(_positions(0), noise=True, seed=1))
    return {**paths, "qrels": tmp_path / "qrels.txt", "baseline": tmp_path / "baseline.json"}


def ef_check(capsys, files, run, *extra):
    args = ["check", str(files[run]), "--qrels", str(files["qrels"])]
    args += ["--baseline", str(files["baseline"])]
    for rule in RULES:
        args += ["--rule", rule.text]
    code = main([*args, *map(str, extra)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_exit_codes_pass_regression_and_input_errors(capsys, files, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert ef_check(capsys, files, "base", "--update-baseline")[0] == 0
    assert json.loads(files["baseline"].read_text())["n_queries"] == N_QUERIES
    code, out, _ = ef_check(capsys, files, "noisy")
    assert code == 0
    assert "quality gate passed" in out
    code, out, _ = ef_check(capsys, files, "worse")
    assert code == 1
    assert "quality gate FAILED (3 of 4 rules)" in out
    code, _, err = ef_check(capsys, files, "worse", "--rule", "ndcg@10 >> 1")
    assert code == 2
    assert "rule 'ndcg@10 >> 1'" in err
    code, _, err = ef_check(capsys, files, "worse", "--judged-only")
    assert code == 2
    assert "option judged_only" in err
    files["baseline"].write_text('{"metrics": {}}')
    code, _, err = ef_check(capsys, files, "worse")
    assert code == 2
    assert "baseline.json: not a report" in err


def test_cli_outputs_parse(capsys, files, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    ef_check(capsys, files, "base", "--update-baseline")
    markdown, junit = tmp_path / "gate.md", tmp_path / "gate.xml"
    code, out, _ = ef_check(
        capsys, files, "worse", "--format", "json", "--markdown", markdown, "--junit", junit
    )
    assert code == 1
    data = json.loads(out)
    assert data["passed"] is False
    assert [r["verdict"] for r in data["results"]] == ["pass", "fail", "fail", "fail"]
    assert CheckReport.from_dict({k: v for k, v in data.items() if k != "passed"}).n_queries == 200

    suites = ElementTree.parse(junit).getroot()
    cases = suites.findall("./testsuite/testcase")
    assert [case.get("name") for case in cases] == [rule.text for rule in RULES]
    assert [case.find("failure") is not None for case in cases] == [False, True, True, True]
    assert suites.find("testsuite").get("failures") == "3"

    rows = _markdown_rows(markdown.read_text())
    assert rows[0] == ["rule", "value", "baseline", "difference", "interval", "p", "verdict"]
    assert [row[0] for row in rows[1:]] == [f"`{rule.text}`" for rule in RULES]
    assert [row[-1] for row in rows[1:]] == ["PASS", "FAIL", "FAIL", "FAIL"]
    assert summary.read_text() == "earlier step\n" + markdown.read_text()


def _markdown_rows(text: str) -> list[list[str]]:
    """The table of a Markdown text, by markdown-it when installed, else by its pipes."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    # The delimiter row.
    assert set(lines[1].replace("|", "").replace(":", "").replace(" ", "")) == {"-"}
    return [
        [cell.strip() for cell in line.strip("|").split(" | ")] for line in lines[:1] + lines[2:]
    ]


def test_cli_rules_from_pyproject(capsys, files, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.ef-evaluation.check]\nalpha = 0.01\n'
        'correction = "bonferroni"\n\n[tool.ef-evaluation.check."recall@10"]\n'
        "max_drop = 0.2\nmin = 0.95\n"
    )
    args = ["check", str(files["worse"]), "--qrels", str(files["qrels"])]
    args += ["--baseline", str(files["baseline"])]
    assert main([*args, "--update-baseline"]) == 0
    capsys.readouterr()
    assert main(args) == 1  # recall 0.9: within the drop, under the floor
    out = capsys.readouterr().out
    assert "recall@10 >= 0.95" in out
    assert "bonferroni, alpha 0.01" in out


def test_cli_changed_qrels_refused_unless_allowed(capsys, files, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert ef_check(capsys, files, "base", "--update-baseline")[0] == 0
    write_trec_qrels(files["qrels"], {q: QRELS[q] for q in list(QRELS)[:150]})
    code, _, err = ef_check(capsys, files, "noisy")
    assert code == 2
    assert "baseline.json: the baseline was made on other inputs: qrels (fingerprint" in err
    code, out, _ = ef_check(capsys, files, "noisy", "--allow-changed-qrels")
    assert code == 0
    assert "note: compared on the 150 common queries" in out
