"""Writing output files all or nothing, and streams as streams.

A regular file is written to a temporary file in the directory of its real location (symlinks
resolved, so the link keeps pointing at the new file), flushed to disk, and renamed over the
target only once everything was written: a full disk, a bad value found late or a crash leaves
the old file as it was and no temporary file behind. The new file keeps the old one's
permissions (a new file gets the usual ones, under the umask).

What is not a regular file is written directly, never replaced: a FIFO, a character device such
as ``/dev/null``, and the standard streams named as files (``/dev/stdout``, ``/dev/stderr``,
``/dev/fd/N``, ``/proc/self/fd/N``), which are written through the process's own descriptor so
that a shell's ``>`` or ``>>`` keeps its meaning.

A writer that needs a file name rather than a stream (pyarrow's Parquet writer) gets a temporary
name from :func:`replaced_atomically`, with the same permissions and the same rename at the end.

Every error names the path the caller gave, never the temporary file. Given the caller's
``inputs``, a path that would replace one of them is refused before anything is written (the
one guard of :mod:`ef.evaluation._io.overwrite`).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import secrets
import stat
import struct
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator

from ef.evaluation._io.overwrite import (
    PathArg,
    append_descriptor,
    check_not_input,
    is_stream,
    own_descriptor,
)

__all__ = [
    "TextSink",
    "is_stream",
    "replaced_atomically",
    "write_files_atomically",
    "write_text_atomically",
]

_CHUNK = 1 << 16


def _relabel(error: OSError, path: str) -> OSError:
    """``error`` naming ``path`` (the caller's name) instead of a temporary file or nothing."""
    if error.errno is None:
        return error
    return OSError(error.errno, error.strerror or os.strerror(error.errno), path)


def _create_temporary(real: str, mode: int | None) -> tuple[int, str]:
    """A new temporary file beside ``real``, open for writing, with the permissions of the file
    it replaces (``mode``), or else those :func:`open` gives (0666 under the umask)."""
    directory, base = os.path.split(real)
    temporary = os.path.join(directory, f".{base}.{secrets.token_hex(4)}.tmp")
    # O_EXCL rather than mkstemp, whose files are 0600 whatever the umask.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(temporary, flags, 0o666)
    if mode is not None:
        try:
            os.fchmod(fd, stat.S_IMODE(mode))
        except OSError:
            os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise
    return fd, temporary


def _existing_mode(name: str, real: str) -> int | None:
    """The mode of the file at ``real`` (None: no file); a folder is refused, naming ``name``."""
    try:
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
    return mode


@contextlib.contextmanager
def replaced_atomically(path: PathArg, *, inputs: Iterable[PathArg] = ()) -> Iterator[str]:
    """A name to write ``path`` through, for writers that open files by name (Parquet): a new
    temporary file beside it, with the permissions :func:`write_text_atomically` gives, that
    replaces ``path`` once the block ends without an error. A stream is its own name.

    :param inputs: the files and folders the caller read, which ``path`` may not replace.
    :raises ValueError: naming both, when ``path`` would replace one of ``inputs``.
    :raises OSError: naming ``path``, when it cannot be written.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "out.bin")
    ...     with replaced_atomically(path) as name:
    ...         _ = pathlib.Path(name).write_bytes(b"done")
    ...     print(path.read_bytes())
    b'done'
    """
    check_not_input(path, inputs)
    name = os.fspath(path)
    if is_stream(name):
        yield name
        return
    real = os.path.realpath(name)
    try:
        fd, temporary = _create_temporary(real, _existing_mode(name, real))
    except OSError as error:
        raise _relabel(error, name) from None
    os.close(fd)
    try:
        yield temporary
        with open(temporary, "rb") as written:
            os.fsync(written.fileno())
        os.replace(temporary, real)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class _Gzip:
    """A gzip member written with no name and no timestamp, so equal text gives equal bytes
    (the header :class:`gzip.GzipFile` writes with ``filename=""`` and ``mtime=0``)."""

    _HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"

    def __init__(self) -> None:
        self._deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS, zlib.DEF_MEM_LEVEL, 0)
        self._crc = 0
        self._size = 0
        self._started = False

    def encode(self, data: bytes) -> bytes:
        head = b"" if self._started else self._HEADER
        self._started = True
        self._crc = zlib.crc32(data, self._crc)
        self._size += len(data)
        return head + self._deflate.compress(data)

    def finish(self) -> bytes:
        head = b"" if self._started else self._HEADER
        self._started = True
        tail = struct.pack("<II", self._crc & 0xFFFFFFFF, self._size & 0xFFFFFFFF)
        return head + self._deflate.flush() + tail


class TextSink(io.TextIOBase):
    """A write-only text stream encoding to UTF-8 (``"\\n"`` kept as it is) onto a descriptor.

    Text is buffered and written in chunks; an operating-system error names ``name``. Closing it
    without :meth:`finish` discards what is buffered, so a failed block never writes again.
    """

    def __init__(self, fd: int, name: str, *, compress: bool) -> None:
        super().__init__()
        self._fd = fd
        self._name = name
        self._gzip = _Gzip() if compress else None
        self._chunks: list[bytes] = []
        self._buffered = 0

    @property
    def name(self) -> str:
        return self._name

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        data = text.encode("utf-8")
        self._chunks.append(data)
        self._buffered += len(data)
        if self._buffered >= _CHUNK:
            self._drain()
        return len(text)

    def flush(self) -> None:
        self._drain()

    def finish(self) -> None:
        """Write everything still buffered (and the gzip trailer)."""
        self._drain()
        if self._gzip is not None:
            self._emit(self._gzip.finish())

    def close(self) -> None:
        # Discard rather than flush: after a failure nothing more may reach the file.
        self._chunks.clear()
        self._buffered = 0
        super().close()

    def _drain(self) -> None:
        if not self._chunks:
            return
        data = b"".join(self._chunks)
        self._chunks.clear()
        self._buffered = 0
        self._emit(data if self._gzip is None else self._gzip.encode(data))

    def _emit(self, data: bytes) -> None:
        try:
            _write_all(self._fd, data)
        except OSError as error:
            raise _relabel(error, self._name) from None


