"""The C kernel that scores a whole run gives the pure path's values bit for bit, or steps aside.

The oracles are ef.evaluation without the plugin (the pure path, compared by each float's hex
form) and pytrec_eval. The inputs are generated: graded judgements with negative, zero,
fractional and ``1``/``1.0`` grades; rankings with repeated ids (relevant ones too), unjudged
ids, lengths either side of the pure path's short-ranking walk; ``{doc_id: score}`` entries with
ties, signed zeros, negative and int scores; missing entries; every subset of the built-in
metrics at random cutoffs. Input the kernel does not take — a NaN, an id that is not a str, a
bool or a huge int score, an entry of another type — is left to the pure path: the same value
or the same error as without the plugin.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval
from ef.evaluation import evaluate_run, hookimpl
from ef.evaluation.extending import reference_ideal_grades
from ef.evaluation.testing import registered_plugin

from ef_evaluation_speedups import ranking_kernel
from speedups_switch import speedups_hooks, speedups_off

METRICS = ("ndcg", "recall", "precision", "mrr", "map")
FORMS = {name: form for form, name in enumerate(METRICS)}
CUTOFFS = (1, 2, 3, 5, 10, 20, 33, 50, 100, 1000)
DOCS = [f"d{i}" for i in range(40)] + ["é1", "\U0001f600", "D1", "d1 "]
GRADES: list[Any] = [-1, 0, 1, 2, 3, 0.5, 1.0, 2.5, -0.5, 0.0, 4]
SCORES: list[Any] = [0.5, 1, 1.0, -2, 3.25, 0.0, -0.0, 2**40, -7.5]

pytestmark = pytest.mark.usefixtures("speedups_loaded")


def _qrels(rng: random.Random) -> dict[str, dict[str, Any]]:
    qrels: dict[str, dict[str, Any]] = {}
    for q in range(rng.randrange(1, 25)):
        docs = rng.sample(DOCS, rng.randrange(1, 30))
        binary = rng.random() < 0.4
        qrels[f"q{q}"] = {d: rng.choice([0, 1] if binary else GRADES) for d in docs}
    return qrels


def _entry(rng: random.Random, judged: dict[str, Any]) -> Any:
    kind = rng.randrange(5)
    pool = [*judged, *rng.sample(DOCS, 10)]
    if kind == 0:
        return None
    if kind <= 2:  # a ranking: short or long, repeats of any id
        length = rng.choice([0, 1, 5, 20, 31, 32, 33, 60, 200])
        return [rng.choice(pool) if rng.random() < 0.7 else f"x{rng.randrange(500)}"
                for _ in range(length)]  # fmt: skip
    size = rng.choice([0, 1, 3, 12, 40, 300])
    ties = rng.random() < 0.5
    docs = {rng.choice(pool) if rng.random() < 0.6 else f"x{i}" for i in range(size)}
    return {d: rng.choice(SCORES) if ties else rng.uniform(-3, 3) for d in docs}


Case = tuple[dict[str, Any], dict[str, dict[str, Any]], tuple[int, ...], list[str]]


def _case(seed: int) -> Case:
    rng = random.Random(seed)
    qrels = _qrels(rng)
    run = {q: entry for q in qrels if (entry := _entry(rng, qrels[q])) is not None}
    run.update({f"extra{i}": ["d1", "d2"] for i in range(rng.randrange(3))})
    ks = tuple(sorted(rng.sample(CUTOFFS, rng.randrange(1, 5))))
    metrics = rng.sample(METRICS, rng.randrange(1, 6))
    return run, qrels, ks, metrics


def _scored(run: Any, qrels: Any, ks: tuple[int, ...], metrics: list[str]) -> Any:
    return evaluate_run(run, qrels, k_values=ks, metrics=metrics, missing_queries="zero")


def _scored_with(run: Any, qrels: Any, ks: Any, metrics: list[str], **options: Any) -> Any:
    return evaluate_run(run, qrels, k_values=ks, metrics=metrics, missing_queries="zero", **options)


def _hex(per_query: Any) -> dict[str, dict[str, str]]:
    return {q: {k: float(v).hex() for k, v in row.items()} for q, row in per_query.items()}


# The pure path's results are computed with the plugin switched off once for all the cases of a
# test, in a module-scoped fixture: switching the plugin off loads every installed plugin again
# afterwards, which costs more than scoring a case.
SEEDS = range(120)
NOTATION_SEEDS = range(25)
FILE_SEEDS = range(20)


@pytest.fixture(scope="module")
def pure_reports() -> dict[int, Any]:
    """Each seed's case scored without the plugin."""
    with speedups_off():
        return {seed: _scored(*_case(seed)) for seed in SEEDS}


