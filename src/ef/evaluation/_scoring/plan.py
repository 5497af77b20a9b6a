"""Planning an evaluation: which queries are scored (and which skipped, why), with what.

Pure code. The plan is made once, before anything is retrieved: it validates the judgements,
fixes the planned (qrels) order every mean is summed in, and fingerprints the inputs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence

from ef.evaluation._scoring.metrics import positive_grades
from ef.evaluation._scoring.ranked import ScoringPlan
from ef.evaluation._scoring.steps import Metric
from ef.evaluation._types import Qrels, Queries

__all__ = ["SKIP_NO_POSITIVE", "SKIP_NO_TEXT", "QueryPlan", "fingerprint"]

SKIP_NO_POSITIVE = "no positive judgement"
SKIP_NO_TEXT = "no query text"


def fingerprint(value: object) -> str:
    """A stable SHA-256 of a JSON-able value (mappings hashed with sorted keys)."""
    encoded = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(encoded.encode("utf-8")).hexdigest()


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
    ) -> None:
        self.scoring = ScoringPlan(metrics, k_values)
        self.qrels = qrels
        self.queries = queries
        self.ignore_identical_ids = ignore_identical_ids
        self.skipped: dict[str, str] = {}
        self.planned: list[str] = []
        self.positives: dict[str, list[tuple[str, float]]] = {}
        for query_id, relevant in qrels.items():
            if not isinstance(relevant, Mapping):
                raise TypeError(
                    f"the judgements of query {query_id!r} must be a mapping "
                    f"{{doc_id: grade}}, got {type(relevant).__name__}"
                )
            positives = positive_grades(relevant, query_id)
            if not positives:
                self.skipped[query_id] = SKIP_NO_POSITIVE
            elif queries is not None and query_id not in queries:
                self.skipped[query_id] = SKIP_NO_TEXT
            else:
                self.planned.append(query_id)
                self.positives[query_id] = positives
        if not self.planned:
            reasons = sorted(set(self.skipped.values())) or ["qrels is empty"]
            raise ValueError(f"no query can be scored ({'; '.join(reasons)})")
        self._fingerprints: dict[str, str] | None = None

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
