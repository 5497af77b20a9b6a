"""Comparisons per query group: scipy's paired tests on each group, Holm over systems × groups."""

from __future__ import annotations

import random

import attrs
import pytest
from scipy import stats

from ef.evaluation import (
    ComparisonReport,
    RagEvalReport,
    RetrievalEvalReport,
    compare,
    evaluate_rag,
)


def _systems(seed: int, n_queries: int = 80) -> dict[str, RetrievalEvalReport]:
    rng = random.Random(seed)
    systems = {}
    for name, shift in (("bm25", 0.0), ("dense", 0.05), ("hybrid", 0.12)):
        per_query = {
            f"q{i}": {
                "ndcg@10": min(1.0, max(0.0, rng.random() * 0.8 + shift)),
                "P@5": rng.choice([0.0, 0.2, 0.4, 0.6]) + shift,
            }
            for i in range(n_queries)
        }
        systems[name] = RetrievalEvalReport({}, per_query, n_queries, (10,))
    return systems


def _groups(n_queries: int = 80) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for i in range(n_queries):
        names = (["short"] if i % 3 == 0 else ["long"]) + (["typo"] if i % 5 == 0 else [])
        if i % 17 == 4:
            continue  # in no group
        groups[f"q{i}"] = names
    return groups


def _holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjustment, written out from its definition."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def test_each_group_runs_scipys_tests_and_holm_spans_systems_and_groups():
    systems, groups = _systems(3), _groups()
    report = compare(
        systems, baseline="bm25", metrics=("ndcg@10", "P@5"), tests=("t-test", "wilcoxon"),
        correction="holm", groups=groups,
    )  # fmt: skip
    names = ("short", "typo", "long")  # in the order they first appear
    assert tuple(report.group_counts) == names
    for name in names:
        members = [q for q in systems["bm25"].per_query if name in groups.get(q, ())]
        assert report.group_counts[name] == len(members)
    for metric in ("ndcg@10", "P@5"):
        rows = [r for r in report.group_comparisons if r.metric == metric]
        assert len(rows) == 2 * 3  # 2 systems × 3 groups: one family per metric and test
        for test, scipy_test in (("t-test", stats.ttest_rel), ("wilcoxon", stats.wilcoxon)):
            raw = []
            for row in rows:
                members = [q for q in systems["bm25"].per_query if row.group in groups.get(q, ())]
                ours = [systems[row.system].per_query[q][metric] for q in members]
                base = [systems["bm25"].per_query[q][metric] for q in members]
                expected = float(scipy_test(ours, base).pvalue)
                assert row.p_values[test] == pytest.approx(expected, rel=1e-9, abs=1e-15)
                assert row.mean == pytest.approx(sum(ours) / len(ours), abs=1e-15)
                assert report.group_means[row.group][row.system][metric] == row.mean
                raw.append(row.p_values[test])
            for row, adjusted in zip(rows, _holm(raw), strict=True):
                assert row.adjusted_p_values[test] == pytest.approx(adjusted, abs=1e-15)
    # The rows over all queries keep their own family, unchanged by the groups.
    alone = compare(
        systems, baseline="bm25", metrics=("ndcg@10", "P@5"), tests=("t-test", "wilcoxon"),
    )  # fmt: skip
    assert report.comparisons == alone.comparisons


def test_every_pair_per_group_is_one_family_over_pairs_metrics_and_groups():
    systems, groups = _systems(5), _groups()
    report = compare(systems, metrics=("ndcg@10", "P@5"), tests=("t-test",), groups=groups)
    rows = report.group_comparisons
    assert len(rows) == 3 * 2 * 3  # pairs × metrics × groups
    adjusted = _holm([row.p_values["t-test"] for row in rows])
    assert [row.adjusted_p_values["t-test"] for row in rows] == pytest.approx(adjusted, abs=1e-15)
    assert "3 pairs × 2 metrics × 3 groups" in report.to_markdown()


