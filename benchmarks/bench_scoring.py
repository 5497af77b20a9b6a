"""Scoring benchmark: ef beside pytrec_eval, ranx and ir_measures on the same data, in memory.

Every tool gets its own native input built from the same workload (:mod:`workloads`) and is
timed through its public call, end to end — building its judgement and run objects included —
on the common metric set nDCG@10, R@100, MRR@10 and MAP@1000. The calls run in one process,
interleaved (the order rotates every repeat), after a warm-up call on a one-query input; the
table shows medians. ``gc.collect()`` runs between calls, untimed, and the workload itself is
frozen out of the collector (:func:`gc.freeze`) so no tool pays for scanning another's data.

- **ef**: ``evaluate_run(run, qrels, k_values=(10, 100, 1000), metrics=("ndcg", "recall",
  "mrr", "map"))`` on ranked lists, on ``{doc: score}`` dicts inserted in rank order (as a run
  file reads) and on the same dicts shuffled (ef has to order them); and once on its full
  default set (5 metrics × k = 1, 5, 10, 100).
- **pytrec_eval**: ``RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100", "recip_rank",
  "map_cut.1000"}).evaluate(run)``, then the means. trec_eval has no cut-off reciprocal rank:
  MRR@10 is read off ``recip_rank`` (``1/rank`` is at least 0.1 exactly when rank ≤ 10), the
  cheapest exact way.
- **ranx**: ``evaluate(Qrels(qrels), Run(run), ["ndcg@10", "recall@100", "mrr@10",
  "map@1000"])``. Its first call in a process compiles with numba; that call is timed on its own
  (one sample: a process has one first call), the other calls are "warm".
- **ir_measures**: ``calc_aggregate([nDCG@10, R@100, RR@10, AP@1000], qrels, run)``.

Agreement is the largest absolute difference between a tool's means and ef's (ranked lists),
taken from the timed outputs; ✓ when at most 1e-9.

Run one workload (``run_all.py`` runs both, each in its own process), or profile ef alone::

    python benchmarks/bench_scoring.py --workload msmarco --repeats 5
    python benchmarks/bench_scoring.py --workload msmarco --profile 15

Or ef beside pytrec_eval at sizes from 100 queries × 10 docs to 7,000 × 1,000, ef on ranked
lists, pytrec_eval on its dict of dicts, ``ef ÷ pytrec_eval`` the ratio of medians::

    python benchmarks/bench_scoring.py --sweep --workload beir --repeats 7

Each call is timed in wall time and CPU time at once, and ef on new qrels once more with the
speedups plugin switched off (the pure-Python path). ``--cpu`` keeps the fastest sample
instead of the median (steadier on a shared machine, for
comparing two versions of ef); ``--sizes 1000x10,300x100`` runs only those sizes.
``--no-qrels-pass`` switches off a compiled first pass over plain qrels (the speedups plugin's
``ef_evaluation_qrels_pass``), so a first evaluation digests and sorts the qrels in Python: run
with and without it to measure the pass.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

import workloads

COMMON = ("ndcg@10", "recall@100", "mrr@10", "map@1000")
EF_METRICS = ("ndcg", "recall", "mrr", "map")
EF_CUTOFFS = (10, 100, 1000)
TOLERANCE = 1e-9
REFERENCE = "ef · ranked lists"

Means = dict[str, float]


def ef_call(run: Mapping[str, Any], qrels: Mapping[str, Mapping[str, float]]) -> Means:
    from ef.evaluation import evaluate_run

    report = evaluate_run(run, qrels, k_values=EF_CUTOFFS, metrics=EF_METRICS)
    return {key: report.metrics[key] for key in COMMON}


def ef_first_call(run: Mapping[str, Any], qrels: Mapping[str, Mapping[str, float]]) -> Means:
    """ef evaluating judgements it has not seen before: what it keeps of earlier evaluations
    (each qrels' checked positive grades, ideal DCGs) is dropped first, as in a fresh process."""
    from ef.evaluation._scoring import cutoffs, query_plan

    query_plan._KNOWN_QRELS.clear()
    cutoffs._IDEAL_DCGS.clear()
    return ef_call(run, qrels)


def ef_default_call(run: Mapping[str, Any], qrels: Mapping[str, Mapping[str, float]]) -> Means:
    from ef.evaluation import evaluate_run

    report = evaluate_run(run, qrels)  # 5 metrics × k = 1, 5, 10, 100: 20 values per query
    return {key: report.metrics[key] for key in COMMON if key in report.metrics}


def pytrec_eval_call(
    run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]]
) -> Means:
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {"ndcg_cut.10", "recall.100", "recip_rank", "map_cut.1000"}
    )
    per_query = evaluator.evaluate(run)
    n = len(per_query)
    totals = dict.fromkeys(COMMON, 0.0)
    for values in per_query.values():
        totals["ndcg@10"] += values["ndcg_cut_10"]
        totals["recall@100"] += values["recall_100"]
        rr = values["recip_rank"]
        totals["mrr@10"] += rr if rr >= 0.1 else 0.0
        totals["map@1000"] += values["map_cut_1000"]
    return {key: total / n for key, total in totals.items()}


