"""``ef-eval fuse``: run files in, a fused run file out (atomically), --optimize, clear errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import in_process_cli
from ef.evaluation import (
    DatasetFormatError,
    fuse,
    optimize_fusion,
    read_run,
    read_trec_run,
    write_run,
    write_trec_qrels,
    write_trec_run,
)
from ef.evaluation.cli import main

BM25 = {"q1": {"d1": 12.0, "d2": 9.5, "d3": 4.0}, "q2": {"d4": 3.0, "d5": 1.0}}
DENSE = {"q1": {"d3": 0.91, "d1": 0.85}, "q2": {"d5": 0.7, "d6": 0.2}}
QRELS = {"q1": {"d3": 1}, "q2": {"d5": 1}}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {"bm25": tmp_path / "bm25.run", "dense": tmp_path / "dense.run"}
    write_trec_run(paths["bm25"], BM25)
    write_trec_run(paths["dense"], DENSE)
    paths["qrels"] = tmp_path / "qrels.txt"
    write_trec_qrels(paths["qrels"], QRELS)
    paths["out"] = tmp_path / "fused.run"
    return paths


def run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(arg) for arg in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_fuse_writes_the_fused_run(files, capsys):
    code, out, err = run(
        capsys, "fuse", files["bm25"], files["dense"], "--method", "rrf", "-o", files["out"]
    )
    assert (code, out) == (0, "")
    assert err == f"wrote {files['out']}: {len(BM25)} queries, rrf of 2 runs\n"
    assert read_trec_run(files["out"]) == fuse([BM25, DENSE], method="rrf")
    assert files["out"].read_text().splitlines()[0].endswith(" fused")


def test_weights_norm_and_params_reach_fuse(files, capsys):
    args = ["fuse", files["bm25"], files["dense"], "-o", files["out"]]
    code = run(capsys, *args, "--method", "wsum", "--weights", "0.3", "0.7", "--norm", "zmuv")[0]
    assert code == 0
    expected = fuse([BM25, DENSE], method="wsum", weights=[0.3, 0.7], norm="zmuv")
    assert read_trec_run(files["out"]) == expected
    assert run(capsys, *args, "--method", "rbc", "--param", "phi=0.5", "--tag", "rbc")[0] == 0
    assert read_trec_run(files["out"]) == fuse([BM25, DENSE], method="rbc", params={"phi": 0.5})
    assert files["out"].read_text().split()[-1] == "rbc"


def test_optimize_prints_the_best_configuration_and_fuses_with_it(files, capsys):
    code, out, _ = run(
        capsys,
        "fuse",
        files["bm25"],
        files["dense"],
        "--optimize",
        "--qrels",
        files["qrels"],
        "--method",
        "wsum",
        "--metric",
        "mrr@1",
        "--format",
        "json",
        "-o",
        files["out"],
    )
    assert code == 0
    data = json.loads(out)
    result = optimize_fusion([BM25, DENSE], QRELS, method="wsum", metric="mrr@1")
    assert data["best_params"] == result.best_params
    assert [t["params"]["weights"] for t in data["tries"]] == [
        list(config["weights"]) for config, _ in result.tries
    ]
    assert read_trec_run(files["out"]) == result.fuse([BM25, DENSE])


def test_optimize_with_folds_shows_a_row_per_fold(files, capsys):
    code, out, _ = run(
        capsys,
        "fuse",
        files["bm25"],
        files["dense"],
        "--optimize",
        "--qrels",
        files["qrels"],
        "--folds",
        "2",
        "--format",
        "csv",
    )
    assert code == 0
    rows = out.splitlines()
    assert rows[0] == "queries,configuration,ndcg@10,held-out"
    assert [row.split(",")[0] for row in rows[1:]] == ["all queries", "fold 1", "fold 2"]
    assert rows[1].split(",")[1] == "k=10"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--method", "rfr"], 1, "unknown fusion method 'rfr'; known methods: anz, bayesfuse"),
        (["--method", "wsum", "--weights", "1"], 1, "1 weights given for 2 runs"),
        (["--method", "wsum", "--weights", "1", "nan"], 2, "weight 'nan' is not finite"),
        (["--param", "phi=0.5"], 1, "'rrf' does not take 'phi'; it takes: k"),
        (["--param", "k"], 2, "expected NAME=VALUE"),
        (["--param", "k=NaN"], 2, "k: 'NaN' is not a finite number"),
        (["--method", "rbc"], 1, "'rbc' needs phi"),
        (["--norm", "minmax"], 1, "unknown normalisation 'minmax'"),
        (["--optimize"], 2, "--optimize needs --qrels"),
        (["--folds", "2"], 2, "--folds goes with --optimize"),
    ],
)
def test_bad_options_fail_with_one_clear_line(files, capsys, args, code, message):
    result = run(capsys, "fuse", files["bm25"], files["dense"], "-o", files["out"], *args)
    assert result[0] == code
    assert message in result[2]
    assert len(result[2].strip().splitlines()) == 1
    assert not files["out"].exists()


def test_one_run_or_no_output_is_a_usage_error(files, capsys):
    assert "at least two run files" in run(capsys, "fuse", files["bm25"], "-o", files["out"])[2]
    assert "give -o FILE" in run(capsys, "fuse", files["bm25"], files["dense"])[2]


def test_a_failed_fusion_leaves_an_existing_output_untouched(files, capsys):
    files["out"].write_text("previous\n")
    code, _, err = run(
        capsys, "fuse", files["bm25"], files["dense"], "--method", "nope", "-o", files["out"]
    )
    assert code == 1 and "unknown fusion method" in err
    assert files["out"].read_text() == "previous\n"


def test_the_ef_eval_script_fuses(files):
    script = shutil.which("ef-eval", path=str(Path(sys.executable).parent))
    assert script is not None
    result = subprocess.run(
        [script, "fuse", str(files["bm25"]), str(files["dense"]), "-o", str(files["out"])],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "EF_EVALUATION_PLUGINS": ""},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert read_trec_run(files["out"]) == fuse([BM25, DENSE])
    assert (
        "fuse"
        in subprocess.run(
            [script, "--help"], capture_output=True, text=True, timeout=60, check=True
        ).stdout
    )


def _ef_eval(*args: object) -> subprocess.CompletedProcess[str]:
    return in_process_cli.ef_eval(*args)


@pytest.mark.parametrize("name", ["fused.parquet", "fused.json", "fused.jsonl", "fused.jsonl.gz"])
def test_the_fused_run_is_written_in_the_format_its_name_says(files, name):
    pytest.importorskip("pyarrow")
    out = files["out"].with_name(name)
    result = _ef_eval("fuse", files["bm25"], files["dense"], "-o", out)
    assert result.returncode == 0, result.stderr
    assert read_run(out) == fuse([BM25, DENSE])
    # read as what its name says, not as TREC text under another name
    with pytest.raises(DatasetFormatError):
        read_run(out, format="trec")


def test_run_format_names_the_fused_runs_format_too(files, tmp_path):
    bm25, dense, out = tmp_path / "bm25.out", tmp_path / "dense.out", tmp_path / "fused.out"
    write_run(bm25, BM25, format="json")
    write_run(dense, DENSE, format="json")
    result = _ef_eval("fuse", bm25, dense, "-o", out, "--run-format", "json")
    assert result.returncode == 0, result.stderr
    assert read_run(out, format="json") == fuse([BM25, DENSE])