def test_the_plugin_offers_the_kernel() -> None:
    assert "ef_evaluation_ranking_kernel" in (speedups_hooks() or ())


@pytest.mark.parametrize("seed", SEEDS)
def test_the_kernel_gives_the_pure_paths_values_bit_for_bit(
    seed: int, pure_reports: dict[int, Any]
) -> None:
    run, qrels, ks, metrics = _case(seed)
    expected = pure_reports[seed]
    keys = tuple(expected.per_query[next(iter(expected.per_query))])
    ideals = reference_ideal_grades(qrels)
    planned = [q for q in qrels if ideals[q]]
    picks = tuple(FORMS[m] * len(ks) + c for m in metrics for c in range(len(ks)))
    result = ranking_kernel(run, qrels, ideals, planned, ks, picks, keys, dict)
    assert result is not None
    values, depths = result
    assert None not in values  # plain input: the kernel takes every query
    assert _hex(dict(zip(planned, values, strict=True))) == _hex(expected.per_query)
    lengths = [len(run[q]) if q in run else 0 for q in planned]
    assert depths == lengths
    # Through the evaluation, the means (summed in qrels order) and the manifest too.
    report = _scored(run, qrels, ks, metrics)
    assert _hex(report.per_query) == _hex(expected.per_query)
    assert {k: v.hex() for k, v in report.metrics.items()} == {
        k: v.hex() for k, v in expected.metrics.items()
    }
    assert report.manifest == expected.manifest


@pytest.mark.parametrize("seed", range(40))
def test_the_kernels_values_equal_pytrec_eval(seed: int) -> None:
    rng = random.Random(1000 + seed)
    qrels = {q: {d: int(g) for d, g in judged.items()} for q, judged in _qrels(rng).items()}
    run: dict[str, dict[str, float]] = {}
    for q in qrels:
        entry = _entry(rng, qrels[q])
        ranked = entry if isinstance(entry, list) else []
        scores = entry if isinstance(entry, dict) else {d: -float(i) for i, d in enumerate(ranked)}
        run[q] = {d: float(s) for d, s in scores.items()} or {"nothing": 0.0}
    ks = tuple(sorted(rng.sample(CUTOFFS, 3)))
    report = _scored(run, qrels, ks, list(METRICS))
    names = {f"{m}_{k}" for k in ks for m in ("ndcg_cut", "recall", "P", "map_cut")}
    oracle = pytrec_eval.RelevanceEvaluator(qrels, {*names, "recip_rank"}).evaluate(run)
    for q, row in report.per_query.items():
        theirs = oracle[q]
        for k in ks:
            assert math.isclose(row[f"ndcg@{k}"], theirs[f"ndcg_cut_{k}"], abs_tol=1e-12)
            assert math.isclose(row[f"recall@{k}"], theirs[f"recall_{k}"], abs_tol=1e-12)
            assert math.isclose(row[f"precision@{k}"], theirs[f"P_{k}"], abs_tol=1e-12)
            assert math.isclose(row[f"map@{k}"], theirs[f"map_cut_{k}"], abs_tol=1e-12)
            rr = theirs["recip_rank"]
            assert math.isclose(row[f"mrr@{k}"], rr if rr >= 1 / k else 0.0, abs_tol=1e-12)


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        return _hex(call().per_query)
    except Exception as error:  # the same error, word for word, is what is compared
        return (type(error).__name__, str(error))


