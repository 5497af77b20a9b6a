"""Every alias of the notation table names the right measure, checked by value against
pytrec_eval on a generated run where the measures all differ: pointing ``MRR@10`` at AP, or
``Recall@100`` at precision, fails here.

Each row is a name as people write it and the pytrec_eval value it must equal, per query: a
measure of pytrec_eval (on the run cut at ``k`` where trec_eval has no cutoff for it, such as
``recip_rank`` for ``MRR@10``), or one built from pytrec_eval's (F1 and hits from P and recall,
exponential-gain nDCG as trec_eval's nDCG of the gains ``2**grade - 1``). The measures beyond
trec_eval (Judged, ERR, RBP, Unjudged) are checked against their own sources in
``tests/test_measures_beyond.py``.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
import pytrec_eval

from ef.evaluation import evaluate_run
from ef.evaluation._scoring import notation

Values = dict[str, float]


def _generated() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Forty queries, grades 0-3 with some judged non-relevant, every query with a relevant
    document; runs of 3-150 documents with distinct scores, unjudged ones among them."""
    rng = random.Random(33)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(40):
        docs = [f"q{q}d{i}" for i in range(200)]
        judged = rng.sample(docs, rng.randint(3, 25))
        grades = {doc: rng.choice((0, 0, 1, 1, 2, 3)) for doc in judged}
        grades[judged[0]] = rng.randint(1, 3)
        qrels[str(q)] = grades
        ranked = rng.sample(docs, rng.randint(3, 150))
        run[str(q)] = {doc: 1000.0 - i - rng.random() / 2 for i, doc in enumerate(ranked)}
    return qrels, run


QRELS, RUN = _generated()


def _trec(key: str, cut: int | None = None, level: int = 1, exp_gain: bool = False) -> Values:
    measure = key.rsplit("_", 1)[0] if key[-1].isdigit() else key
    qrels = (
        {q: {d: 2**g - 1 for d, g in judged.items()} for q, judged in QRELS.items()}
        if exp_gain
        else QRELS
    )
    run = RUN if cut is None else {q: dict(list(scores.items())[:cut]) for q, scores in RUN.items()}
    parameter = key[len(measure) + 1 :]
    asked = f"{measure}.{parameter}" if parameter else measure
    evaluated = pytrec_eval.RelevanceEvaluator(qrels, {asked}, relevance_level=level).evaluate(run)
    return {q: values[key] for q, values in evaluated.items()}


def _f1(k: int) -> Values:
    p, r = _trec(f"P_{k}"), _trec(f"recall_{k}")
    return {q: 2 * p[q] * r[q] / (p[q] + r[q]) if p[q] + r[q] else 0.0 for q in p}


def _hits(k: int) -> Values:
    return {q: round(v * k) for q, v in _trec(f"P_{k}").items()}