def test_a_group_comparison_equals_the_comparison_of_the_group_alone():
    systems, groups = _systems(11), _groups()
    report = compare(
        systems, baseline="bm25", metrics=("ndcg@10",), tests=("randomization", "bootstrap"),
        correction=None, groups=groups, n_permutations=500, n_resamples=500, risk_alpha=2.0,
    )  # fmt: skip
    for name in report.group_counts:
        members = [q for q in systems["bm25"].per_query if name in groups.get(q, ())]
        alone = compare(
            {
                system: RetrievalEvalReport(
                    {}, {q: r.per_query[q] for q in members}, len(members), (10,)
                )
                for system, r in systems.items()
            },
            baseline="bm25", metrics=("ndcg@10",), tests=("randomization", "bootstrap"),
            correction=None, n_permutations=500, n_resamples=500, risk_alpha=2.0,
        )  # fmt: skip
        ours = [r for r in report.group_comparisons if r.group == name]
        assert [r.group for r in ours] == [name, name]
        assert [attrs.evolve(r, group=None) for r in ours] == list(alone.comparisons)


def test_the_group_rows_survive_json_frames_and_tables():
    systems, groups = _systems(2), _groups()
    report = compare(systems, baseline="bm25", metrics=("ndcg@10",), groups=groups)
    assert ComparisonReport.from_json(report.to_json()) == report
    data = report.to_dict()
    for key in ("group_means", "group_counts", "group_comparisons"):
        del data[key]
    assert ComparisonReport.from_dict(data).group_comparisons == ()
    frame = report.to_pandas()
    assert frame["group"].isna().sum() == len(report.comparisons)
    assert sorted(frame["group"].dropna().unique()) == ["long", "short", "typo"]
    means = report.to_pandas(means=True)
    short = means[(means["group"] == "short") & (means["system"] == "dense")]
    assert short["value"].tolist() == [report.group_means["short"]["dense"]["ndcg@10"]]
    text = report.to_markdown()
    assert "| Group | Queries | System | ndcg@10 |" in text
    assert "Holm over 2 systems × 3 groups for each metric and test" in text
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(report.to_group_table())
    shown = console.export_text()
    assert "typo" in shown and "Holm over 2 systems" in shown


def test_rag_samples_group_by_id_or_by_question():
    samples = [
        {"user_input": "capital of France?", "response": "Paris", "reference": "Paris"},
        {"user_input": "two plus two, written out in words?", "response": "five",
         "reference": "four"},
        {"user_input": "largest planet?", "response": "Jupiter", "reference": "Jupiter"},
        {"user_input": "who wrote it?", "response": None, "reference": "Homer"},
    ]  # fmt: skip
    by_text = evaluate_rag(
        samples, metrics=["exact_match"], groups=lambda q: "long" if len(q.split()) > 4 else "short"
    )
    assert by_text.sample_groups == (("short",), ("long",), ("short",), ("short",))
    short = by_text.groups["short"]
    alone = evaluate_rag([samples[0], samples[2], samples[3]], metrics=["exact_match"])
    assert short.metrics == alone.metrics and dict(short.coverage) == dict(alone.coverage)
    assert short.n_queries == 3
    assert RagEvalReport.from_json(by_text.to_json()) == by_text
    by_id = evaluate_rag(
        samples, metrics=["exact_match"], ids=["a", "b", "c", "d"], groups={"a": "x", "c": "x"}
    )
    assert by_id.groups["x"].metrics == {"exact_match": 1.0}
    frame = by_id.to_pandas()
    assert frame["group"].isna().tolist() == [False, True, False, True]
    assert frame["group"].dropna().tolist() == ["x", "x"]
    twice = [dict(samples[0]), dict(samples[0])]
    with pytest.raises(ValueError, match="pass ids="):
        evaluate_rag(twice, metrics=["exact_match"], groups={"a": "x"})
