"""Planning an evaluation: which queries are scored (and which skipped, why), with what.

Pure code. The plan is made once, before anything is retrieved: it validates the judgements,
fixes the planned (qrels) order every mean is summed in, and fingerprints the inputs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from ef.evaluation._scoring.measures.gains import ndcg_cut
from ef.evaluation._scoring.measures.plan import MeasurePlan
from ef.evaluation._scoring.measures.summary import DEFAULT_JUDGING, Judging, facts_for
from ef.evaluation._scoring.metrics import positive_grades
from ef.evaluation._scoring.ranked import RankingSummary, ScoringPlan, ndcg_all
from ef.evaluation._scoring.steps import Metric
from ef.evaluation._types import Qrels, Queries

__all__ = ["SKIP_NO_POSITIVE", "SKIP_NO_TEXT", "QueryPlan", "fingerprint"]

SKIP_NO_POSITIVE = "no positive judgement"
SKIP_NO_TEXT = "no query text"


def fingerprint(value: object) -> str:
    """A stable SHA-256 of a JSON-able value (mappings hashed with sorted keys)."""
    encoded = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def _ndcg_ignoring_level(summary: RankingSummary, ks: Sequence[int]) -> list[float]:
    """ef's ndcg@k at a relevance level: trec_eval's ndcg_cut, which ignores the level."""
    return ndcg_cut(facts_for(summary), ks)


def _at_level(metric: Metric) -> Metric:
    # The facts' positions are the relevant ids at the level, which nDCG must not be limited to.
    if metric.all_cutoffs is ndcg_all:
        return attrs.evolve(metric, all_cutoffs=_ndcg_ignoring_level)  # type: ignore[misc]
    return metric


def _as_dict(judged: Mapping[str, float]) -> dict[str, float]:
    """``judged`` as the ``dict`` that :mod:`json` needs; a dict already is not copied."""
    return judged if isinstance(judged, dict) else dict(judged)


class QueryPlan:
    """Which queries an evaluation scores, in which order, with which metrics and cutoffs.

    :param qrels: the judgements; their order is the planned order.
    :param queries: query texts; ``None`` when rankings come from a run (no texts needed).
    :param metrics: the metrics (looked up in the registry by the caller), in report order.
    :param k_values: cutoffs.
    :param ignore_identical_ids: drop a doc whose id is the query's own id from each ranking.
    :param judging: the relevance level and ``judged_only`` (trec_eval ``-l``, ``-J``). A query
        with nothing relevant at the level is skipped.
    :raises ValueError: for a bad cutoff, a NaN or infinite grade (naming the query and the
        doc), or when no query can be scored.
    :raises TypeError: for judgements that are not a mapping, a grade that is not a number, or
        a doc id that is not a string.
    """

    def __init__(
        self,
        qrels: Qrels,
        queries: Queries | None,
        *,
        metrics: Sequence[Metric],
        k_values: Iterable[int],
        ignore_identical_ids: bool = False,
        judging: Judging = DEFAULT_JUDGING,
    ) -> None:
        families = [f for m in metrics if (f := getattr(m, "family", None)) is not None]
        core = [m for m in metrics if getattr(m, "family", None) is None]
        if judging.relevance_level is not None:
            core = [_at_level(metric) for metric in core]
        self.scoring = ScoringPlan(core, k_values)
        self.judging = judging
        # The facts are built per query only when a trec_eval measure or an option needs them.
        self.measures: MeasurePlan | None = (
            MeasurePlan(families, judging) if families or not judging.is_default else None
        )
        self.keys: list[str] = [*self.scoring.keys, *(self.measures.keys if self.measures else ())]
        relevant = judging.relevant
        no_relevant = (
            SKIP_NO_POSITIVE
            if judging.relevance_level is None
            else f"no judgement at relevance level {judging.relevance_level}"
        )
        self.qrels = qrels
        self.queries = queries
        self.ignore_identical_ids = ignore_identical_ids
        self.skipped: dict[str, str] = {}
        self.planned: list[str] = []
        self.positives: dict[str, list[tuple[str, float]]] = {}
        for query_id, judged in qrels.items():
            if not isinstance(judged, Mapping):
                raise TypeError(
                    f"the judgements of query {query_id!r} must be a mapping "
                    f"{{doc_id: grade}}, got {type(judged).__name__}"
                )
            positives = positive_grades(judged, query_id)
            if not any(relevant(grade) for _, grade in positives):
                self.skipped[query_id] = no_relevant
            elif queries is not None and query_id not in queries:
                self.skipped[query_id] = SKIP_NO_TEXT
            else:
                self.planned.append(query_id)
                self.positives[query_id] = positives
        if not self.planned:
            reasons = sorted(set(self.skipped.values())) or ["qrels is empty"]
            raise ValueError(f"no query can be scored ({'; '.join(reasons)})")
        self._fingerprints: dict[str, str] | None = None

    def aggregate(self, key: str, values: Sequence[float]) -> float:
        """``report.metrics[key]`` from the per-query values: a plain mean, except trec_eval's
        own aggregates (``gm_map``, ``gm_bpref``, the ``num_*`` counts)."""
        if self.measures is not None:
            return self.measures.aggregate(key, values)
        return MeasurePlan.mean(values)

    def parameters(self) -> dict[str, Any]:
        """The judging options, for the manifest (only when set, so old manifests stay put)."""
        if self.judging.is_default:
            return {}
        return {
            "relevance_level": self.judging.relevance_level,
            "judged_only": self.judging.judged_only,
        }

    @property
    def max_k(self) -> int:
        """The largest cutoff."""
        return self.scoring.k_values[-1]

    def fingerprints(self) -> dict[str, str]:
        """Fingerprints of the qrels and, when given, of the planned queries' texts."""
        if self._fingerprints is None:
            self._fingerprints = {
                "qrels": fingerprint({q: _as_dict(judged) for q, judged in self.qrels.items()})
            }
            if self.queries is not None:
                queries = self.queries
                self._fingerprints["queries"] = fingerprint({q: queries[q] for q in self.planned})
        return self._fingerprints
