"""The seeded inputs the tests compare ef.evaluation with ranx on, built the same way for the
tests and for ``record.py`` (which gives them to ranx): one builder each, no copies.

Each ``*_inputs`` function returns everything ranx is given for one reference file — runs,
judgements, the calls and their parameters — as plain JSON data; its SHA-256 is in the file's
header, and a test whose inputs hash otherwise fails (``recorded.py``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]

# tests/test_compare_ranx.py ----------------------------------------------------------------

COMPARE_SEED = 2024
COMPARE_QUERIES = 50
COMPARE_METRIC = "ndcg@10"


def compare_runs(
    seed: int = COMPARE_SEED, n_queries: int = COMPARE_QUERIES
) -> tuple[Qrels, dict[str, Run]]:
    """Judgements (grades 1-3, five of 40 docs a query) and three named runs of every doc with
    continuous scores (no ties: the two libraries break them differently); ``dense`` lifts the
    judged docs a little."""
    import numpy as np

    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(40)]
    qrels = {
        f"q{q}": {str(d): int(rng.integers(1, 4)) for d in rng.choice(docs, 5, replace=False)}
        for q in range(n_queries)
    }
    runs: dict[str, Run] = {}
    for name, skill in (("bm25", 0.0), ("dense", 0.02), ("hybrid", 0.0)):
        runs[name] = {}
        for query_id, judged in qrels.items():
            scores = rng.random(len(docs))
            runs[name][query_id] = {
                doc: float(score) + skill * judged.get(doc, 0)
                for doc, score in zip(docs, scores, strict=True)
            }
    return qrels, runs


def compare_inputs(qrels: Qrels, runs: dict[str, Run]) -> dict[str, Any]:
    """ranx's ``compare`` of ``runs`` by each statistical test, and its per-query values."""
    return {
        "seed": COMPARE_SEED,
        "qrels": qrels,
        "runs": runs,
        "metric": COMPARE_METRIC,
        "tests": {
            "student": {"stat_test": "student", "max_p": 0.05},
            # ranx's Fisher test has its own generator: more permutations shrink its share of
            # the Monte-Carlo error.
            "fisher": {"stat_test": "fisher", "n_permutations": 100_000, "max_p": 0.05},
            "tukey": {"stat_test": "tukey", "max_p": 0.05},
        },
    }


# tests/test_measures_beyond.py --------------------------------------------------------------

MEASURES_SEED = 2026
MEASURES_CUTOFFS = (1, 3, 10, 20)
RANX_MEASURES = ("ndcg_burges", "f1", "hits")


def judged_run(seed: int, *, grades: tuple[int, ...] = (-1, 0, 0, 1, 2, 3, 4)) -> tuple[
    Qrels, Run
]:  # fmt: skip
    """Twenty-five queries with numeric ids (gdeval takes nothing else), grades 0-4 and some
    negative ones, at least one relevant document each, and runs of 1-30 documents without
    tied scores; doc ids are the query's own (BEIR's Hole pools judgements across queries;
    Unjudged, BEIR's Hole per query, does not)."""
    rng = random.Random(seed)
    qrels: Qrels = {}
    run: Run = {}
    for q in range(1, 26):
        docs = [f"q{q}d{i}" for i in range(30)]
        judged = rng.sample(docs, rng.randint(2, 14))
        qrels[str(q)] = {doc: rng.choice(grades) for doc in judged}
        qrels[str(q)][judged[0]] = rng.randint(1, 4)
        scores = rng.sample(range(1000), rng.randint(1, 30))
        run[str(q)] = {
            doc: score / 7 for doc, score in zip(rng.sample(docs, len(scores)), scores, strict=True)
        }
    return qrels, run


def measures_inputs(qrels: Qrels, run: Run) -> dict[str, Any]:
    """ranx's per-query ``ndcg_burges``, ``f1`` and ``hits`` at each cutoff; ranx reads grade
    >= 1 as relevant and skips negative grades, as ef does, so it is given the positive ones."""
    return {
        "seed": MEASURES_SEED,
        "qrels": {q: {d: g for d, g in judged.items() if g > 0} for q, judged in qrels.items()},
        "run": run,
        "metrics": [f"{m}@{k}" for m in RANX_MEASURES for k in MEASURES_CUTOFFS],
        "make_comparable": True,
    }


# tests/test_fusion_ranx.py ------------------------------------------------------------------

