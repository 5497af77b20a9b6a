"""Every pair of systems compared (``compare(..., baseline=None)``): Tukey's HSD against
statsmodels, the paired tests corrected over all pairs and metrics against statsmodels'
``multipletests``, the square p-value tables, the group letters, the command line and the heat
map in Chromium."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from statsmodels.stats.multicomp import pairwise_tukeyhsd
from statsmodels.stats.multitest import multipletests

from browser import chromium
from ef.evaluation import ComparisonReport, RetrievalEvalReport, compare, write_trec_run
from ef.evaluation._compare.pairwise import letter_groups
from ef.evaluation.cli import main
from test_html_browser import marks, open_page

__all__ = ["chromium"]  # the shared Chromium (tests/browser.py)

N_QUERIES = 300
SYSTEMS = {"bm25": 0.0, "splade": 0.6, "dense": 0.5, "random": -1.0}
METRICS = ("ndcg@10", "recall@10", "mrr@10")


def scifact_like(seed: int = 7) -> tuple[dict, dict]:
    """Runs and qrels of SciFact's shape: 300 queries, about 1.1 relevant documents each,
    100 ranked documents per query, systems of different skill."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(5000)]
    qrels = {}
    for q in range(N_QUERIES):
        relevant = rng.choice(5000, 1 + int(rng.random() < 0.1), replace=False)
        qrels[f"q{q}"] = {docs[d]: 1.0 for d in relevant}
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for name, skill in SYSTEMS.items():
        runs[name] = {}
        for query_id, judged in qrels.items():
            candidates = list(judged) + [docs[d] for d in rng.choice(5000, 99, replace=False)]
            scores = rng.normal(size=len(candidates))
            runs[name][query_id] = {
                doc: float(score) + (skill + 1.0) * (doc in judged)
                for doc, score in zip(candidates, scores, strict=True)
            }
    return runs, qrels


RUNS, QRELS = scifact_like()


@pytest.fixture(scope="module")
def report() -> ComparisonReport:
    return compare(RUNS, QRELS, metrics=METRICS, tests=("tukey", "t-test", "wilcoxon"))


def test_tukey_equals_statsmodels_pairwise_tukeyhsd(report):
    names = list(SYSTEMS)
    for metric in METRICS:
        values = [report.per_query[name][q][metric] for name in names for q in QRELS]
        labels = [name for name in names for _ in QRELS]
        theirs = pairwise_tukeyhsd(values, labels)
        pairs = list(itertools.combinations(theirs.groupsunique, 2))
        assert len(pairs) == len(theirs.pvalues) == 6
        for (a, b), p in zip(pairs, theirs.pvalues, strict=True):
            ours = report.comparison(str(a), metric, against=str(b))
            assert ours.p_values["tukey"] == pytest.approx(p, abs=1e-6)
            assert ours.adjusted_p_values["tukey"] == ours.p_values["tukey"]
    # The data exercises the test: some pairs differ, some do not.
    tukey = [row.p_values["tukey"] for row in report.comparisons]
    assert min(tukey) < 0.001 and max(tukey) > 0.05


def test_paired_tests_are_corrected_over_every_pair_and_metric(report):
    for test, method in (("t-test", "holm"), ("wilcoxon", "holm")):
        raw = [row.p_values[test] for row in report.comparisons]
        assert len(raw) == 6 * len(METRICS)
        expected = multipletests(raw, method=method)[1]
        adjusted = [row.adjusted_p_values[test] for row in report.comparisons]
        assert adjusted == pytest.approx(list(expected), abs=1e-12)
    for row in report.comparisons:
        a = [report.per_query[row.system][q][row.metric] for q in QRELS]
        b = [report.per_query[row.baseline][q][row.metric] for q in QRELS]
        if a != b:  # scipy leaves identical systems undefined; ef says p = 1 (test_compare)
            assert row.p_values["t-test"] == pytest.approx(scipy_stats.ttest_rel(a, b).pvalue)


def test_each_pair_equals_the_comparison_with_that_baseline(report):
    alone = compare(RUNS, QRELS, metrics=METRICS, baseline="dense", tests=("t-test",))
    for system in ("bm25", "splade", "random"):
        for metric in METRICS:
            ours = report.comparison(system, metric, against="dense")
            theirs = alone.comparison(system, metric)
            assert ours.difference == pytest.approx(theirs.difference, abs=1e-15)
            assert (ours.wins, ours.ties, ours.losses) == (theirs.wins, theirs.ties, theirs.losses)
            assert ours.effect_size == pytest.approx(theirs.effect_size, abs=1e-12)
            assert ours.p_values["t-test"] == pytest.approx(theirs.p_values["t-test"])
            assert ours.mean == theirs.mean and ours.baseline_mean == theirs.baseline_mean