def ranx_call(
    run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]]
) -> Means:
    import ranx

    means = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), list(COMMON))
    return {key: float(value) for key, value in means.items()}


def ir_measures_call(
    run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]]
) -> Means:
    import ir_measures
    from ir_measures import AP, RR, R, nDCG

    means = ir_measures.calc_aggregate([nDCG @ 10, R @ 100, RR @ 10, AP @ 1000], qrels, run)
    names = {"nDCG@10": "ndcg@10", "R@100": "recall@100", "RR@10": "mrr@10", "AP@1000": "map@1000"}
    return {names[str(measure)]: float(value) for measure, value in means.items()}


def full_set_cases(workload: workloads.Workload) -> dict[str, tuple[str, Callable[[], Means]]]:
    """Every numeric trec_eval measure (93 values per query): ef on ranked lists and on scored
    dicts, pytrec_eval on its native dicts; the means of three shared keys are compared."""
    import pytrec_eval

    from ef.evaluation import evaluate_run
    from ef.evaluation._scoring.measures.family_scorer import TREC_FAMILIES

    names = [family.name for family in TREC_FAMILIES]
    measures = set(pytrec_eval.supported_measures) - {"runid", "relstring"}
    shared = {"ndcg@10": "ndcg_cut_10", "recall@100": "recall_100", "map@1000": "map_cut_1000"}
    # ef asks for trec_eval's recall as trec_recall (its own recall is a different family).
    ef_keys = {**shared, "recall@100": "trec_recall_100"}

    def ef_full(run: Mapping[str, Any]) -> Means:
        report = evaluate_run(run, workload.qrels, metrics=names)
        return {key: report.metrics[trec] for key, trec in ef_keys.items()}

    def pytrec_eval_full() -> Means:
        evaluator = pytrec_eval.RelevanceEvaluator(workload.qrels_int, measures)
        per_query = evaluator.evaluate(workload.scored())
        return {
            key: pytrec_eval.compute_aggregated_measure(
                trec, [values[trec] for values in per_query.values()]
            )
            for key, trec in shared.items()
        }

    scored = workload.scored()
    return {
        "ef · every trec_eval measure": (
            "ranked id lists, 93 values/query",
            lambda: ef_full(workload.ranked),
        ),
        "ef · every trec_eval measure, scored": (
            "{doc: score}, best first, 93 values/query",
            lambda: ef_full(scored),
        ),
        "pytrec_eval · every measure": ("{doc: score}, best first", pytrec_eval_full),
    }