DECLINED: dict[str, dict[str, Any]] = {
    "a NaN score": {"q1": {"d1": float("nan"), "d2": 1.0}},
    "a NaN score, nothing relevant scored": {"q1": {"d9": float("nan")}},
    "a ranked id that is not a str": {"q1": ["d2", 5, "d1"]},
    "a bool score": {"q1": {"d1": True, "d2": 0.5}},
    "a huge int score tied with a float": {"q1": {"d1": 2**60 + 1, "d2": float(2**60)}},
    "a tuple entry": {"q1": ("d2", "d1")},
    "a str subclass id": {"q1": [type("Id", (str,), {})("d1")]},
}


DECLINED_QRELS = {"q1": {"d1": 1, "d2": 2}, "q2": {"d1": 1}}


def _declined_outcome(case: str) -> Any:
    run = {**DECLINED[case], "q2": ["d3", "d1"]}
    return _outcome(lambda: _scored(run, DECLINED_QRELS, (1, 3), list(METRICS)))


@pytest.fixture(scope="module")
def pure_declined_outcomes() -> dict[str, Any]:
    """Each declined case's values, or error, without the plugin."""
    with speedups_off():
        return {case: _declined_outcome(case) for case in DECLINED}


@pytest.mark.parametrize("case", DECLINED)
def test_what_the_kernel_declines_the_pure_path_scores_or_refuses(
    case: str, pure_declined_outcomes: dict[str, Any]
) -> None:
    assert _declined_outcome(case) == pure_declined_outcomes[case]


def test_a_huge_int_grade_is_left_to_the_pure_path() -> None:
    qrels = {"q1": {"d1": 2**60 + 1, "d2": 3}, "q2": {"d1": 1}}
    run = {"q1": ["d2", "d1"], "q2": ["d1"]}
    ideals = reference_ideal_grades(qrels)
    result = ranking_kernel(run, qrels, ideals, ["q1", "q2"], (1, 2), (0, 1), ("n@1", "n@2"), dict)
    assert result is not None and result[0][0] is None and result[0][1] == {"n@1": 1.0, "n@2": 1.0}
    with speedups_off():
        expected = _outcome(lambda: _scored(run, qrels, (1, 2), ["ndcg"]))
    assert _outcome(lambda: _scored(run, qrels, (1, 2), ["ndcg"])) == expected


@pytest.mark.parametrize(
    ("run", "ks"),
    [
        ({"q1": ["d1"]}.items(), (1,)),  # not a dict
        ({"q1": ["d1"]}, (2**53 + 1,)),  # a cutoff a double does not hold exactly
        ({"q1": ["d1"]}, (2, 1)),  # not ascending
    ],
)
def test_the_kernel_declines_a_call_it_does_not_take(run: Any, ks: tuple[int, ...]) -> None:
    qrels = {"q1": {"d1": 1}}
    keys = tuple(f"recall@{k}" for k in ks)
    picks = tuple(len(ks) + c for c in range(len(ks)))
    assert ranking_kernel(run, qrels, {"q1": [1]}, ["q1"], ks, picks, keys, dict) is None


def test_the_kernel_declines_a_pick_out_of_range() -> None:
    qrels = {"q1": {"d1": 1}}
    picks = (10,)  # five measures at one cutoff: 0 to 4
    assert (
        ranking_kernel({"q1": ["d1"]}, qrels, {"q1": [1]}, ["q1"], (1,), picks, ("x",), dict)
        is None
    )


