"""Saving and loading the built-in indexes: the same rankings back, reuse only of a matching
index, atomic saves, no pickle, and clear errors for damaged files."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy
import pytest

from ef import _encoding
from ef._index_store import MANIFEST
from ef.source_manager import IndexProgress, ingest, load_index
from resealed_index import reseal

LONG = (
    " ".join(f"filler{i}" for i in range(150)) + " needle " + " ".join(f"t{i}" for i in range(60))
)
CORPUS = {
    "long": LONG,
    "sort": "Sort the items of a list in place, in ascending order.",
    "sorted": "Return a new sorted list from the items of an iterable.",
    "open": "Open a file and return a stream for reading or writing.",
    "needle": "A needle and thread: sew a list of patches.",
}
QUERIES = ["sort a list", "needle", "open a file for writing", "items", "zebra"]


def rankings(index: object, *, per_document: bool = False) -> list[list[tuple[str, int, float]]]:
    return [
        [
            (hit.segment.source_id, hit.segment.start, hit.score)
            for hit in index.search(query, limit=10, per_document=per_document)  # type: ignore[attr-defined]
        ]
        for query in QUERIES
    ]


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.mark.parametrize("segment_size", [None, 40])
def test_bm25_save_load_gives_identical_rankings(tmp_path: Path, segment_size: int | None) -> None:
    index = ingest(CORPUS, segment_size=segment_size)
    folder = index.save(tmp_path / "bm25")
    loaded = load_index(folder)
    assert loaded.loaded_from == folder and index.loaded_from is None
    assert loaded.segments == index.segments
    assert loaded.retriever_id == index.retriever_id
    for per_document in (False, True):
        assert rankings(loaded, per_document=per_document) == rankings(
            index, per_document=per_document
        )
    assert rankings(index)[1]  # the queries do match something


def test_dense_save_load_gives_identical_rankings(tmp_path: Path, offline: None) -> None:
    index = ingest(CORPUS, embedder="st:all-MiniLM-L6-v2", segment_size=40)
    folder = index.save(tmp_path / "dense")
    loaded = load_index(folder)
    assert loaded._model is None  # the model waits for the first query  # type: ignore[union-attr]
    assert rankings(loaded) == rankings(index)
    assert rankings(loaded, per_document=True) == rankings(index, per_document=True)
    vectors = numpy.load(folder / "vectors.npy", allow_pickle=False)
    assert vectors.dtype == numpy.float32 and vectors.shape == (len(index), 384)


def test_nothing_saved_is_a_pickle(tmp_path: Path, offline: None) -> None:
    folders = [
        ingest(CORPUS).save(tmp_path / "bm25"),
        ingest(CORPUS, embedder="st:all-MiniLM-L6-v2").save(tmp_path / "dense"),
    ]
    for folder in folders:
        files = [p for p in folder.rglob("*") if p.is_file()]
        assert files
        for path in files:
            assert path.suffix in {".json", ".npy"}, path
            if path.suffix == ".npy":
                assert numpy.load(path, allow_pickle=False).dtype != object
            else:
                json.loads(path.read_bytes())
            assert b"\x80\x04\x95" not in path.read_bytes()  # no pickle protocol 4 stream


def stages(events: list[IndexProgress]) -> set[str]:
    return {event.stage for event in events}


def test_ingest_reuses_a_matching_saved_index_and_encodes_nothing(
    tmp_path: Path, offline: None
) -> None:
    folder = tmp_path / "scifact-minilm"
    first_events: list[IndexProgress] = []
    first = ingest(
        CORPUS, embedder="st:all-MiniLM-L6-v2", index_dir=folder, progress=first_events.append
    )
    assert "encoding" in stages(first_events) and first.loaded_from is None
    assert (folder / MANIFEST).is_file()
    again: list[IndexProgress] = []
    second = ingest(CORPUS, embedder="st:all-MiniLM-L6-v2", index_dir=folder, progress=again.append)
    assert again == []  # nothing encoded, nothing tokenized
    assert second.loaded_from == folder.absolute()
    assert rankings(second) == rankings(first)


def test_a_changed_corpus_or_segmenting_is_rebuilt(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    ingest(CORPUS, index_dir=folder)
    assert ingest(CORPUS, index_dir=folder).loaded_from is not None
    changed = {**CORPUS, "open": "Open a file and return a stream."}
    rebuilt = ingest(changed, index_dir=folder)
    assert rebuilt.loaded_from is None
    assert [h.segment.text for h in load_index(folder).search("stream")] == [changed["open"]]
    assert ingest(changed, index_dir=folder, segment_size=40).loaded_from is None
    assert ingest(changed, index_dir=folder, segment_size=40).loaded_from is not None


@pytest.fixture
def model_copy(tmp_path: Path) -> Iterator[Path]:
    """The offline MiniLM in a folder of its own (weights linked, not copied)."""
    source = Path(_encoding.resolve_model("all-MiniLM-L6-v2"))
    target = tmp_path / "model"
    shutil.copytree(
        source, target, copy_function=os.link if _same_device(source, tmp_path) else shutil.copy2
    )
    yield target


def _same_device(a: Path, b: Path) -> bool:
    return a.stat().st_dev == b.stat().st_dev


def test_a_changed_model_is_detected_and_rebuilt(
    tmp_path: Path, model_copy: Path, offline: None
) -> None:
    folder = tmp_path / "index"
    embedder = f"st:{model_copy}"
    ingest(CORPUS, embedder=embedder, index_dir=folder)
    assert ingest(CORPUS, embedder=embedder, index_dir=folder).loaded_from is not None
    # Another model under the same folder name: a configuration file changes.
    readme = model_copy / "README.md"
    readme.unlink()  # a hard link: write a new file, leave the installed one alone
    readme.write_text("retrained\n")
    events: list[IndexProgress] = []
    rebuilt = ingest(CORPUS, embedder=embedder, index_dir=folder, progress=events.append)
    assert rebuilt.loaded_from is None and "encoding" in stages(events)
    # The same corpus with another model name: another index.
    assert ingest(CORPUS, embedder="bm25", index_dir=folder).loaded_from is None
    # float16 storage is another index too.
    assert ingest(CORPUS, embedder=embedder, index_dir=folder).loaded_from is None
    half = ingest(CORPUS, embedder=embedder, index_dir=folder, dtype="float16")
    assert half.loaded_from is None
    assert numpy.load(folder / "vectors.npy").dtype == numpy.float16


def test_a_save_replaces_an_index_but_never_other_files(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    ingest(CORPUS).save(folder)
    ingest({"x": "another corpus"}).save(folder)  # replaced
    assert [s.source_id for s in load_index(folder).segments] == ["x"]
    assert [p.name for p in tmp_path.iterdir()] == ["index"]  # no temporary folder left
    documents = tmp_path / "documents"
    documents.mkdir()
    (documents / "thesis.txt").write_text("years of work")
    with pytest.raises(FileExistsError, match="holds something other than a saved ef index"):
        ingest(CORPUS).save(documents)
    with pytest.raises(FileExistsError, match="holds something other than a saved ef index"):
        ingest(CORPUS, index_dir=documents)
    assert (documents / "thesis.txt").read_text() == "years of work"
    assert sorted(p.name for p in documents.iterdir()) == ["thesis.txt"]
    with pytest.raises(FileExistsError, match="is a file"):
        ingest(CORPUS).save(documents / "thesis.txt")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert load_index(ingest(CORPUS).save(empty)).segments  # an empty folder is fine


def test_a_failed_save_leaves_the_old_index_whole(small_disk: Path) -> None:
    folder = small_disk / "index"
    ingest({"a": "small corpus"}).save(folder)
    big = {f"d{i}": f"word{i} " * 40 for i in range(4000)}  # several MiB of segments
    with pytest.raises(OSError):
        ingest(big).save(folder)
    assert [s.source_id for s in load_index(folder).segments] == ["a"]
    assert [p.name for p in small_disk.iterdir()] == ["index"]  # the half-written copy is gone


def test_damaged_files_are_named_and_ingest_rebuilds(tmp_path: Path, offline: None) -> None:
    folder = ingest(CORPUS, embedder="st:all-MiniLM-L6-v2").save(tmp_path / "index")
    vectors = folder / "vectors.npy"
    vectors.write_bytes(vectors.read_bytes()[:200])
    with pytest.raises(ValueError, match=r"vectors\.npy: not a usable saved index"):
        load_index(folder)
    rebuilt = ingest(CORPUS, embedder="st:all-MiniLM-L6-v2", index_dir=folder)
    assert rebuilt.loaded_from is None
    assert rankings(load_index(folder)) == rankings(rebuilt)
    # An array of objects is a pickle in disguise: refused, never loaded.
    numpy.save(vectors, numpy.array([{"x": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match=r"vectors\.npy: not a usable saved index: [\d,]+ bytes;"):
        load_index(folder)
    reseal(folder)
    with pytest.raises(ValueError, match=r"vectors\.npy: not a usable saved index: .*objects"):
        load_index(folder)


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        (b"{", "manifest.json: not a usable saved index: not valid JSON"),
        (b'{"format": "ef-index", "format_version": NaN}', "not valid JSON"),
        (b"[]", 'expected a JSON object with "format": "ef-index"'),
        (b'{"format": "ef-index", "format_version": 99}', "format_version 99; this version"),
    ],
)
def test_a_bad_manifest_is_named(tmp_path: Path, manifest: bytes, message: str) -> None:
    folder = ingest(CORPUS).save(tmp_path / "index")
    (folder / MANIFEST).write_bytes(manifest)
    with pytest.raises(ValueError, match=message):
        load_index(folder)


def test_damaged_segments_are_named(tmp_path: Path) -> None:
    folder = ingest(CORPUS).save(tmp_path / "index")
    path = folder / "segments.json"
    columns = json.loads(path.read_text())
    columns["starts"][1] = "0"
    path.write_text(json.dumps(columns))
    reseal(folder)
    with pytest.raises(ValueError, match=r"segments\.json: .*segment 1: expected three strings"):
        load_index(folder)
    columns["starts"] = columns["starts"][:2]
    path.write_text(json.dumps(columns))
    reseal(folder)
    with pytest.raises(ValueError, match="expected 5 segments in every column"):
        load_index(folder)


def test_loading_what_is_not_an_index(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such folder"):
        load_index(tmp_path / "missing")
    with pytest.raises(ValueError, match=r"not a saved index \(it has no manifest\.json\)"):
        load_index(tmp_path)


def test_empty_and_special_texts_round_trip(tmp_path: Path) -> None:
    corpus = {"e": "", "s": "lone \ud800 surrogate, émigré 東京", "n": "nul\x00byte"}
    index = ingest(corpus)
    loaded = load_index(index.save(tmp_path / "index"))
    assert loaded.segments == index.segments
    assert load_index(ingest({}).save(tmp_path / "empty")).search("x") == []
