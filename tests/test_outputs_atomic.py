"""Outputs are written all or nothing: a full disk, a late error or a crash never costs a file.

The full-disk cases run on a real 1 MiB tmpfs when the tests run as root (CI does); where the
mount is refused, ENOSPC is injected at the operating system's ``write`` instead.
"""

from __future__ import annotations

import errno
import gzip
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ef.evaluation import read_beir, read_trec_run, write_beir, write_trec_qrels, write_trec_run
from ef.evaluation._io.atomic import is_stream, write_files_atomically, write_text_atomically

BIG_RUN = {f"q{i}": {f"doc-{i}-{j}": 1000.0 - j for j in range(1000)} for i in range(60)}
"""A run of about 2.5 MB as text: more than the small disk holds."""


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_full_disk_keeps_the_old_run_file_and_names_it(small_disk: Path) -> None:
    target = small_disk / "run.txt"
    write_trec_run(target, {"q1": {"d1": 2.0, "d2": 1.0}})
    before = target.read_bytes()
    with pytest.raises(OSError) as caught:
        write_trec_run(target, BIG_RUN)
    assert caught.value.errno == errno.ENOSPC
    assert caught.value.filename == str(target)  # never the temporary file
    assert ".tmp" not in str(caught.value)
    assert target.read_bytes() == before
    assert _names(small_disk) == ["run.txt"]


def test_a_full_disk_leaves_no_half_written_beir_dataset(small_disk: Path) -> None:
    write_beir(small_disk, {"d1": "old"}, {"q1": "old?"}, {"q1": {"d1": 1.0}})
    before = read_beir(small_disk)
    # The corpus fits; the queries do not: nothing may change, not even the corpus.
    queries = {f"q{i}": "x" * 1000 for i in range(1200)}
    with pytest.raises(OSError) as caught:
        write_beir(small_disk, {"d1": "new"}, queries, {"q1": {"d1": 1.0}})
    assert caught.value.errno == errno.ENOSPC
    assert caught.value.filename == str(small_disk / "queries.jsonl")
    assert read_beir(small_disk) == before
    assert _names(small_disk) == ["corpus.jsonl", "qrels.tsv", "queries.jsonl"]


def test_a_late_error_keeps_every_file_of_a_group(tmp_path: Path) -> None:
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("old a")

    def fail(out: object) -> None:
        raise ValueError("bad record")

    with pytest.raises(ValueError, match="bad record"):
        write_files_atomically([(first, lambda out: out.write("new a")), (second, fail)])
    assert first.read_text() == "old a"
    assert _names(tmp_path) == ["a.txt"]


def test_a_symlinked_output_is_replaced_at_its_target(tmp_path: Path) -> None:
    real = tmp_path / "reports" / "run.txt"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "latest.txt"
    link.symlink_to(real)
    write_trec_run(link, {"q1": ["d1"]})
    assert link.is_symlink()
    assert real.read_text() == "q1 Q0 d1 1 1 ef\n"
    # The temporary file was made next to the real file, and is gone.
    assert _names(real.parent) == ["run.txt"]
    assert _names(tmp_path) == ["latest.txt", "reports"]


def test_an_existing_file_keeps_its_permissions(tmp_path: Path) -> None:
    target = tmp_path / "qrels.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    write_trec_qrels(target, {"q1": {"d1": 1.0}})
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_directory_in_the_way_is_named(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError) as caught:
        write_trec_run(tmp_path, {"q1": ["d1"]})
    assert caught.value.filename == str(tmp_path)


def test_a_missing_folder_is_named_not_the_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "no-such-folder" / "run.txt"
    with pytest.raises(FileNotFoundError) as caught:
        write_trec_run(target, {"q1": ["d1"]})
    assert caught.value.filename == str(target)
    assert str(caught.value) == f"[Errno 2] No such file or directory: '{target}'"


def test_a_fifo_is_written_as_a_stream_and_never_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    write_trec_run(fifo, {"q1": ["d2", "d1"]})
    reader.join(timeout=30)
    assert received == [b"q1 Q0 d2 1 2 ef\nq1 Q0 d1 2 1 ef\n"]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert _names(tmp_path) == ["run.fifo"]