def full_set_targets(result: Mapping[str, Any]) -> list[Target]:
    """The full measure set's speed targets, as ratios of medians."""
    median = {row["tool"]: row["median"] for row in result["rows"]}
    full = median["pytrec_eval · every measure"]
    ranked = median["ef · every trec_eval measure"]
    scored = median["ef · every trec_eval measure, scored"]
    default = median["ef · full default set"]
    return [
        ("pytrec_eval ÷ ef, every measure, ranked lists", full / ranked, 3.0, False),
        ("pytrec_eval ÷ ef, every measure, scored dicts", full / scored, 2.0, False),
        ("pytrec_eval (common set) ÷ ef default set", median["pytrec_eval"] / default, 10.0, False),
    ]


def cases(workload: workloads.Workload) -> dict[str, tuple[str, Callable[[], Means]]]:
    """Every timed call: label → (input it gets, the call)."""
    scored, shuffled = workload.scored(), workload.scored_shuffled()
    qrels, qrels_int = workload.qrels, workload.qrels_int
    return {
        REFERENCE: ("ranked id lists", lambda: ef_call(workload.ranked, qrels)),
        "ef · scored, rank order": ("{doc: score}, best first", lambda: ef_call(scored, qrels)),
        "ef · scored, shuffled": ("{doc: score}, shuffled", lambda: ef_call(shuffled, qrels)),
        "ef · full default set": (
            "ranked id lists, 20 values/query",
            lambda: ef_default_call(workload.ranked, qrels),
        ),
        "pytrec_eval": ("{doc: score}, best first", lambda: pytrec_eval_call(scored, qrels_int)),
        "pytrec_eval · shuffled": (
            "{doc: score}, shuffled",
            lambda: pytrec_eval_call(shuffled, qrels_int),
        ),
        "ranx · warm": ("{doc: score}, best first", lambda: ranx_call(scored, qrels_int)),
        "ir_measures": ("{doc: score}, best first", lambda: ir_measures_call(scored, qrels_int)),
        **full_set_cases(workload),
    }


def timed(
    call: Callable[[], Means], clock: Callable[[], float] = time.perf_counter
) -> tuple[float, Means]:
    gc.collect()
    start = clock()
    out = call()
    return clock() - start, out


def warm_up() -> None:
    """One call of each tool on a one-query input: imports and first-use costs, untimed."""
    tiny_qrels = {"q": {"a": 1}}
    tiny_run = {"q": {"a": 1.0, "b": 0.5}}
    ef_call({"q": ["a", "b"]}, {"q": {"a": 1.0}})
    pytrec_eval_call(tiny_run, tiny_qrels)
    ir_measures_call(tiny_run, tiny_qrels)


def agreement(out: Means, reference: Means) -> float:
    return max(abs(out[key] - reference[key]) for key in out)


def run_benchmark(name: str, repeats: int) -> dict[str, Any]:
    """Time every case; return the raw samples, medians and outputs."""
    build = {"msmarco": workloads.msmarco_shape, "beir": workloads.beir_shape}[name]
    started = time.perf_counter()
    workload = build()
    table = cases(workload)
    setup = time.perf_counter() - started
    gc.collect()
    gc.freeze()
    # A process has one first ranx call: it compiles with numba. Timed before anything else.
    first_seconds, first_out = timed(lambda: ranx_call(workload.scored(), workload.qrels_int))
    warm_up()
    samples: dict[str, list[float]] = {label: [] for label in table}
    outputs: dict[str, Means] = {"ranx · first call (numba JIT)": first_out}
    labels = list(table)
    for repeat in range(repeats):
        shift = repeat % len(labels)
        for label in labels[shift:] + labels[:shift]:
            seconds, out = timed(table[label][1])
            samples[label].append(seconds)
            outputs.setdefault(label, out)
    reference = outputs[REFERENCE]
    rows = []
    for label in [*labels[:6], "ranx · first call (numba JIT)", *labels[6:]]:
        if label.startswith("ranx · first"):
            times, given = [first_seconds], "{doc: score}, best first"
        else:
            times, given = samples[label], table[label][0]
        rows.append(
            {
                "tool": label,
                "input": given,
                "median": statistics.median(times),
                "min": min(times),
                "samples": times,
                "means": outputs[label],
                "max_abs_diff": agreement(outputs[label], reference),
            }
        )
    return {
        "workload": workload.name,
        "queries": workload.n_queries,
        "lines": workload.n_lines,
        "judgements_per_query": sum(map(len, workload.qrels.values())) / workload.n_queries,
        "repeats": repeats,
        "setup_seconds": setup,
        "rows": rows,
    }


