"""The canonical measures every notation resolves to, with their parameters and sources.

A notation (``nDCG@10``, ``ndcg_cut.10``, ``ndcg_cut_10``, ``ndcg@10``) names a
:class:`Canon` at a cutoff with parameters: a :class:`Measure`. Two spellings of one measure are
equal :class:`Measure` values, so an evaluation computes each measure once, whatever the spelling.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs

from ef.evaluation._scoring.aggregation import Aggregation
from ef.evaluation._scoring.domains import CUTOFF, Domain, choice, integer, number
from ef.evaluation._scoring.measures import (
    beyond,
    compat,
    cut,
    cwl,
    diversity,
    gains,
    incomplete,
    sets,
    uncut,
)
from ef.evaluation._scoring.measures.param_domains import FLAG, GAINS
from ef.evaluation._scoring.measures.summary import QueryFacts, at_level
from ef.evaluation._scoring.measures.views import judged_only_view, regraded

__all__ = ["CANON", "Canon", "Measure", "Param"]

Compute = Callable[[QueryFacts, Any, Mapping[str, Any]], float]


@attrs.frozen
class Param:
    """A parameter a canonical measure takes in ``Name(param=value)``.

    :ivar name: as written, ``rel``, ``p``, ``dcg``.
    :ivar domain: the values it takes.
    :ivar default: the value when not written; ``None``: the evaluation's own relevance rule.
    :ivar description: one line.
    """

    name: str
    domain: Domain
    default: Any = None
    description: str = ""


REL = Param("rel", integer(1), description="the smallest grade counted relevant")
P_PERSISTENCE = Param(
    "p", number(0, 1, low_open=True, high_open=True), 0.8, description="the user's persistence"
)
DCG = Param(
    "dcg",
    choice("log2", "exp-log2"),
    "log2",
    "gain: the grade (log2) or 2**grade - 1 (exp-log2)",
)
JUDGED = Param(
    "judged_only", FLAG, False, "rank only the judged documents for this measure (trec_eval -J)"
)
GAIN_TABLE = Param("gains", GAINS, None, "the gain of each grade; other grades keep their value")
ERR_MAX = Param("max_rel", integer(1, 1000), 4, "the largest grade: 2**max_rel scales ERR's grades")
ALPHA = Param("alpha", number(0, 1), 0.5, "redundancy intolerance: novelty discount per repeat")
BETA = Param("beta", number(0, 1), 0.5, "patience: NRBP's decay per rank")
RECALL_LEVEL = number(0, 1)
"""IPrec's cutoff: a recall level (trec_eval's ``iprec_at_recall`` reads levels in [0, 1])."""
R_MULTIPLE = number(0)
"""Rprec_mult's cutoff: a multiple of R."""
MIN_REL = Param("min_rel", integer(0), 0, "the grade that gains nothing: grades at or below it")
MAX_REL = Param(
    "max_rel", integer(1), 1, "the scale's largest grade, full gain (ir_measures requires it)"
)
GOAL = Param("T", number(0, low_open=True), 1.0, "the gain the user wants (in full-gain documents)")
NERR_P = Param(
    "p", number(0, 1, low_open=True), 0.9, "the user's persistence, before gain stops them"
)
SDCG_DCG = Param("dcg", choice("log2"), "log2", "the discount: log2(rank + 1)")
COMPAT_P = Param("p", number(0, 1, low_open=True), 0.95, "the persistence of the overlap's weights")
NORMALIZE = Param("normalize", FLAG, True, "divide by the ideal ranking's own overlap")


