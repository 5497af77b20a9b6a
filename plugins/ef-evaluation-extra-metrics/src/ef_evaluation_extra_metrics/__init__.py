"""Extra retrieval metrics for ``ef.evaluation``: hit rate, R-precision, bpref and judged@k.

Installing this distribution is all it takes: its entry point in the ``ef.evaluation`` group
names this module, whose :func:`ef_evaluation_register_metrics` hook registers the four metrics,
so ``evaluate_retrieval(..., metrics=("hit_rate", "r_precision", "bpref", "judged"))`` and
``RETRIEVAL_METRICS`` know them.

The conventions are the core's (and trec_eval's):

- ``ranked`` is used as given, never re-sorted; a repeated id keeps its first position and later
  copies are dropped.
- A judgement is relevant when its grade is ``> 0``; ``R`` is the number of such ids in
  ``relevant``, retrieved or not. Fractional grades in ``(0, 1)`` are relevant here; trec_eval
  truncates them to ``0`` and pytrec_eval rejects them.
- ``k`` is an ``int >= 1``; anything else raises :class:`ValueError`.

>>> hit_rate(['x', 'd1'], {'d1': 1}, 2)
1.0
>>> r_precision(['d1', 'x', 'd2'], {'d1': 1, 'd2': 1})
0.5
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ef.evaluation import RankingSummary, hookimpl

__all__ = [
    "bpref",
    "ef_evaluation_register_metrics",
    "hit_rate",
    "hit_rate_all",
    "judged",
    "judged_all",
    "r_precision",
]


def _check_cutoff(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"a cutoff k must be an int >= 1, got {k!r}")
    return k


def _top(ranked: Sequence[str], k: int | None = None) -> list[str]:
    """The first ``k`` distinct ids of ``ranked`` (all of them when ``k`` is None)."""
    if k is None:
        return list(dict.fromkeys(ranked))
    top: dict[str, None] = {}
    for doc_id in ranked:
        if len(top) == k:
            break
        top[doc_id] = None
    return list(top)


def hit_rate(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """``1.0`` if any relevant document is in the top ``k``, else ``0.0`` (success@k).

    Averaged over queries this is the share of queries answered by at least one relevant
    result in the top ``k`` — trec_eval's ``success`` measure (``m_success.c``).

    :param ranked: doc ids, best first.
    :param relevant: ``{doc_id: grade}``; grades ``> 0`` are relevant.
    :param k: the cutoff, an ``int >= 1``.
    :raises ValueError: if ``k`` is not an ``int >= 1``.

    >>> hit_rate(['x', 'd1'], {'d1': 1}, 1)
    0.0
    >>> hit_rate(['x', 'x', 'd1'], {'d1': 1}, 2)  # the repeated 'x' counts once
    1.0
    """
    _check_cutoff(k)
    return 1.0 if any(relevant.get(doc_id, 0) > 0 for doc_id in _top(ranked, k)) else 0.0


def hit_rate_all(summary: RankingSummary, ks: Sequence[int]) -> list[float]:
    """:func:`hit_rate` at every cutoff in ``ks`` at once, from the scoring core's summary.

    The first relevant document's rank decides every cutoff, so this costs nothing per cutoff.

    :param summary: the scoring core's one pass over the ranking.
    :param ks: the cutoffs, ascending.
    """
    if not summary.positions:
        return [0.0] * len(ks)
    first = summary.positions[0]
    return [1.0 if first < k else 0.0 for k in ks]


def r_precision(ranked: Sequence[str], relevant: Mapping[str, float]) -> float:
    """Precision at rank ``R``, the number of relevant documents (trec_eval ``Rprec``).

    The relevant ids among the first ``R`` distinct ids of ``ranked``, divided by ``R`` — also
    when fewer than ``R`` were retrieved (``m_Rprec.c``). ``0.0`` when nothing is relevant. It
    has no cutoff: it is reported as ``r_precision``, not ``r_precision@k``. Through
    :func:`ef.evaluation.evaluate_retrieval` the ranking is at most ``limit`` long, so set
    ``limit`` to at least the largest ``R``.

    :param ranked: doc ids, best first.
    :param relevant: ``{doc_id: grade}``; grades ``> 0`` are relevant.

    >>> r_precision(['d1', 'x', 'd2'], {'d1': 1, 'd2': 1, 'd3': 0})
    0.5
    """
    n_relevant = sum(1 for grade in relevant.values() if grade > 0)
    if n_relevant == 0:
        return 0.0
    hits = sum(1 for doc_id in _top(ranked, n_relevant) if relevant.get(doc_id, 0) > 0)
    return hits / n_relevant


def bpref(ranked: Sequence[str], relevant: Mapping[str, float]) -> float:
    """Binary preference: how often relevant documents are ranked above judged non-relevant ones.

    Buckley and Voorhees (SIGIR 2004), exactly as trec_eval computes it (``m_bpref.c``). Only
    judged documents count; unjudged ones are skipped, which makes bpref robust to incomplete
    judgements. With ``R`` relevant ids and ``N`` judged non-relevant ids in ``relevant``, every
    relevant document retrieved with ``n`` judged non-relevant ones above it adds
    ``1 - min(n, R) / min(N, R)`` (``1`` when ``n = 0``); the sum is divided by ``R``. ``0.0``
    when nothing is relevant. It has no cutoff and is reported as ``bpref``.

    Grades follow trec_eval: ``> 0`` relevant, ``0`` judged non-relevant, and a *negative*
    grade marks a document as pooled but unjudged, skipped like a document missing from
    ``relevant``. (The core's metrics treat every grade ``<= 0`` as non-relevant, which for them
    is the same thing: bpref is the one measure that tells the two apart.)

    :param ranked: doc ids, best first.
    :param relevant: ``{doc_id: grade}``.

    >>> bpref(['d1', 'n1', 'x', 'd2'], {'d1': 1, 'd2': 1, 'n1': 0, 'n2': 0})
    0.75
    """
    n_relevant = sum(1 for grade in relevant.values() if grade > 0)
    if n_relevant == 0:
        return 0.0
    n_nonrelevant = sum(1 for grade in relevant.values() if grade == 0)
    denominator = min(n_nonrelevant, n_relevant)
    total = 0.0
    nonrelevant_above = 0
    found = 0
    for doc_id in _top(ranked):
        grade = relevant.get(doc_id)
        if grade is None or grade < 0:
            continue
        if grade > 0:
            # nonrelevant_above > 0 implies denominator > 0: it counts judged non-relevant ids.
            if nonrelevant_above:
                total += 1.0 - min(nonrelevant_above, n_relevant) / denominator
            else:
                total += 1.0
            found += 1
            if found == n_relevant:
                break
        else:
            nonrelevant_above += 1
    return total / n_relevant


def judged(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """The share of the top ``k`` that carries a judgement of any grade (judged@k).

    How far the judgements cover what a system returns: a low value means its scores rest on
    unjudged documents, which every other metric counts as non-relevant. Like precision it is
    always divided by ``k``, even when fewer than ``k`` were returned (ir_measures' ``Judged@k``
    up to 0.3.1; from 0.3.3 ir_measures divides by the number returned when that is smaller).
    Any grade counts, ``0`` and negative ones included.

    :param ranked: doc ids, best first.
    :param relevant: ``{doc_id: grade}`` — every judged id, whatever its grade.
    :param k: the cutoff, an ``int >= 1``.
    :raises ValueError: if ``k`` is not an ``int >= 1``.

    >>> judged(['d1', 'x', 'n1', 'y'], {'d1': 1, 'n1': 0}, 4)
    0.5
    """
    _check_cutoff(k)
    return sum(1 for doc_id in _top(ranked, k) if doc_id in relevant) / k


def judged_all(summary: RankingSummary, ks: Sequence[int]) -> list[float]:
    """:func:`judged` at every cutoff in ``ks`` at once: one walk down to the largest cutoff.

    :param summary: the scoring core's one pass over the ranking (``summary.ranked`` is
        already de-duplicated).
    :param ks: the cutoffs, ascending.
    """
    ranked, relevant = summary.ranked, summary.relevant
    out: list[float] = []
    count = position = 0
    for k in ks:
        stop = min(k, len(ranked))
        while position < stop:
            if ranked[position] in relevant:
                count += 1
            position += 1
        out.append(count / k)
    return out


@hookimpl
def ef_evaluation_register_metrics(register: Callable[..., None]) -> None:
    """Register the four metrics with ``ef.evaluation``.

    The host calls this once, when the metric registry is first needed.

    :param register: the host's ``register(name, fn, *, all_cutoffs, cutoff, description)``.
    """
    register(
        "hit_rate",
        hit_rate,
        all_cutoffs=hit_rate_all,
        description="1 if a relevant doc is in the top k, else 0 (trec_eval success)",
    )
    register(
        "r_precision",
        r_precision,
        cutoff=False,
        description="precision at rank R, the number of relevant docs (trec_eval Rprec)",
    )
    register(
        "bpref",
        bpref,
        cutoff=False,
        description="relevant docs ranked above judged non-relevant ones (trec_eval bpref)",
    )
    register(
        "judged",
        judged,
        all_cutoffs=judged_all,
        description="share of the top k that is judged, any grade (ir_measures Judged)",
    )
