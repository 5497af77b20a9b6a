"""cwl_eval's C/W/L measures, as ir_measures' cwl_eval provider computes them.

The C/W/L framework (Moffat et al., TOIS 2017; Azzopardi, Thomas and Moffat, SIGIR 2019)
describes a user who reads a ranking from the top and, after the document at 0-based rank ``i``,
goes on with a probability ``C(i)``. A measure is the expected rate of gain per document read:
``Σ W(i) · gain(i)``, where ``W(i)`` is ``Π_{j<i} C(j)`` over the sum of those products. As in
cwl_eval, the user's horizon is :data:`CWL_DEPTH` ranks: a shorter ranking is padded with
documents of no gain, a longer one is cut there.

Gains come from grades on the scale ``min_rel`` to ``max_rel``: a grade is clipped to
``[min_rel, max_rel]`` and scaled to ``[0, 1]``; an unjudged document, and a negative grade,
gains nothing. A grade above ``max_rel`` is refused rather than clipped (ir_measures clips it and
logs a warning): the scale is a parameter of the measure, and a grade outside it means the
parameter is wrong.

:func:`expected_utility` is the one walk; each measure is its continuation probability:

- ``NERR8@k`` (Azzopardi, Mackenzie and Moffat, ICTIR 2021, Eq. 8): ``1 - gain(i)`` up to rank
  ``k``, 0 from there; ``NERR9@k`` (Eq. 9): the same times ``(i + 1) / (i + 2)``;
  ``NERR10(p)`` (Eq. 10): ``p · (1 - gain(i))``; ``NERR11(T)`` (Eq. 11): INSQ's continuation
  times ``1 - gain(i)``;
- ``INSQ(T)`` (Moffat et al., ADCS 2012): ``((i + 2T) / (i + 1 + 2T))**2``;
- ``INST(T)`` (Moffat et al., ADCS 2015): ``((i + T + T_i) / (i + 1 + T + T_i))**2``, with
  ``T_i = T`` less the gain gathered down to rank ``i``;
- ``BPM(T)@k``, the static Bejeweled Player Model (Zhang et al., SIGIR 2017): 1 while the gain
  gathered is below ``T`` and fewer than ``k`` documents have been read, else 0;
- ``SDCG@k``: DCG's continuation ``log2(i + 2) / log2(i + 3)`` up to rank ``k``: the DCG of the
  top ``k`` (scaled gains) over that of ``k`` documents of full gain
  (:func:`~ef.evaluation._scoring.cutoffs.ndcg_at`).
"""

from __future__ import annotations

from collections.abc import Callable

from ef.evaluation._scoring.cutoffs import ideal_dcg_at, ndcg_at
from ef.evaluation._scoring.measures.summary import QueryFacts

__all__ = [
    "CWL_DEPTH",
    "bpm",
    "expected_utility",
    "insq",
    "inst",
    "nerr8",
    "nerr9",
    "nerr10",
    "nerr11",
    "scaled_gains",
    "sdcg",
]

CWL_DEPTH = 1000
"""The ranks a C/W/L user may read: cwl_eval's ``max_n``, which ir_measures keeps."""

Continuation = Callable[[int, float, float], float]
"""``C(i, gain, gathered)``: the probability of going on after 0-based rank ``i``, given its
gain and the gain gathered down to it (``i`` included)."""


def scaled_gains(facts: QueryFacts, min_rel: int, max_rel: int) -> list[tuple[int, float]]:
    """``(position, gain)`` of the retrieved documents with a gain, within :data:`CWL_DEPTH`.

    :raises ValueError: for a grade in the query's judgements above ``max_rel``; the evaluation
        adds a note naming the query.

    >>> from ef.evaluation._scoring.measures.summary import facts_from_ranking
    >>> scaled_gains(facts_from_ranking(['d1', 'x', 'd2', 'n'], {'d1': 3, 'd2': 1, 'n': 0}), 0, 3)
    [(0, 1.0), (2, 0.3333333333333333)]
    """
    top = facts.all_gains[0] if facts.all_gains else 0
    if top > max_rel:
        raise ValueError(
            f"the C/W/L measures take grades up to max_rel={max_rel}; got {top!r}: give the "
            f"scale's largest grade, such as max_rel={top!r}"
        )
    width = max_rel - min_rel
    return [
        (position, (grade - min_rel) / width)
        for position, grade in facts.graded
        if position < CWL_DEPTH and grade > min_rel
    ]