@attrs.frozen
class Canon:
    """One measure, whatever its spelling.

    :ivar name: its canonical (ir_measures-style) name.
    :ivar compute: ``compute(facts, cutoff, params) -> value`` for one query.
    :ivar cutoff: whether ``@cutoff`` is ``required``, ``optional`` or ``none``.
    :ivar params: the parameters it takes.
    :ivar cutoff_domain: the values its cutoff takes: a rank (:data:`CUTOFF`), or a fraction
        (a recall level, a multiple of R).
    :ivar cutoff_name: what its cutoff is called in errors: ``cutoff``, ``recall level`` …
    :ivar aggregation: how its values aggregate over queries.
    :ivar source: its source of truth.
    :ivar description: one line on what it measures.
    :ivar notations: examples of how it is written.
    :ivar check: what its parameters must satisfy together: ``check(params)`` gives the problem
        in words, or ``None``.
    """

    name: str
    compute: Compute
    cutoff: Literal["required", "optional", "none"]
    params: tuple[Param, ...] = ()
    cutoff_domain: Domain = CUTOFF
    cutoff_name: str = "cutoff"
    aggregation: Aggregation = "mean"
    source: str = ""
    description: str = ""
    notations: tuple[str, ...] = ()
    check: Callable[[Mapping[str, Any]], str | None] | None = attrs.field(
        default=None, kw_only=True
    )

    @property
    def fraction(self) -> bool:
        """Whether the cutoff is a fraction (a recall level, a multiple of R), not a rank."""
        return self.cutoff_domain.kind == "number"


@attrs.frozen
class Measure:
    """A canonical measure at a cutoff, with every parameter's value (defaults filled in).

    :ivar canon: the canonical measure's name.
    :ivar cutoff: the rank cutoff or fraction, ``None`` for the whole ranking.
    :ivar params: ``(name, value)`` of every parameter, in the canon's order.
    """

    canon: str
    cutoff: int | float | None
    params: tuple[tuple[str, Any], ...]

    def compute(self, facts: QueryFacts) -> float:
        """The measure's value for one query's facts."""
        params = dict(self.params)
        if params.get("judged_only"):
            facts = judged_only_view(facts)
        level = params.get("rel")
        if level is not None:
            facts = at_level(facts, level)
        return CANON[self.canon].compute(facts, self.cutoff, params)


def _rel(fn: Callable[[QueryFacts, Any], float]) -> Compute:
    return lambda facts, k, params: fn(facts, k)


def _one(fn: Callable[..., list[float]]) -> Compute:
    """A trec_eval family's function at one cutoff (or of none)."""
    return lambda facts, k, params: fn(facts, [k])[0] if k is not None else fn(facts)[0]


def _either(uncut_fn: Callable[..., list[float]], cut_fn: Callable[..., list[float]]) -> Compute:
    return lambda facts, k, params: uncut_fn(facts)[0] if k is None else cut_fn(facts, [k])[0]


def _ndcg(facts: QueryFacts, k: int | None, params: Mapping[str, Any]) -> float:
    if params.get("gains") is not None:
        facts = regraded(facts, params["gains"])
    if params["dcg"] == "exp-log2":
        return beyond.ndcg_exp(facts, k)
    return gains.ndcg(facts)[0] if k is None else gains.ndcg_cut(facts, [k])[0]


def _c(
    name: str,
    compute: Compute,
    cutoff: Literal["required", "optional", "none"],
    params: tuple[Param, ...],
    source: str,
    description: str,
    notations: tuple[str, ...],
    **more: Any,
) -> Canon:
    return Canon(name, compute, cutoff, params, source=source, description=description,
                 notations=notations, **more)  # fmt: skip


def _scale(params: Mapping[str, Any]) -> str | None:
    if params["min_rel"] >= params["max_rel"]:
        return f"min_rel ({params['min_rel']}) must be less than max_rel ({params['max_rel']})"
    return None


def _cwl(fn: Callable[..., float], *names: str) -> Compute:
    """A C/W/L measure, with its cutoff (if it takes one) and ``names`` then its scale."""
    return lambda facts, k, params: fn(
        facts,
        *(() if k is None else (k,)),
        *(params[name] for name in names),
        params["min_rel"],
        params["max_rel"],
    )


