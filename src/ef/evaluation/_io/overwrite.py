"""Outputs never replace their inputs: the one guard every command and function that writes
goes through, and what it needs to know of a path.

:func:`check_not_input` is the check. :func:`~ef.evaluation.write_text_atomically` applies it
at the moment of writing (given the caller's ``inputs``), whether it replaces a file all at
once or appends to one (:func:`append_descriptor`, for a CI job's summary), so no path a
command writes can reach one of its inputs, by name, through a link, or as a file inside an
input folder. :func:`is_stream` tells the paths written as streams (a FIFO, ``/dev/stdout``)
from files.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterable
from typing import TypeAlias

__all__ = [
    "PathArg",
    "append_descriptor",
    "check_not_input",
    "is_stream",
    "overwritten_input",
    "own_descriptor",
]

PathArg: TypeAlias = str | os.PathLike[str]

# A descriptor of this process named as a file: written through the descriptor itself.
_OWN_DESCRIPTOR = re.compile(
    r"^/(?:dev/(?:std(?P<std>in|out|err)|fd/(?P<fd>\d+))|proc/(?P<pid>self|\d+)/fd/(?P<pfd>\d+))$"
)
_STANDARD = {"in": 0, "out": 1, "err": 2}
_MAX_LINKS = 40  # as the kernel's ELOOP limit


def own_descriptor(path: str) -> int | None:
    """The descriptor ``path`` names when it is one of this process's own, else None.

    Symbolic links are followed one at a time, so ``/dev/stdout`` (a link to
    ``/proc/self/fd/1``) is recognised before the kernel's magic link is resolved to whatever
    the descriptor points at.
    """
    current = path
    for _ in range(_MAX_LINKS):
        match = _OWN_DESCRIPTOR.match(os.path.normpath(current))
        if match:
            if match["std"]:
                return _STANDARD[match["std"]]
            if match["fd"]:
                return int(match["fd"])
            if match["pid"] in ("self", str(os.getpid())):
                return int(match["pfd"])
            return None
        try:
            link = os.readlink(current)
        except OSError:
            return None
        current = os.path.join(os.path.dirname(current), link)
    return None


def is_stream(path: PathArg) -> bool:
    """Whether ``path`` is written directly rather than replaced: an existing FIFO, character
    device or socket, or a standard stream or descriptor named as a file.

    >>> is_stream("/dev/null"), is_stream("/dev/stdout"), is_stream("report.json")
    (True, True, False)
    """
    name = os.fspath(path)
    if own_descriptor(name) is not None:
        return True
    try:
        mode = os.stat(name).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _same_file(first: str, second: str) -> bool:
    """Whether two paths name one file: the same inode when both exist, else one real path."""
    try:
        return os.path.samefile(first, second)
    except OSError:
        return os.path.realpath(first) == os.path.realpath(second)


def overwritten_input(output: PathArg, inputs: Iterable[PathArg]) -> str | None:
    """The input that writing ``output`` would replace, or None.

    ``output`` replaces an input when both name one file (through any link or relative path),
    or when an input is a folder that ``output`` is, or lies in (a dataset counts with every
    file already in it). Standard output (``-``) and streams (:func:`is_stream`) replace
    nothing.

    :param output: the output path as given.
    :param inputs: the input paths as given (files or folders).
    :returns: the input as given, or None.

    >>> overwritten_input("-", ["qrels.txt"]) is None
    True
    >>> overwritten_input("qrels.txt", ["runs/a.txt", "./qrels.txt"])
    './qrels.txt'
    """
    name = os.fspath(output)
    if name == "-" or is_stream(name):
        return None
    real = os.path.realpath(name)
    for given in (os.fspath(path) for path in inputs):
        if given == "-":
            continue
        if os.path.isdir(given):
            folder = os.path.realpath(given)
            if real == folder or (os.path.exists(real) and real.startswith(folder + os.sep)):
                return given
        elif _same_file(name, given):
            return given
    return None


def check_not_input(output: PathArg, inputs: Iterable[PathArg]) -> None:
    """Refuse to write ``output`` when it would replace one of ``inputs`` (see
    :func:`overwritten_input`).

    :raises ValueError: naming both.
    """
    clash = overwritten_input(output, inputs)
    if clash is not None:
        raise ValueError(
            f"{os.fspath(output)} would replace the input {clash}; write to another file"
        )


def append_descriptor(path: PathArg, inputs: Iterable[PathArg]) -> int:
    """A descriptor to append to ``path`` (created when missing), once it is checked not to be
    one of ``inputs``: opened without blocking, so a FIFO that nobody reads fails at once
    instead of stopping the command.

    :raises ValueError: naming both, when ``path`` is one of ``inputs``.
    :raises OSError: naming ``path``, when it cannot be opened (a folder, no such folder, a FIFO
        nobody reads).
    """
    check_not_input(path, inputs)
    name = os.fspath(path)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, 0o666)
    except OSError as error:
        if error.errno == errno.ENXIO:
            raise OSError(error.errno, "a FIFO nobody reads", name) from None
        raise OSError(error.errno, error.strerror, name) from None
    if stat.S_ISDIR(os.fstat(fd).st_mode):
        os.close(fd)
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
    return fd
