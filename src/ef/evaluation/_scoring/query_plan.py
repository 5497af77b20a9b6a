"""Planning an evaluation: which queries are scored (and which skipped, why), with what.

Pure code. The plan is made once, before anything is retrieved: it validates the judgements,
fixes the planned (qrels) order every mean is summed in, and fingerprints the inputs.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import numbers
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain
from typing import Any

import attrs

from ef.evaluation._exceptions import RelevanceLevelWarning
from ef.evaluation._scoring.aggregation import aggregate
from ef.evaluation._scoring.grades import plain_ideals, positive_grades, relevant_grades
from ef.evaluation._scoring.measures.family_scorer import FamilyScorer
from ef.evaluation._scoring.measures.gains import ndcg_cut
from ef.evaluation._scoring.measures.subtopics import SubtopicJudgements
from ef.evaluation._scoring.measures.summary import DEFAULT_JUDGING, Judging, facts_for
from ef.evaluation._scoring.metric_scorer import MetricScorer, ndcg_all
from ef.evaluation._scoring.packed_qrels import PackedQrels
from ef.evaluation._scoring.ranked import RankingSummary
from ef.evaluation._scoring.steps import Metric
from ef.evaluation._types import Qrels, Queries

__all__ = ["SKIP_NO_POSITIVE", "SKIP_NO_TEXT", "QrelsPass", "QueryPlan", "digest", "fingerprint"]

SKIP_NO_POSITIVE = "no positive judgement"
SKIP_NO_TEXT = "no query text"


def _json_number(value: object) -> int | float:
    """A number :mod:`json` cannot write (a numpy scalar grade) as the int or float it is."""
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def fingerprint(value: object) -> str:
    """A stable SHA-256 of a JSON-able value (mappings hashed with sorted keys).

    The journal's fingerprint: its format must not change, or every journal already written
    would be refused as written for other inputs.
    """
    encoded = json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=_json_number
    )
    return "sha256:" + hashlib.sha256(encoded.encode("utf-8", "surrogatepass")).hexdigest()


# marshal's version 2 writes no back-references (so the bytes never depend on which objects
# happen to be shared or interned), floats as 8 little-endian bytes, str as UTF-8: a canonical
# encoding of dicts of str and numbers, in C, several times faster than JSON (whose float repr
# alone was most of a small evaluation's fingerprint).
_MARSHAL_VERSION = 2
DIGEST_PREFIX = "sha256-m2:"


_LEAVES = frozenset({str, int, float, bool})
_STR = frozenset({str})
_DICT = frozenset({dict})


def _marshals_as_is(value: Mapping[str, Any]) -> bool:
    """Whether ``value`` is made only of the exact types marshal writes as what they are.

    marshal writes anything with a buffer (a numpy scalar among them) as raw bytes: such a
    value, and any other mapping or subclass, goes through :func:`_plain` first. The check runs
    in C-level passes over a dict of leaves or a dict of dicts of leaves.
    """
    if type(value) is not dict or not set(map(type, value)) <= _STR:
        return False
    inner = value.values()
    kinds = set(map(type, inner))
    if kinds <= _LEAVES:
        return True
    return (
        kinds == _DICT
        and set(map(type, chain.from_iterable(inner))) <= _STR
        and set(map(type, chain.from_iterable(map(dict.values, inner)))) <= _LEAVES
    )


def _plain(value: object) -> Any:
    """``value`` as the plain dicts, str, int, float and bool that marshal writes; a query's
    judgements per subtopic as they are written (:func:`_as_dict`)."""
    if isinstance(value, SubtopicJudgements):
        return _plain(_as_dict(value))
    if isinstance(value, Mapping):
        return {_plain(key): _plain(item) for key, item in value.items()}
    if type(value) in _LEAVES:
        return value
    if isinstance(value, str):
        return str.__str__(value)  # the exact str, whatever the subclass's own __str__ says
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"cannot fingerprint a {type(value).__name__}")


def digest(value: Mapping[str, Any]) -> str:
    """The manifest's fingerprint: SHA-256 of ``value`` as given, in its order.

    ``value`` is a mapping of str to str, numbers or such mappings (qrels, query texts). It is
    written in marshal format version 2 — order kept, since the order of the qrels is the order
    the means are summed in — after any other mapping, str subclass or numeric type (numpy
    scalars) is turned into the plain dict, str, int or float it stands for.

    :raises TypeError: for a value that is neither a mapping, a str nor a real number.
    """
    written: Any = value if _marshals_as_is(value) else _plain(value)
    return DIGEST_PREFIX + hashlib.sha256(marshal.dumps(written, _MARSHAL_VERSION)).hexdigest()


_KNOWN_QRELS: dict[str, dict[str, list[float]]] = {}
"""digest → query → its positive grades, descending (``grades.ideal_grades``), for the last
few plain qrels planned.

