"""Every fusion parameter declares its domain; a value outside it is refused before any work,
naming the method, the parameter and the domain (in the API, the grid and the CLI)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ef.evaluation import ParameterError, fuse, optimize_fusion, registry

BM25 = {"q1": {"d1": 12.0, "d2": 9.5, "d3": 4.0}, "q2": {"d4": 3.0, "d5": 1.0}}
DENSE = {"q1": {"d3": 0.91, "d1": 0.85}, "q2": {"d5": 0.5}}
QRELS = {"q1": {"d3": 1}, "q2": {"d5": 1}}
EF_EVAL = shutil.which("ef-eval", path=str(Path(sys.executable).parent))


class Unfusable(list):  # type: ignore[type-arg]
    """Two runs that fail if anything reads them: a refused parameter must come first."""

    def __len__(self) -> int:
        return 2

    def __iter__(self):  # type: ignore[no-untyped-def]
        raise AssertionError("the runs were read before the parameters were checked")


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        ("rrf", {"k": -60}, r"'rrf': parameter 'k' must be a finite number > 0, got -60"),
        ("rrf", {"k": -1}, r"parameter 'k' must be a finite number > 0, got -1"),
        ("rrf", {"k": 0}, r"parameter 'k' must be a finite number > 0, got 0"),
        ("rrf", {"k": "60"}, r"parameter 'k' must be a finite number > 0, got '60'"),
        ("rrf", {"k": True}, r"parameter 'k' must be a finite number > 0, got True"),
        ("rrf", {"k": float("inf")}, r"parameter 'k' must be a finite number > 0, got inf"),
        ("rbc", {"phi": 2}, r"'rbc': parameter 'phi' must be a finite number in \(0, 1\), got 2"),
        ("rbc", {"phi": 1}, r"parameter 'phi' must be a finite number in \(0, 1\), got 1"),
        ("rbc", {"phi": 0}, r"parameter 'phi' must be a finite number in \(0, 1\), got 0"),
        ("logn_isr", {"sigma": -0.1}, r"'sigma' must be a finite number in \[0, 1\]"),
        ("gmnz", {"gamma": "1"}, r"'gmnz': parameter 'gamma' must be a finite number"),
        ("slidefuse", {"w": -1, "probs": [[1.0], [1.0]]}, r"'w' must be an int >= 0, got -1"),
        ("slidefuse", {"w": 1.5, "probs": [[1.0], [1.0]]}, r"'w' must be an int >= 0, got 1.5"),
        ("posfuse", {"probs": [[1.0, float("nan")], [1.0]]},
         r"'posfuse': parameter 'probs' must be one sequence of finite numbers per run"),
        ("mapfuse", {"map_scores": "0.5"}, r"'map_scores' must be one finite number per run"),
    ],
)  # fmt: skip
def test_a_parameter_outside_its_domain_is_refused_before_any_work(
    method: str, params: dict[str, object], message: str
) -> None:
    with pytest.raises(ParameterError, match=message):
        fuse(Unfusable(), method=method, params=params)  # type: ignore[arg-type]


def test_every_builtin_parameter_declares_its_domain() -> None:
    for method in registry().fusion_methods.values():
        if not method.plugin.startswith("ef.evaluation."):
            continue
        taken = {*method.defaults, *method.required, *method.trained, *method.train_params}
        assert taken == set(method.domains), method.name


@pytest.mark.parametrize(("k", "phi"), [(0.5, 0.01), (1, 0.5), (60, 0.99)])
def test_values_inside_the_domains_fuse(k: float, phi: float) -> None:
    assert fuse([BM25, DENSE], method="rrf", params={"k": k})["q1"]
    assert all(v > 0 for v in fuse([BM25, DENSE], method="rbc", params={"phi": phi})["q1"].values())


def test_a_ranked_list_naming_one_doc_twice_is_refused_naming_run_query_and_doc() -> None:
    with pytest.raises(ValueError, match=r"run 2, query 'q1': doc 'd1' is ranked twice"):
        fuse([BM25, {"q1": ["d3", "d1", "d1"]}], method="rrf")


def test_a_trained_table_may_be_a_2d_numpy_array_as_ranx_gives_it() -> None:
    probs = [[0.5, 0.25], [0.4, 0.1]]
    as_lists = fuse([BM25, DENSE], method="probfuse", params={"probs": probs})
    assert fuse([BM25, DENSE], method="probfuse", params={"probs": np.array(probs)}) == as_lists
    odds = fuse([BM25, DENSE], method="bayesfuse", params={"log_odds": np.array(probs)})
    assert odds == fuse([BM25, DENSE], method="bayesfuse", params={"log_odds": probs})
    scores = fuse([BM25, DENSE], method="mapfuse", params={"map_scores": np.array([0.3, 0.6])})
    assert scores == fuse([BM25, DENSE], method="mapfuse", params={"map_scores": [0.3, 0.6]})


def test_optimize_fusion_takes_numpy_grids_and_checks_every_configuration_first() -> None:
    weights = np.array([[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]])  # ranx's weight grid: a 2-D array
    result = optimize_fusion(
        [BM25, DENSE], QRELS, method="wsum", metric="ndcg@3", search_space={"weights": weights}
    )
    assert [params["weights"] for params, _ in result.tries] == weights.tolist()
    ks = optimize_fusion([BM25, DENSE], QRELS, method="rrf", search_space={"k": np.array([10, 60])})
    assert [params["k"] for params, _ in ks.tries] == [10, 60]
    for k in (0, -1):
        with pytest.raises(ParameterError, match=f"'rrf': parameter 'k' .* got {k}"):
            optimize_fusion(Unfusable(), QRELS, method="rrf", search_space={"k": [10, k]})  # type: ignore[arg-type]


def test_rbcs_default_grid_stops_below_phi_one() -> None:
    result = optimize_fusion([BM25, DENSE], QRELS, method="rbc")
    phis = [params["phi"] for params, _ in result.tries]
    assert phis[0] == 0.01 and phis[-1] == 0.99 and len(phis) == 99


@pytest.mark.parametrize("metric", ["nDCG@3", "P(rel=1)@2", "IPrec@0.5", "MRR@10", "P@2", "bpref"])
def test_optimize_fusion_maximises_any_single_valued_notation(metric: str) -> None:
    result = optimize_fusion([BM25, DENSE], QRELS, method="rrf", metric=metric)
    assert result.metric == metric and 0.0 <= result.best_score <= 1.0


@pytest.mark.parametrize("k", ["0", "-1", "-60"])
def test_the_cli_refuses_a_k_outside_its_domain(tmp_path: Path, k: str) -> None:
    assert EF_EVAL is not None
    for name, run in (("a.txt", BM25), ("b.txt", DENSE)):
        lines = [
            f"{q} Q0 {d} {i + 1} {s} t"
            for q, ranked in run.items()
            for i, (d, s) in enumerate(ranked.items())
        ]
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    done = subprocess.run(
        [EF_EVAL, "fuse", "a.txt", "b.txt", "--param", f"k={k}", "-o", "out.txt"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "EF_EVALUATION_PLUGINS": ""},
        check=False,
    )
    assert done.returncode != 0
    assert f"fusion method 'rrf': parameter 'k' must be a finite number > 0, got {k}" in (
        done.stderr
    )
    assert "ZeroDivisionError" not in done.stderr
    assert not (tmp_path / "out.txt").exists()
