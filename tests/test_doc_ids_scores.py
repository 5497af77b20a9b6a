"""The scores a ranking of results carries: kept only when every result's score is a finite
number, whatever the number's type (the float fast path and the general check agree)."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import pytest

from ef.evaluation._plugins import HOST
from ef.evaluation._running.adapters import to_doc_ids
from ef.segments import Segment
from ef.source_manager import SearchHit


class _Float(float):
    pass


def _hits(*scores: object) -> list[SearchHit]:
    return [SearchHit(Segment(f"d{i}", "text"), score=s) for i, s in enumerate(scores)]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "scores",
    [(2.5, 1.0), (3, 2.0), (_Float(1.5), 0.5), (Fraction(1, 3), 0.25), (-0.0, -1e308)],
)
def test_finite_scores_of_any_real_type_are_kept(scores):
    doc_ids = to_doc_ids(_hits(*scores), 10, HOST)
    assert doc_ids.scores == [float(s) for s in scores]


@pytest.mark.parametrize(
    "bad", [math.nan, math.inf, -math.inf, _Float("nan"), 10**400, True, "1.0", None, Decimal(1)]
)
def test_one_score_that_is_no_finite_real_drops_the_scores(bad):
    doc_ids = to_doc_ids(_hits(1.0, bad), 10, HOST)
    assert doc_ids.ranked == ["d0", "d1"]
    assert doc_ids.scores is None
