"""Low-level helpers shared by the dataset file formats: opening, writing and precise errors.

Every reader goes through :func:`open_text`, so gzip, a UTF-8 byte-order mark and CRLF line ends
are handled the same way everywhere, and every malformed line is reported as a
:class:`DatasetFormatError` naming the file and the line.
"""

from __future__ import annotations

import codecs
import contextlib
import gzip
import io
import os
import shutil
import stat
import tempfile
import zlib
from collections.abc import Callable, Iterator
from typing import IO

from ef._index_files import file_kind
from ef.evaluation._exceptions import DatasetFormatError

__all__ = [
    "READ_ERRORS",
    "PathArg",
    "find_line",
    "format_number",
    "open_binary",
    "open_text",
    "read_regular",
    "rereadable",
]

PathArg = str | os.PathLike[str]
"""A file or directory name, as a string or a :class:`pathlib.Path`."""

_GZIP_MAGIC = b"\x1f\x8b"
_PIECE = 1 << 16
# What a damaged file can raise while it is being read, before any parsing happens.
READ_ERRORS = (UnicodeDecodeError, EOFError, gzip.BadGzipFile, zlib.error)


@contextlib.contextmanager
def open_binary(
    path: PathArg, data: bytes | None = None
) -> Iterator[io.BufferedReader | gzip.GzipFile]:
    """Open ``path`` for reading bytes, transparently decompressing gzip (by magic bytes); or
    ``data``, its bytes already read (by :func:`read_regular`), with ``path`` naming them."""
    raw: io.BufferedReader = (
        open(path, "rb") if data is None else io.BufferedReader(io.BytesIO(data))
    )
    with raw:
        if raw.peek(2)[:2] == _GZIP_MAGIC:
            with gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
                yield unzipped
        else:
            yield raw


@contextlib.contextmanager
def open_text(path: PathArg, data: bytes | None = None) -> Iterator[IO[str]]:
    """Open a dataset file for streaming its lines as text.

    The file may be gzip-compressed whatever its name (recognised by its magic bytes), and is
    decoded as UTF-8 with an optional byte-order mark dropped. Lines are split on ``"\\n"`` only,
    so a stray ``"\\r"`` or a Unicode line separator inside a record does not cut it in two;
    each line keeps its ending (``"\\n"`` or ``"\\r\\n"``), which ``str.split()`` and
    :func:`json.loads` ignore. The file is read in chunks, never whole.

    A file that is not valid UTF-8, or a damaged gzip stream, raises :class:`DatasetFormatError`
    naming the first line that cannot be read.

    :param path: the file to read.
    :param data: the file's bytes, when they were read already (by :func:`read_regular`);
        ``path`` then only names them in errors.
    :raises FileNotFoundError: if ``path`` does not exist.
    :raises DatasetFormatError: if the bytes cannot be decoded.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "lines.txt")
    ...     _ = path.write_bytes(b"\\xef\\xbb\\xbfone\\r\\ntwo\\n")
    ...     with open_text(path) as lines:
    ...         print([line.split() for line in lines])
    [['one'], ['two']]
    """
    with (
        open_binary(path, data) as binary,
        io.TextIOWrapper(binary, encoding="utf-8-sig", newline="\n") as text,
    ):
        try:
            yield text
        except READ_ERRORS as exc:
            line = _first_unreadable_line(path, data)
            if line is None:  # the error came from the caller's own code, not from the file
                raise
            if isinstance(exc, UnicodeDecodeError):
                raise DatasetFormatError(
                    path, line, f"invalid UTF-8 ({exc.reason})", "UTF-8 text"
                ) from exc
            raise DatasetFormatError(
                path, line, f"damaged gzip data ({exc})", "a complete gzip stream"
            ) from exc


