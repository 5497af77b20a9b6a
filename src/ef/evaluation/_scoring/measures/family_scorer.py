"""Computing a chosen set of measure families for each query, and how each key aggregates.

Pure code, below the plugins: the caller looks the families up in the registry and hands them
over, with the :class:`~ef.evaluation._scoring.measures.summary.Judging` of the evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ef.evaluation._scoring.aggregation import Aggregation, aggregate
from ef.evaluation._scoring.measures import cut, gains, incomplete, sets, uncut
from ef.evaluation._scoring.measures.family import Family
from ef.evaluation._scoring.measures.summary import (
    Judging,
    QueryFacts,
    facts_from_ranking,
    facts_from_scores,
)

__all__ = ["TREC_FAMILIES", "FamilyScorer"]

_BY_NAME = {
    family.name: family
    for family in (
        *cut.FAMILIES,
        *uncut.FAMILIES,
        *sets.FAMILIES,
        *incomplete.FAMILIES,
        *gains.FAMILIES,
    )
}
TREC_FAMILIES: tuple[Family, ...] = tuple(
    _BY_NAME[name]
    for name in (
        "num_q", "num_ret", "num_rel", "num_rel_ret", "trec_map", "gm_map", "Rprec", "bpref",
        "recip_rank", "iprec_at_recall", "P", "trec_recall", "infAP", "gm_bpref", "Rprec_mult",
        "utility", "11pt_avg", "binG", "G", "trec_ndcg", "ndcg_rel", "Rndcg", "ndcg_cut",
        "map_cut", "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map",
        "set_F", "num_nonrel_judged_ret",
    )
)  # fmt: skip
"""Every numeric measure of ``pytrec_eval.supported_measures``, in trec_eval's order."""


class FamilyScorer:
    """The keys of the chosen families, computed together for each query.

    :param families: the families, in report order.
    :param judging: the relevance level and ``judged_only`` of the evaluation.
    """

    def __init__(self, families: Sequence[Family], judging: Judging) -> None:
        self.families = tuple(families)
        self.judging = judging
        self.keys: list[str] = [key for family in self.families for key in family.keys]
        self.aggregation: dict[str, Aggregation] = {
            key: family.aggregation
            for family in self.families
            if family.aggregation != "mean"
            for key in family.keys
        }

    def facts_of_ranking(
        self,
        ranked: Sequence[str],
        relevant: Mapping[str, float],
        *,
        unique: bool = False,
        positives: list[tuple[str, float]] | None = None,
    ) -> QueryFacts:
        """The facts of one query's ranking, read with this plan's judging."""
        return facts_from_ranking(
            ranked, relevant, self.judging, unique=unique, positives=positives
        )

    def facts_of_scores(
        self,
        scores: Mapping[str, float],
        relevant: Mapping[str, float],
        *,
        positives: list[tuple[str, float]] | None = None,
    ) -> QueryFacts:
        """The facts of one query's ``{doc_id: score}``, read with this plan's judging."""
        return facts_from_scores(scores, relevant, self.judging, positives=positives)

    def score(self, facts: QueryFacts, query_id: str | None = None) -> dict[str, float]:
        """Every key of the plan for one query.

        :raises ValueError: if a value is not finite (grades so large their sums overflow),
            naming the key and the query.
        """
        values: list[float] = []
        try:
            for family in self.families:
                values.extend(family.compute(facts))
        except ValueError as error:
            if query_id is not None:
                error.add_note(f"for query {query_id!r}")
            raise
        # A NaN or an infinity makes the sum NaN or infinite (one C-level pass); only then is
        # each value looked at (a sum that merely overflows finds none).
        total = sum(values)
        for key, value in zip(self.keys, values, strict=True) if total - total != 0.0 else ():
            if value - value != 0.0:
                where = "" if query_id is None else f" for query {query_id!r}"
                raise ValueError(
                    f"measure {key!r}{where} came out {value!r}: the grades are too large "
                    "for its sums in floating point"
                )
        return dict(zip(self.keys, values, strict=True))

    def aggregate(self, key: str, values: Sequence[float]) -> float:
        """``report.metrics[key]`` from its per-query ``values`` (planned order)."""
        return aggregate(values, self.aggregation.get(key, "mean"))
