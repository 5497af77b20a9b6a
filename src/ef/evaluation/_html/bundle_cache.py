"""The charting bundle kept on disk between runs, so a page does not wait for it each time.

vl-convert builds Vega, Vega-Lite and vega-embed into one JavaScript module on every call: 1.5
to 3.5 s on a busy two-core machine, most of what writing a small page costs. The bundle
depends on nothing but vl-convert's version and the snippet appended to it, so it is kept, once
built, in a user cache folder under a name holding both:

- ``EF_EVALUATION_CACHE``, when set: that folder; set to an empty value, nothing is kept;
- otherwise ``$XDG_CACHE_HOME/ef-evaluation``, or ``~/.cache/ef-evaluation``.

A kept bundle starts with a line holding the SHA-256 of the rest, checked on every read: a file
cut short or changed is built again and replaced, never put in a page. The file is written all
at once; a folder that cannot be written to (read-only, full) only means the bundle is built
each time.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["CACHE_ENV", "cache_folder", "cached_bundle"]

CACHE_ENV = "EF_EVALUATION_CACHE"
_HEADER = "// ef-evaluation bundle sha256="


def cache_folder() -> Path | None:
    """Where bundles are kept, or None when ``EF_EVALUATION_CACHE`` is set empty.

    >>> os.environ[CACHE_ENV] = "/tmp/ef-cache"
    >>> cache_folder()
    PosixPath('/tmp/ef-cache')
    >>> del os.environ[CACHE_ENV]
    """
    named = os.environ.get(CACHE_ENV)
    if named is not None:
        return Path(named) if named.strip() else None
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "ef-evaluation"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _read(path: Path) -> str | None:
    """The bundle kept in ``path`` when its hash checks out, else None."""
    try:
        text = path.read_bytes().decode("utf-8")  # bytes as written: no newline translation
    except (OSError, UnicodeDecodeError):
        return None
    header, newline, bundle = text.partition("\n")
    if not newline or header != _HEADER + _digest(bundle):
        return None
    return bundle


def cached_bundle(name: str, build: Callable[[], str]) -> str:
    """The bundle kept under ``name``, or ``build()`` kept there for next time.

    :param name: what identifies the bundle: the builder's version and options.
    :param build: makes the bundle when none is kept (or the kept one fails its check).
    """
    folder = cache_folder()
    path = None if folder is None else folder / f"{name}.js"
    if path is not None:
        kept = _read(path)
        if kept is not None:
            return kept
    bundle = build()
    if path is not None:
        from ef.evaluation._io.atomic import replaced_atomically

        data = f"{_HEADER}{_digest(bundle)}\n{bundle}".encode()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with replaced_atomically(path) as name:
                Path(name).write_bytes(data)
        except OSError:
            pass  # kept next time, perhaps; the page is what matters now
    return bundle