def expected_utility(
    facts: QueryFacts, continuation: Continuation, min_rel: int, max_rel: int
) -> float:
    """``Σ W(i) · gain(i)`` over :data:`CWL_DEPTH` ranks: cwl_eval's expected utility per item.

    >>> from ef.evaluation._scoring.measures.summary import facts_from_ranking
    >>> facts = facts_from_ranking(['x', 'd1'], {'d1': 1})
    >>> expected_utility(facts, lambda i, gain, gathered: 1.0 if i < 1 else 0.0, 0, 1)  # P@2
    0.5
    """
    gains = dict(scaled_gains(facts, min_rel, max_rel))
    reach = 1.0  # the probability of reading rank i: Π C(j) for j < i
    total = 0.0  # Σ reach over the ranks: 1 / W(0), the expected number of documents read
    reached: list[tuple[float, float]] = []  # (reach, gain) where the gain is not 0
    gathered = 0.0
    for i in range(CWL_DEPTH):
        total += reach
        gain = gains.get(i, 0.0)
        if gain:
            reached.append((reach, gain))
        gathered += gain
        reach *= continuation(i, gain, gathered)
        if reach == 0.0:  # nobody reads on: every later term is 0
            break
    first = 1.0 / total
    utility = 0.0
    for reach_i, gain in reached:
        utility += reach_i * first * gain
    return utility


def _within(k: int, going_on: Continuation) -> Continuation:
    """``going_on`` before rank ``k``; nobody reads past it."""
    return lambda i, gain, gathered: going_on(i, gain, gathered) if i < k - 1 else 0.0


def _insq_going_on(t: float) -> Callable[[int], float]:
    # Written as cwl_eval writes it, rank = i + 1, so the values agree to the last bit.
    return lambda i: (((i + 1.0) + 2.0 * t - 1.0) / ((i + 1.0) + 2.0 * t)) ** 2.0


def nerr8(facts: QueryFacts, k: int, min_rel: int, max_rel: int) -> float:
    """NERR, Eq. 8: ERR's gain-driven stopping, truncated at ``k``."""
    going_on = _within(k, lambda i, gain, gathered: 1.0 - gain)
    return expected_utility(facts, going_on, min_rel, max_rel)


def nerr9(facts: QueryFacts, k: int, min_rel: int, max_rel: int) -> float:
    """NERR, Eq. 9: ERR's gain-driven stopping and its rank discount, truncated at ``k``."""
    going_on = _within(k, lambda i, gain, gathered: (i + 1.0) / (i + 2.0) * (1.0 - gain))
    return expected_utility(facts, going_on, min_rel, max_rel)


def nerr10(facts: QueryFacts, p: float, min_rel: int, max_rel: int) -> float:
    """NERR, Eq. 10: ERR's gain-driven stopping with RBP's persistence ``p``."""
    return expected_utility(facts, lambda i, gain, gathered: p * (1.0 - gain), min_rel, max_rel)


def nerr11(facts: QueryFacts, t: float, min_rel: int, max_rel: int) -> float:
    """NERR, Eq. 11: ERR's gain-driven stopping with INSQ's goal ``T``."""
    insq_going_on = _insq_going_on(t)
    return expected_utility(
        facts, lambda i, gain, gathered: insq_going_on(i) * (1.0 - gain), min_rel, max_rel
    )


def insq(facts: QueryFacts, t: float, min_rel: int, max_rel: int) -> float:
    """INSQ: a user who expects to need ``T`` units of gain, whatever the ranking gives."""
    insq_going_on = _insq_going_on(t)
    return expected_utility(facts, lambda i, gain, gathered: insq_going_on(i), min_rel, max_rel)


def inst(facts: QueryFacts, t: float, min_rel: int, max_rel: int) -> float:
    """INST: a user who needs ``T`` units of gain and reads on less as they gather it."""

    def going_on(i: int, gain: float, gathered: float) -> float:
        wanted = t - gathered
        return float((((i + 1.0) + t + wanted - 1.0) / ((i + 1.0) + t + wanted)) ** 2.0)

    return expected_utility(facts, going_on, min_rel, max_rel)


def bpm(facts: QueryFacts, k: int, t: float, min_rel: int, max_rel: int) -> float:
    """BPM (static): a user who stops at ``T`` units of gain or ``k`` documents, first met."""
    going_on = _within(k, lambda i, gain, gathered: 1.0 if gathered < t else 0.0)
    return expected_utility(facts, going_on, min_rel, max_rel)


def sdcg(facts: QueryFacts, k: int, min_rel: int, max_rel: int) -> float:
    """Scaled DCG: the DCG of the top ``k`` over that of ``k`` documents of full gain.

    >>> from ef.evaluation._scoring.measures.summary import facts_from_ranking
    >>> round(sdcg(facts_from_ranking(['d1', 'x'], {'d1': 2}), 2, 0, 2), 6)  # 1 / (1 + 1/log2 3)
    0.613147
    """
    depth = min(k, CWL_DEPTH)
    found = scaled_gains(facts, min_rel, max_rel)
    positions = [position for position, _ in found if position < depth]
    gains = [gain for _, gain in found[: len(positions)]]
    ideal = ideal_dcg_at([1.0] * depth, (depth,))
    return ndcg_at(positions, gains, 1.0, ideal, (depth,))[0]
