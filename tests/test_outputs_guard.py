"""One guard for every output: ``run -o``, ``fuse -o`` and ``suite --merge -o`` never replace
one of the command's inputs, by name, through a link, or as a file inside a merged folder; and
the library's writer refuses the same, at the moment of writing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ef.evaluation import write_text_atomically
from ef.evaluation._io.atomic import replaced_atomically
from ef.evaluation.cli import main
from suite_fixtures import beir_folder

QRELS = "".join(f"q{i} 0 d{i} 1\n" for i in range(4))
RUN_A = "".join(f"q{i} Q0 d{i} 1 2.0 a\nq{i} Q0 x{i} 2 1.0 a\n" for i in range(4))
RUN_B = "".join(f"q{i} Q0 x{i} 1 2.0 b\nq{i} Q0 d{i} 2 1.0 b\n" for i in range(4))


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    monkeypatch.chdir(tmp_path)
    for name, text in (("qrels.txt", QRELS), ("a.txt", RUN_A), ("b.txt", RUN_B)):
        Path(name).write_text(text)
    os.symlink("a.txt", "link.txt")
    return {name: Path(name).read_bytes() for name in ("qrels.txt", "a.txt", "b.txt")}


def _unchanged(files: dict[str, bytes]) -> bool:
    return all(Path(name).read_bytes() == data for name, data in files.items())


@pytest.mark.parametrize("output", ["qrels.txt", "a.txt", "./b.txt", "link.txt"])
def test_run_never_writes_onto_an_input(files, capsys, output):
    assert main(["run", "qrels.txt", "a.txt", "b.txt", "--format", "json", "-o", output]) == 2
    assert "would replace the input" in capsys.readouterr().err
    assert _unchanged(files)


@pytest.mark.parametrize("output", ["a.txt", "link.txt", "./b.txt"])
def test_fuse_never_writes_onto_an_input(files, capsys, output):
    assert main(["fuse", "a.txt", "b.txt", "-o", output]) == 2
    assert "would replace the input" in capsys.readouterr().err
    assert _unchanged(files)


def test_the_writer_refuses_an_input_at_the_moment_of_writing(files):
    with pytest.raises(ValueError, match=r"link\.txt would replace the input a\.txt"):
        with write_text_atomically("link.txt", inputs=["a.txt"]) as out:
            out.write("lost")
    assert _unchanged(files)
    with write_text_atomically("summary.md", inputs=["a.txt"], append=True) as out:
        out.write("one\n")
    with write_text_atomically("summary.md", inputs=["a.txt"], append=True) as out:
        out.write("two\n")
    assert Path("summary.md").read_text() == "one\ntwo\n"
    with pytest.raises(ValueError, match="would replace the input"):
        with write_text_atomically("a.txt", inputs=["./a.txt"], append=True) as out:
            out.write("lost")
    with pytest.raises(ValueError, match="would replace the input"):
        with replaced_atomically("link.txt", inputs=["a.txt"]) as name:
            Path(name).write_text("lost")
    assert _unchanged(files)


@pytest.fixture
def merged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A suite's results folder, ``results``, of one dataset and one system."""
    monkeypatch.chdir(tmp_path)
    beir_folder(tmp_path, "woods", seed=3, n_docs=20, n_queries=6)
    argv = ["suite", "woods", "--system", "bm25", "--k", "10", "--no-progress"]
    assert main([*argv, "--results-dir", "results", "--format", "json", "-o", "out.json"]) == 0
    return tmp_path / "results"


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    "extra",
    [
        ["-o", "results/suite.json"],
        ["-o", "results/woods/bm25.json"],
        ["--html", "results/suite.json"],
        ["--results-dir", "results"],
    ],
    ids=["-o the index", "-o a cell", "--html the index", "--results-dir itself"],
)
def test_suite_merge_never_writes_into_a_folder_it_merges(merged, capsys, extra):
    before = _tree(merged)
    assert main(["suite", "--merge", "results", "--format", "json", *extra]) == 2
    assert "would replace the input results" in capsys.readouterr().err
    assert _tree(merged) == before