def _first_unreadable_line(path: PathArg, data: bytes | None = None) -> int | None:
    """The 1-based number of the first line that cannot be decompressed or decoded, if any.

    The file is read in pieces of bounded size, so a huge line does not have to fit in memory.
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    complete = 0  # lines read to their end
    try:
        with open_binary(path, data) as binary:
            for piece in iter(lambda: binary.readline(_PIECE), b""):
                decoder.decode(piece)
                complete += piece.endswith(b"\n")
            decoder.decode(b"", final=True)
    except READ_ERRORS:
        return complete + 1
    return None


@contextlib.contextmanager
def rereadable(path: PathArg) -> Iterator[PathArg]:
    """A name for ``path`` that can be opened and read again, for readers that read twice.

    Readers read a file a second time on their error paths (to name the line of an undecodable
    byte or of an id's first copy) and when a plugin's parser declines it. A pipe, a process
    substitution such as ``/dev/fd/63`` or a named FIFO cannot be read twice: such an input is
    copied once, as it comes, to a temporary file, which is read instead and removed at the
    end. A :class:`DatasetFormatError` about the copy is raised naming ``path``, so the user
    never sees the temporary name. A regular file (or a directory) is used as it is.

    :param path: the input as the user named it.
    :raises FileNotFoundError: if ``path`` does not exist.

    >>> import os
    >>> read, write = os.pipe()
    >>> with os.fdopen(write, "wb") as out:
    ...     _ = out.write(b"twice\\n")
    >>> with rereadable(f"/dev/fd/{read}") as again:
    ...     print(find_line(again, str.strip), find_line(again, str.strip))
    1 1
    >>> os.close(read)
    """
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="ef-evaluation-") as folder:
        copy = os.path.join(folder, "input")
        with open(path, "rb") as source, open(copy, "xb") as target:
            shutil.copyfileobj(source, target, 1 << 20)
        try:
            yield copy
        except DatasetFormatError as error:
            if error.path != copy:
                raise
            renamed = DatasetFormatError(path, error.line, error.problem, error.expected)
            raise renamed.with_traceback(error.__traceback__) from error.__cause__


def read_regular(path: PathArg, max_bytes: int) -> bytes:
    """The bytes of ``path``, a regular file of at most ``max_bytes``: for a document read
    whole and once (a saved report), where :func:`rereadable`'s copy of a stream has no use.

    A FIFO (which waits for a writer forever), a device (``/dev/zero`` never ends), a socket or
    a folder is refused before it is opened; the file is opened without blocking and checked
    again, and refused when it holds, or grows while read to, more than ``max_bytes``.

    :raises FileNotFoundError: if ``path`` does not exist.
    :raises ValueError: naming ``path``, when it is not a regular file or is too large.

    >>> read_regular("/dev/zero", 10)
    Traceback (most recent call last):
    ...
    ValueError: /dev/zero: a character device, not a regular file; copy it to a file first
    """
    name = os.fspath(path)

    def refused(mode: int) -> ValueError:
        return ValueError(f"{name}: {file_kind(mode)}, not a regular file; copy it to a file first")

    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise refused(mode)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    with open(os.open(path, flags), "rb") as stream:
        found = os.fstat(stream.fileno())
        if not stat.S_ISREG(found.st_mode):  # swapped in between the two looks
            raise refused(found.st_mode)
        data = b"" if found.st_size > max_bytes else stream.read(max_bytes + 1)
    if found.st_size > max_bytes or len(data) > max_bytes:
        raise ValueError(f"{name}: larger than {max_bytes:,} bytes, the most read whole")
    return data


def find_line(path: PathArg, predicate: Callable[[str], bool]) -> int | None:
    """The 1-based number of the first line of ``path`` for which ``predicate`` is true.

    Readers call it only on their error path, to name an earlier line (say, the first copy of a
    duplicated id) without keeping a line number for every record of a large file.

    :param path: the file to scan, opened as :func:`open_text` does.
    :param predicate: called with each line, ending included.
    :returns: the line number, or ``None`` if no line matches.

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "lines.txt")
    ...     _ = path.write_text("a\\nb\\nb\\n")
    ...     print(find_line(path, lambda line: line.strip() == "b"))
    2
    """
    with open_text(path) as lines:
        for number, line in enumerate(lines, 1):
            if predicate(line):
                return number
    return None


def format_number(value: float) -> str:
    """Write a score or grade so that ``float()`` reads back the same value.

    Whole numbers are written without a decimal point (``1.0`` as ``1``), the form qrels files
    use and that BEIR's loader (``int(score)``) and trec_eval (``atol``) accept; any other value
    is written as its shortest exact ``repr``.

    :param value: a finite number.

    >>> format_number(1.0), format_number(0.25), format_number(-2)
    ('1', '0.25', '-2')
    """
    number = float(value)
    if number.is_integer() and abs(number) < 2**53:
        return str(int(number))
    return repr(number)
