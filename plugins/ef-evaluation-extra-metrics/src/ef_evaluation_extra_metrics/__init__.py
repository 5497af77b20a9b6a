"""An example retrieval metric for ``ef.evaluation``: rank-biased precision (RBP).

This distribution is the template for third-party metrics. Installing it is all it takes: its
entry point in the ``ef.evaluation`` group names this module, whose
:func:`ef_evaluation_register_metrics` hook registers ``rbp``, so
``evaluate_retrieval(..., metrics=("rbp",))`` and ``RETRIEVAL_METRICS`` know it. (The standard
measures it used to carry — hit rate, R-precision, bpref, judged@k — are built into the core now,
with every trec_eval measure.) The core has rank-biased precision too, as ``RBP(rel=1,p=0.8)``
in ir_measures' notation; this plugin's lower-case ``rbp`` stays the template of a plugin metric,
and ``rbp@k`` equals the core's ``RBP(rel=1,p=0.8)@k`` on integer grades.

The conventions are the core's: ``ranked`` is used as given, never re-sorted; a repeated id keeps
its first position and later copies are dropped; a grade ``> 0`` is relevant; ``k`` is an
``int >= 1``, anything else raises :class:`ValueError`.

>>> round(rbp(['d1', 'x', 'd2'], {'d1': 1, 'd2': 1}, 3), 6)  # 0.2 · (1 + 0.8²)
0.328
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ef.evaluation import RankingSummary, hookimpl

__all__ = ["PERSISTENCE", "ef_evaluation_register_metrics", "rbp", "rbp_all"]

PERSISTENCE = 0.8
"""The chance that the user goes on from one result to the next (Moffat and Zobel's ``p``)."""


def _check_cutoff(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"a cutoff k must be an int >= 1, got {k!r}")
    return k


def rbp(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Rank-biased precision of the top ``k`` (Moffat and Zobel, TOIS 2008), binary relevance.

    ``(1 - p) · Σ p^i`` over the relevant documents at 0-based rank ``i < k``, with
    ``p = 0.8``: the expected rate of relevant documents seen by a user who reads on from each
    result with probability ``p``. ir_measures' ``RBP(p=0.8)@k``.

    :param ranked: doc ids, best first.
    :param relevant: ``{doc_id: grade}``; grades ``> 0`` are relevant.
    :param k: the cutoff, an ``int >= 1``.
    :raises ValueError: if ``k`` is not an ``int >= 1``.

    >>> round(rbp(['x', 'x', 'd1'], {'d1': 1}, 2), 6)  # the repeated 'x' counts once
    0.16
    """
    _check_cutoff(k)
    total = 0.0
    for i, doc_id in enumerate(list(dict.fromkeys(ranked))[:k]):
        if relevant.get(doc_id, 0) > 0:
            total += PERSISTENCE**i
    return (1.0 - PERSISTENCE) * total


def rbp_all(summary: RankingSummary, ks: Sequence[int]) -> list[float]:
    """:func:`rbp` at every cutoff in ``ks`` at once, from the scoring core's summary.

    ``summary.positions`` holds the ascending 0-based ranks of the retrieved relevant documents,
    so one walk over them serves every cutoff.
    """
    positions = summary.positions
    out: list[float] = []
    total = 0.0
    j, n = 0, len(positions)
    for k in ks:
        while j < n and positions[j] < k:
            total += PERSISTENCE ** positions[j]
            j += 1
        out.append((1.0 - PERSISTENCE) * total)
    return out


@hookimpl
def ef_evaluation_register_metrics(register: Callable[..., None]) -> None:
    """Register ``rbp``, with its all-cutoffs form for the scoring core."""
    register(
        "rbp",
        rbp,
        all_cutoffs=rbp_all,
        description="rank-biased precision, p = 0.8, binary relevance (ir_measures RBP)",
    )