class Counting:
    """A plugin whose kernel is the compiled one, counting the queries it is handed, or one that
    declines every call."""

    def __init__(self, declines: bool = False) -> None:
        self.asked: list[list[str]] = []
        self.declines = declines

    @hookimpl(tryfirst=True)
    def ef_evaluation_ranking_kernel(self) -> object:
        def kernel(run: Any, qrels: Any, ideals: Any, query_ids: list[str], *rest: Any) -> Any:
            self.asked.append(list(query_ids))
            if self.declines:
                return None
            return ranking_kernel(run, qrels, ideals, query_ids, *rest)

        return kernel


def test_evaluate_run_hands_the_kernel_whole_runs_and_not_what_it_cannot_take() -> None:
    run, qrels, ks, metrics = _case(7)
    with speedups_off():
        expected = _scored(run, qrels, ks, metrics)
    counting = Counting()
    with registered_plugin(counting, name="counting"):
        assert _hex(_scored(run, qrels, ks, metrics).per_query) == _hex(expected.per_query)
        assert counting.asked == [list(expected.per_query)]  # one call, every scored query
        fewer = {q: run[q] for q in list(run)[1:]}
        evaluate_run(fewer, qrels, k_values=ks, metrics=metrics, missing_queries="zero")
        assert len(counting.asked) == 2
        # Options the kernel does not follow: the pure path alone.
        for options in ({"relevance_level": 1}, {"ignore_identical_ids": True}, {"depth": 5}):
            _scored_with(run, qrels, ks, metrics, **options)
        _scored_with(run, qrels, ks, [*metrics, "bpref"])
        assert len(counting.asked) == 2
    declining = Counting(declines=True)
    with registered_plugin(declining, name="declining"):
        assert _hex(_scored(run, qrels, ks, metrics).per_query) == _hex(expected.per_query)
        assert len(declining.asked) == 1


NOTATIONS = [
    ["nDCG@10", "P@5", "R@100", "RR@10", "AP@1000"],
    ["ndcg_cut_10", "P_5", "recall_100", "map_cut_1000"],
    ["ndcg@3", "mrr@10", "precision@1", "map@100", "recall@5"],
    ["NDCG@10", "MRR@10", "Recall@100", "MAP@10", "ndcg_cut.10,100"],
]


def _named_reports(seed: int, names: list[str]) -> tuple[Any, Any]:
    """The case of ``seed`` scored on its metrics and ``names``, and on ``names`` alone."""
    run, qrels, ks, metrics = _case(seed)
    return (
        _scored(run, qrels, ks, metrics + names),
        evaluate_run(run, qrels, metrics=names, missing_queries="zero"),
    )


@pytest.fixture(scope="module")
def pure_named_reports() -> dict[tuple[int, str], tuple[Any, Any]]:
    """Each seed's and notation's reports without the plugin."""
    with speedups_off():
        return {
            (seed, " ".join(names)): _named_reports(seed, names)
            for seed in NOTATION_SEEDS
            for names in NOTATIONS
        }


@pytest.mark.parametrize("names", NOTATIONS, ids=" ".join)
@pytest.mark.parametrize("seed", NOTATION_SEEDS)
def test_measures_named_at_their_own_cutoff_are_the_pure_paths_bit_for_bit(
    names: list[str], seed: int, pure_named_reports: dict[tuple[int, str], tuple[Any, Any]]
) -> None:
    run, qrels, ks, metrics = _case(seed)
    expected, alone = pure_named_reports[seed, " ".join(names)]
    counting = Counting()
    with registered_plugin(counting, name="counting"):
        report = _scored(run, qrels, ks, metrics + names)
        report_alone = evaluate_run(run, qrels, metrics=names, missing_queries="zero")
    assert len(counting.asked) == 2  # the kernel scored both
    for got, want in ((report, expected), (report_alone, alone)):
        assert _hex(got.per_query) == _hex(want.per_query)
        assert {k: v.hex() for k, v in got.metrics.items()} == {
            k: v.hex() for k, v in want.metrics.items()
        }
        assert got.manifest == want.manifest  # the ranking depths among them


