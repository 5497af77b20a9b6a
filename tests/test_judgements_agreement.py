"""Agreement between assessors, against trectools, scikit-learn, statsmodels and krippendorff."""

from __future__ import annotations

import math
import random
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa
from trectools import TrecQrel

from ef.evaluation import JudgementAgreement, judgement_agreement, write_trec_qrels

# trectools, the oracle, sorts its frames in place, which pandas now warns about.
pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword:Warning")

DOCS = [f"d{i}" for i in range(40)]


def assessors(seed: int, n: int, grades: tuple[int, ...], *, overlap: float = 1.0) -> list[dict]:
    """``n`` assessors who mostly agree with a hidden truth, each judging a share of the pairs."""
    rng = random.Random(seed)
    truth = {
        (f"q{q}", doc): rng.choice(grades) for q in range(1, 6) for doc in rng.sample(DOCS, 12)
    }
    sets = []
    for _ in range(n):
        qrels: dict[str, dict[str, float]] = {}
        for (query_id, doc), grade in truth.items():
            if rng.random() > overlap:
                continue
            given = grade if rng.random() < 0.7 else rng.choice(grades)
            qrels.setdefault(query_id, {})[doc] = float(given)
        sets.append(qrels)
    return sets


def shared_columns(sets: list[dict]) -> list[list[float]]:
    items = [
        (q, d) for q, docs in sets[0].items() for d in docs if all(d in s.get(q, {}) for s in sets)
    ]
    return [[s[q][d] for q, d in items] for s in sets]


@pytest.mark.parametrize("seed", range(6))
def test_cohen_kappa_on_binary_grades_equals_trectools(tmp_path: Path, seed):
    first, second = assessors(seed, 2, (0, 1))
    paths = []
    for name, qrels in (("a", first), ("b", second)):
        write_trec_qrels(tmp_path / name, qrels)
        paths.append(TrecQrel(str(tmp_path / name)))
    result = judgement_agreement({"a": first, "b": second})
    assert result.cohen_kappa == pytest.approx(paths[0].check_kappa(paths[1]), abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_cohen_kappa_on_graded_labels_equals_scikit_learn(seed):
    sets = assessors(seed, 2, (0, 1, 2, 3))
    a, b = shared_columns(sets)
    result = judgement_agreement(sets)
    assert result.assessors == ("assessor 1", "assessor 2")
    assert result.n_shared == len(a)
    assert result.cohen_kappa == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert result.observed_agreement == sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [2, 3, 5])
def test_fleiss_kappa_equals_statsmodels(seed, n):
    sets = assessors(seed, n, (0, 1, 2))
    table, _ = aggregate_raters(np.array(shared_columns(sets)).T)
    result = judgement_agreement(sets)
    assert result.fleiss_kappa == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-12)
    assert (result.cohen_kappa is None) == (n != 2)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_alpha_equals_the_krippendorff_package(seed, level):
    # Each assessor judges about 80% of the pairs: alpha takes every pair two of them judged.
    sets = assessors(seed, 3, (0, 1, 2, 3), overlap=0.8)
    items = sorted({(q, d) for s in sets for q, docs in s.items() for d in docs})
    data = [[s.get(q, {}).get(d, math.nan) for q, d in items] for s in sets]
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    result = judgement_agreement(sets, level=level)
    assert result.krippendorff_alpha == pytest.approx(expected, abs=1e-9)
    assert result.n_pairable == sum(
        sum(not math.isnan(row[i]) for row in data) >= 2 for i in range(len(items))
    )


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_krippendorff_alpha_of_grades_near_the_float_limit_is_that_of_the_grades_scaled_down(
    level,
):
    sets = assessors(1, 3, (0, 1, 2, 3), overlap=0.8)
    huge = [{q: {d: g * 5e307 for d, g in docs.items()} for q, docs in s.items()} for s in sets]
    items = sorted({(q, d) for s in sets for q, docs in s.items() for d in docs})
    data = [[s.get(q, {}).get(d, math.nan) for q, d in items] for s in sets]
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    result = judgement_agreement(huge, level=level)
    assert result.krippendorff_alpha == pytest.approx(expected, abs=1e-9)
    assert result.grades == (0.0, 5e307, 1e308, 1.5e308)


def test_perfect_agreement_is_one_and_round_trips():
    qrels = {"q1": {"d1": 0.0, "d2": 1.0, "d3": 2.0}}
    result = judgement_agreement({"x": qrels, "y": dict(qrels)})
    assert (result.cohen_kappa, result.fleiss_kappa, result.krippendorff_alpha) == (1.0, 1.0, 1.0)
    assert result.grades == (0.0, 1.0, 2.0)
    assert JudgementAgreement.from_json(result.to_json()) == result


@pytest.mark.parametrize(
    ("judgements", "error", "match"),
    [
        ([{"q1": {"d1": 1}}], ValueError, "at least two sets"),
        ({"q1": {"d1": 1}, "q2": {"d1": 0}}, TypeError, "that is one set"),
        ([{"q1": {"d1": 1}}, {"q1": {"d2": 1}}], ValueError, "no .query, document. pair"),
        ([{"q1": {"d1": 1, "d2": 1}}, {"q1": {"d1": 1, "d2": 1}}], ValueError, "one grade only"),
        ([{"q1": {"d1": math.nan}}, {"q1": {"d1": 1}}], ValueError, "doc 'd1' has grade nan"),
        ("qrels.txt", TypeError, "expected {assessor: qrels}"),
    ],
)
def test_bad_input_is_a_clear_error(judgements, error, match):
    with pytest.raises(error, match=match):
        judgement_agreement(judgements)


def test_unknown_level_is_refused():
    with pytest.raises(ValueError, match="unknown level 'scale'"):
        judgement_agreement([{"q1": {"d1": 1}}, {"q1": {"d1": 0}}], level="scale")  # type: ignore[arg-type]


@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 3), st.one_of(st.none(), st.integers(0, 3))),
        min_size=2,
        max_size=30,
    ),
    st.sampled_from(["nominal", "ordinal", "interval", "ratio"]),
)
def test_any_grades_agree_with_the_oracles_or_are_refused(rows, level):
    first = {"q": {f"d{i}": float(a) for i, (a, _, _) in enumerate(rows)}}
    second = {"q": {f"d{i}": float(b) for i, (_, b, _) in enumerate(rows)}}
    third = {"q": {f"d{i}": float(c) for i, (_, _, c) in enumerate(rows) if c is not None}}
    a, b = [r[0] for r in rows], [r[1] for r in rows]
    if len(set(a + b)) == 1:
        with pytest.raises(ValueError, match="one grade only"):
            judgement_agreement([first, second])
        return
    two = judgement_agreement([first, second], level=level)
    assert two.cohen_kappa == pytest.approx(cohen_kappa_score(a, b), abs=1e-9)
    assert -1.0 <= two.cohen_kappa <= 1.0
    data = [a, b, [math.nan if r[2] is None else r[2] for r in rows]]
    shared = [r for r in rows if r[2] is not None]
    if not shared or len({g for r in shared for g in r}) == 1:
        return  # no pair all three judged, or one grade on them: refused, as tested above
    three = judgement_agreement([first, second, third], level=level)
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert three.krippendorff_alpha == pytest.approx(expected, abs=1e-9)
