"""A saved index on disk: a folder with a JSON manifest, the segments, and the engine's files.

No pickle anywhere: the manifest and the segments are JSON, a dense index's embeddings one
``.npy`` matrix read with ``allow_pickle=False``, a BM25 index ``bm25s``'s own format (``.npy``
arrays and JSON). The manifest lists every other file with its size and hash, and a load checks
each one before anything is read from it (see :mod:`ef._index_files`). A save is atomic:
everything is written to a new folder beside the target, which then takes the target's place,
so a reader never sees half an index. A folder that holds anything the index did not write (a
file of its own, or anything at all without a manifest) is never replaced.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ef._index_files import damaged, list_files, read_regular, verify_files
from ef.segments import Segment

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "MANIFEST",
    "StoredIndex",
    "check_target",
    "read_index_dir",
    "read_manifest",
    "saved_at",
    "write_index_dir",
]

FORMAT = "ef-index"
FORMAT_VERSION = 2
"""2: the manifest lists every file with its size and hash. 1 (no such list) is not read."""
MANIFEST = "manifest.json"
SEGMENTS = "segments.json"
_COLUMNS = ("source_ids", "texts", "starts", "ends", "segment_ids")
_FORMAT_1_FILES = (SEGMENTS, "vectors.npy", "bm25")
"""What a save of format 1 wrote beside its manifest (its manifest lists no files)."""


@attrs.frozen
class StoredIndex:
    """A saved index as read back: its manifest, its segments, its folder, and the files its
    manifest lists, each checked against its size and hash."""

    folder: Path
    manifest: Mapping[str, Any]
    segments: tuple[Segment, ...]
    files: frozenset[str] = frozenset()

    def file(self, relative: str) -> Path:
        """The path of the checked file ``relative`` (e.g. ``"bm25/data.csc.index.npy"``).

        :raises ValueError: when the manifest does not list it: no other file is ever read.
        """
        if relative not in self.files:
            raise damaged(self.folder / relative, f"the file is not listed in {MANIFEST}")
        return self.folder / relative


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _read_json(path: Path) -> Any:
    data = read_regular(path)
    try:
        return json.loads(data, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as error:
        raise damaged(path, f"not valid JSON ({error})") from None


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The manifest of the saved index in ``folder``, or ``None`` when there is none.

    :raises ValueError: for a manifest that is damaged, of another format, or of a newer
        version than this library reads.
    """
    path = Path(folder) / MANIFEST
    if not os.path.lexists(path):
        return None
    manifest = _read_json(path)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise damaged(path, f'expected a JSON object with "format": {json.dumps(FORMAT)}')
    version = manifest.get("format_version")
    if version == 1:
        raise damaged(
            path,
            "format_version 1, saved by an earlier version of ef-evaluation without the sizes "
            "and hashes of its files, so they cannot be checked: rebuild it (ingest(..., "
            "index_dir=) rebuilds it by itself)",
        )
    if version != FORMAT_VERSION:
        raise damaged(
            path,
            f"format_version {version!r}; this version of ef-evaluation reads {FORMAT_VERSION}",
        )
    return manifest


def saved_at(folder: str | os.PathLike[str], manifest: Mapping[str, Any]) -> str:
    """When the index in ``folder`` was saved, in UTC to the minute: the manifest's ``saved``,
    or (an index saved before it was recorded) the time its manifest was written.

    >>> saved_at(".", {"saved": "2026-12-04T17:42:31+00:00"})
    '2026-12-04 17:42 UTC'
    """
    try:
        when = datetime.datetime.fromisoformat(str(manifest["saved"]))
    except (KeyError, ValueError):
        try:
            mtime = os.stat(Path(folder) / MANIFEST).st_mtime
        except OSError:
            return "at an unknown time"
        when = datetime.datetime.fromtimestamp(mtime, datetime.UTC)
    if when.tzinfo is not None:
        when = when.astimezone(datetime.UTC)
    return when.strftime("%Y-%m-%d %H:%M UTC")