class _Pending:
    """One output being written: a temporary file to rename, or a stream written directly."""

    def __init__(self, path: PathArg, *, compress: bool | None) -> None:
        self.name = os.fspath(path)
        if compress is None:
            compress = self.name.endswith(".gz")
        self.temporary: str | None = None
        self.target = self.name
        descriptor = own_descriptor(self.name)
        try:
            if descriptor is not None:
                for stream in (sys.stdout, sys.stderr):
                    with contextlib.suppress(Exception):
                        stream.flush()  # what Python buffered goes out first
                fd = os.dup(descriptor)
            else:
                fd = self._open_target()
        except OSError as error:
            raise _relabel(error, self.name) from None
        self.sink = TextSink(fd, self.name, compress=compress)
        self._fd = fd

    def _open_target(self) -> int:
        real = os.path.realpath(self.name)
        mode = _existing_mode(self.name, real)
        if mode is not None and not stat.S_ISREG(mode):
            return os.open(real, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
        self.target = real
        fd, self.temporary = _create_temporary(real, mode)
        return fd

    def complete(self) -> None:
        """Write what is buffered and make it durable; a temporary file is not renamed yet."""
        try:
            self.sink.finish()
            if self.temporary is not None:
                os.fsync(self._fd)
        except OSError as error:
            raise _relabel(error, self.name) from None
        finally:
            self._close()

    def commit(self) -> None:
        """Put the completed temporary file in the target's place."""
        if self.temporary is not None:
            try:
                os.replace(self.temporary, self.target)
            except OSError as error:
                raise _relabel(error, self.name) from None
            self.temporary = None

    def discard(self) -> None:
        """Forget everything: nothing buffered is written, the temporary file is removed."""
        self._close()
        self._remove_temporary()

    def _close(self) -> None:
        if not self.sink.closed:
            self.sink.close()
            os.close(self._fd)

    def _remove_temporary(self) -> None:
        if self.temporary is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.temporary)
            self.temporary = None


@contextlib.contextmanager
def write_text_atomically(
    path: PathArg,
    *,
    compress: bool | None = None,
    inputs: Iterable[PathArg] = (),
    append: bool = False,
) -> Iterator[TextSink]:
    """Write a text file as UTF-8 with ``"\\n"`` line ends, all or nothing, never onto an input.

    The text goes to a temporary file in the directory of ``path``'s real location, which
    replaces it only when the block finishes without an error, so a failure halfway (a bad id
    found late, a full disk) never leaves a truncated file behind and keeps the old one. A FIFO,
    a character device or a standard stream named as a file is written directly instead (see
    :func:`is_stream`). Errors name ``path``. A name ending in ``.gz`` is written
    gzip-compressed, reproducibly (no timestamp in the header), unless ``compress`` says
    otherwise.

    ``path`` is refused, before anything is written, when it names one of ``inputs`` (by name,
    through a link, or as an existing file inside an input folder: see
    :func:`~ef.evaluation.overwritten_input`): the one guard every output goes through.

    With ``append``, the text is added to the end of ``path`` instead (a CI job's summary
    file), created when missing: that is not all or nothing, and a FIFO that nobody reads
    fails at once rather than blocking.

    :param path: the file to create or replace; its directory must exist.
    :param compress: gzip the text; ``None`` decides by the ``.gz`` suffix.
    :param inputs: the files and folders the caller read, which ``path`` may not replace.
    :param append: append to ``path`` rather than replace it.
    :raises ValueError: naming both, when ``path`` would replace one of ``inputs``.
    :raises OSError: naming ``path``, when it cannot be written (no such directory, no space,
        a directory in the way).

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "out.txt")
    ...     with write_text_atomically(path) as out:
    ...         _ = out.write("done\\n")
    ...     print(repr(path.read_text()))
    'done\\n'
    """
    if append:
        fd = append_descriptor(path, inputs)
        name = os.fspath(path)
        sink = TextSink(fd, name, compress=name.endswith(".gz") if compress is None else compress)
        try:
            yield sink
            sink.finish()
        finally:
            sink.close()
            os.close(fd)
        return
    check_not_input(path, inputs)
    pending = _Pending(path, compress=compress)
    try:
        yield pending.sink
        pending.complete()
        pending.commit()
    except BaseException:
        pending.discard()
        raise


def write_files_atomically(
    files: Iterable[tuple[PathArg, Callable[[TextSink], object]]],
) -> None:
    """Write several text files all or nothing, as :func:`write_text_atomically` writes one.

    Each ``(path, write)`` pair has ``write`` called with the file's stream; the files replace
    their targets only once every one was written, so an error in the last one leaves all of
    them as they were.

    :param files: the paths and what writes each.
    :raises OSError: naming the path that could not be written.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     a, b = pathlib.Path(tmp, "a.txt"), pathlib.Path(tmp, "b.txt")
    ...     write_files_atomically([(a, lambda out: out.write("A")),
    ...                             (b, lambda out: out.write("B"))])
    ...     print(a.read_text() + b.read_text())
    AB
    """
    written: list[_Pending] = []
    try:
        for path, write in files:
            pending = _Pending(path, compress=None)
            written.append(pending)
            write(pending.sink)
            pending.complete()
        for pending in written:
            pending.commit()
    except BaseException:
        for pending in written:
            pending.discard()
        raise
