"""One persistent cache of ranx's compiled numba kernels, shared by every test module using ranx,
and one of ranx's outputs for the test modules' fixtures (:func:`cached_outputs`).

ranx compiles its numba kernels on first use (minutes of CPU for the fusion kernels on a fresh
install). Numba keeps a compiled kernel beside the installed source, or under a hash of the
source's absolute path: either way a new virtual environment (every fresh clone makes one) misses
it and compiles everything again. :func:`share_ranx_kernel_cache` keys the kernels by module name
and a hash of the source instead, in the user's cache directory, so the next environment with the
same ranx loads them.

A module that imports ranx calls :func:`share_ranx_kernel_cache` at its top, before any ranx
import: numba picks a function's cache place when the function is decorated, that is when ranx
is imported.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import pickle
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

__all__ = ["cached_outputs", "kernel_cache_root", "share_ranx_kernel_cache"]

T = TypeVar("T")


def kernel_cache_root() -> Path:
    """Where ranx's compiled kernels are kept: ``$XDG_CACHE_HOME`` (or ``~/.cache``), then
    ``ef-evaluation/numba``."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ef-evaluation" / "numba"


def share_ranx_kernel_cache() -> None:
    """Cache ranx's numba kernels by module name and source content, in the user's cache.

    Numba's own index still checks the numba version, the signature, the CPU and the function's
    bytecode. Idempotent. Without the numba internals this needs, ranx compiles as before and
    only the tests that look for the cached kernels fail.

    :raises RuntimeError: if ranx was imported before: its kernels already chose numba's places.
    """
    from numba.core import caching

    # numba 0.62 renamed _CacheImpl to CacheImpl; the list of locators kept its name.
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    locators: list[Any] | None = getattr(impl, "_locator_classes", None)
    base: Any = getattr(caching, "_CacheLocator", None)
    if locators is None or base is None:
        return
    if any(getattr(cls, "ef_evaluation_tests", False) for cls in locators):
        return
    if "ranx" in sys.modules:
        raise RuntimeError(
            "ranx was imported before its kernel cache was shared: call "
            "share_ranx_kernel_cache() at the top of every test module that uses ranx"
        )
    root = kernel_cache_root()

    class ModuleCacheLocator(base):
        ef_evaluation_tests = True

        def __init__(self, py_func: Any, py_file: str) -> None:
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(root / py_func.__module__)

        def get_cache_path(self) -> str:
            return self._cache_path

        def get_source_stamp(self) -> str:
            return hashlib.sha256(Path(self._py_file).read_bytes()).hexdigest()

        def get_disambiguator(self) -> str:
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> ModuleCacheLocator | None:
            if not py_func.__module__.startswith("ranx.") or not os.path.isfile(py_file):
                return None
            locator = cls(py_func, py_file)
            try:
                locator.ensure_cache_path()
            except OSError:  # not writable: numba's own places are tried next
                return None
            return locator

    locators.insert(0, ModuleCacheLocator)


def cached_outputs(module_file: str, inputs: object, compute: Callable[[], T]) -> T:
    """What ``compute`` returns (ranx's outputs for a test module's fixture), kept in the user's
    cache under a key of their content, so a run after the first pays none of ranx's time.

    The key is the SHA-256 of the test module's source (which holds the fixture's calls and
    parameters), ``repr(inputs)`` (the runs and judgements ranx is given), and the versions of
    ranx, numba and numpy: change any of them and ranx runs again. The file is written to a
    temporary name and moved into place, so two runs sharing the cache never read half a file.

    :param module_file: the test module's ``__file__``.
    :param inputs: everything ranx is given, as plain data.
    :param compute: makes the outputs (picklable plain data) when the cache has none.
    """
    key = hashlib.sha256()
    key.update(Path(module_file).read_bytes())
    key.update(repr(inputs).encode())
    for package in ("ranx", "numba", "numpy"):
        key.update(f"{package}=={importlib.metadata.version(package)}".encode())
    folder = kernel_cache_root().parent / "ranx-outputs"
    path = folder / f"{Path(module_file).stem}-{key.hexdigest()[:32]}.pickle"
    try:
        with path.open("rb") as cached:
            return cast(T, pickle.load(cached))
    except (OSError, EOFError, pickle.UnpicklingError):
        pass
    outputs = compute()
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            pickle.dump(outputs, file, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return outputs