def render(result: Mapping[str, Any]) -> list[str]:
    """A Markdown table of one workload's result."""
    rows = result["rows"]
    reference = next(row["median"] for row in rows if row["tool"] == REFERENCE)
    lines = [
        f"### {result['workload']}: {result['queries']:,} queries × "
        f"{result['lines'] // result['queries']:,} docs, "
        f"{result['judgements_per_query']:.2f} judgements/query — median of "
        f"{result['repeats']} (ranx first call: 1 sample)",
        "",
        "| tool | input | median s | min s | × ef ranked | agreement (max abs diff) |",
        "|---|---|---:|---:|---:|---|",
    ]
    for row in rows:
        ok = "✓" if row["max_abs_diff"] <= TOLERANCE else "✗"
        lines.append(
            f"| {row['tool']} | {row['input']} | {row['median']:.3f} | {row['min']:.3f} "
            f"| {row['median'] / reference:.1f}× | {ok} {row['max_abs_diff']:.1e} |"
        )
    return lines


Target = tuple[str, float, float, bool]
"""``(what, measured, required, at_most)``: met when ``measured >= required``, or ``<=`` if
``at_most``."""


def format_target(target: Target) -> str:
    what, measured, required, at_most = target
    ok = measured <= required if at_most else measured >= required
    sign = "≤" if at_most else "≥"
    return f"- {what}: {measured:.2f} (target {sign} {required:g}) {'✓' if ok else '✗'}"


def targets(result: Mapping[str, Any]) -> list[Target]:
    """The issue's speed targets for the MS MARCO shape, as ratios of medians."""
    median = {row["tool"]: row["median"] for row in result["rows"]}
    return [
        ("pytrec_eval ÷ ef, ranked lists", median["pytrec_eval"] / median[REFERENCE], 5.0, False),
        ("ranx warm ÷ ef, ranked lists", median["ranx · warm"] / median[REFERENCE], 8.0, False),
        (
            "pytrec_eval (common set) ÷ ef full default set",
            median["pytrec_eval"] / median["ef · full default set"],
            3.0,
            False,
        ),
        (
            "pytrec_eval ÷ ef, scored dicts in rank order",
            median["pytrec_eval"] / median["ef · scored, rank order"],
            1.5,
            False,
        ),
        (
            "pytrec_eval ÷ ef, scored dicts shuffled (both tools)",
            median["pytrec_eval · shuffled"] / median["ef · scored, shuffled"],
            1.5,
            False,
        ),
        *full_set_targets(result),
    ]


def profile(name: str, top: int) -> None:
    """Where ef's time goes: cProfile of ``evaluate_run`` on each input form, top functions by
    own time (profiling adds overhead per call, so read the shares, not the seconds)."""
    import cProfile
    import pstats

    workload = {"msmarco": workloads.msmarco_shape, "beir": workloads.beir_shape}[name]()
    gc.collect()
    gc.freeze()
    inputs = {
        "ranked id lists": workload.ranked,
        "{doc: score}, best first": workload.scored(),
        "{doc: score}, shuffled": workload.scored_shuffled(),
    }
    warm_up()
    for label, run in inputs.items():
        seconds, _ = timed(functools.partial(ef_call, run, workload.qrels))
        print(f"### ef on {workload.name}, {label}: {seconds:.3f} s unprofiled\n")
        profiler = cProfile.Profile()
        profiler.runcall(ef_call, run, workload.qrels)
        stats = pstats.Stats(profiler, stream=sys.stdout)
        stats.strip_dirs().sort_stats("tottime").print_stats(top)


