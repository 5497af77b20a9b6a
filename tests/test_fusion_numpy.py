"""Fusion's numpy kernels give the pure-Python path's fused runs, float for float.

``sum``, ``wsum``, ``rrf`` and ``rbc`` under no normalisation, ``min-max``, ``max`` or ``sum``
take the numpy path when numpy is installed; without it (here: ``numpy_or_none`` answering
``None``), the pure-Python one. Both run on the same generated runs — several depths, disjoint
and overlapping docs, ties, signed zeros, negative scores, empty and missing queries — and
every fused query must hold the same docs in the same order with the same bits.
"""

from __future__ import annotations

import math
import random
import struct
from collections.abc import Iterator

import pytest

from ef.evaluation import fuse
from ef.evaluation._fusion import _arrays
from ef.evaluation._fusion._inputs import prepare_runs
from ef.evaluation._fusion.api import fuse_prepared, resolve
from ef.evaluation._plugins import HOST

Run = dict[str, dict[str, float]]

CASES = [
    ("rrf", "default", None, None),
    ("rrf", "min-max", None, {"k": 5}),
    ("rbc", "default", None, {"phi": 0.8}),
    ("rbc", "sum", None, {"phi": 0.5}),
    ("sum", "default", None, None),
    ("sum", None, None, None),
    ("sum", "max", None, None),
    ("sum", "sum", None, None),
    ("wsum", "default", [0.5, 0.3, 0.2], None),
    ("wsum", None, [1.0, -2.0, 0.25], None),
    ("wsum", "max", [0.1, 0.7, 0.2], None),
]


def _runs(seed: int) -> list[Run]:
    """Three runs over a small pool (overlaps and ties are common), one query empty in one run,
    one query missing from another, grids of repeated scores, -0.0 and negative scores."""
    rng = random.Random(seed)
    pool = [f"d{i:03d}" for i in range(60)]
    runs: list[Run] = [{}, {}, {}]
    for q in range(25):
        query = f"q{q}"
        for index, run in enumerate(runs):
            if (q, index) == (3, 1):
                continue  # missing from run 2
            depth = 0 if (q, index) == (4, 2) else rng.choice([1, 2, 5, 20, 40])
            docs = rng.sample(pool, depth)
            kind = rng.randrange(4)
            if kind == 0:
                scores = [float(rng.randrange(4)) for _ in docs]  # many ties
            elif kind == 1:
                scores = [rng.choice([-0.0, 0.0, 1.5, -2.0]) for _ in docs]
            elif kind == 2:
                scores = [rng.uniform(-50, 50) for _ in docs]
            else:
                scores = [round(rng.gauss(0, 1), 2) for _ in docs]
            run[query] = dict(zip(docs, scores, strict=True))
    return runs


@pytest.fixture(autouse=True)
def without_compiled_kernel(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The speedups plugin's C kernel, when installed, would take these cases before numpy;
    # plugins/ef-evaluation-speedups/tests/test_fusion_kernel.py compares it.
    monkeypatch.setattr(HOST, "fusion_kernel", lambda: None)
    yield


def _bits(fused: Run) -> list[tuple[str, list[tuple[str, bytes]]]]:
    return [
        (query, [(doc, struct.pack("<d", score)) for doc, score in scores.items()])
        for query, scores in fused.items()
    ]


@pytest.fixture
def without_numpy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(_arrays, "numpy_or_none", lambda: None)
    yield


def _both(runs: list[Run], method: str, norm: str | None, weights, params) -> tuple[Run, Run]:
    """The fused run by the numpy path, then by the pure-Python one (a query missing from a
    run on purpose: no warning)."""
    options = {"weights": weights, "params": params, "missing_queries": "zero"}
    fused = fuse(runs, method=method, norm=norm, **options)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_arrays, "numpy_or_none", lambda: None)
        plain = fuse(runs, method=method, norm=norm, **options)
    return fused, plain


@pytest.mark.parametrize(("method", "norm", "weights", "params"), CASES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_numpy_and_pure_python_fuse_to_the_same_bits(method, norm, weights, params, seed):
    runs = _runs(seed)
    entry, norm_entry = resolve(method, norm, HOST)
    options = {**entry.defaults, **(params or {})}
    if entry.weighted:
        options["weights"] = tuple(weights or (1.0, 1.0, 1.0))
    assert _arrays.array_kernel(entry, norm_entry, options) is not None  # the numpy path runs
    fused, plain = _both(runs, method, norm, weights, params)
    assert _bits(fused) == _bits(plain)
    assert list(fused) == [f"q{q}" for q in range(25)]


def test_signed_zeros_keep_their_sign_through_both_paths():
    # The first run's -0.0 stays (a copy); a doc first met later starts at 0.0 (0.0 + -0.0).
    runs: list[Run] = [{"q": {"a": -0.0, "b": -1.0}}, {"q": {"c": -0.0}}, {"q": {"b": 0.0}}]
    fused, plain = _both(runs, "sum", None, None, None)
    assert _bits(fused) == _bits(plain)
    assert list(plain["q"]) == ["c", "a", "b"]
    assert [math.copysign(1, s) for s in plain["q"].values()] == [1, -1, -1]


def test_other_methods_and_normalisations_take_the_pure_python_path():
    for method, norm in [("mnz", "default"), ("sum", "zmuv"), ("rrf", "min-max-inverted")]:
        entry, norm_entry = resolve(method, norm, HOST)
        assert _arrays.array_kernel(entry, norm_entry, dict(entry.defaults)) is None


def test_without_numpy_fusion_still_works(without_numpy):
    runs = _runs(7)
    entry, norm_entry = resolve("sum", "default", HOST)
    assert _arrays.array_kernel(entry, norm_entry, {}) is None
    fused = fuse(runs, method="sum", missing_queries="zero")
    assert set(fused) == {f"q{q}" for q in range(25)}


def test_a_fused_score_that_overflows_is_refused_by_both_paths():
    runs: list[Run] = [{"q": {"a": 1e308, "b": 1.0}}, {"q": {"a": 1e308}}]
    for use_numpy in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            if not use_numpy:
                patch.setattr(_arrays, "numpy_or_none", lambda: None)
            with pytest.raises(ValueError, match="gave doc 'a' of query 'q' the score inf"):
                fuse(runs, method="sum", norm=None)


def test_fuse_prepared_through_numpy_matches_for_every_query_order():
    runs = _runs(11)
    prepared = prepare_runs(runs)
    entry, norm_entry = resolve("wsum", "default", HOST)
    fused = fuse_prepared(prepared, entry, (0.2, 0.3, 0.5), {}, norm_entry, plugins=HOST)
    assert list(fused) == list(prepared.by_query)


def test_int_scores_under_an_unnormalised_sum_stay_what_python_adds():
    # Python adds ints exactly (and keeps them ints); floats past 2**53 would round them.
    big = 2**60 + 1
    runs: list[Run] = [
        {"q": {"a": big, "b": 2}, "r": {"a": 0.5}},
        {"q": {"a": 1, "c": 3}, "r": {"b": 0.25}},
    ]
    fused, plain = _both(runs, "sum", None, None, None)
    assert fused == plain
    assert fused["q"] == {"a": big + 1, "c": 3, "b": 2}
    assert [type(s) for s in fused["q"].values()] == [type(s) for s in plain["q"].values()]
    assert type(fused["q"]["a"]) is int
    assert _bits({"r": fused["r"]}) == _bits({"r": plain["r"]})  # a float query keeps numpy
