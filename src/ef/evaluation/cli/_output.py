"""What ``ef-eval`` writes, and where: strict JSON, no credentials, no input overwritten.

- A file named by ``--output`` (or ``--save-run``) is replaced all at once
  (:func:`~ef.evaluation.write_text_atomically`): a failure keeps the old file. A FIFO, a
  device or ``/dev/stdout`` is written as a stream; ``-`` is standard output.
- An output that would replace one of the command's inputs is refused before anything runs
  (:func:`~ef.evaluation.overwritten_input`, the check the library's writers apply too).
- Everything shown — titles, row labels, JSON — has the password of any URL hidden
  (:func:`~ef.evaluation.redact_url`): ``--retriever http://alice:S3CRET@host/`` is shown
  as ``http://alice:***@host/``.
- JSON is strict: a NaN or an infinity is an error naming where it is, never ``NaN`` text.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs

from ef.evaluation import overwritten_input, redact_url, write_text_atomically

__all__ = [
    "command_outputs",
    "json_text",
    "output_clash",
    "redact",
    "report_data",
    "write_json",
    "write_text",
]


# Each option that names a file a command writes, by its destination in the parsed arguments.
_OUTPUT_OPTIONS = {
    "output": "--output",
    "html": "--html",
    "save_run": "--save-run",
    "journal": "--journal",
}


def command_outputs(args: argparse.Namespace) -> dict[str, str | None]:
    """Every file the command line asks a command to write, by option.

    >>> command_outputs(argparse.Namespace(output="r.json", html=None, format="json"))
    {'--output': 'r.json', '--html': None}
    """
    return {
        option: getattr(args, name)
        for name, option in _OUTPUT_OPTIONS.items()
        if hasattr(args, name)
    }


def report_data(report: Any) -> dict[str, Any]:
    """``report.to_dict()`` with the report's own read-only ``per_query`` in place of a copy:
    what ``--format json`` writes, without holding every query's values twice.
    """
    data: dict[str, Any] = attrs.evolve(report, per_query={}).to_dict()
    data["per_query"] = report.per_query
    return data


def output_clash(outputs: Mapping[str, str | None], inputs: Iterable[str]) -> str | None:
    """What is wrong when an output would replace an input or another output, else None.

    :param outputs: each output option (``"--output"``) and its path, or None when not given.
    :param inputs: the command's input files and folders, as given.

    >>> output_clash({"--output": "a.json", "--html": "./a.json"}, [])
    '--output and --html name the same file (a.json); give each its own'
    """
    given = [(o, path) for o, path in outputs.items() if path is not None and path != "-"]
    for index, (option, path) in enumerate(given):
        clash = overwritten_input(path, inputs)
        if clash is not None:
            return f"{option} {path} would replace the input {clash}; write to another file"
        for other, other_path in given[index + 1 :]:
            if overwritten_input(path, [other_path]) is not None:
                return f"{option} and {other} name the same file ({path}); give each its own"
    return None


def redact(value: Any) -> Any:
    """A JSON-ready value with the password of every URL in its strings (keys too) hidden.

    What holds no password is returned as it is, not copied: a report of a million queries is
    not held twice.

    >>> redact({"retriever": "http://alice:pw@host/", "n": [1, "https://bob:x@h"]})
    {'retriever': 'http://alice:***@host/', 'n': [1, 'https://bob:***@h']}
    """
    if isinstance(value, str):
        return redact_url(value)
    if isinstance(value, dict):
        copy: dict[Any, Any] | None = None
        for index, (key, item) in enumerate(value.items()):
            new_key, new_item = redact(key), redact(item)
            if copy is None and (new_key != key or new_item is not item):
                copy = dict(itertools.islice(value.items(), index))
            if copy is not None:
                copy[new_key] = new_item
        return value if copy is None else copy
    if isinstance(value, list | tuple):
        items = [redact(item) for item in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def _non_finite(data: Any) -> str | None:
    """Where the first NaN or infinity in ``data`` is, as ``["key"][index]``, or None."""
    pending: list[tuple[str, Any]] = [("", data)]
    while pending:
        where, value = pending.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return f"{where or 'the value'} is {value}"
        if isinstance(value, dict):
            items = [(f"{where}[{json.dumps(key)}]", item) for key, item in value.items()]
        elif isinstance(value, list | tuple):
            items = [(f"{where}[{index}]", item) for index, item in enumerate(value)]
        else:
            continue
        pending.extend(reversed(items))
    return None


def json_text(data: Any) -> str:
    """``data`` as indented, strict JSON text with a final newline.

    :raises ValueError: naming where a NaN or an infinity is (JSON has neither).

    >>> json_text({"ndcg@10": float("nan")})
    Traceback (most recent call last):
    ...
    ValueError: cannot write JSON: ["ndcg@10"] is nan; JSON has no NaN or infinity
    """
    try:
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    except ValueError:
        where = _non_finite(data)
        if where is None:
            raise
        raise ValueError(f"cannot write JSON: {where}; JSON has no NaN or infinity") from None


def _finite(value: Any) -> bool:
    """Whether ``value`` holds no NaN and no infinity, however deep (nothing is copied)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(map(_finite, value.values()))
    if isinstance(value, list | tuple):
        return all(map(_finite, value))
    return True


_BATCH = 4096


def _joined(chunks: Iterable[str]) -> Iterator[str]:
    """``chunks`` joined ``_BATCH`` at a time (the encoder yields many tiny pieces)."""
    batch: list[str] = []
    for chunk in chunks:
        batch.append(chunk)
        if len(batch) >= _BATCH:
            yield "".join(batch)
            batch.clear()
    if batch:
        yield "".join(batch)


def write_json(output: str | None, data: Any, inputs: Iterable[str] = ()) -> None:
    """Write ``data`` as :func:`json_text` writes it, piece by piece: the text of a report of a
    million queries is never held whole (to standard output, a stream, or a file replaced all
    at once).

    :param inputs: the command's inputs, which ``output`` may not replace.
    :raises ValueError: naming where a NaN or an infinity is, or the input ``output`` would
        replace, before anything is written.
    :raises OSError: naming ``output``; an existing file is then kept as it was.
    """
    if not _finite(data):
        json_text(data)  # raises, naming where
    chunks = json.JSONEncoder(indent=2, ensure_ascii=False, allow_nan=False).iterencode(data)
    batches = _joined(chunks)
    if output is None or output == "-":
        sys.stdout.writelines(batches)
        sys.stdout.write("\n")
        return
    with write_text_atomically(output, compress=False, inputs=inputs) as out:
        out.writelines(batches)
        out.write("\n")


def write_text(output: str | None, text: str, inputs: Iterable[str] = ()) -> None:
    """Write ``text`` to standard output (``None`` or ``"-"``), a stream, or a file replaced
    all at once, never onto one of ``inputs``.

    :raises ValueError: naming both, when ``output`` would replace one of ``inputs``.
    :raises OSError: naming ``output``; an existing file is then kept as it was.
    """
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    with write_text_atomically(output, compress=False, inputs=inputs) as out:
        out.write(text)