def test_measures_with_other_parameters_are_left_to_the_pure_path() -> None:
    run, qrels, _, _ = _case(3)
    counting = Counting()
    with registered_plugin(counting, name="counting"):
        for names in (
            ["P(rel=2)@5"],
            ["nDCG(dcg='exp-log2')@10"],
            ["bpref"],
            ["P(judged_only=True)@5"],
        ):
            evaluate_run(run, qrels, metrics=names, missing_queries="zero")
    assert counting.asked == []


def _run_file(path: Any, run: dict[str, Any]) -> str:
    lines = []
    for query_id, entry in run.items():
        scores = (
            entry
            if isinstance(entry, dict)
            else {d: -i for i, d in enumerate(dict.fromkeys(entry))}
        )
        written = [(d, v) for d, v in scores.items() if d == d.strip()]  # no space in a file's id
        lines += [f"{query_id} Q0 {d} {r} {float(v)!r} x" for r, (d, v) in enumerate(written)]
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


def _streamed_as_without_the_plugin(
    path: str, qrels: Any, ks: Any, names: list[str], expected: Any = None
) -> Counting:
    """The run file at ``path`` scored through the kernel, checked against its report without
    the plugin (``expected``, when the caller computed it already)."""
    if expected is None:
        with speedups_off():
            expected = _scored(path, qrels, ks, names)
    counting = Counting()
    with registered_plugin(counting, name="counting"):
        report = _scored(path, qrels, ks, names)
    assert _hex(report.per_query) == _hex(expected.per_query)
    assert {k: v.hex() for k, v in report.metrics.items()} == {
        k: v.hex() for k, v in expected.metrics.items()
    }
    assert report.manifest == expected.manifest
    return counting


def _file_case(seed: int, folder: Path) -> tuple[str, dict[str, dict[str, Any]], Any, list[str]]:
    """The case of ``seed`` as a run file in ``folder``: its path, qrels, cutoffs and names."""
    run, qrels, ks, metrics = _case(seed)
    path = _run_file(folder / f"run-{seed}.txt", run)
    return path, qrels, ks, [*metrics, "nDCG@10", "P_5"]


@pytest.fixture(scope="module")
def run_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder for the run files of :func:`_file_case`."""
    return tmp_path_factory.mktemp("runs")


@pytest.fixture(scope="module")
def pure_file_reports(run_files: Path) -> dict[int, Any]:
    """Each seed's run file scored without the plugin."""
    with speedups_off():
        return {seed: _scored(*_file_case(seed, run_files)) for seed in FILE_SEEDS}


@pytest.mark.parametrize("seed", FILE_SEEDS)
def test_a_run_file_streamed_through_the_kernel_gives_the_pure_paths_report(
    seed: int, run_files: Path, pure_file_reports: dict[int, Any]
) -> None:
    path, qrels, ks, names = _file_case(seed, run_files)  # the same file, written again
    counting = _streamed_as_without_the_plugin(path, qrels, ks, names, pure_file_reports[seed])
    assert len(counting.asked) == 1


def test_a_long_run_file_reaches_the_kernel_in_bounded_batches(tmp_path: Any) -> None:
    rng = random.Random(5)
    qrels = {f"q{i}": {f"d{j}": rng.choice([0, 1, 2]) for j in range(8)} for i in range(2600)}
    run = {q: rng.sample(DOCS, 30) for q in qrels}  # 78,000 lines
    path = _run_file(tmp_path / "run.txt", run)
    counting = _streamed_as_without_the_plugin(path, qrels, (5, 10), list(METRICS))
    sizes = [len(asked) for asked in counting.asked]
    planned = sum(1 for judged in qrels.values() if max(judged.values()) > 0)
    assert sum(sizes) == planned and len(sizes) >= 3 and max(sizes) <= 1024
