"""compare() against ranx's compare on the same runs: the t-test exactly, Fisher's test within
its Monte-Carlo error, wins/ties/losses exactly.

ranx compiles its numba kernels on first use: about 45 s of CPU on a fresh install, which is why
these tests live in their own module, share one ranx call, and have a longer timeout. The
compiled kernels are kept in the user's cache directory (see :func:`share_ranx_kernel_cache`),
so a fresh clone with a new virtual environment loads them instead (about 8 s).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ef.evaluation import compare, evaluate_run

pytestmark = pytest.mark.timeout(300)

N_QUERIES = 50


def kernel_cache_root() -> Path:
    """Where ranx's compiled kernels are kept: ``$XDG_CACHE_HOME`` (or ``~/.cache``), then
    ``ef-evaluation/numba``."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ef-evaluation" / "numba"


def share_ranx_kernel_cache() -> None:
    """Cache ranx's numba kernels by module name and source content, in the user's cache.

    Numba keeps a compiled kernel beside the installed source, or under a hash of the source's
    absolute path: either way a new virtual environment (every fresh clone makes one) misses
    it and compiles everything again. Keyed by module name and a hash of the source instead, a
    kernel compiled in one environment is loaded in the next one with the same ranx; numba's
    own index still checks the numba version, the signature, the CPU and the function's
    bytecode. Call before ranx is imported: numba picks a function's cache place when the
    function is decorated. Without the numba internals this needs, ranx compiles as before and
    only :func:`test_ranx_kernels_are_cached_by_module_in_the_user_cache` fails.
    """
    from numba.core import caching

    # numba 0.62 renamed _CacheImpl to CacheImpl; the list of locators kept its name.
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    locators: list[Any] | None = getattr(impl, "_locator_classes", None)
    base: Any = getattr(caching, "_CacheLocator", None)
    if locators is None or base is None:
        return
    if any(getattr(cls, "ef_evaluation_tests", False) for cls in locators):
        return
    root = kernel_cache_root()

    class ModuleCacheLocator(base):
        ef_evaluation_tests = True

        def __init__(self, py_func: Any, py_file: str) -> None:
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(root / py_func.__module__)

        def get_cache_path(self) -> str:
            return self._cache_path

        def get_source_stamp(self) -> str:
            return hashlib.sha256(Path(self._py_file).read_bytes()).hexdigest()

        def get_disambiguator(self) -> str:
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> ModuleCacheLocator | None:
            if not py_func.__module__.startswith("ranx.") or not os.path.isfile(py_file):
                return None
            locator = cls(py_func, py_file)
            try:
                locator.ensure_cache_path()
            except OSError:  # not writable: numba's own places are tried next
                return None
            return locator

    locators.insert(0, ModuleCacheLocator)


@pytest.fixture(scope="module")
def ranx_comparison():
    """One set of runs compared by ranx (t-test and Fisher), with ranx's per-query values."""
    share_ranx_kernel_cache()
    from numba.core.errors import NumbaTypeSafetyWarning
    from ranx import Qrels, Run
    from ranx import compare as ranx_compare

    rng = np.random.default_rng(2024)
    docs = [f"d{i}" for i in range(40)]
    qrels = {
        f"q{q}": {str(d): int(rng.integers(1, 4)) for d in rng.choice(docs, 5, replace=False)}
        for q in range(N_QUERIES)
    }
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for name, skill in (("bm25", 0.0), ("dense", 0.02), ("hybrid", 0.0)):
        runs[name] = {}
        for query_id, judged in qrels.items():
            # Continuous scores never tie: ties would be broken differently by the two libraries.
            scores = rng.random(len(docs))
            runs[name][query_id] = {
                doc: float(score) + skill * judged.get(doc, 0)
                for doc, score in zip(docs, scores, strict=True)
            }
    with warnings.catch_warnings():
        # Numba warns about casts inside ranx's kernels while it compiles them: not our code.
        warnings.simplefilter("ignore", NumbaTypeSafetyWarning)
        ranx_runs = [Run.from_dict(run, name=name) for name, run in runs.items()]
        ranx_qrels = Qrels.from_dict(qrels)
        student = ranx_compare(ranx_qrels, ranx_runs, ["ndcg@10"], stat_test="student", max_p=0.05)
        # ranx's Fisher test has its own generator: more permutations shrink its share of the
        # error.
        fisher = ranx_compare(
            ranx_qrels,
            ranx_runs,
            ["ndcg@10"],
            stat_test="fisher",
            n_permutations=100_000,
            max_p=0.05,
        )
    per_query = {run.name: dict(run.scores["ndcg@10"]) for run in ranx_runs}
    return {
        "qrels": {q: {d: float(g) for d, g in judged.items()} for q, judged in qrels.items()},
        "runs": runs,
        "per_query": per_query,
        "student": student.to_dict(),
        "fisher": fisher.to_dict(),
    }


def test_ranx_scores_the_same_per_query_values(ranx_comparison):
    for name, run in ranx_comparison["runs"].items():
        ours = evaluate_run(run, ranx_comparison["qrels"], k_values=(10,), metrics=("ndcg",))
        theirs = ranx_comparison["per_query"][name]
        assert set(ours.per_query) == set(theirs)
        for query_id, values in ours.per_query.items():
            assert values["ndcg@10"] == pytest.approx(theirs[query_id], abs=1e-12)


def test_t_test_and_randomization_agree_with_ranx_compare(ranx_comparison):
    report = compare(
        ranx_comparison["runs"],
        ranx_comparison["qrels"],
        baseline="bm25",
        tests=("t-test", "randomization"),
        correction=None,
    )
    for system in ("dense", "hybrid"):
        row = report.comparison(system, "ndcg@10")
        student = ranx_comparison["student"]["bm25"]["comparisons"][system]["ndcg@10"]
        fisher = ranx_comparison["fisher"]["bm25"]["comparisons"][system]["ndcg@10"]
        assert row.p_values["t-test"] == pytest.approx(student, abs=1e-9, rel=1e-9)
        # Monte-Carlo tolerance: the two estimates' standard errors (10,000 and 100,000
        # permutations) combine to at most 0.0053, so 0.02 is more than 3.7 of them.
        assert row.p_values["randomization"] == pytest.approx(fisher, abs=0.02)
        win_tie_loss = ranx_comparison["student"][system]["win_tie_loss"]["bm25"]["ndcg@10"]
        assert (row.wins, row.ties, row.losses) == (
            win_tie_loss["W"],
            win_tie_loss["T"],
            win_tie_loss["L"],
        )
    # The data must exercise the tests: one significant difference, one that is not.
    p_values = {s: report.comparison(s, "ndcg@10").p_values["t-test"] for s in ("dense", "hybrid")}
    assert 0.001 < p_values["dense"] < 0.05 < p_values["hybrid"] < 0.95


def test_ranx_kernels_are_cached_by_module_in_the_user_cache(ranx_comparison):
    ndcg = importlib.import_module("ranx.metrics.ndcg")
    cache = Path(ndcg._ndcg._cache._cache_path)
    assert cache == kernel_cache_root() / "ranx.metrics.ndcg"
    assert list(cache.glob("ndcg._ndcg-*.nbi")), "the kernel was not saved there"