def test_the_square_tables_are_symmetric_and_hold_the_adjusted_p_values(report):
    for metric, test in itertools.product(METRICS, ("tukey", "t-test")):
        table = report.p_value_table(metric, test)
        assert list(table) == list(SYSTEMS)
        for a, b in itertools.product(SYSTEMS, SYSTEMS):
            if a == b:
                assert table[a][b] is None
            else:
                assert table[a][b] == table[b][a]
                assert (
                    table[a][b] == report.comparison(a, metric, against=b).adjusted_p_values[test]
                )
        frame = report.to_pandas()
        assert set(frame["baseline"]) <= set(SYSTEMS) and len(frame) == 6 * len(METRICS)


def test_the_letters_join_exactly_the_systems_that_do_not_differ(report):
    for metric, test in itertools.product(METRICS, ("tukey", "t-test")):
        letters = report.groups(metric, test)
        for a, b in itertools.combinations(SYSTEMS, 2):
            differ = report.significant(a, metric, test, against=b)
            assert differ == (not set(letters[a]) & set(letters[b])), (metric, test, a, b)
        best = max(SYSTEMS, key=lambda s: report.means[s][metric])
        assert "a" in letters[best]


@given(st.lists(st.booleans(), min_size=15, max_size=15), st.permutations(range(6)))
def test_letters_hold_for_any_pattern_of_differences(pattern, ranks):
    names = [f"s{i}" for i in range(6)]
    pairs = list(itertools.combinations(names, 2))
    differ_set = {frozenset(p) for p, d in zip(pairs, pattern, strict=True) if d}
    means = {name: float(rank) for name, rank in zip(names, ranks, strict=True)}
    letters = letter_groups(names, means, lambda a, b: frozenset((a, b)) in differ_set)
    for a, b in pairs:
        assert (frozenset((a, b)) in differ_set) == (not set(letters[a]) & set(letters[b]))
    assert all(letters.values())


def test_pairs_render_as_square_tables(report):
    markdown = report.to_markdown(test="t-test")
    assert "every pair of systems compared" in markdown
    assert markdown.count("Table: Adjusted p-values of") == len(METRICS)
    latex = report.to_latex(test="tukey")
    assert latex.count(r"\begin{table}") == 1 + len(METRICS)
    assert "Tukey's HSD over the 4 systems" in latex


def test_a_baseline_comparison_by_tukey_renders_in_every_format():
    against = compare(RUNS, QRELS, baseline="bm25", metrics=METRICS[:1], tests=("tukey",))
    names = list(SYSTEMS)
    values = [against.per_query[name][q]["ndcg@10"] for name in names for q in QRELS]
    theirs = pairwise_tukeyhsd(values, [name for name in names for _ in QRELS])
    pairs = list(itertools.combinations(theirs.groupsunique, 2))
    p = dict(zip(pairs, theirs.pvalues, strict=True))[("bm25", "splade")]
    assert against.comparison("splade", "ndcg@10").p_values["tukey"] == pytest.approx(p, abs=1e-6)
    for text in (against.to_markdown(), against.to_latex()):
        assert "Tukey's HSD" in text


def test_the_report_round_trips_through_json(report):
    again = ComparisonReport.from_json(report.to_json())
    assert again == report and again.baseline is None
    assert again.groups("ndcg@10", "tukey") == report.groups("ndcg@10", "tukey")


def test_identical_systems_have_p_one_and_share_a_letter():
    values = RetrievalEvalReport({}, {f"q{i}": {"ndcg@10": i / 10} for i in range(5)}, 5, (10,))
    same = compare({"a": values, "b": values}, tests=("tukey", "t-test"))
    row = same.comparison("b", "ndcg@10", against="a")
    assert row.p_values == {"tukey": 1.0, "t-test": 1.0}
    assert same.groups("ndcg@10") == {"a": "a", "b": "a"}


def test_ef_eval_compare_without_a_baseline_compares_every_pair(tmp_path: Path, capsys):
    from ef.evaluation import write_trec_qrels

    write_trec_qrels(tmp_path / "qrels.txt", QRELS)
    for name, run in RUNS.items():
        write_trec_run(tmp_path / f"{name}.run", run)
    paths = [str(tmp_path / f"{name}.run") for name in SYSTEMS]
    arguments = ["compare", str(tmp_path / "qrels.txt"), *paths, "--tests", "tukey,t-test"]
    assert main([*arguments, "--format", "json", "--html", str(tmp_path / "p.html")]) == 0
    printed = ComparisonReport.from_json(capsys.readouterr().out)
    library = compare({f"{n}.run": r for n, r in RUNS.items()}, QRELS, tests=("tukey", "t-test"))
    assert printed == library
    assert main([*arguments, "--format", "table"]) == 0
    table = capsys.readouterr().out
    assert "Adjusted p-values of ndcg@10 (Tukey's HSD" in table
    assert json.loads(printed.to_json())["baseline"] is None


def test_the_page_draws_a_heat_map_per_metric(chromium, report, tmp_path: Path):
    page = report.to_html(tmp_path / "pairs.html")
    open_page(chromium, page)
    for metric in METRICS:
        assert marks(chromium, f"pvalues:{metric}", "rect") == 12  # 4 systems, 12 ordered pairs
    text = chromium.find_element("id", "means").text
    letters = report.groups("ndcg@10", "tukey")
    assert all(letters[system] in text for system in SYSTEMS)
