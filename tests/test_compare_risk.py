"""URisk and TRisk (Dinçer, Macdonald & Ounis, SIGIR 2014) and GeoRisk (SIGIR 2016) against
an independent implementation written here from the papers' formulas with numpy and scipy
(neither ranx, ir_measures nor trectools computes them), hand-worked cases, and properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from ef.evaluation import ComparisonReport, RetrievalEvalReport, compare
from ef.evaluation._compare.risk import georisk, trisk, urisk
from test_compare_pairs import QRELS, RUNS


def paper_urisk_trisk(system, baseline, alpha):
    """SIGIR 2014, eq. (1)-(2) and section 3: reward minus (1+α) risk over c topics, and its
    t-statistic with the standard error of the per-topic weighted differences."""
    delta = np.asarray(system, dtype=float) - np.asarray(baseline, dtype=float)
    c = len(delta)
    reward = delta[delta > 0].sum()
    risk = -delta[delta < 0].sum()
    u = (reward - (1 + alpha) * risk) / c
    z = np.where(delta < 0, (1 + alpha) * delta, delta)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = u / (z.std(ddof=1) / np.sqrt(c))  # undefined without spread: ef says None
    return u, t


def paper_georisk(matrix, alpha):
    """SIGIR 2016, eq. (3)-(6): chi-square-like standardisation of the system × topic matrix,
    ZRisk, and GeoRisk as the geometric mean of the mean score and Φ(ZRisk / c)."""
    x = np.asarray(matrix, dtype=float)
    c = x.shape[1]
    s = x.sum(axis=1)
    t = x.sum(axis=0)
    n = x.sum()
    e = np.outer(s, t) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        # A topic no system scores on has e = 0: no evidence either way, z = 0 (ef's rule).
        z = np.where(e > 0, (x - e) / np.sqrt(e), 0.0)
    zrisk = np.where(z < 0, (1 + alpha) * z, z).sum(axis=1)
    return np.sqrt(s / c * scipy_stats.norm.cdf(zrisk / c))


def test_a_hand_worked_case():
    # δ = (0.2, -0.2, 0.8); α = 1 doubles the loss: z = (0.2, -0.4, 0.8), mean 0.2,
    # sample sd 0.6, standard error 0.6 / √3.
    assert urisk([0.5, 0.2, 0.9], [0.3, 0.4, 0.1], 1.0) == pytest.approx(0.2)
    assert trisk([0.5, 0.2, 0.9], [0.3, 0.4, 0.1], 1.0) == pytest.approx(0.2 / (0.6 / 3**0.5))


def test_georisk_hand_worked():
    # Two systems, two topics: x = [[1, 0], [1, 1]]; S = (1, 2), T = (2, 1), N = 3.
    # e = [[2/3, 1/3], [4/3, 2/3]]; z11 = (1/3)/√(2/3), z12 = -(1/3)/√(1/3)·… per the formula.
    x = [[1.0, 0.0], [1.0, 1.0]]
    e = [[2 / 3, 1 / 3], [4 / 3, 2 / 3]]
    z = [[(x[i][j] - e[i][j]) / e[i][j] ** 0.5 for j in range(2)] for i in range(2)]
    alpha = 2.0
    zrisk = [sum(v if v > 0 else (1 + alpha) * v for v in row) for row in z]
    expected = [(sum(x[i]) / 2 * scipy_stats.norm.cdf(zrisk[i] / 2)) ** 0.5 for i in range(2)]
    ours = georisk({"a": x[0], "b": x[1]}, alpha)
    assert [ours["a"], ours["b"]] == pytest.approx(expected, abs=1e-12)


values = st.lists(st.floats(0, 1, allow_nan=False), min_size=3, max_size=40)


@given(values, values, st.sampled_from([0.0, 1.0, 5.0, 10.0]))
def test_urisk_and_trisk_equal_the_papers_formulas(system, baseline, alpha):
    n = min(len(system), len(baseline))
    system, baseline = system[:n], baseline[:n]
    u, t = paper_urisk_trisk(system, baseline, alpha)
    assert urisk(system, baseline, alpha) == pytest.approx(u, abs=1e-12)
    ours = trisk(system, baseline, alpha)
    if ours is not None:
        assert ours == pytest.approx(t, rel=1e-9)


def test_alpha_zero_is_the_mean_difference_and_equal_systems_have_no_risk():
    report = compare(RUNS, QRELS, baseline="bm25", tests=("t-test",), risk_alpha=0.0)
    for row in report.comparisons:
        assert row.urisk == pytest.approx(row.difference, abs=1e-15)
        # With α = 0, TRisk is the paired t-statistic.
        a = [report.per_query[row.system][q][row.metric] for q in QRELS]
        b = [report.per_query["bm25"][q][row.metric] for q in QRELS]
        assert row.trisk == pytest.approx(scipy_stats.ttest_rel(a, b).statistic, rel=1e-9)
    splade = report.comparison("splade", "ndcg@10")
    assert splade.trisk is not None and splade.trisk >= 2 and splade.risk_reading == "safer"
    values = RetrievalEvalReport({}, {f"q{i}": {"ndcg@10": i / 10} for i in range(5)}, 5, (10,))
    same = compare({"a": values, "b": values}, baseline="a", tests=("t-test",), risk_alpha=5.0)
    row = same.comparison("b", "ndcg@10")
    assert row.urisk == 0.0 and row.trisk is None and row.risk_reading == "not significant"


def test_compare_reports_the_risk_of_every_system():
    alpha = 5.0
    report = compare(RUNS, QRELS, baseline="bm25", tests=("t-test",), risk_alpha=alpha)
    names = list(report.systems)
    for metric in report.metrics:
        matrix = [[report.per_query[n][q][metric] for q in QRELS] for n in names]
        expected = paper_georisk(matrix, alpha)
        for name, value in zip(names, expected, strict=True):
            assert report.georisk[name][metric] == pytest.approx(value, rel=1e-12)
        for row in report.comparisons:
            if row.metric != metric:
                continue
            u, t = paper_urisk_trisk(matrix[names.index(row.system)], matrix[0], alpha)
            assert row.urisk == pytest.approx(u, abs=1e-12)
            assert row.trisk == pytest.approx(t, rel=1e-9)
            reading = "riskier" if t <= -2 else "safer" if t >= 2 else "not significant"
            assert row.risk_reading == reading
    # Weighing losses six times, even the systems better on average are riskier.
    assert {row.risk_reading for row in report.comparisons} == {"riskier"}
    assert ComparisonReport.from_json(report.to_json()) == report
    frame = report.to_pandas()
    assert {"urisk", "trisk", "risk", "georisk"} <= set(frame.columns)
    assert list(frame["risk"]) == [row.risk_reading for row in report.comparisons]


def test_a_negative_risk_weight_is_refused():
    with pytest.raises(ValueError, match="risk_alpha"):
        compare(RUNS, QRELS, baseline="bm25", risk_alpha=-1.0)


def test_ef_eval_compare_prints_the_risk_columns(tmp_path, capsys):
    import csv
    import io

    from ef.evaluation import write_trec_qrels, write_trec_run
    from ef.evaluation.cli import main

    write_trec_qrels(tmp_path / "qrels.txt", QRELS)
    for name in ("bm25", "random"):
        write_trec_run(tmp_path / f"{name}.run", RUNS[name])
    arguments = ["compare", str(tmp_path / "qrels.txt"), str(tmp_path / "bm25.run")]
    arguments += [str(tmp_path / "random.run"), "--baseline", "bm25.run", "--tests", "t-test"]
    assert main([*arguments, "--risk-alpha", "1", "--format", "csv"]) == 0
    (row,) = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    library = compare(
        {"bm25.run": RUNS["bm25"], "random.run": RUNS["random"]},
        QRELS,
        baseline="bm25.run",
        tests=("t-test",),
        risk_alpha=1.0,
    )
    expected = library.comparison("random.run", "ndcg@10")
    assert float(row["urisk"]) == expected.urisk and float(row["trisk"]) == expected.trisk
    assert row["risk"] == "riskier"
    assert float(row["georisk"]) == library.georisk["random.run"]["ndcg@10"]
