"""Records ranx's outputs for the tests that compare ef.evaluation with ranx, or checks the
recorded ones against ranx as installed.

    python tests/oracles/record.py            # (re)write every reference file
    python tests/oracles/record.py --check    # recompute, compare, write nothing
    python tests/oracles/record.py ranx_compare ranx_measures    # only these files

It needs the ``oracles`` extra (``pip install -e '.[test,oracles]'``): ranx, which compiles its
numba kernels on first use (minutes of CPU in a fresh environment; numba keeps them in ranx's
``__pycache__`` for the next run). The inputs come from ``tests/oracles/inputs.py``, the same
builders the tests use; only ranx's public API (and the two helpers of its own that the tests
compare with, Condorcet's candidates and a normalisation by name) is called.

The script runs itself again with ``PYTHONHASHSEED=0`` (ranx's Condorcet candidates come in a
set's order) and ``NUMBA_NUM_THREADS=1`` (ranx normalises in parallel chunks) unless they are
set so: the recordings do not depend on the machine, and ``--check`` compares them exactly.
With ``--check`` it exits 1 at the first file whose inputs or outputs differ, naming the file
and the first differing value.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.metadata
import io
import json
import math
import os
import platform
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: tests/ holds the oracles package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from oracles import inputs
from oracles.recorded import RECORD_COMMAND, canonical, digest, part_digests, path_of

ENVIRONMENT = {"PYTHONHASHSEED": "0", "NUMBA_NUM_THREADS": "1"}
"""What the recordings are made under (see the module's docstring)."""

VERSIONS = ("ranx", "numba", "llvmlite", "numpy", "scipy")
"""The peer and what its numbers run on (scipy: ranx's t-test and Tukey's HSD)."""

NOISE = {"rel_tol": 1e-12, "abs_tol": 1e-15}
"""How far a float may move when the recorded versions are not the installed ones (float noise,
far below the tests' 1e-9); with the same versions, values must be equal."""

FISHER_ERROR = 5 * (0.25 / 100_000) ** 0.5
"""How far two of ranx's Fisher p-values for the same runs may lie apart: ranx seeds numba's
generator, but its permutations run in parallel threads whose generators it does not seed, so
each run draws others. Five standard errors of 100,000 permutations at worst (p = 0.5): 0.0079.
"""

Recorder = Callable[[dict[str, Any]], dict[str, Any]]


def plain(value: Any) -> Any:
    """``value`` as plain JSON data: numpy scalars and arrays, numba's typed dicts and lists,
    and tuples become Python numbers, dicts and lists."""
    if isinstance(value, bool | int | str | None):
        return value
    if isinstance(value, float):
        return float(value)
    if hasattr(value, "tolist"):  # a numpy array or scalar
        return plain(value.tolist())
    if isinstance(value, Mapping) or hasattr(value, "items"):
        return {str(key): plain(item) for key, item in value.items()}
    return [plain(item) for item in value]


def record_compare(given: dict[str, Any]) -> dict[str, Any]:
    """ranx's ``compare`` by each test, and the per-query values it scored."""
    from ranx import Qrels, Run, compare

    metric = given["metric"]
    runs = [Run.from_dict(run, name=name) for name, run in given["runs"].items()]
    qrels = Qrels.from_dict(given["qrels"])
    reports = {
        name: compare(qrels, runs, [metric], **options).to_dict()
        for name, options in given["tests"].items()
    }
    return {"per_query": {run.name: dict(run.scores[metric]) for run in runs}, **reports}


def record_measures(given: dict[str, Any]) -> dict[str, Any]:
    """ranx's per-query values of each metric."""
    from ranx import Qrels, Run, evaluate

    run = Run.from_dict(given["run"])
    evaluate(
        Qrels.from_dict(given["qrels"]),
        run,
        given["metrics"],
        make_comparable=given["make_comparable"],
    )
    return {metric: dict(run.scores[metric]) for metric in given["metrics"]}


def normalized_runs(raw: list[Any], norm: str) -> list[Any]:
    """ranx's normalisation of each run, query by query: ranx normalises a whole run in parallel
    chunks, and ``zmuv`` there drops the queries after an empty one in the same chunk (an
    expected difference, recorded apart), so each query goes through on its own."""
    from ranx import Run
    from ranx.normalization import norm_switch

    if norm == "none":
        return raw
    if norm == "borda":
        return list(norm_switch("borda")(raw))
    normalized = []
    for run in raw:
        queries: dict[str, dict[str, float]] = {}
        for query, results in run.to_dict().items():
            queries[query] = {}
            if results:
                one = norm_switch(norm)(Run({query: dict(results)}))
                queries[query] = dict(one.to_dict()[query])
        normalized.append(Run(queries))
    return normalized


def record_fusion(given: dict[str, Any]) -> dict[str, Any]:
    """ranx's fused runs for every case, its normalised runs, its Condorcet candidates with
    their fusion, its grid searches, and its outputs on the expected differences' inputs."""
    import numba
    from ranx import Qrels, Run, fuse, optimize_fusion
    from ranx.fusion import (
        bayesfuse_train,
        mapfuse_train,
        posfuse_train,
        probfuse_train,
        segfuse_train,
        slidefuse_train,
    )
    from ranx.fusion.condorcet import get_candidates
    from ranx.normalization import norm_switch

    params: dict[str, dict[str, Any]] = given["params"]
    trained: dict[str, str] = given["trained"]
    trainers: dict[str, Callable[[Any, list[Any]], Any]] = {
        "probfuse": lambda q, r: probfuse_train(q, r, params["probfuse"]["n_segments"]),
        "segfuse": segfuse_train,
        "slidefuse": slidefuse_train,
        "posfuse": posfuse_train,
        "bayesfuse": bayesfuse_train,
        "mapfuse": mapfuse_train,
    }
    out: dict[str, Any] = {"fused": {}, "norms": {}, "condorcet": {}, "optimized": {}}
    for seed, generated in given["generated"].items():
        qrels = Qrels(generated["qrels"])
        raw = [Run(run) for run in inputs.for_ranx(generated["runs"])]
        for norm in given["norms"]:
            normalized = normalized_runs(raw, norm)
            out["norms"].setdefault(seed, {})[norm] = [run.to_dict() for run in normalized]
            for case_seed, method, case_norm in given["cases"]:
                if (str(case_seed), case_norm) != (seed, norm):
                    continue
                options = dict(params.get(method, {}))
                if method in trained:
                    options.pop("n_segments", None)
                    options[trained[method]] = trainers[method](qrels, normalized)
                if method.startswith("w") or method == "mixed":
                    options["weights"] = given["weights"]
                fused = fuse(normalized, norm=None, method=method, params=options)
                out["fused"].setdefault(seed, {}).setdefault(method, {})[norm] = fused.to_dict()
    for seed, norm, weighted in given["condorcet"]:
        runs = inputs.for_ranx(given["generated"][str(seed)]["runs"])
        normalized = normalized_runs([Run(run) for run in runs], norm)
        # The candidates' order is a set's: the same in every run of this script only because
        # it runs with PYTHONHASHSEED=0; the fusion is recorded beside them, from this order.
        candidates = [list(query) for query in get_candidates([run.run for run in normalized])]
        fused = fuse(
            normalized,
            norm=None,
            method="w_condorcet" if weighted else "condorcet",
            params={"weights": given["weights"]} if weighted else {},
        )
        key = "weighted" if weighted else "unweighted"
        by_norm = out["condorcet"].setdefault(key, {}).setdefault(str(seed), {})
        by_norm[norm] = {"candidates": candidates, "fused": fused.to_dict()}
    optimization = given["optimization"]
    for method, norm in optimization["methods"].items():
        best, report = optimize_fusion(
            Qrels(optimization["qrels"]),
            [Run(run) for run in inputs.for_ranx(optimization["runs"])],
            norm=norm,
            method=method,
            metric=optimization["metric"],
            return_optimization_report=True,
            show_progress=False,
        )
        configs = [list(pair) for pair in zip(report.configs, report.results, strict=True)]
        out["optimized"][method] = {"best": best, "configs": configs}
    differences = given["differences"]
    training = differences["posfuse_training"]
    out["differences"] = {
        "tied_rrf": fuse(
            [Run(run) for run in differences["tied_rrf"]], norm=None, method="rrf"
        ).to_dict(),
        "missing_min": fuse(
            [Run(run) for run in differences["missing_min"]], norm=None, method="min"
        ).to_dict(),
        "posfuse_training": posfuse_train(
            Qrels(training["qrels"]), [Run(run) for run in training["runs"]]
        ),
        "zmuv_run": norm_switch("zmuv")(Run(differences["zmuv_run"])).to_dict(),
        "numba_threads": numba.get_num_threads(),
    }
    return out


def record_kernel(given: dict[str, Any]) -> dict[str, Any]:
    """ranx's fusion of the runs by each method."""
    from ranx import Run, fuse

    return {
        method: fuse(
            [Run(run) for run in given["runs"]], method=method, norm=norm, params=params
        ).to_dict()
        for method, norm, params in given["methods"]
    }


def _compare_inputs() -> dict[str, Any]:
    return inputs.compare_inputs(*inputs.compare_runs())


def _measures_inputs() -> dict[str, Any]:
    return inputs.measures_inputs(*inputs.judged_run(inputs.MEASURES_SEED))


def _kernel_inputs() -> dict[str, Any]:
    runs = inputs.kernel_runs(inputs.KERNEL_SEED, 6, (1, 5, 20))
    return inputs.kernel_inputs(inputs.KERNEL_SEED, runs, inputs.KERNEL_METHODS)


def _combines_inputs() -> dict[str, Any]:
    runs = inputs.kernel_runs(inputs.COMBINES_SEED, 8, (1, 2, 5, 20))
    return inputs.kernel_inputs(inputs.COMBINES_SEED, runs, inputs.COMBINES_METHODS)


# name: (what builds the inputs, what records ranx's outputs for them, the test using them)
ORACLES: dict[str, tuple[Callable[[], dict[str, Any]], Recorder, str]] = {
    "ranx_compare": (_compare_inputs, record_compare, "tests/test_compare_ranx.py"),
    "ranx_measures": (_measures_inputs, record_measures, "tests/test_measures_beyond.py"),
    "ranx_fusion": (inputs.fusion_inputs, record_fusion, "tests/test_fusion_ranx.py"),
    "ranx_fusion_kernel": (
        _kernel_inputs,
        record_kernel,
        "plugins/ef-evaluation-speedups/tests/test_fusion_kernel.py",
    ),
    "ranx_fusion_kernel_combines": (
        _combines_inputs,
        record_kernel,
        "plugins/ef-evaluation-speedups/tests/test_fusion_kernel_combines.py",
    ),
}


def versions() -> dict[str, str]:
    found = {package: importlib.metadata.version(package) for package in VERSIONS}
    return {**found, "python": platform.python_version()}


def seeds_of(given: Mapping[str, Any]) -> list[int]:
    return list(given["seeds"]) if "seeds" in given else [given["seed"]]


def header(name: str, given: dict[str, Any], command: str) -> dict[str, Any]:
    return {
        "name": name,
        "peer": "ranx",
        "versions": versions(),
        "environment": ENVIRONMENT,
        "seeds": seeds_of(given),
        "inputs_sha256": digest(given),
        "inputs_sha256_by_part": part_digests(given),
        "command": command,
        "used_by": ORACLES[name][2],
    }


def write(name: str, data: dict[str, Any]) -> int:
    """Write the reference file, byte for byte the same for the same data (no time, no file
    name in the gzip header). Returns its size."""
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as file:
        file.write(canonical(data) + b"\n")
    path_of(name).write_bytes(buffer.getvalue())
    return len(buffer.getvalue())


TOLERANCES: dict[str, dict[str, float]] = {"ranx_compare": {"fisher": FISHER_ERROR}}
"""The outputs (by file, then top-level key) that are Monte-Carlo estimates: how far apart two
of ranx's draws may lie."""


def differences(
    recorded: Any, fresh: Any, where: str, exact: bool, tolerance: float | None = None
) -> Iterator[str]:
    """Where ``fresh`` differs from ``recorded``: a path and both values, first difference
    first. Floats must be equal when ``exact``, else within :data:`NOISE`, or within
    ``tolerance`` where it is given."""
    if isinstance(recorded, dict) and isinstance(fresh, dict):
        if list(recorded) != list(fresh):
            yield f"{where}: keys {list(recorded)[:8]} recorded, {list(fresh)[:8]} now"
            return
        for key in recorded:
            path = f"{where}[{key!r}]"
            yield from differences(recorded[key], fresh[key], path, exact, tolerance)
    elif isinstance(recorded, list) and isinstance(fresh, list):
        if len(recorded) != len(fresh):
            yield f"{where}: {len(recorded)} items recorded, {len(fresh)} now"
            return
        for index, (old, new) in enumerate(zip(recorded, fresh, strict=True)):
            yield from differences(old, new, f"{where}[{index}]", exact, tolerance)
    elif (
        isinstance(recorded, float)
        and isinstance(fresh, float)
        and tolerance is not None
        and abs(recorded - fresh) <= tolerance
    ):
        return
    elif (
        isinstance(recorded, float)
        and isinstance(fresh, float)
        and not exact
        and math.isclose(recorded, fresh, **NOISE)
    ):
        return
    elif type(recorded) is not type(fresh) or recorded != fresh:
        yield f"{where}: {recorded!r} recorded, {fresh!r} now"


def check(name: str, given: dict[str, Any], outputs: Any) -> str | None:
    """What is wrong with the reference file ``name`` against ``outputs``, or None."""
    where = f"tests/oracles/{name}.json.gz"
    try:
        with gzip.open(path_of(name), "rt", encoding="utf-8") as file:
            data = json.load(file)
    except FileNotFoundError:
        return f"{where} is missing: record it with `{RECORD_COMMAND}`"
    head = data["header"]
    if head["inputs_sha256"] != digest(given):
        return (
            f"{where}: recorded from other inputs (SHA-256 {head['inputs_sha256']}) than "
            f"tests/oracles/inputs.py builds now ({digest(given)}): record it again"
        )
    exact = head["versions"] == versions()
    recorded, tolerances = data["outputs"], TOLERANCES.get(name, {})
    if list(recorded) != list(outputs):
        return f"{where}: outputs {list(recorded)} recorded, {list(outputs)} now"
    for key, value in recorded.items():
        path = f"outputs[{key!r}]"
        found = differences(value, outputs[key], path, exact, tolerances.get(key))
        first = next(found, None)
        if first is not None:
            return f"{where}: {first}"
    return None


def ensure_environment() -> None:
    """Run this script again under :data:`ENVIRONMENT` unless it already runs so."""
    if all(os.environ.get(key) == value for key, value in ENVIRONMENT.items()):
        return
    os.environ.update(ENVIRONMENT)
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with ranx, write nothing")
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"of {', '.join(ORACLES)}")
    arguments = parser.parse_args(argv)
    unknown = [name for name in arguments.names if name not in ORACLES]
    if unknown:
        parser.error(f"no reference file {', '.join(unknown)}: one of {', '.join(ORACLES)}")
    ensure_environment()
    from numba.core.errors import NumbaTypeSafetyWarning

    command = " ".join([RECORD_COMMAND, *arguments.names])
    problems = []
    for name in arguments.names or ORACLES:
        build, record, _ = ORACLES[name]
        given = build()
        with warnings.catch_warnings():
            # numba warns about casts inside ranx's kernels while it compiles them.
            warnings.simplefilter("ignore", NumbaTypeSafetyWarning)
            outputs = json.loads(canonical(plain(record(given))))
        if arguments.check:
            problem = check(name, given, outputs)
            print(problem or f"tests/oracles/{name}.json.gz: the same", flush=True)
            problems += [problem] if problem else []
        else:
            size = write(name, {"header": header(name, given, command), "outputs": outputs})
            print(f"tests/oracles/{name}.json.gz: {size:,} bytes", flush=True)
    if problems:
        print(f"{len(problems)} reference file(s) differ from ranx as installed", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