def _manifest_of(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path / MANIFEST`` when it names this format, else ``None``."""
    try:
        manifest = json.loads(read_regular(path / MANIFEST))
    except (ValueError, RecursionError):
        return None
    return manifest if isinstance(manifest, dict) and manifest.get("format") == FORMAT else None


def _entries(folder: Path) -> Iterator[tuple[str, bool]]:
    """Every entry under ``folder`` as ``(relative path, is a folder)``; links not followed."""
    for root, folders, files in os.walk(folder):
        base = Path(root).relative_to(folder)
        for name in folders:
            is_folder = not (Path(root) / name).is_symlink()
            yield (base / name).as_posix(), is_folder
        for name in files:
            yield (base / name).as_posix(), False


def _not_written_by_a_save(folder: Path, manifest: Mapping[str, Any]) -> list[str]:
    """What in ``folder`` no save wrote: neither the manifest nor a file it lists (format 1
    listed none: its files were the segments, the vectors and the ``bm25`` folder)."""
    files = manifest.get("files")
    listed = (
        {str(entry.get("path")) for entry in files if isinstance(entry, Mapping)}
        if isinstance(files, list)
        else None
    )

    def written(relative: str, is_folder: bool) -> bool:
        if relative == MANIFEST:
            return True
        if listed is None:
            return relative.split("/")[0] in _FORMAT_1_FILES
        if is_folder:
            return any(path.startswith(relative + "/") for path in listed)
        return relative in listed

    foreign = sorted(
        relative for relative, is_folder in _entries(folder) if not written(relative, is_folder)
    )
    # Name what the user would see: a foreign folder, not every file inside it.
    return [r for r in foreign if not any(r.startswith(other + "/") for other in foreign)]


def check_target(folder: str | os.PathLike[str]) -> None:
    """Refuse a save target that is a file, a folder holding anything but a saved index, or an
    index's folder holding files the index did not write (they would be lost with it).

    :raises FileExistsError: naming the path and what to do instead.
    """
    path = Path(folder)
    if not path.exists():
        return
    if not path.is_dir():
        raise FileExistsError(f"{path} is a file; an index is saved to a folder")
    if not any(path.iterdir()):
        return
    manifest = _manifest_of(path)
    if manifest is None:
        raise FileExistsError(
            f"{path} is a folder that holds something other than a saved ef index; refusing to "
            "replace it: give a new or empty folder"
        )
    foreign = _not_written_by_a_save(path, manifest)
    if foreign:
        shown = ", ".join(foreign[:5]) + (
            f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""
        )
        raise FileExistsError(
            f"{path} holds a saved ef index and also {shown}, which the index did not write; "
            "refusing to replace the folder (and lose them): move them out, or give another "
            "folder"
        )


def _segments_json(segments: Sequence[Segment]) -> bytes:
    columns = {
        "source_ids": [s.source_id for s in segments],
        "texts": [s.text for s in segments],
        "starts": [s.start for s in segments],
        "ends": [s.end for s in segments],
        "segment_ids": [s.segment_id for s in segments],
    }
    # ASCII escapes keep any string, a lone surrogate too, readable back exactly.
    return json.dumps(columns, ensure_ascii=True).encode("ascii")


def _read_segments(path: Path, count: object) -> tuple[Segment, ...]:
    columns = _read_json(path)
    if not isinstance(columns, dict) or any(
        not isinstance(columns.get(name), list) for name in _COLUMNS
    ):
        raise damaged(path, f"expected an object of lists {', '.join(_COLUMNS)}")
    lengths = {len(columns[name]) for name in _COLUMNS}
    if lengths != {count}:
        raise damaged(path, f"expected {count} segments in every column, as the manifest says")
    rows = zip(*(columns[name] for name in _COLUMNS), strict=True)
    segments = []
    for number, (source_id, text, start, end, segment_id) in enumerate(rows):
        if not (
            isinstance(source_id, str)
            and isinstance(text, str)
            and isinstance(segment_id, str)
            and type(start) is int
            and type(end) is int
        ):
            raise damaged(path, f"segment {number}: expected three strings and two integers")
        segments.append(Segment(source_id, text, start=start, end=end, segment_id=segment_id))
    return tuple(segments)


def _check_identity(path: Path, manifest: Mapping[str, Any]) -> None:
    identity = manifest.get("identity")
    if not isinstance(identity, dict):
        raise damaged(path, 'expected "identity", an object naming the engine and its settings')
    for key in ("engine", "name"):
        if not isinstance(identity.get(key), str):
            raise damaged(path, f'expected "identity" to hold a string "{key}"')
    segmenting = identity.get("segmenting")
    if segmenting is not None and not isinstance(segmenting, dict):
        raise damaged(path, 'expected "identity"."segmenting" to be an object or null')


def read_index_dir(folder: str | os.PathLike[str]) -> StoredIndex:
    """Read the manifest and the segments of the index saved in ``folder``, after checking every
    file the manifest lists against its size and hash.

    :raises FileNotFoundError: when ``folder`` does not exist.
    :raises ValueError: when it holds no saved index, or a damaged one; the message names the
        folder, the file and the problem.
    """
    path = Path(folder)
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such folder (a saved index is a folder)")
    manifest = read_manifest(path)
    if manifest is None:
        raise ValueError(f"{path}: not a saved index (it has no {MANIFEST})")
    _check_identity(path / MANIFEST, manifest)
    files = verify_files(path, manifest.get("files"), leave_out=MANIFEST)
    stored = StoredIndex(path, manifest, (), files)
    segments = _read_segments(stored.file(SEGMENTS), manifest.get("segments"))
    return attrs.evolve(stored, segments=segments)


def write_index_dir(
    folder: str | os.PathLike[str],
    manifest: Mapping[str, Any],
    segments: Sequence[Segment],
    write_engine: Callable[[Path], None],
) -> Path:
    """Save an index to ``folder`` atomically; returns the folder.

    The engine's files are written by ``write_engine(temporary_folder)``; the segments and, last,
    the manifest, listing every file with its size and hash, follow. The new folder then
    replaces ``folder`` (and any index saved there).

    :raises FileExistsError: when ``folder`` is a file, holds something other than an index, or
        holds an index and files it did not write.
    """
    target = Path(folder).absolute()
    check_target(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".saving", dir=target.parent))
    try:
        write_engine(staging)
        (staging / SEGMENTS).write_bytes(_segments_json(segments))
        complete = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "saved": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            **manifest,
            "files": list_files(staging, leave_out=MANIFEST),
        }
        (staging / MANIFEST).write_text(json.dumps(complete, indent=2) + "\n", encoding="utf-8")
        if target.exists():
            check_target(target)  # again: a file may have been left there while we wrote
            # Two renames: POSIX cannot rename a folder onto a folder that is not empty.
            old = Path(
                tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent)
            )
            os.replace(target, old / "index")
            try:
                os.replace(staging, target)
            except BaseException:
                os.replace(old / "index", target)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target
