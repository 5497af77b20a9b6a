"""The quality gate's false alarms and detections, over many seeds.

A generated test collection of a realistic shape (300 queries, 1–6 judged relevant documents
per query graded 1–3, rankings 100 deep) and a retriever of known quality: each relevant
document of a query lands at a geometric rank whose rate is the query's difficulty (drawn once
per query), past rank 100 it is not retrieved. For every seed:

- **null**: the baseline and the current run are two independent draws of the same retriever
  (a change that moves results around without changing the expected quality of any query);
- **regression**: the current run is such a draw that loses every relevant document on exactly
  10 % of the queries (chosen by the seed); **small regression**: the same on 1 %.

Each pair goes through the gate as ``ef-eval check`` runs it (:func:`~ef.evaluation.evaluate_run`
then :func:`~ef.evaluation.check`) with two families of rules on nDCG@10 and R@100:

- *significance-aware*: ``fail_if = "significantly_worse"`` on both (paired t-test, Holm over
  the two, α = 0.05): an alarm when either fails;
- *fixed threshold*: ``max_drop = 0.01`` on both: an alarm when either fails.

The table shows each rule's alarm rate with its exact binomial (Clopper–Pearson) 95 % interval
(scipy). The significance-aware rule's false-alarm rate must include or lie under α.

    python benchmarks/bench_gate_false_alarms.py                 # 1,000 seeds each, ~3-6 min
    python benchmarks/bench_gate_false_alarms.py --seeds 200     # a quick look
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Sequence

from scipy import stats

from ef.evaluation import Qrels, RetrievalEvalReport, check, evaluate_run, parse_rule

N_QUERIES = 300
DEPTH = 100
LOST_SHARES = {"regression": 0.10, "small regression": 0.01}
ALPHA = 0.05
METRICS = ("ndcg@10", "recall@100")
SIGNIFICANCE = [parse_rule(f'{m}: fail_if = "significantly_worse"') for m in METRICS]
FIXED = [parse_rule(f"{m}: max_drop = 0.01") for m in METRICS]

SCENARIOS = ("null", *LOST_SHARES)

Run = dict[str, dict[str, float]]


def collection(seed: int = 0) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """The judgements, and each query's difficulty (the rate of its relevant documents'
    geometric ranks: 0.03 is hard, 0.6 easy)."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, float]] = {}
    rates = {}
    for i in range(N_QUERIES):
        query = f"q{i}"
        n_relevant = rng.choice((1, 1, 1, 2, 2, 3, 4, 6))
        qrels[query] = {
            f"{query}-rel{j}": float(rng.choice((1, 2, 2, 3))) for j in range(n_relevant)
        }
        rates[query] = 0.03 + 0.57 * rng.betavariate(2, 3)
    return qrels, rates


def draw(qrels: Qrels, rates: dict[str, float], rng: random.Random, lost: set[str]) -> Run:
    """One run of the retriever: relevant documents at geometric ranks, the rest filler."""
    run: Run = {}
    for query, judged in qrels.items():
        ranking: list[str | None] = [None] * DEPTH
        if query not in lost:
            log_miss = math.log1p(-rates[query])
            for doc in judged:
                rank = int(math.log(1.0 - rng.random()) / log_miss)
                while rank < DEPTH and ranking[rank] is not None:
                    rank += 1  # a tie with another relevant document: the next free place
                if rank < DEPTH:
                    ranking[rank] = doc
        run[query] = {
            doc if doc is not None else f"{query}-other{rank}": float(DEPTH - rank)
            for rank, doc in enumerate(ranking)
        }
    return run


def scored(run: Run, qrels: Qrels) -> RetrievalEvalReport:
    return evaluate_run(run, qrels, metrics=list(METRICS), k_values=(1,))


def alarms(current: RetrievalEvalReport, baseline: RetrievalEvalReport) -> tuple[bool, bool]:
    """Whether the significance-aware and the fixed-threshold rules raise an alarm."""
    report = check(current, baseline, [*SIGNIFICANCE, *FIXED], alpha=ALPHA, n_resamples=200)
    failed = {result.rule for result in report.failures}
    return bool(failed & set(SIGNIFICANCE)), bool(failed & set(FIXED))


def interval(k: int, n: int) -> tuple[float, float]:
    """The Clopper–Pearson 95 % interval of a binomial proportion."""
    found = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return float(found.low), float(found.high)


def study(n_seeds: int, progress: bool = True) -> dict[tuple[str, str], int]:
    qrels, rates = collection()
    counts = dict.fromkeys([(s, r) for s in SCENARIOS for r in ("significance", "fixed")], 0)
    started = time.perf_counter()
    for seed in range(n_seeds):
        rng = random.Random(1_000_003 * (seed + 1))
        baseline = scored(draw(qrels, rates, rng, set()), qrels)
        currents = {"null": scored(draw(qrels, rates, rng, set()), qrels)}
        for scenario, share in LOST_SHARES.items():
            lost = set(rng.sample(sorted(qrels), round(share * N_QUERIES)))
            currents[scenario] = scored(draw(qrels, rates, rng, lost), qrels)
        for scenario, current in currents.items():
            significance, fixed = alarms(current, baseline)
            counts[scenario, "significance"] += significance
            counts[scenario, "fixed"] += fixed
        if progress and (seed + 1) % 100 == 0:
            elapsed = time.perf_counter() - started
            print(f"  {seed + 1} seeds, {elapsed:.0f} s", file=sys.stderr, flush=True)
    return counts


def table(counts: dict[tuple[str, str], int], n_seeds: int) -> str:
    names = {
        "significance": 'fail_if = "significantly_worse" (t-test, Holm, α 0.05)',
        "fixed": "max_drop = 0.01",
    }
    what = {
        "null": "false alarms (no change)",
        "regression": "detections (10 % lost)",
        "small regression": "detections (1 % lost)",
    }
    lines = [
        "| rule (on nDCG@10 and R@100) | scenario | seeds | alarms | rate | 95 % interval |",
        "|---|---|---:|---:|---:|---|",
    ]
    for scenario in SCENARIOS:
        for rule in ("significance", "fixed"):
            k = counts[scenario, rule]
            low, high = interval(k, n_seeds)
            lines.append(
                f"| {names[rule]} | {what[scenario]} | {n_seeds:,} | {k:,} | "
                f"{k / n_seeds:.3f} | [{low:.3f}, {high:.3f}] |"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1000, help="seeds per scenario")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    counts = study(args.seeds)
    print(table(counts, args.seeds))
    low, _ = interval(counts["null", "significance"], args.seeds)
    verdict = "✓" if low <= ALPHA else "✗"
    print(
        f"\nsignificance-aware false-alarm interval includes or lies under α = {ALPHA}: "
        f"{verdict} (lower bound {low:.3f}); {time.perf_counter() - started:.0f} s"
    )
    return 0 if low <= ALPHA else 1


if __name__ == "__main__":
    sys.exit(main())
