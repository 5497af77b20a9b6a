"""A saved index on disk: a folder with a JSON manifest, the segments, and the engine's files.

No pickle anywhere: the manifest and the segments are JSON, a dense index's embeddings one
``.npy`` matrix read with ``allow_pickle=False``, a BM25 index ``bm25s``'s own format (``.npy``
arrays and JSON). A save is atomic: everything is written to a new folder beside the target,
which then takes the target's place, so a reader never sees half an index. A folder that holds
something other than a saved index is never replaced.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ef.segments import Segment

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "MANIFEST",
    "StoredIndex",
    "check_target",
    "read_index_dir",
    "read_manifest",
    "write_index_dir",
]

FORMAT = "ef-index"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
SEGMENTS = "segments.json"
_COLUMNS = ("source_ids", "texts", "starts", "ends", "segment_ids")


@attrs.frozen
class StoredIndex:
    """A saved index as read back: its manifest, its segments and its folder."""

    folder: Path
    manifest: Mapping[str, Any]
    segments: tuple[Segment, ...]


def _damaged(path: Path, problem: str) -> ValueError:
    return ValueError(f"{path}: not a usable saved index: {problem}")


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes(), parse_constant=_refuse_constant)
    except FileNotFoundError:
        raise _damaged(path, "the file is missing") from None
    except (ValueError, RecursionError) as error:
        raise _damaged(path, f"not valid JSON ({error})") from None


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The manifest of the saved index in ``folder``, or ``None`` when there is none.

    :raises ValueError: for a manifest that is damaged, of another format, or of a newer
        version than this library reads.
    """
    path = Path(folder) / MANIFEST
    if not path.is_file():
        return None
    manifest = _read_json(path)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _damaged(path, f'expected a JSON object with "format": {json.dumps(FORMAT)}')
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise _damaged(
            path,
            f"format_version {version!r}; this version of ef-evaluation reads {FORMAT_VERSION}",
        )
    return manifest


def check_target(folder: str | os.PathLike[str]) -> None:
    """Refuse a save target that is a file, or a folder holding anything but a saved index.

    :raises FileExistsError: naming the path and what to do instead.
    """
    path = Path(folder)
    if not path.exists():
        return
    if not path.is_dir():
        raise FileExistsError(f"{path} is a file; an index is saved to a folder")
    if not any(path.iterdir()):
        return
    manifest = path / MANIFEST
    try:
        is_index = json.loads(manifest.read_bytes()).get("format") == FORMAT
    except (OSError, ValueError, AttributeError, RecursionError):
        is_index = False
    if not is_index:
        raise FileExistsError(
            f"{path} is a folder that holds something other than a saved ef index; refusing to "
            "replace it: give a new or empty folder"
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
        raise _damaged(path, f"expected an object of lists {', '.join(_COLUMNS)}")
    lengths = {len(columns[name]) for name in _COLUMNS}
    if lengths != {count}:
        raise _damaged(path, f"expected {count} segments in every column, as the manifest says")
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
            raise _damaged(path, f"segment {number}: expected three strings and two integers")
        segments.append(Segment(source_id, text, start=start, end=end, segment_id=segment_id))
    return tuple(segments)


def read_index_dir(folder: str | os.PathLike[str]) -> StoredIndex:
    """Read the manifest and the segments of the index saved in ``folder``.

    :raises FileNotFoundError: when ``folder`` does not exist.
    :raises ValueError: when it holds no saved index, or a damaged one; the message names the
        file and the problem.
    """
    path = Path(folder)
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such folder (a saved index is a folder)")
    manifest = read_manifest(path)
    if manifest is None:
        raise ValueError(f"{path}: not a saved index (it has no {MANIFEST})")
    segments = _read_segments(path / SEGMENTS, manifest.get("segments"))
    return StoredIndex(path, manifest, segments)


def write_index_dir(
    folder: str | os.PathLike[str],
    manifest: Mapping[str, Any],
    segments: Sequence[Segment],
    write_engine: Callable[[Path], None],
) -> Path:
    """Save an index to ``folder`` atomically; returns the folder.

    The engine's files are written by ``write_engine(temporary_folder)``; the segments and, last,
    the manifest follow. The new folder then replaces ``folder`` (and any index saved there).

    :raises FileExistsError: when ``folder`` is a file or holds something other than an index.
    """
    target = Path(folder).absolute()
    check_target(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".saving", dir=target.parent))
    try:
        write_engine(staging)
        (staging / SEGMENTS).write_bytes(_segments_json(segments))
        complete = {"format": FORMAT, "format_version": FORMAT_VERSION, **manifest}
        (staging / MANIFEST).write_text(json.dumps(complete, indent=2) + "\n", encoding="utf-8")
        if target.exists():
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
