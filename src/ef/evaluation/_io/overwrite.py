"""Outputs never replace their inputs: the one check every command and function that writes
applies, before anything runs."""

from __future__ import annotations

import os
from collections.abc import Iterable

from ef.evaluation._io.atomic import PathArg, is_stream

__all__ = ["check_not_input", "overwritten_input"]


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