NORMS = ("none", "min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda")
PARAMS: dict[str, dict[str, Any]] = {
    "rrf": {"k": 60},
    "logn_isr": {"sigma": 0.01},
    "rbc": {"phi": 0.8},
    "gmnz": {"gamma": 0.5},
    "slidefuse": {"w": 2},
    "probfuse": {"n_segments": 3},
}
SUPERVISED_TRAINED = {
    "probfuse": "probs",
    "segfuse": "probs",
    "slidefuse": "probs",
    "posfuse": "probs",
    "bayesfuse": "log_odds",
    "mapfuse": "map_scores",
}
# Methods that read ranks: under the borda normalisation a run's unranked candidates tie, and
# ranx ranks them in set order (an expected difference, tested in test_fusion_ranx.py).
POSITIONAL = {
    "rrf",
    "isr",
    "log_isr",
    "logn_isr",
    "rbc",
    "bordafuse",
    "w_bordafuse",
    "condorcet",
    "w_condorcet",
    *SUPERVISED_TRAINED,
}
CONDORCETS = {"condorcet", "w_condorcet"}
WEIGHTS3 = [0.5, 0.3, 0.2]
SEEDS = (11, 12)
OPTIMIZATION_SEED = 7
OPTIMIZATION_METRIC = "ndcg@5"
# Each method the grid search is compared on, with the normalisation ranx is given.
OPTIMIZED: dict[str, str | None] = {
    "wsum": "min-max",
    "rrf": None,
    "rbc": None,
    "gmnz": "min-max",
    "logn_isr": None,
    "probfuse": None,
    "slidefuse": None,
    "wmnz": "min-max",
}
# The cases ef's fusions and ranx's disagree on by design (docs/fusion.md), each with its input.
DIFFERENCES: dict[str, Any] = {
    # Ties within a run, fused by rrf: ranx ranks doc-a above doc-b.
    "tied_rrf": [{"q1": {"doc-a": 1.0, "doc-b": 1.0, "doc-c": 0.5}}, {"q1": {"doc-c": 2.0}}],
    # min over the runs: ranx takes a doc missing from a run as 1e9.
    "missing_min": [{"q": {"doc-a": 5e9}}, {"q": {"doc-b": 1.0}}],
    # posfuse's training counts a query without a positive judgement.
    "posfuse_training": {
        "runs": [{"q1": {"doc-a": 1.0}, "q2": {"doc-x": 1.0}}] * 2,
        "qrels": {"q1": {"doc-a": 1}, "q2": {"doc-b": 0}},
    },
    # zmuv over a whole run: an empty query drops the queries after it in its parallel chunk.
    "zmuv_run": {"q0": {}} | {f"q{i}": {"doc-a": float(i), "doc-b": 0.0} for i in range(1, 8)},
}


def generated(seed: int) -> tuple[list[Run], Qrels]:
    """Three runs and judgements: depths 0-30, disjoint docs for even queries, shared for odd
    ones, some queries missing from some runs, distinct scores (some negative) per query."""
    rng = random.Random(seed)
    runs: list[Run] = [{}, {}, {}]
    qrels: Qrels = {}
    for q in range(8):
        query_id = f"q{q}"
        shared = [f"doc{i:02d}" for i in range(40)]
        for r, run in enumerate(runs):
            if rng.random() < 0.15:
                continue  # missing from this run
            pool = shared if q % 2 else [f"r{r}d{i:02d}" for i in range(40)]
            depth = rng.choice((0, 1, 2, 5, 9, 14, 22, 30))
            docs = rng.sample(pool, depth)
            scores = rng.sample(range(-300, 1000), depth)
            run[query_id] = {doc: score / 37 for doc, score in zip(docs, scores, strict=True)}
        retrieved = sorted({doc for run in runs for doc in run.get(query_id, {})})
        judged = rng.sample(retrieved, min(len(retrieved), 6)) or [f"unre{q}"]
        qrels[query_id] = {doc: rng.choice((0, 1, 2)) for doc in judged}
        qrels[query_id][judged[0]] = 1 + (q % 2)  # every query has a positive judgement
    return runs, qrels


def for_ranx(runs: list[Run]) -> list[Run]:
    """The same runs with every query in every run (empty where missing): ranx refuses runs
    whose queries differ."""
    queries = sorted({query for run in runs for query in run})
    return [{query: dict(run.get(query, {})) for query in queries} for run in runs]


def method_params(method: str) -> dict[str, Any]:
    return dict(PARAMS.get(method, {}))


def cases() -> Iterator[tuple[int, str, str]]:
    """Each (seed, method, norm) fused by both: every fusion method ef registers but the
    Condorcet ones (whose ties ranx orders by a set), under every normalisation."""
    from ef.evaluation import registry

    for seed in SEEDS:
        for method in sorted(set(registry().fusion_methods) - CONDORCETS):
            for norm in NORMS:
                if norm == "borda" and method in POSITIONAL:
                    continue
                yield seed, method, norm