# written → (what it is, how pytrec_eval gives it)
ORACLES: dict[str, tuple[str, Callable[[], Values]]] = {
    "P@5": ("P_5", lambda: _trec("P_5")),
    "precision@5": ("P_5", lambda: _trec("P_5")),
    "P.5": ("P_5", lambda: _trec("P_5")),
    "P_5": ("P_5", lambda: _trec("P_5")),
    "P(rel=2)@5": ("P_5 -l2", lambda: _trec("P_5", level=2)),
    "R@100": ("recall_100", lambda: _trec("recall_100")),
    "recall@100": ("recall_100", lambda: _trec("recall_100")),
    "Recall@100": ("recall_100", lambda: _trec("recall_100")),
    "recall.100": ("recall_100", lambda: _trec("recall_100")),
    "recall_100": ("recall_100", lambda: _trec("recall_100")),
    "R@5": ("recall_5", lambda: _trec("recall_5")),
    "R_cap@10": ("relative_P_10", lambda: _trec("relative_P_10")),
    "relative_P.10": ("relative_P_10", lambda: _trec("relative_P_10")),
    "Success@1": ("success_1", lambda: _trec("success_1")),
    "success.1": ("success_1", lambda: _trec("success_1")),
    "hit_rate@1": ("success_1", lambda: _trec("success_1")),
    "Accuracy@1": ("success_1", lambda: _trec("success_1")),
    "Success@5": ("success_5", lambda: _trec("success_5")),
    "AP": ("map", lambda: _trec("map")),
    "MAP": ("map", lambda: _trec("map")),
    "AP(rel=2)": ("map -l2", lambda: _trec("map", level=2)),
    "AP@10": ("map_cut_10", lambda: _trec("map_cut_10")),
    "map@10": ("map_cut_10", lambda: _trec("map_cut_10")),
    "MAP@10": ("map_cut_10", lambda: _trec("map_cut_10")),
    "map_cut.10": ("map_cut_10", lambda: _trec("map_cut_10")),
    "RR": ("recip_rank", lambda: _trec("recip_rank")),
    "RR@10": ("recip_rank@10", lambda: _trec("recip_rank", cut=10)),
    "mrr@10": ("recip_rank@10", lambda: _trec("recip_rank", cut=10)),
    "MRR@10": ("recip_rank@10", lambda: _trec("recip_rank", cut=10)),
    "MRR@3": ("recip_rank@3", lambda: _trec("recip_rank", cut=3)),
    "nDCG": ("ndcg", lambda: _trec("ndcg")),
    "nDCG@10": ("ndcg_cut_10", lambda: _trec("ndcg_cut_10")),
    "ndcg@10": ("ndcg_cut_10", lambda: _trec("ndcg_cut_10")),
    "NDCG@10": ("ndcg_cut_10", lambda: _trec("ndcg_cut_10")),
    "ndcg_cut.10": ("ndcg_cut_10", lambda: _trec("ndcg_cut_10")),
    "ndcg_cut_10": ("ndcg_cut_10", lambda: _trec("ndcg_cut_10")),
    "NDCG@5": ("ndcg_cut_5", lambda: _trec("ndcg_cut_5")),
    "ndcg_burges@10": ("exp ndcg_cut_10", lambda: _trec("ndcg_cut_10", exp_gain=True)),
    "nDCG(dcg='exp-log2')@10": ("exp ndcg_cut_10", lambda: _trec("ndcg_cut_10", exp_gain=True)),
    "Rprec": ("Rprec", lambda: _trec("Rprec")),
    "RPrec": ("Rprec", lambda: _trec("Rprec")),
    "Bpref": ("bpref", lambda: _trec("bpref")),
    "infAP": ("infAP", lambda: _trec("infAP")),
    "F1@10": ("f1_10", lambda: _f1(10)),
    "f1@10": ("f1_10", lambda: _f1(10)),
    "Hits@10": ("hits_10", lambda: _hits(10)),
    "hits@10": ("hits_10", lambda: _hits(10)),
    "SetP": ("set_P", lambda: _trec("set_P")),
    "SetR": ("set_recall", lambda: _trec("set_recall")),
    "SetF": ("set_F", lambda: _trec("set_F")),
    "SetAP": ("set_map", lambda: _trec("set_map")),
    "NumRelRet": ("num_rel_ret", lambda: _trec("num_rel_ret")),
    "NumRet(rel=1)": ("num_rel_ret", lambda: _trec("num_rel_ret")),
    "NumRel": ("num_rel", lambda: _trec("num_rel")),
    "NumRet": ("num_ret", lambda: _trec("num_ret")),
    "NumQ": ("num_q", lambda: _trec("num_q")),
    "IPrec@0.1": ("iprec_at_recall_0.10", lambda: _trec("iprec_at_recall_0.10")),
    "iprec_at_recall.0.10": ("iprec_at_recall_0.10", lambda: _trec("iprec_at_recall_0.10")),
    "iprec_at_recall_0.50": ("iprec_at_recall_0.50", lambda: _trec("iprec_at_recall_0.50")),
    "Rprec_mult@0.2": ("Rprec_mult_0.20", lambda: _trec("Rprec_mult_0.20")),
    "Rprec_mult.0.20": ("Rprec_mult_0.20", lambda: _trec("Rprec_mult_0.20")),
    "Rprec_mult_2.00": ("Rprec_mult_2.00", lambda: _trec("Rprec_mult_2.00")),
}

BEYOND_TREC_EVAL = {"Judged", "ERR", "RBP", "RBP_residual", "Unjudged"}
"""Checked against their own sources in tests/test_measures_beyond.py."""
DIVERSITY = {
    *("alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "NRBP", "nNRBP", "P_IA", "StRecall"),
    *("AP_IA", "alpha-nDCG", "alpha-DCG", "ERR-IA", "nERR-IA", "P-IA", "strec", "S-recall"),
    *("MAP-IA", "MAP_IA"),
}
"""Checked against ndeval in tests/test_measures_diversity.py."""
CWL = {"NERR8", "NERR9", "NERR10", "NERR11", "INST", "INSQ", "BPM", "SDCG", "Compat"}
"""Checked against cwl_eval and ir_measures' compat provider in tests/test_measures_cwl.py."""


def _name_of(written: str) -> str:
    return notation.parse(written)[-1].name


def test_every_name_of_the_notation_table_has_an_oracle_row() -> None:
    names = set(notation._NAMES) | set(notation.TREC_NAMES)
    covered = {_name_of(written) for written in ORACLES}
    elsewhere = BEYOND_TREC_EVAL | DIVERSITY | CWL
    assert names - elsewhere <= covered, sorted(names - elsewhere - covered)


def test_the_oracles_differ_so_a_wrong_alias_cannot_pass() -> None:
    """Two rows with different meanings never share their values on this run."""
    by_meaning: dict[str, tuple[float, ...]] = {}
    for meaning, oracle in ORACLES.values():
        if meaning not in by_meaning:
            values = oracle()
            by_meaning[meaning] = tuple(values[q] for q in sorted(values))
    seen: dict[tuple[float, ...], str] = {}
    for meaning, values in by_meaning.items():
        assert values not in seen, f"{meaning} and {seen.get(values)} agree on every query"
        seen[values] = meaning


@pytest.mark.parametrize("written", list(ORACLES))
def test_an_alias_names_its_measure_by_value(written: str) -> None:
    _, oracle = ORACLES[written]
    expected = oracle()
    report = evaluate_run(RUN, QRELS, metrics=[written])
    got = {q: values[written] for q, values in report.per_query.items()}
    assert set(got) == set(expected)
    wrong = {q: (got[q], expected[q]) for q in got if abs(got[q] - expected[q]) > 1e-9}
    assert not wrong, wrong