# Queries × docs per query, from the smallest evaluations to the MS MARCO shape.
SWEEP_SIZES = (
    (100, 10),
    (300, 10),
    (1_000, 10),
    (7_000, 10),
    (300, 100),
    (1_000, 100),
    (7_000, 100),
    (1_000, 1_000),
    (7_000, 1_000),
)


def sweep(
    shape: str, repeats: int, *, cpu: bool = False, sizes: tuple[tuple[int, int], ...] = ()
) -> list[dict[str, Any]]:
    """ef (ranked lists) beside pytrec_eval (its dict of dicts, best first) at each size.

    ef keeps what it learnt of a qrels (its checked positive grades, ideal DCGs) for later
    evaluations against the same judgements, while pytrec_eval's call builds its evaluator from
    the qrels every time; so ef is also timed on judgements it has not seen ("new qrels": what
    it kept is dropped before each call), the cost of a single evaluation in a fresh process,
    and so again with the speedups plugin switched off ("pure": the pure-Python path, switched
    outside the timed call; the same as "new qrels" when the plugin is not installed). Each
    size is its own workload of the chosen shape; the calls alternate (their order alternates
    too), after one untimed call each. Small sizes get more repeats, so every median rests on
    at least ``repeats`` samples and about a second of timing. Each call is timed in wall time
    and in CPU time (:func:`time.process_time`) at once.

    With ``cpu``, the fastest sample of each is kept instead of the median: steadier on a
    shared machine, for comparing two versions of ef.
    """
    build = {"msmarco": workloads.msmarco_shape, "beir": workloads.beir_shape}[shape]
    summary: Callable[[list[float]], float] = min if cpu else statistics.median
    warm_up_ef_and_pytrec_eval()
    plugin = _speedups_loaded()
    rows = []
    for n_queries, depth in sizes or SWEEP_SIZES:
        workload = build(n_queries=n_queries, depth=depth)
        scored, qrels, qrels_int = workload.scored(), workload.qrels, workload.qrels_int
        calls = {
            "ef": functools.partial(ef_call, workload.ranked, qrels),
            "ef_first": functools.partial(ef_first_call, workload.ranked, qrels),
            "ef_pure": functools.partial(ef_first_call, workload.ranked, qrels),
            "pytrec_eval": functools.partial(pytrec_eval_call, scored, qrels_int),
        }
        gc.collect()
        gc.freeze()
        outputs = {name: _switched(name, plugin, call) for name, call in calls.items()}
        first, _ = timed(calls["pytrec_eval"])
        count = max(repeats, min(200, int(0.5 / max(first, 1e-6))))
        walls: dict[str, list[float]] = {name: [] for name in calls}
        cpus: dict[str, list[float]] = {name: [] for name in calls}
        for repeat in range(count):
            for name in sorted(calls, reverse=bool(repeat % 2)):
                wall, cpu_time = _switched(name, plugin, lambda c=calls[name]: timed_both(c))
                walls[name].append(wall)
                cpus[name].append(cpu_time)
        gc.unfreeze()
        row: dict[str, Any] = {"queries": n_queries, "depth": depth, "repeats": count}
        for name in calls:
            row[name] = summary(walls[name])
            row[f"{name}_cpu"] = summary(cpus[name])
        row["max_abs_diff"] = max(
            agreement(outputs["pytrec_eval"], outputs[name]) for name in calls
        )
        row["plugin"] = plugin
        rows.append(row)
        print(render_sweep_row(rows[-1]), flush=True)
    return rows