def condorcet_cases() -> list[tuple[int, str, bool]]:
    """Each (seed, norm, weighted) whose Condorcet fusion and candidate order are recorded."""
    return [
        (seed, norm, weighted)
        for weighted in (False, True)
        for seed in SEEDS
        for norm in NORMS
        if norm != "borda"
    ]


def optimization_input() -> tuple[list[Run], Qrels]:
    """Two runs over the same 16 docs per query in orders with no two docs at the same pair of
    ranks, so no fused score ties (ties are ordered differently, on purpose)."""
    rng = random.Random(OPTIMIZATION_SEED)
    runs: list[Run] = [{}, {}]
    qrels: Qrels = {}
    for q in range(12):
        docs = [f"doc{i:02d}" for i in range(16)]
        while True:
            order = rng.sample(range(16), 16)
            if all(order[order[i]] != i or order[i] == i for i in range(16)):
                break
        runs[0][f"q{q}"] = {doc: (16 - i) + rng.random() / 2 for i, doc in enumerate(docs)}
        runs[1][f"q{q}"] = {docs[j]: (16 - i) * 0.37 for i, j in enumerate(order)}
        relevant = rng.sample(docs, 3)
        qrels[f"q{q}"] = {doc: rng.choice((1, 2)) for doc in relevant}
    return runs, qrels


def fusion_inputs() -> dict[str, Any]:
    """Every ranx call of tests/test_fusion_ranx.py: fused and normalised runs, Condorcet's
    candidates, grid searches, and the expected differences."""
    optimization_runs, optimization_qrels = optimization_input()
    return {
        "seeds": [*SEEDS, OPTIMIZATION_SEED],
        "generated": {
            str(seed): dict(zip(("runs", "qrels"), generated(seed), strict=True)) for seed in SEEDS
        },
        "norms": list(NORMS),
        "params": PARAMS,
        "trained": SUPERVISED_TRAINED,
        "weights": WEIGHTS3,
        "cases": [list(case) for case in cases()],
        "condorcet": [list(case) for case in condorcet_cases()],
        "optimization": {
            "runs": optimization_runs,
            "qrels": optimization_qrels,
            "metric": OPTIMIZATION_METRIC,
            "methods": OPTIMIZED,
        },
        "differences": DIFFERENCES,
    }


# plugins/ef-evaluation-speedups/tests/test_fusion_kernel*.py --------------------------------

KERNEL_SEED = 4
KERNEL_METHODS: list[tuple[str, str | None, dict[str, Any]]] = [
    ("rrf", None, {}),
    ("wsum", "min-max", {"weights": [0.5, 0.3, 0.2]}),
]
COMBINES_SEED = 7
COMBINES_METHODS: list[tuple[str, str | None, dict[str, Any]]] = [
    ("mnz", "min-max", {}),
    ("anz", "min-max", {}),
    ("gmnz", "min-max", {"gamma": 1.5}),
    ("max", "min-max", {}),
    ("min", "min-max", {}),
    ("med", "min-max", {}),
    ("wmnz", "min-max", {"weights": [0.5, 0.3, 0.2]}),
    ("mixed", "min-max", {"weights": [0.5, 0.3, 0.2]}),
    ("isr", None, {}),
    ("log_isr", None, {}),
    ("logn_isr", None, {"sigma": 0.01}),
    ("bordafuse", None, {}),
    ("w_bordafuse", None, {"weights": [0.5, 0.3, 0.2]}),
]


def kernel_runs(seed: int, n_queries: int, depths: tuple[int, ...]) -> list[Run]:
    """Three runs of ``n_queries`` queries, each of one of ``depths`` docs out of 30, with
    distinct scores (no ties)."""
    rng = random.Random(seed)
    runs: list[Run] = [{}, {}, {}]
    for q in range(n_queries):
        for run in runs:
            docs = rng.sample([f"d{i}" for i in range(30)], rng.choice(depths))
            run[f"q{q}"] = {doc: rng.uniform(0, 10) for doc in docs}
    return runs


def kernel_inputs(
    seed: int, runs: list[Run], methods: list[tuple[str, str | None, dict[str, Any]]]
) -> dict[str, Any]:
    """ranx's fusion of ``runs`` by each of ``methods``: ``(method, norm, params)``."""
    return {"seed": seed, "runs": runs, "methods": [list(method) for method in methods]}
