"""Agreement between assessors: Cohen's κ, Fleiss' κ and Krippendorff's α over their grades.

Each set of judgements is one assessor's; an *item* is a (query, document) pair. The κs are
computed on the items every assessor judged, each grade a category (Cohen, 1960; Fleiss,
1971). Krippendorff's α (Krippendorff, *Content Analysis*, 2004, chapter 11) takes every item
at least two assessors judged, and a ``level`` that says how far apart two grades are: graded
relevance is ordinal by default (3 is further from 0 than 1 is, by an amount the grades' use
decides, not their numbers).
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

from ef.evaluation._judgements.inputs import checked_qrels
from ef.evaluation._report.fields import (
    JsonReport,
    checked,
    count,
    finite,
    list_of,
    optional,
    string,
)
from ef.evaluation._report.frozen import as_tuple
from ef.evaluation._scoring.aggregation import exact_unit_scale

__all__ = ["AGREEMENT_LEVELS", "JudgementAgreement", "judgement_agreement"]

AgreementLevel = Literal["nominal", "ordinal", "interval", "ratio"]
AGREEMENT_LEVELS: tuple[AgreementLevel, ...] = ("nominal", "ordinal", "interval", "ratio")

Item = tuple[str, str]


def _level(value: Any, where: str) -> str:
    if string(value, where) not in AGREEMENT_LEVELS:
        raise ValueError(f"{where} is {value!r}; expected one of {', '.join(AGREEMENT_LEVELS)}")
    return str(value)


@attrs.frozen
class JudgementAgreement(JsonReport):
    """How far assessors agree on the same (query, document) pairs.

    :param assessors: the names of the sets of judgements, in the order given.
    :param n_shared: the pairs every assessor judged: what the κs and ``observed_agreement``
        are computed on.
    :param observed_agreement: the share of the shared pairs on which every assessor gave the
        same grade.
    :param cohen_kappa: Cohen's κ, for exactly two assessors (else ``None``).
    :param fleiss_kappa: Fleiss' κ over every assessor (for two, Scott's π).
    :param krippendorff_alpha: Krippendorff's α at ``level``, over every pair at least two
        assessors judged.
    :param level: how α measures the distance between two grades: ``nominal`` (equal or not),
        ``ordinal``, ``interval`` or ``ratio``.
    :param n_pairable: the pairs at least two assessors judged: what α is computed on.
    :param grades: every grade given on those pairs, ascending.
    """

    assessors: tuple[str, ...] = attrs.field(converter=as_tuple, metadata=checked(list_of(string)))
    n_shared: int = attrs.field(metadata=checked(count))
    observed_agreement: float = attrs.field(metadata=checked(finite))
    cohen_kappa: float | None = attrs.field(metadata=checked(optional(finite)))
    fleiss_kappa: float = attrs.field(metadata=checked(finite))
    krippendorff_alpha: float = attrs.field(metadata=checked(finite))
    level: str = attrs.field(metadata=checked(_level))
    n_pairable: int = attrs.field(metadata=checked(count))
    grades: tuple[float, ...] = attrs.field(converter=as_tuple, metadata=checked(list_of(finite)))


def _named(judgements: Any) -> dict[str, Mapping[str, Mapping[str, float]]]:
    if isinstance(judgements, Mapping):
        items = list(judgements.items())
        first = items[0][1] if items else None
        if isinstance(first, Mapping) and any(
            isinstance(grade, numbers.Real) for grade in first.values()
        ):
            raise TypeError(
                "judgements maps query ids to grades: that is one set of judgements; give "
                "{assessor: qrels} or a list of qrels"
            )
    elif isinstance(judgements, Sequence) and not isinstance(judgements, str):
        items = [
            (Path(q).name if isinstance(q, str | os.PathLike) else f"assessor {i}", q)
            for i, q in enumerate(judgements, 1)
        ]
    else:
        raise TypeError(
            f"judgements is a {type(judgements).__qualname__}; expected {{assessor: qrels}} or "
            "a list of qrels"
        )
    names = [name for name, _ in items]
    if len(set(names)) != len(names):
        raise ValueError(f"two sets of judgements are named alike: {names}; name each apart")
    if len(items) < 2:
        raise ValueError(f"agreement needs at least two sets of judgements, got {len(items)}")
    return {str(name): checked_qrels(q, f"judgements {name!r}") for name, q in items}


def _ordinal_distances(
    domain: Sequence[float], totals: Mapping[float, float]
) -> Callable[..., float]:
    place = {value: index for index, value in enumerate(domain)}
    cumulative = [0.0]
    for value in domain:
        cumulative.append(cumulative[-1] + totals[value])

    def distance(c: float, k: float) -> float:
        low, high = sorted((place[c], place[k]))
        between = cumulative[high + 1] - cumulative[low]
        return float((between - (totals[c] + totals[k]) / 2) ** 2)

    return distance


def _distance(
    level: str, domain: Sequence[float], totals: Mapping[float, float]
) -> Callable[..., float]:
    if level == "nominal":
        return lambda c, k: 0.0 if c == k else 1.0
    if level == "ordinal":
        return _ordinal_distances(domain, totals)
    # α at these levels is the same when every grade is scaled alike: grades larger than 1 in
    # magnitude are scaled down below 1 by a power of two, which is exact, so a grade near the
    # float limit (1e308) overflows neither a difference, a sum nor a square.
    scale = exact_unit_scale(domain)
    if level == "interval":
        return lambda c, k: (c * scale - k * scale) ** 2
    return lambda c, k: (
        0.0 if c + k == 0 else ((c * scale - k * scale) / (c * scale + k * scale)) ** 2
    )


def krippendorff_alpha(units: Sequence[Sequence[float]], level: str) -> float:
    """Krippendorff's α of the values of each unit (units of fewer than two values are not
    pairable and ignored), from the coincidence matrix.

    :raises ValueError: when no unit is pairable, or every pairable value is the same (α is
        then 0/0).
    """
    pairable = [values for values in units if len(values) >= 2]
    if not pairable:
        raise ValueError("no pair is judged by two assessors: Krippendorff's alpha is undefined")
    coincidences: dict[tuple[float, float], float] = {}
    for values in pairable:
        counts: dict[float, int] = {}
        for value in values:
            counts[value] = counts.get(value, 0) + 1
        for c, n_c in counts.items():
            for k, n_k in counts.items():
                pairs = n_c * (n_k - (c == k))
                if pairs:
                    coincidences[c, k] = coincidences.get((c, k), 0.0) + pairs / (len(values) - 1)
    domain = sorted({value for values in pairable for value in values})
    if len(domain) < 2:
        raise ValueError(
            f"every judgement has the grade {domain[0]:g}: with one grade only, agreement beyond "
            "chance is undefined"
        )
    totals = {c: math.fsum(o for (a, _), o in coincidences.items() if a == c) for c in domain}
    n = math.fsum(totals.values())
    delta = _distance(level, domain, totals)
    observed = math.fsum(o * delta(c, k) for (c, k), o in coincidences.items())
    expected = math.fsum(totals[c] * totals[k] * delta(c, k) for c in domain for k in domain)
    return 1.0 - (n - 1) * observed / expected


def _kappa(observed: float, expected: float, grades: Sequence[float]) -> float:
    if expected >= 1.0:
        raise ValueError(
            f"every shared judgement has the grade {grades[0]:g}: with one grade only, "
            "agreement beyond chance (kappa) is undefined"
        )
    return (observed - expected) / (1.0 - expected)


def _cohen(first: Sequence[float], second: Sequence[float], grades: Sequence[float]) -> float:
    n = len(first)
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    expected = math.fsum((first.count(g) / n) * (second.count(g) / n) for g in grades)
    return _kappa(observed, expected, grades)


def _fleiss(rows: Sequence[Sequence[float]], grades: Sequence[float]) -> float:
    n_items, raters = len(rows), len(rows[0])
    shares = [sum(row.count(g) for row in rows) / (n_items * raters) for g in grades]
    per_item = [
        (sum(row.count(g) ** 2 for g in grades) - raters) / (raters * (raters - 1)) for row in rows
    ]
    observed = math.fsum(per_item) / n_items
    return _kappa(observed, math.fsum(p * p for p in shares), grades)


def judgement_agreement(
    judgements: Any, *, level: AgreementLevel = "ordinal"
) -> JudgementAgreement:
    """How far two or more assessors agree: Cohen's κ, Fleiss' κ and Krippendorff's α.

    Each set of judgements is one assessor's grades, ``{query_id: {doc_id: grade}}``. Cohen's κ
    (two assessors) and Fleiss' κ treat each grade as a category and are computed on the
    (query, document) pairs every assessor judged; they equal trectools'
    ``TrecQrel.check_kappa`` (binary grades), scikit-learn's ``cohen_kappa_score`` and
    statsmodels' ``fleiss_kappa``. Krippendorff's α uses every pair at least two assessors
    judged and measures disagreement at ``level``, as the ``krippendorff`` package does.

    :param judgements: ``{assessor: qrels}`` or a list of qrels (mappings, DataFrames or qrels
        files' paths).
    :param level: ``"ordinal"`` (graded relevance: ordered grades), ``"nominal"``,
        ``"interval"`` or ``"ratio"``: how α weighs two different grades.
    :returns: a :class:`JudgementAgreement`.
    :raises ValueError: for fewer than two sets, no pair every assessor judged, a single grade
        on the shared pairs (κ is then undefined), an unknown level, or a grade that is not a
        finite number.
    :raises TypeError: for one set of judgements where several are expected.

    >>> first = {"q1": {"d1": 1, "d2": 0, "d3": 1, "d4": 0}}
    >>> second = {"q1": {"d1": 1, "d2": 0, "d3": 0, "d4": 0}}
    >>> agreement = judgement_agreement({"alice": first, "bob": second})
    >>> agreement.observed_agreement, agreement.cohen_kappa
    (0.75, 0.5)
    """
    if level not in AGREEMENT_LEVELS:
        raise ValueError(f"unknown level {level!r}: expected one of {', '.join(AGREEMENT_LEVELS)}")
    named = _named(judgements)
    units: dict[Item, list[float]] = {}
    for qrels in named.values():
        for query_id, grades in qrels.items():
            for doc_id, grade in grades.items():
                units.setdefault((query_id, doc_id), []).append(float(grade))
    shared = [values for values in units.values() if len(values) == len(named)]
    if not shared:
        sizes = ", ".join(f"{name}: {sum(map(len, q.values()))}" for name, q in named.items())
        raise ValueError(
            f"no (query, document) pair is judged in every set of judgements ({sizes} pairs): "
            "agreement needs pairs judged by all"
        )
    shared_grades = sorted({grade for values in shared for grade in values})
    columns = [[values[i] for values in shared] for i in range(len(named))]
    cohen = _cohen(columns[0], columns[1], shared_grades) if len(named) == 2 else None
    fleiss = _fleiss(shared, shared_grades)
    pairable = [values for values in units.values() if len(values) >= 2]
    return JudgementAgreement(
        assessors=tuple(named),
        n_shared=len(shared),
        observed_agreement=sum(len(set(values)) == 1 for values in shared) / len(shared),
        cohen_kappa=cohen,
        fleiss_kappa=fleiss,
        krippendorff_alpha=krippendorff_alpha(pairable, level),
        level=level,
        n_pairable=len(pairable),
        grades=sorted({grade for values in pairable for grade in values}),
    )