_TREC = "trec_eval"
_NDEVAL = "ndeval (ir_measures' pyndeval provider)"
_CWL = "cwl_eval (ir_measures' cwl_eval provider)"
_SCALE = (MIN_REL, MAX_REL)
CANON: dict[str, Canon] = {
    canon.name: canon
    for canon in (
        _c("P", _one(cut.precision), "required", (REL, JUDGED), _TREC + " m_P.c",
           "relevant documents in the top k, divided by k",
           ("P@10", "P(rel=2)@5", "P.10", "P_10", "precision@10", "P.5,10,20",
            "P(judged_only=True)@5")),
        _c("R", _one(cut.recall), "required", (REL, JUDGED), _TREC + " m_recall.c",
           "relevant documents in the top k, divided by R",
           ("R@100", "recall.100", "recall_100", "recall@100", "Recall@100")),
        _c("R_cap", _one(cut.relative_precision), "required", (REL,),
           "BEIR recall_cap (trec_eval m_rel_P.c)",
           "relevant documents in the top k, divided by min(k, R)",
           ("R_cap@10", "relative_P.10", "relative_P_10")),
        _c("Success", _one(cut.success), "required", (REL, JUDGED), _TREC + " m_success.c",
           "1 if a relevant document is in the top k, else 0",
           ("Success@1", "success.1", "success_1", "hit_rate@1", "Accuracy@1")),
        _c("AP", _either(uncut.average_precision, cut.average_precision_cut), "optional",
           (REL, JUDGED), _TREC + " m_map.c, m_map_cut.c",
           "average precision (over the top k), divided by R",
           ("AP", "AP(rel=2)", "AP@10", "map_cut.10", "map_cut_10", "map@10", "MAP@10")),
        _c("RR", lambda f, k, p: uncut.reciprocal_rank(f)[0] if k is None
           else beyond.reciprocal_rank_at(f, k), "optional", (REL, JUDGED),
           _TREC + " m_recip_rank.c", "1 / rank of the first relevant document (within k)",
           ("RR", "RR@10", "mrr@10", "MRR@10")),
        _c("nDCG", _ndcg, "optional", (DCG, GAIN_TABLE, JUDGED),
           "trec_eval m_ndcg.c, m_ndcg_cut.c; exp-log2: ranx ndcg_burges, gdeval; "
           "gains: ir_measures",
           "normalised discounted cumulative gain (of the top k)",
           ("nDCG", "nDCG@10", "ndcg_cut.10", "ndcg_cut_10", "ndcg_cut.10,100", "ndcg@10",
            "NDCG@10", "nDCG(dcg='exp-log2')@10", "ndcg_burges@10",
            "nDCG(gains={0: 0, 1: 1, 2: 3})@10", "nDCG(judged_only=True)@10")),
        _c("Rprec", _one(uncut.r_precision), "none", (REL, JUDGED), _TREC + " m_Rprec.c",
           "relevant documents in the top R, divided by R", ("Rprec",)),
        _c("Bpref", _one(incomplete.bpref), "none", (REL,), _TREC + " m_bpref.c",
           "binary preference: relevant documents above judged non-relevant ones",
           ("Bpref", "bpref")),
        _c("infAP", _one(incomplete.inferred_average_precision), "none", (REL,),
           _TREC + " m_infAP.c", "inferred average precision", ("infAP",)),
        _c("Judged", _rel(beyond.judged_share), "optional", (), "ir_measures Judged",
           "judged documents in the top k, divided by min(k, retrieved)", ("Judged@10",)),
        _c("ERR", lambda f, k, p: beyond.err(f, k, p["max_rel"]), "required", (ERR_MAX,),
           "gdeval (ir_measures' gdeval provider)",
           "expected reciprocal rank, grades 0 to max_rel scaled by 2**max_rel (gdeval: 4)",
           ("ERR@20", "ERR(max_rel=3)@20")),
        _c("RBP", lambda f, k, p: beyond.rbp(f, p["p"], k), "optional", (REL, P_PERSISTENCE),
           "cwl_eval (Moffat and Zobel, TOIS 2008)",
           "rank-biased precision, binary relevance", ("RBP", "RBP(rel=1,p=0.8)")),
        _c("RBP_residual", lambda f, k, p: beyond.rbp_residual(f, p["p"], k), "optional",
           (REL, P_PERSISTENCE), "Moffat and Zobel, TOIS 2008",
           "RBP's residual: the weight of the unjudged ranks and of the tail",
           ("RBP_residual(p=0.8)",)),
        _c("F1", _rel(beyond.f1), "required", (REL,), "ranx f1",
           "harmonic mean of precision@k and recall@k", ("F1@10", "f1@10")),
        _c("Hits", _rel(beyond.hits), "required", (REL,), "ranx hits",
           "relevant documents in the top k", ("Hits@10", "hits@10")),
        _c("Unjudged", _rel(beyond.unjudged), "required", (),
           "ef (BEIR's Hole, per query: BEIR pools judgements across queries)",
           "documents in the top k without a judgement for the query, divided by k",
           ("Unjudged@10",)),
        _c("SetP", _one(sets.set_precision), "none", (REL, JUDGED), _TREC + " m_set_P.c",
           "relevant retrieved / retrieved", ("SetP", "set_P")),
        _c("SetR", _one(sets.set_recall), "none", (REL,), _TREC + " m_set_recall.c",
           "relevant retrieved / R", ("SetR", "set_recall")),
        _c("SetF", _one(sets.set_f), "none", (REL, JUDGED), _TREC + " m_set_F.c",
           "harmonic mean of set precision and set recall", ("SetF", "set_F")),
        _c("SetAP", _one(sets.set_average_precision), "none", (REL, JUDGED), _TREC + " m_set_map.c",
           "set precision times set recall", ("SetAP", "set_map")),
        _c("NumRelRet", _one(sets.num_rel_ret), "none", (REL,), _TREC + " m_num_rel_ret.c",
           "relevant documents retrieved (summed)", ("NumRelRet", "num_rel_ret"),
           aggregation="sum"),
        _c("NumRel", _one(sets.num_rel), "none", (REL,), _TREC + " m_num_rel.c",
           "relevant documents (summed)", ("NumRel", "num_rel"), aggregation="sum"),
        _c("NumRet", _one(sets.num_ret), "none", (), _TREC + " m_num_ret.c",
           "documents retrieved (summed)", ("NumRet", "num_ret"), aggregation="sum"),
        _c("NumQ", _one(sets.num_q), "none", (), _TREC + " m_num_q.c",
           "queries scored (summed)", ("NumQ", "num_q"), aggregation="sum"),
        _c("alpha_nDCG", lambda f, k, p: diversity.alpha_ndcg(f, k, p["alpha"]), "required",
           (REL, ALPHA, JUDGED), _NDEVAL, "novelty-discounted DCG over that of the ideal ranking",
           ("alpha_nDCG@10", "alpha-nDCG@20", "alpha_nDCG(alpha=0.25)@10")),
        _c("alpha_DCG", lambda f, k, p: diversity.alpha_dcg(f, k, p["alpha"]), "required",
           (REL, ALPHA, JUDGED), _NDEVAL, "novelty-discounted DCG, normalised by ndeval's "
           "every-subtopic-at-every-rank ranking", ("alpha_DCG@10", "alpha-DCG@20")),
        _c("ERR_IA", lambda f, k, p: diversity.err_ia(f, k, p["alpha"]), "required",
           (REL, ALPHA, JUDGED), _NDEVAL, "intent-aware expected reciprocal rank, normalised "
           "as alpha_DCG", ("ERR_IA@20", "ERR-IA@20")),
        _c("nERR_IA", lambda f, k, p: diversity.nerr_ia(f, k, p["alpha"]), "required",
           (REL, ALPHA, JUDGED), _NDEVAL, "intent-aware ERR over that of the ideal ranking",
           ("nERR_IA@20", "nERR-IA@20")),
        _c("NRBP", lambda f, k, p: diversity.nrbp(f, p["alpha"], p["beta"]), "none",
           (REL, ALPHA, BETA), _NDEVAL, "novelty- and rank-biased precision",
           ("NRBP", "NRBP(alpha=0.5,beta=0.8)")),
        _c("nNRBP", lambda f, k, p: diversity.nnrbp(f, p["alpha"], p["beta"]), "none",
           (REL, ALPHA, BETA), _NDEVAL, "NRBP over that of the ideal ranking", ("nNRBP",)),
        _c("P_IA", lambda f, k, p: diversity.p_ia(f, k), "required", (REL, JUDGED), _NDEVAL,
           "intent-aware precision: subtopic relevances in the top k, over k times subtopics",
           ("P_IA@10", "P-IA@10")),
        _c("StRecall", lambda f, k, p: diversity.subtopic_recall(f, k), "required", (REL,),
           _NDEVAL, "subtopic recall: subtopics covered in the top k, over subtopics",
           ("StRecall@10", "strec@10", "S-recall@10")),
        _c("AP_IA", lambda f, k, p: diversity.ap_ia(f), "none", (REL, JUDGED), _NDEVAL,
           "intent-aware average precision: AP per subtopic, averaged",
           ("AP_IA", "MAP-IA", "MAP_IA")),
        _c("NERR8", _cwl(cwl.nerr8), "required", _SCALE, _CWL + ", Eq. 8 of Azzopardi et al. "
           "ICTIR 2021", "ERR as a C/W/L measure: stopping on gain, truncated at k",
           ("NERR8@10", "NERR8(max_rel=3)@10"), check=_scale),
        _c("NERR9", _cwl(cwl.nerr9), "required", _SCALE, _CWL + ", Eq. 9",
           "ERR as a C/W/L measure: stopping on gain and with rank, truncated at k",
           ("NERR9@10", "NERR9(min_rel=1,max_rel=3)@10"), check=_scale),
        _c("NERR10", _cwl(cwl.nerr10, "p"), "none", (NERR_P, *_SCALE), _CWL + ", Eq. 10",
           "ERR as a C/W/L measure: stopping on gain, RBP's persistence p",
           ("NERR10", "NERR10(p=0.8,max_rel=3)"), check=_scale),
        _c("NERR11", _cwl(cwl.nerr11, "T"), "none", (GOAL, *_SCALE), _CWL + ", Eq. 11",
           "ERR as a C/W/L measure: stopping on gain, INSQ's goal T",
           ("NERR11", "NERR11(T=2,max_rel=3)"), check=_scale),
        _c("INST", _cwl(cwl.inst, "T"), "none", (GOAL, *_SCALE), _CWL + " (Moffat et al. 2015)",
           "a user who wants T units of gain and reads on less as they gather it",
           ("INST", "INST(T=1)", "INST(T=2,max_rel=3)"), check=_scale),
        _c("INSQ", _cwl(cwl.insq, "T"), "none", (GOAL, *_SCALE), _CWL + " (Moffat et al. 2012)",
           "a user who expects to want T units of gain, whatever they find",
           ("INSQ", "INSQ(T=2,max_rel=3)"), check=_scale),
        _c("BPM", _cwl(cwl.bpm, "T"), "required", (GOAL, *_SCALE),
           _CWL + " (static BPM, Zhang et al. 2017)",
           "a user who stops at T units of gain or k documents, whichever comes first",
           ("BPM@20", "BPM(T=1)@20", "BPM(T=2,max_rel=3)@10"), check=_scale),
        _c("SDCG", _cwl(cwl.sdcg), "required", (SDCG_DCG, *_SCALE), _CWL,
           "DCG of the top k over that of k documents of full gain",
           ("SDCG@10", "SDCG(max_rel=3)@10"), check=_scale),
        _c("Compat", lambda f, k, p: compat.compatibility(f, p["p"], p["normalize"]), "none",
           (COMPAT_P, NORMALIZE), "ir_measures' compat provider (Clarke et al., TOIS 2021)",
           "rank-biased overlap with the ideal ranking closest to the ranking",
           ("Compat", "Compat(p=0.8)", "Compat(p=0.9,normalize=False)")),
        _c("IPrec", _one(uncut.iprec_at_recall), "required", (REL, JUDGED),
           _TREC + " m_iprec_at_recall.c", "interpolated precision at a recall level",
           ("IPrec@0.1", "iprec_at_recall.0.10", "iprec_at_recall_0.10"),
           cutoff_domain=RECALL_LEVEL, cutoff_name="recall level"),
        _c("Rprec_mult", _one(uncut.r_precision_multiples), "required", (REL,),
           _TREC + " m_Rprec_mult.c", "precision at a multiple of R",
           ("Rprec_mult.0.20", "Rprec_mult_0.20"), cutoff_domain=R_MULTIPLE,
           cutoff_name="multiple of R"),
    )
}  # fmt: skip
"""Every canonical measure, by name."""