Evaluating several runs against the same judgements (a comparison, a sweep, a fusion search)
checks and sorts them once. The digest is of the marshal bytes, which tell ``int``, ``float``,
``bool`` and ``str`` apart and write anything else (a numpy scalar, a subclass) as bytes or not
at all: equal bytes are equal plain judgements, whatever object holds them. Only what the content
determines is kept, never the judgements themselves: each plan reads its own qrels. The lists
are shared between plans and never changed."""
_KNOWN_QRELS_KEPT = 4


QrelsPass = Callable[[Any], "tuple[bytes, dict[str, list[float]]] | None"]
"""A plugin's compiled first pass over plain qrels (hook ``ef_evaluation_qrels_pass``):
``(marshal.dumps(qrels, 2), plain_ideals(qrels))`` in one walk, or ``None`` when it declines."""


def _known_plain(
    qrels: Qrels, qrels_pass: QrelsPass | None = None
) -> tuple[str | None, dict[str, list[float]] | None]:
    """The manifest's digest of ``qrels`` and each query's positive grades, descending, when
    ``qrels`` is plain (:func:`~ef.evaluation._scoring.grades.plain_ideals`); ``(None,
    None)`` otherwise: the caller then checks every judgement the careful way and digests
    through :func:`digest`.

    ``qrels_pass``, when given and when it takes ``qrels``, gives both the digest's bytes and
    the grades in one walk; otherwise marshal and :func:`plain_ideals` do it, each in its own.
    """
    value: Any = qrels
    if isinstance(value, PackedQrels):  # plain by construction: digested piece by piece
        hashed = hashlib.sha256()
        for piece in value.marshalled(_MARSHAL_VERSION):
            hashed.update(piece)
        qrels_digest = DIGEST_PREFIX + hashed.hexdigest()
        known = _KNOWN_QRELS.get(qrels_digest)
        return qrels_digest, _keep_known(qrels_digest, value.ideals()) if known is None else known
    passed = qrels_pass(value) if qrels_pass is not None else None
    if passed is not None:
        written, ideals = passed
    else:
        ideals = None
        try:
            written = marshal.dumps(value, _MARSHAL_VERSION)
        except (ValueError, TypeError):  # not a dict, or something marshal cannot write
            return None, None
    qrels_digest = DIGEST_PREFIX + hashlib.sha256(written).hexdigest()
    known = _KNOWN_QRELS.get(qrels_digest)
    if known is not None:
        return qrels_digest, known
    known = plain_ideals(qrels) if ideals is None else ideals
    if known is None:
        return None, None
    return qrels_digest, _keep_known(qrels_digest, known)


def _keep_known(qrels_digest: str, known: dict[str, list[float]]) -> dict[str, list[float]]:
    """Keep ``known`` as the grades of the qrels digested as ``qrels_digest``; return it."""
    while len(_KNOWN_QRELS) >= _KNOWN_QRELS_KEPT:  # the oldest goes (another thread's too)
        _KNOWN_QRELS.pop(next(iter(_KNOWN_QRELS), ""), None)
    _KNOWN_QRELS[qrels_digest] = known
    return known


class _PositivesOnDemand(dict[str, list[tuple[str, float]]]):
    """Each planned query's positive ``(doc_id, grade)`` pairs of checked plain judgements, made
    each time they are asked for and never kept: scoring a ranking with the built-in metrics
    reads the judgements themselves (:func:`~ef.evaluation._scoring.ranked.summarize`), so most
    queries never need them, and a query scored from its ``{doc_id: score}`` asks once (kept,
    the pairs of a million queries would hold ~150 MB until the evaluation ends)."""

    __slots__ = ("_qrels",)

    def __init__(self, qrels: Qrels) -> None:
        super().__init__()
        self._qrels = qrels

    def __missing__(self, query_id: str) -> list[tuple[str, float]]:
        return relevant_grades(self._qrels[query_id])


def _ndcg_ignoring_level(summary: RankingSummary, ks: Sequence[int]) -> list[float]:
    """ef's ndcg@k at a relevance level: trec_eval's ndcg_cut, which ignores the level."""
    return ndcg_cut(facts_for(summary), ks)


def _at_level(metric: Metric) -> Metric:
    # The facts' positions are the relevant ids at the level, which nDCG must not be limited to.
    if metric.all_cutoffs is ndcg_all:
        return attrs.evolve(metric, all_cutoffs=_ndcg_ignoring_level)  # type: ignore[misc]
    return metric


def _as_dict(judged: Mapping[str, float]) -> dict[str, Any]:
    """``judged`` as the ``dict`` that :mod:`json` needs; a dict already is not copied.

    A query's judgements per subtopic are their ``{doc_id: {subtopic: grade}}``: two diversity
    qrels that differ only in their subtopics fingerprint differently.
    """
    if isinstance(judged, SubtopicJudgements):
        return judged.by_doc
    return judged if isinstance(judged, dict) else dict(judged)


def _warn_below_level(query_ids: list[str], planned: int, level: int | None) -> None:
    shown = ", ".join(map(repr, query_ids[:5])) + (" …" if len(query_ids) > 5 else "")
    warnings.warn(
        RelevanceLevelWarning(
            f"{len(query_ids)} of {planned} judged queries have no grade >= relevance_level "
            f"{level} ({shown}): they are scored as trec_eval scores them, 0 for every measure "
            "that reads the level (nDCG, which ignores it, is not 0)"
        ),
        stacklevel=4,
    )


class QueryPlan:
    """Which queries an evaluation scores, in which order, with which metrics and cutoffs.

    :param qrels: the judgements; their order is the planned order.
    :param queries: query texts; ``None`` when rankings come from a run (no texts needed).
    :param metrics: the metrics (looked up in the registry by the caller), in report order.
    :param k_values: cutoffs.
    :param ignore_identical_ids: drop a doc whose id is the query's own id from each ranking.
    :param judging: the relevance level and ``judged_only`` (trec_eval ``-l``, ``-J``). A query
        with a positive grade but nothing relevant at the level is scored, as trec_eval scores
        it, with a :class:`~ef.evaluation.RelevanceLevelWarning` naming it.
    :param qrels_pass: a plugin's compiled first pass over plain qrels, if any.
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
        qrels_pass: QrelsPass | None = None,
    ) -> None:
        families = [f for m in metrics if (f := getattr(m, "family", None)) is not None]
        core = [m for m in metrics if getattr(m, "family", None) is None]
        if judging.relevance_level is not None:
            core = [_at_level(metric) for metric in core]
        self.scoring = MetricScorer(core, k_values)
        self.judging = judging
        # The facts are built per query only when a trec_eval measure or an option needs them.
        self.measures: FamilyScorer | None = (
            FamilyScorer(families, judging) if families or not judging.is_default else None
        )
        # A name with an explicit cutoff (ndcg@10) may name a key k_values gives already: once.
        self.keys: list[str] = list(
            dict.fromkeys([*self.scoring.keys, *(self.measures.keys if self.measures else ())])
        )
        relevant = judging.relevant
        self.qrels = qrels
        self.queries = queries
        self.ignore_identical_ids = ignore_identical_ids
        self.skipped: dict[str, str] = {}
        self.planned: list[str] = []
        self.below_level: list[str] = []
        self._qrels_digest, known = _known_plain(qrels, qrels_pass)
        self.plain = known is not None
        self.ideals: dict[str, list[float]] = known or {}
        if known is not None:
            self.positives: dict[str, list[tuple[str, float]]] = _PositivesOnDemand(qrels)
            self._plan_plain(known, relevant)
        else:
            self.positives = {}
            self._plan_checked(qrels, relevant)
        if self.below_level:
            _warn_below_level(self.below_level, len(self.planned), judging.relevance_level)
        if not self.planned:
            reasons = sorted(set(self.skipped.values())) or ["qrels is empty"]
            raise ValueError(f"no query can be scored ({'; '.join(reasons)})")
        self._fingerprints: dict[str, str] | None = None
        self._digests: dict[str, str] | None = None

    def _plan_plain(
        self, ideals: dict[str, list[float]], relevant: Callable[[float], bool]
    ) -> None:
        """Plan checked plain judgements from each query's positive grades, descending."""
        queries, skipped, planned = self.queries, self.skipped, self.planned
        default = self.judging.relevance_level is None
        for query_id, ideal in ideals.items():
            if not ideal:
                skipped[query_id] = SKIP_NO_POSITIVE
            elif queries is not None and query_id not in queries:
                skipped[query_id] = SKIP_NO_TEXT
            else:
                planned.append(query_id)
                # Relevance only rises with the grade: the largest grade tells.
                if not (default or relevant(ideal[0])):
                    self.below_level.append(query_id)

    def _plan_checked(self, qrels: Qrels, relevant: Callable[[float], bool]) -> None:
        """Plan any other judgements, checking each query's on the way."""
        queries, any_positive = self.queries, self.judging.relevance_level is None
        for query_id, judged in qrels.items():
            if not isinstance(judged, Mapping):
                raise TypeError(
                    f"the judgements of query {query_id!r} must be a mapping "
                    f"{{doc_id: grade}}, got {type(judged).__name__}"
                )
            positives = positive_grades(judged, query_id)
            if not positives:
                self.skipped[query_id] = SKIP_NO_POSITIVE
            elif queries is not None and query_id not in queries:
                self.skipped[query_id] = SKIP_NO_TEXT
            else:
                self.planned.append(query_id)
                self.positives[query_id] = positives
                if not (any_positive or any(relevant(g) for _, g in positives)):
                    self.below_level.append(query_id)

    def aggregate(self, key: str, values: Sequence[float]) -> float:
        """``report.metrics[key]`` from the per-query values: a plain mean, except trec_eval's
        own aggregates (``gm_map``, ``gm_bpref``, the ``num_*`` counts)."""
        if self.measures is not None:
            return self.measures.aggregate(key, values)
        return aggregate(values, "mean")

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
        """The largest cutoff: of ``k_values``, or of a name with its own (``nDCG@1000``), so a
        retriever is asked for every document a measure reads."""
        depths = [f.depth for f in self.measures.families if f.depth] if self.measures else []
        return max([self.scoring.k_values[-1], *depths])

    def digests(self) -> dict[str, str]:
        """The manifest's fingerprints (:func:`digest`) of the qrels and, when given, of the
        planned queries' texts."""
        if self._digests is None:
            self._digests = {"qrels": self._qrels_digest or digest(self.qrels)}
            if self.queries is not None:
                queries = self.queries
                self._digests["queries"] = digest({q: queries[q] for q in self.planned})
        return self._digests

    def fingerprints(self) -> dict[str, str]:
        """The journal's fingerprints (:func:`fingerprint`) of the qrels and, when given, of the
        planned queries' texts."""
        if self._fingerprints is None:
            self._fingerprints = {
                "qrels": fingerprint({q: _as_dict(judged) for q, judged in self.qrels.items()})
            }
            if self.queries is not None:
                queries = self.queries
                self._fingerprints["queries"] = fingerprint({q: queries[q] for q in self.planned})
        return self._fingerprints
