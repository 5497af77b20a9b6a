"""Reads a peer's recorded outputs back for a test, after checking they were recorded for the
inputs the test builds.

A reference file, ``tests/oracles/<name>.json.gz``, is gzip-compressed JSON: a ``header`` (the
peer, its version and those of its runtime, the seeds, the SHA-256 of the inputs, the command
that recorded it) and the ``outputs``. :func:`recorded` hashes the inputs the test built and
fails, naming the command that records the file again, when they are not the recorded ones or
the file is missing.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

__all__ = ["FOLDER", "RECORD_COMMAND", "canonical", "digest", "part_digests", "read", "recorded"]

FOLDER = Path(__file__).resolve().parent
"""Where the reference files are: ``tests/oracles``."""

RECORD_COMMAND = "python tests/oracles/record.py"
"""The command that records every reference file again, from the repository's root (it needs
the ``oracles`` extra: ``pip install -e '.[test,oracles]'``)."""


def canonical(value: object) -> bytes:
    """``value`` as canonical JSON: no spaces, ASCII only, floats as Python's shortest repr
    (exact), keys in the order the inputs hold them (the order can matter to the peer, ties for
    one, so it counts); tuples are lists."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def digest(inputs: object) -> str:
    """The SHA-256 of ``inputs``' canonical JSON, in hex."""
    return hashlib.sha256(canonical(inputs)).hexdigest()


def part_digests(inputs: Mapping[str, object]) -> dict[str, str]:
    """The SHA-256 of each top-level part of ``inputs``: which part changed, on a mismatch."""
    return {key: digest(value) for key, value in inputs.items()}


def path_of(name: str) -> Path:
    return FOLDER / f"{name}.json.gz"


def read(name: str) -> dict[str, Any]:
    """The reference file ``name`` (``header`` and ``outputs``).

    :raises FileNotFoundError: if there is none.
    """
    with gzip.open(path_of(name), "rt", encoding="utf-8") as file:
        data: dict[str, Any] = json.load(file)
    return data


def recorded(name: str, inputs: Mapping[str, object]) -> Any:
    """The outputs recorded in ``tests/oracles/<name>.json.gz``, if they were recorded for
    ``inputs`` (everything the test gives the peer, as plain data); else the test fails with
    the command that records them again."""
    where = f"tests/oracles/{name}.json.gz"
    try:
        data = read(name)
    except FileNotFoundError:
        pytest.fail(
            f"{where} is missing: record it with `{RECORD_COMMAND}` (needs the oracles extra)",
            pytrace=False,
        )
    header = data["header"]
    built = digest(inputs)
    if built != header["inputs_sha256"]:
        recorded_parts: dict[str, str] = header.get("inputs_sha256_by_part", {})
        changed = [
            part
            for part, value in part_digests(inputs).items()
            if recorded_parts.get(part) != value
        ] + [part for part in recorded_parts if part not in inputs]
        pytest.fail(
            f"{where} was recorded from other inputs than this test builds (inputs SHA-256 "
            f"{header['inputs_sha256']} recorded, {built} built; parts that differ: "
            f"{', '.join(changed) or 'none named'}). Record it again with `{RECORD_COMMAND}` "
            f"(needs the oracles extra), or put the inputs back.",
            pytrace=False,
        )
    return data["outputs"]