def test_a_character_device_is_written_directly() -> None:
    assert is_stream("/dev/null")
    write_trec_run("/dev/null", {"q1": ["d1"]})
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


STDOUT_CHILD = """
import sys
from ef.evaluation import write_trec_run
print("before", flush=True)
write_trec_run(sys.argv[1], {"q1": ["d1"]})
print("after", flush=True)
"""


@pytest.mark.parametrize("name", ["/dev/stdout", "/proc/self/fd/1", "/dev/fd/1"])
def test_standard_output_named_as_a_file_keeps_the_shells_redirection(
    tmp_path: Path, name: str
) -> None:
    # `>>` appends: the file must be written through the descriptor, not replaced or truncated.
    out = tmp_path / "out.txt"
    out.write_text("earlier\n")
    command = f'"{sys.executable}" -c \'{STDOUT_CHILD}\' {name} >> "{out}"'
    subprocess.run(command, shell=True, check=True, env={**os.environ, "PYTHONPATH": _src()})
    assert out.read_text() == "earlier\nbefore\nq1 Q0 d1 1 1 ef\nafter\n"
    assert _names(tmp_path) == ["out.txt"]


def test_standard_output_through_a_pipe(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", STDOUT_CHILD, "/dev/stdout"],
        capture_output=True,
        check=True,
        env={**os.environ, "PYTHONPATH": _src()},
    )
    assert result.stdout == b"before\nq1 Q0 d1 1 1 ef\nafter\n"


def _src() -> str:
    return str(Path(__file__).resolve().parents[1] / "src")


def test_gzip_output_is_what_gzipfile_writes(tmp_path: Path) -> None:
    path = tmp_path / "run.txt.gz"
    text = "".join(f"q{i} Q0 d{i} 1 1 ef\n" for i in range(5000))
    with write_text_atomically(path) as out:
        out.write(text)
    reference = tmp_path / "reference.gz"
    with (
        reference.open("wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", filename="", mtime=0) as zipped,
    ):
        zipped.write(text.encode())
    assert path.read_bytes() == reference.read_bytes()
    assert read_trec_run(path)["q4999"] == {"d4999": 1.0}


def test_an_empty_gzip_file_is_still_a_gzip_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.gz"
    with write_text_atomically(path):
        pass
    assert gzip.decompress(path.read_bytes()) == b""


def test_a_lone_surrogate_id_is_refused_with_its_query_before_anything_is_written(
    tmp_path: Path,
) -> None:
    target = tmp_path / "run.txt"
    target.write_text("old\n")
    with pytest.raises(ValueError, match=r"query 'q1': doc id '\\udc80' holds a lone surrogate"):
        write_trec_run(target, {"q1": ["d1", "\udc80"]})
    assert target.read_text() == "old\n"
    with pytest.raises(ValueError, match=r"corpus: text of document 'd1' holds a lone surrogate"):
        write_beir(tmp_path / "beir", {"d1": "a\udc80"}, {"q1": "x"}, {"q1": {"d1": 1.0}})
    assert not (tmp_path / "beir" / "corpus.jsonl").exists()


@pytest.mark.parametrize("name", ["run.txt", "run.json", "run.jsonl", "run.parquet"])
@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_every_format_gets_the_permissions_open_gives(
    tmp_path: Path, name: str, umask: int
) -> None:
    if name.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    from ef.evaluation import write_run

    plain = tmp_path / "plain"
    previous = os.umask(umask)
    try:
        with open(plain, "w"):
            pass
        write_run(tmp_path / name, {"q1": ["d1"]})
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / name).stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)


def test_a_replaced_parquet_file_keeps_its_permissions_and_leaves_no_temporary(
    tmp_path: Path,
) -> None:
    pytest.importorskip("pyarrow")
    from ef.evaluation import read_run, write_run

    target = tmp_path / "run.parquet"
    write_run(target, {"q1": ["d1"]})
    target.chmod(0o640)
    write_run(target, {"q1": ["d2"]})
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert read_run(target) == {"q1": {"d2": 1.0}}
    with pytest.raises(ValueError, match="finite"):
        write_run(target, {"q1": {"d3": float("nan")}})
    assert read_run(target) == {"q1": {"d2": 1.0}}
    assert _names(tmp_path) == ["run.parquet"]