def timed_both(call: Callable[[], Means]) -> tuple[float, float]:
    """The wall and CPU seconds of one call."""
    gc.collect()
    wall, cpu_start = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - wall, time.process_time() - cpu_start


def _speedups_loaded() -> bool:
    from ef.evaluation import list_plugins

    return any(info.name == "speedups" for info in list_plugins())


def _switched(name: str, plugin: bool, call: Callable[[], Any]) -> Any:
    """``call()``, with the speedups plugin off for the "pure" calls. The switch, and a tiny
    evaluation after it each way (the plugins' answers are asked again), are not timed."""
    if name != "ef_pure" or not plugin:
        return call()
    from ef.evaluation.extending import plugin_disabled

    with plugin_disabled("speedups"):
        ef_call({"q": ["a", "b"]}, {"q": {"a": 1.0}})
        out = call()
    ef_call({"q": ["a", "b"]}, {"q": {"a": 1.0}})
    return out


def warm_up_ef_and_pytrec_eval() -> None:
    ef_call({"q": ["a", "b"]}, {"q": {"a": 1.0}})
    pytrec_eval_call({"q": {"a": 1.0, "b": 0.5}}, {"q": {"a": 1}})


SWEEP_HEADER = [
    "| queries × docs | runs | pytrec_eval ms | ef ÷ pytrec_eval: seen qrels, wall / CPU "
    "| new qrels, wall / CPU | new qrels, pure path, wall / CPU | ef µs/query (new) | agreement |",
    "|---|---:|---:|---:|---:|---:|---:|---|",
]


def render_sweep_row(row: Mapping[str, Any]) -> str:
    n = row["queries"]
    ok = "✓" if row["max_abs_diff"] <= TOLERANCE else "✗"

    def ratios(name: str) -> str:
        wall = row[name] / row["pytrec_eval"]
        cpu = row[f"{name}_cpu"] / row["pytrec_eval_cpu"]
        return f"{wall:.2f} / {cpu:.2f}"

    pure = ratios("ef_pure") if row["plugin"] else "(no plugin)"
    return (
        f"| {n:,} × {row['depth']:,} | {row['repeats']} | {row['pytrec_eval'] * 1e3:.2f} "
        f"| {ratios('ef')} | {ratios('ef_first')} | {pure} "
        f"| {row['ef_first'] / n * 1e6:.1f} | {ok} {row['max_abs_diff']:.1e} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=["msmarco", "beir"], default="msmarco")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", help="also write the raw result to this file")
    parser.add_argument(
        "--profile", type=int, metavar="N", help="only profile ef; show its top N functions"
    )
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="ef beside pytrec_eval from 100×10 to 7,000×1,000 docs, in --workload's shape",
    )
    parser.add_argument(
        "--cpu", action="store_true", help="--sweep: the fastest sample of each, not the median"
    )
    parser.add_argument(
        "--sizes", help="--sweep only these sizes, queries×docs, comma-separated: 1000x10,300x100"
    )
    parser.add_argument(
        "--no-qrels-pass",
        action="store_true",
        help="switch off a plugin's compiled first pass over plain qrels (measure without it)",
    )
    args = parser.parse_args()
    if args.no_qrels_pass:
        from ef.evaluation._plugins import HOST

        HOST.qrels_pass = lambda: None  # type: ignore[method-assign]
    if args.sweep:
        print("\n".join(SWEEP_HEADER), flush=True)
        sizes = tuple(
            (int(queries), int(docs))
            for queries, docs in (size.split("x") for size in (args.sizes or "").split(",") if size)
        )
        rows = sweep(args.workload, args.repeats, cpu=args.cpu, sizes=sizes)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as out:
                json.dump(rows, out, indent=1)
        return
    if args.profile:
        profile(args.workload, args.profile)
        return
    result = run_benchmark(args.workload, args.repeats)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=1)
    print("\n".join(render(result)))
    if args.workload == "msmarco":
        print()
        print("\n".join(map(format_target, targets(result))))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
