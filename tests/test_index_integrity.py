"""A saved index cannot lie: every file is checked against the size and hash its manifest
records, only regular files are read, damage the hashes cannot see is refused by the checks
behind them, and ``ingest(..., index_dir=)`` rebuilds (saying why) instead of reusing a damaged
index. A save never destroys a file the index did not write."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy
import pytest

from ef._index_store import MANIFEST
from ef.evaluation import write_beir
from ef.source_manager import ingest, load_index
from resealed_index import reseal

CORPUS_A = {
    "a1": "Sort the items of a list in place, in ascending order.",
    "a2": "Open a file and return a stream for reading or writing.",
    "a3": "A needle and thread: sew a list of patches onto a coat.",
    "a4": "Read the lines of a text file into a list of strings.",
    "a5": "Write a sorted list of names to a file, one name a line.",
    "a6": "Thread pools run tasks while the main thread waits on a lock.",
}
CORPUS_B = {  # as many documents, other words: bm25s's own check of the count passes
    "b1": "Bake the bread in a hot oven until the crust is golden.",
    "b2": "Knead the dough and leave it to rise in a warm place.",
    "b3": "A sharp knife cuts the bread without crushing the crumb.",
    "b4": "Store the flour in a dry jar away from the light.",
    "b5": "Sourdough needs a starter fed with flour and water.",
    "b6": "Slice the loaf, toast the slices and serve them with butter.",
}
QUERIES = ["sort a list", "file stream", "needle thread", "lines of text", "names", "lock"]
LOGGER = "ef.source_manager"
EF_EVAL = shutil.which("ef-eval", path=str(Path(sys.executable).parent))


def rankings(index: object) -> list[list[tuple[str, float]]]:
    return [
        [(hit.segment.source_id, hit.score) for hit in index.search(query, limit=6)]  # type: ignore[attr-defined]
        for query in QUERIES
    ]


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    """CORPUS_A indexed with BM25 and saved in ``tmp_path / "a"``."""
    ingest(CORPUS_A, index_dir=tmp_path / "a")
    return tmp_path / "a"


@pytest.fixture
def other(tmp_path: Path) -> Path:
    """CORPUS_B indexed with BM25 and saved in ``tmp_path / "b"``."""
    ingest(CORPUS_B, index_dir=tmp_path / "b")
    return tmp_path / "b"


def assert_refused(folder: Path, relative: str, problem: str) -> None:
    """``load_index`` refuses ``folder``, naming the folder, the file and the problem."""
    with pytest.raises(ValueError) as caught:
        load_index(folder)
    message = str(caught.value)
    assert message.startswith(f"{folder / relative}: not a usable saved index: "), message
    assert problem in message, message


def assert_rebuilt(
    folder: Path, relative: str, caplog: pytest.LogCaptureFixture, *, embedder: str = "bm25"
) -> None:
    """``ingest`` rebuilds the index in ``folder``, logs which file made it, and the rebuilt
    index ranks as a fresh build does; the next ``ingest`` reuses it."""
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        rebuilt = ingest(CORPUS_A, embedder=embedder, index_dir=folder)
    assert rebuilt.loaded_from is None
    [record] = [r for r in caplog.records if r.name == LOGGER]
    assert record.levelno == logging.WARNING
    assert str(folder / relative) in record.getMessage()
    assert record.getMessage().endswith("; rebuilding it")
    fresh = ingest(CORPUS_A, embedder=embedder)
    assert rankings(rebuilt) == rankings(fresh)
    again = ingest(CORPUS_A, embedder=embedder, index_dir=folder)
    assert again.loaded_from == folder.absolute()
    assert rankings(again) == rankings(fresh)


def test_a_whole_index_loads_and_is_reused_without_a_warning(
    saved: Path, caplog: pytest.LogCaptureFixture
) -> None:
    manifest = json.loads((saved / MANIFEST).read_text())
    listed = {entry["path"] for entry in manifest["files"]}
    on_disk = {p.relative_to(saved).as_posix() for p in saved.rglob("*") if p.is_file()}
    assert listed == on_disk - {MANIFEST}  # every file, the segments and vocabularies too
    assert "segments.json" in listed and "bm25/vocab.tokenizer.json" in listed
    for entry in manifest["files"]:
        assert entry["size"] == (saved / entry["path"]).stat().st_size
        assert len(entry["sha256"]) == 64
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert ingest(CORPUS_A, index_dir=saved).loaded_from == saved.absolute()
    (record,) = caplog.records  # the reuse is announced, at INFO
    assert record.levelno == logging.INFO and record.getMessage().startswith("loaded index from")
    assert rankings(load_index(saved)) == rankings(ingest(CORPUS_A))


@pytest.mark.parametrize(
    "relative",
    [
        "bm25/data.csc.index.npy",
        "bm25/indices.csc.index.npy",
        "bm25/indptr.csc.index.npy",
        "bm25/vocab.tokenizer.json",
    ],
)
def test_an_engine_file_copied_from_another_index_is_named_and_rebuilt(
    saved: Path, other: Path, relative: str, caplog: pytest.LogCaptureFixture
) -> None:
    shutil.copyfile(other / relative, saved / relative)
    problem = "copied from another index"
    assert_refused(saved, relative, problem)
    assert_rebuilt(saved, relative, caplog)


def test_the_whole_engine_folder_copied_from_another_index_is_refused(
    saved: Path, other: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shutil.rmtree(saved / "bm25")
    shutil.copytree(other / "bm25", saved / "bm25")
    # The first file in the manifest's order that differs is named.
    assert_refused(saved, "bm25/data.csc.index.npy", "copied from another index")
    assert_rebuilt(saved, "bm25/data.csc.index.npy", caplog)


def test_two_doc_ids_swapped_in_the_segments_are_refused(
    saved: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = saved / "segments.json"
    columns = json.loads(path.read_text())
    ids = columns["source_ids"]
    ids[0], ids[1] = ids[1], ids[0]  # same length, same bytes, another meaning
    path.write_text(json.dumps(columns))
    assert path.stat().st_size == json.loads((saved / MANIFEST).read_text())["files"][-1]["size"]
    assert_refused(saved, "segments.json", "its content differs")
    assert_rebuilt(saved, "segments.json", caplog)


def flip_bit(path: Path, offset_from_end: int) -> None:
    data = bytearray(path.read_bytes())
    data[-offset_from_end] ^= 0x10
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "relative",
    ["bm25/data.csc.index.npy", "bm25/indices.csc.index.npy", "bm25/indptr.csc.index.npy"],
)
def test_one_flipped_bit_in_an_array_is_refused(
    saved: Path, relative: str, caplog: pytest.LogCaptureFixture
) -> None:
    flip_bit(saved / relative, 3)
    assert_refused(saved, relative, "its content differs")
    assert_rebuilt(saved, relative, caplog)


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "relative", ["bm25/data.csc.index.npy", "bm25/vocab.tokenizer.json", "segments.json"]
)
def test_a_fifo_in_place_of_a_file_is_refused_never_read(
    saved: Path, relative: str, caplog: pytest.LogCaptureFixture
) -> None:
    (saved / relative).unlink()
    os.mkfifo(saved / relative)  # opening it to read would wait for a writer forever
    assert_refused(saved, relative, "a FIFO, not a regular file; refusing to read it")
    assert_rebuilt(saved, relative, caplog)


@pytest.mark.timeout(300)
def test_a_fifo_in_place_of_the_manifest_is_refused_never_read(saved: Path) -> None:
    (saved / MANIFEST).unlink()
    os.mkfifo(saved / MANIFEST)
    assert_refused(saved, MANIFEST, "a FIFO, not a regular file")
    # Without a manifest to read, nothing in the folder is known to be the index's own.
    with pytest.raises(FileExistsError, match="holds something other than a saved ef index"):
        ingest(CORPUS_A, index_dir=saved)
    assert (saved / "segments.json").is_file()


def test_a_link_to_a_device_in_place_of_a_file_is_refused(saved: Path) -> None:
    vocabulary = saved / "bm25" / "vocab.tokenizer.json"
    vocabulary.unlink()
    vocabulary.symlink_to("/dev/zero")
    assert_refused(saved, "bm25/vocab.tokenizer.json", "a symbolic link, not a regular file")


def test_a_truncated_array_is_named_even_with_a_matching_manifest(saved: Path) -> None:
    path = saved / "bm25" / "data.csc.index.npy"
    whole = path.stat().st_size
    path.write_bytes(path.read_bytes()[:-4])
    assert_refused(saved, "bm25/data.csc.index.npy", f"{whole - 4:,} bytes; {MANIFEST} says")
    reseal(saved)  # a manifest written for the cut file: numpy alone would raise EOFError
    assert_refused(saved, "bm25/data.csc.index.npy", "its header describes")
    path.write_bytes(path.read_bytes()[:100])  # cut inside the header
    reseal(saved)
    assert_refused(saved, "bm25/data.csc.index.npy", "not a .npy array")


def test_a_bad_header_is_named_even_with_a_matching_manifest(saved: Path) -> None:
    path = saved / "bm25" / "indptr.csc.index.npy"
    data = path.read_bytes()
    start = data.index(b"{")
    # An unclosed bracket: numpy's header parser fails with tokenize.TokenError, no path.
    bad = (
        data[:start]
        + b"{'descr': ('<i8', "
        + b" " * (data.index(b"}") - start - 17)
        + data[data.index(b"}") + 1 :]
    )
    assert len(bad) == len(data)
    path.write_bytes(bad)
    assert_refused(saved, "bm25/indptr.csc.index.npy", "its content differs")
    reseal(saved)
    assert_refused(saved, "bm25/indptr.csc.index.npy", "not a .npy array")


def test_an_out_of_range_segment_is_refused_at_load_not_at_search(saved: Path) -> None:
    path = saved / "bm25" / "indices.csc.index.npy"
    indices = numpy.load(path)
    indices[0] = len(CORPUS_A) + 5  # a search for that term would raise IndexError
    numpy.save(path, indices)
    reseal(saved)
    assert_refused(saved, "bm25/indices.csc.index.npy", "names segments outside the 6")


def test_a_vocabulary_larger_than_the_index_is_refused(saved: Path, other: Path) -> None:
    # The other corpus has more terms: its vocabulary's ids run past this index's terms, which
    # bm25s would refuse only at search time.
    shutil.copyfile(other / "bm25/vocab.tokenizer.json", saved / "bm25/vocab.tokenizer.json")
    assert_refused(saved, "bm25/vocab.tokenizer.json", "copied from another index")
    reseal(saved)
    words_a = json.loads((saved / "bm25/vocab.tokenizer.json").read_text())["stem_to_sid"]
    assert_refused(saved, "bm25/vocab.tokenizer.json", "the index holds")
    assert words_a


def test_saved_engine_parameters_are_not_read(saved: Path) -> None:
    # Settings come from the manifest's identity; params.index.json (bm25s's) is only checked.
    path = saved / "bm25" / "params.index.json"
    params = json.loads(path.read_text())
    path.write_text(json.dumps({**params, "backend": "numba", "k1": 0.1}))
    assert_refused(saved, "bm25/params.index.json", f"bytes; {MANIFEST} says")
    reseal(saved)
    assert rankings(load_index(saved)) == rankings(ingest(CORPUS_A))


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda identity: identity.pop("name"), 'to hold a string "name"'),
        (lambda identity: identity.update(engine=7), 'to hold a string "engine"'),
        (lambda identity: identity.update(engine="tfidf"), "unknown engine 'tfidf'"),
        (lambda identity: identity.update(segmenting=[]), '"segmenting" to be an object'),
    ],
)
def test_a_manifest_without_its_identity_is_named(
    saved: Path, change: object, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = saved / MANIFEST
    manifest = json.loads(path.read_text())
    change(manifest["identity"])  # type: ignore[operator]
    path.write_text(json.dumps(manifest))
    assert_refused(saved, MANIFEST, problem)
    rebuilt = ingest(CORPUS_A, index_dir=saved)  # another identity: rebuilt, no KeyError
    assert rebuilt.loaded_from is None
    assert rankings(load_index(saved)) == rankings(ingest(CORPUS_A))


def test_a_manifest_without_its_file_list_is_named(saved: Path) -> None:
    path = saved / MANIFEST
    manifest = json.loads(path.read_text())
    for files, problem in [
        (None, 'expected "files", a list'),
        ([{"path": "segments.json"}], 'must hold a "path", a "size" and a "sha256"'),
        ([{"path": "../a/segments.json", "size": 1, "sha256": ""}], "is not a path inside"),
    ]:
        path.write_text(json.dumps({**manifest, "files": files}))
        assert_refused(saved, MANIFEST, problem)
    # A file the engine reads that the manifest does not list is never read.
    listed = [e for e in manifest["files"] if e["path"] != "bm25/indptr.csc.index.npy"]
    path.write_text(json.dumps({**manifest, "files": listed}))
    assert_refused(saved, "bm25/indptr.csc.index.npy", f"not listed in {MANIFEST}")


def test_an_unavailable_engine_names_the_index(
    saved: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "bm25s", None)  # what an uninstalled package does
    with pytest.raises(ImportError) as caught:
        load_index(saved)
    message = str(caught.value)
    assert message.startswith(f"{saved / MANIFEST}: a saved bm25 index: ")
    assert "pip install 'ef-evaluation[bm25]'" in message


def test_an_index_saved_before_files_were_hashed_is_refused_and_rebuilt(
    saved: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = saved / MANIFEST
    manifest = json.loads(path.read_text())
    del manifest["files"]
    path.write_text(json.dumps({**manifest, "format_version": 1}))
    assert_refused(saved, MANIFEST, "format_version 1, saved by an earlier version")
    assert_refused(saved, MANIFEST, "rebuild it")
    assert_rebuilt(saved, MANIFEST, caplog)


def test_a_save_never_destroys_a_file_the_index_did_not_write(
    saved: Path, caplog: pytest.LogCaptureFixture
) -> None:
    notes = saved / "my_notes.txt"
    notes.write_text("which corpus this is\n")
    # Reuse reads the index and writes nothing: the note is no obstacle.
    assert ingest(CORPUS_A, index_dir=saved).loaded_from == saved.absolute()
    # A rebuild would replace the folder: refused before any work, the note kept.
    with pytest.raises(FileExistsError) as caught:
        ingest(CORPUS_B, index_dir=saved)
    assert str(caught.value).startswith(f"{saved} holds a saved ef index and also my_notes.txt")
    with pytest.raises(FileExistsError, match=r"my_notes\.txt, which the index did not write"):
        ingest(CORPUS_B).save(saved)
    assert notes.read_text() == "which corpus this is\n"
    assert [hit.segment.source_id for hit in load_index(saved).search("sort")] == ["a1", "a5"]
    # Inside the engine's folder, or a folder of one's own, the same.
    notes.unlink()
    (saved / "bm25" / "extra.txt").write_text("mine")
    (saved / "drafts").mkdir()
    (saved / "drafts" / "a.txt").write_text("mine too")
    with pytest.raises(FileExistsError, match=r"also bm25/extra\.txt, drafts, which"):
        ingest(CORPUS_B, index_dir=saved)
    assert (saved / "drafts" / "a.txt").read_text() == "mine too"
    shutil.rmtree(saved / "drafts")
    (saved / "bm25" / "extra.txt").unlink()
    assert ingest(CORPUS_B, index_dir=saved).loaded_from is None  # nothing else: replaced


def test_a_damaged_index_folder_with_a_note_is_not_replaced(saved: Path, other: Path) -> None:
    shutil.copyfile(other / "segments.json", saved / "segments.json")
    (saved / "my_notes.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match=r"my_notes\.txt"):
        ingest(CORPUS_A, index_dir=saved)
    assert (saved / "my_notes.txt").read_text() == "keep me"


@pytest.mark.timeout(600)
def test_a_dense_index_checks_its_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    embedder = "st:all-MiniLM-L6-v2"
    saved, other = tmp_path / "a", tmp_path / "b"
    ingest(CORPUS_A, embedder=embedder, index_dir=saved)
    ingest(CORPUS_B, embedder=embedder, index_dir=other)
    vectors = saved / "vectors.npy"
    assert vectors.stat().st_size == (other / "vectors.npy").stat().st_size
    shutil.copyfile(other / "vectors.npy", vectors)
    assert_refused(saved, "vectors.npy", "copied from another index")
    assert_rebuilt(saved, "vectors.npy", caplog, embedder=embedder)
    flip_bit(vectors, 7)
    assert_refused(saved, "vectors.npy", "its content differs")
    array = numpy.load(vectors)
    array[2, 5] = numpy.nan
    numpy.save(vectors, array)
    reseal(saved)
    assert_refused(saved, "vectors.npy", "values that are not finite numbers")
    vectors.unlink()
    os.mkfifo(vectors)
    assert_refused(saved, "vectors.npy", "a FIFO, not a regular file")
    assert_rebuilt(saved, "vectors.npy", caplog, embedder=embedder)


def test_the_cli_says_why_it_rebuilds_and_refuses_to_lose_a_note(tmp_path: Path) -> None:
    assert EF_EVAL is not None, "the ef-eval script is not installed: pip install -e ."
    dataset, index = tmp_path / "tiny", tmp_path / "index"
    queries = {f"q{i}": query for i, query in enumerate(QUERIES)}
    qrels = {"q0": {"a1": 1.0}, "q1": {"a2": 1.0}, "q2": {"a3": 1.0}, "q3": {"a4": 1.0}}
    write_beir(dataset, CORPUS_A, queries, qrels)

    def cli() -> subprocess.CompletedProcess[str]:
        argv = ["retrieval", dataset, "--retriever", "bm25", "--index-dir", index, "--no-progress"]
        environment = {**os.environ, "EF_EVALUATION_PLUGINS": ""}
        return subprocess.run(
            [EF_EVAL, *map(str, argv), "--format", "json"],
            capture_output=True,
            text=True,
            env=environment,
            timeout=120,
            check=False,
        )

    first = cli()
    assert first.returncode == 0 and first.stderr == "", first.stderr
    flip_bit(index / "bm25" / "data.csc.index.npy", 3)
    second = cli()
    assert second.returncode == 0, second.stderr
    assert second.stderr.startswith(
        f"{index / 'bm25' / 'data.csc.index.npy'}: not a usable saved index: its content differs"
    )
    assert second.stderr.endswith("; rebuilding it\n")
    assert json.loads(second.stdout)["metrics"] == json.loads(first.stdout)["metrics"]
    flip_bit(index / "segments.json", 3)
    (index / "my_notes.txt").write_text("keep me")
    third = cli()
    assert third.returncode == 2 and third.stdout == ""
    assert f"--index-dir: {index} holds a saved ef index and also my_notes.txt" in third.stderr
    assert (index / "my_notes.txt").read_text() == "keep me"


def test_a_note_left_while_an_index_is_written_is_kept(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    ingest(CORPUS_A).save(folder)
    index = ingest(CORPUS_B)
    write_engine = index._write_engine

    def leave_a_note_meanwhile(staging: Path) -> None:
        (folder / "my_notes.txt").write_text("written during the save")
        write_engine(staging)

    index._write_engine = leave_a_note_meanwhile  # type: ignore[method-assign]
    with pytest.raises(FileExistsError, match=r"my_notes\.txt"):
        index.save(folder)
    assert (folder / "my_notes.txt").read_text() == "written during the save"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]  # no temporary folder left
    assert [h.segment.source_id for h in load_index(folder).search("sort")] == ["a1", "a5"]
