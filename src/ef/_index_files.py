"""The files of a saved index: read only when they are regular files, listed with their sizes
and hashes when saved, checked against that list when loaded.

A saved index's manifest lists every other file of the folder with its size and SHA-256 (on
CPUs with SHA instructions, most x86 and ARM servers of the last years, it is the fastest hash
``hashlib`` offers: about 1.1 s per GiB on one core, a little faster than BLAKE2b's 1.9 s). A
load reads each listed file once to hash it, so it costs that much on top of reading the index;
a file whose size differs is refused without being read. The hashes guard against damage and
mix-ups (a file copied from another index, a flipped bit, a truncated copy), not against
someone who edits the manifest to match.

A file is opened only when it is a regular file: a FIFO, a device, a socket or a symbolic link
in place of an index file is refused, never read (reading a FIFO would wait forever).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

__all__ = [
    "HASH",
    "damaged",
    "file_kind",
    "list_files",
    "load_npy",
    "read_regular",
    "verify_files",
]

HASH = "sha256"
"""The hash of each file in a manifest's ``files``, and the key it is stored under."""


def damaged(path: Path, problem: str) -> ValueError:
    """The error for a saved index that cannot be used: ``path`` names the folder and the file."""
    return ValueError(f"{path}: not a usable saved index: {problem}")


def file_kind(mode: int) -> str:
    """What a file of ``mode`` is, for an error that refuses it ("a FIFO", "a folder", ...)."""
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _open_regular(path: Path) -> int:
    """A descriptor open on ``path``, which is checked to be a regular file before it is opened
    (``lstat``: a link is not followed) and again once open (``fstat``: nothing swapped in)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        raise damaged(path, "the file is missing") from None
    except OSError as error:
        raise damaged(path, f"cannot be read ({error.strerror})") from None
    if not stat.S_ISREG(mode):
        raise damaged(path, f"{file_kind(mode)}, not a regular file; refusing to read it")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise damaged(path, f"cannot be read ({error.strerror})") from None
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise damaged(path, f"{file_kind(mode)}, not a regular file; refusing to read it")
    return descriptor


def read_regular(path: Path) -> bytes:
    """The bytes of ``path``, a regular file.

    :raises ValueError: naming ``path`` when it is missing or not a regular file.
    """
    with open(_open_regular(path), "rb") as stream:
        return stream.read()


def _record(folder: Path, relative: str) -> dict[str, Any]:
    path = folder / relative
    with open(_open_regular(path), "rb") as stream:
        digest = hashlib.file_digest(stream, HASH).hexdigest()
        size = os.fstat(stream.fileno()).st_size
    return {"path": relative, "size": size, HASH: digest}


def list_files(folder: Path, *, leave_out: str) -> list[dict[str, Any]]:
    """Every file under ``folder`` but ``leave_out``, as manifest entries: its path (relative,
    with ``/``), its size and its hash, in path order."""
    found = sorted(
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if not path.is_dir() or path.is_symlink()
    )
    return [_record(folder, relative) for relative in found if relative != leave_out]


def _entry_path(folder: Path, manifest: Path, entry: object, leave_out: str) -> str:
    """The relative path of one entry of ``files``, checked to stay inside the folder."""
    if not (
        isinstance(entry, Mapping)
        and isinstance(entry.get("path"), str)
        and type(entry.get("size")) is int
        and isinstance(entry.get(HASH), str)
    ):
        raise damaged(manifest, f'each of "files" must hold a "path", a "size" and a "{HASH}"')
    relative = str(entry["path"])
    parts = PurePosixPath(relative).parts
    if (
        not parts
        or relative.startswith("/")
        or "\\" in relative
        or any(part in ("..", ".") for part in parts)
        or relative == leave_out
    ):
        raise damaged(manifest, f"the file {relative!r} is not a path inside {folder}")
    return relative


def verify_files(folder: Path, files: object, *, leave_out: str) -> frozenset[str]:
    """Check every file ``files`` lists (a manifest's entries) against its size and hash.

    :returns: the relative paths checked: the only files of ``folder`` a load may read.
    :raises ValueError: naming the folder and the file that is missing, not a regular file, or
        of another size or content than the manifest says.
    """
    manifest = folder / leave_out
    if not isinstance(files, Sequence) or isinstance(files, str | bytes):
        raise damaged(manifest, 'expected "files", a list of the index\'s files')
    checked: set[str] = set()
    for entry in files:
        relative = _entry_path(folder, manifest, entry, leave_out)
        if relative in checked:
            raise damaged(manifest, f"the file {relative!r} is listed twice")
        path = folder / relative
        descriptor = _open_regular(path)
        with open(descriptor, "rb") as stream:
            size = os.fstat(descriptor).st_size
            if size != entry["size"]:
                raise damaged(
                    path,
                    f"{size:,} bytes; {leave_out} says {entry['size']:,}: the file was changed, "
                    "cut short or copied from another index",
                )
            digest = hashlib.file_digest(stream, HASH).hexdigest()
        if digest != entry[HASH]:
            raise damaged(
                path,
                f"its content differs from what {leave_out} records ({HASH} {digest[:16]}…, "
                f"expected {str(entry[HASH])[:16]}…): the file was changed or copied from "
                "another index",
            )
        checked.add(relative)
    return frozenset(checked)


def load_npy(path: Path) -> Any:
    """The array in the ``.npy`` file ``path``, a regular file, read without pickle.

    The header is checked first (the format, a plain dtype, a size matching the file's), so a
    bad header or a file cut short is refused with its path rather than by whatever numpy's
    parser happens to raise (``tokenize.TokenError``, ``EOFError``) without one.

    :raises ValueError: naming ``path`` and what is wrong with it.
    """
    numpy = importlib.import_module("numpy")
    file_format = numpy.lib.format
    with open(_open_regular(path), "rb") as stream:
        try:
            version = file_format.read_magic(stream)
            read_header = (
                file_format.read_array_header_1_0
                if version == (1, 0)
                else file_format.read_array_header_2_0
            )
            shape, _, dtype = read_header(stream)
        except Exception as error:  # numpy's parser raises many kinds: all mean a bad header
            raise damaged(path, f"not a .npy array ({type(error).__name__}: {error})") from None
        if dtype.hasobject:
            raise damaged(path, "an array of Python objects (a pickle), which is never loaded")
        expected = stream.tell() + int(numpy.prod(shape, dtype=numpy.int64)) * dtype.itemsize
        size = os.fstat(stream.fileno()).st_size
        if size != expected:
            raise damaged(path, f"{size:,} bytes; its header describes {expected:,}")
        stream.seek(0)
        try:
            return numpy.load(stream, allow_pickle=False)
        except Exception as error:
            raise damaged(path, f"not a .npy array ({type(error).__name__}: {error})") from None
