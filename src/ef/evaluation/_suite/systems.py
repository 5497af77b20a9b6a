"""The systems of a suite: names, and the retriever each one is on a dataset.

A system is given as

- a spec string, as ``ef-eval retrieval --retriever`` takes it: ``bm25`` or ``st:MODEL`` (the
  dataset's corpus indexed with :func:`ef.source_manager.ingest`, saved in and reused from the
  cell's index folder), an ``http://`` or ``https://`` URL (an
  :class:`~ef.evaluation.HttpRetriever`), or ``module:attr`` (the object imported, then taken
  as a system given in Python is: a factory is called with each dataset's corpus, anything
  else is the retriever itself);
- a factory: a class, or a callable with a ``corpus`` parameter, called with the dataset's
  corpus (and ``index_dir=``, the cell's index folder, when it takes one);
- anything else: a retriever, used as it is on every dataset (a search service that holds
  every corpus).

``module:attr`` is the command line's way of naming a Python system, so the factory that
``evaluate_suite`` calls is called when ``ef-eval suite --system NAME=module:attr`` names it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ef.evaluation._redact import redact_url
from ef.evaluation._suite.datasets import file_name
from ef.evaluation._suite.specs import (
    RETRIEVER_FORMS,
    import_object,
    is_module_attr,
    is_retriever_spec,
    retriever_from_spec,
)
from ef.evaluation._types import Corpus

__all__ = ["SYSTEM_FORMS", "as_systems", "system_retriever"]

SYSTEM_FORMS = RETRIEVER_FORMS
"""The spec strings a system may be, as errors list them."""


def _check_spec(spec: str) -> None:
    if not is_retriever_spec(spec):
        raise ValueError(
            f"unknown system {redact_url(spec)!r}; expected one of: {'; '.join(SYSTEM_FORMS)}"
        )


def as_systems(systems: Mapping[str, Any] | Sequence[str]) -> dict[str, Any]:
    """``systems`` as ``{name: system}``: a mapping as it is, a list of spec strings named by
    themselves (a URL with its credentials redacted).

    :raises ValueError: for no system, an unknown spec, or two systems of one file name.
    :raises TypeError: for a list holding anything but spec strings.
    """
    if isinstance(systems, str):
        raise TypeError("systems must be a list or a mapping of systems, not one string")
    if isinstance(systems, Mapping):
        named = dict(systems)
    else:
        named = {}
        for system in systems:
            if not isinstance(system, str):
                raise TypeError(
                    f"a system that is not a spec string needs a name: give systems as a "
                    f"mapping name -> system (got {type(system).__name__})"
                )
            named[redact_url(system)] = system
    if not named:
        raise ValueError("a suite needs at least one system")
    seen: dict[str, str] = {}
    for name, system in named.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"a system's name must be a non-empty string, got {name!r}")
        if isinstance(system, str):
            _check_spec(system)
        key = file_name(name)
        if key in seen:
            raise ValueError(f"the systems {seen[key]!r} and {name!r} share the file name {key!r}")
        seen[key] = name
    return named


def _is_factory(system: Any) -> bool:
    if isinstance(system, type):
        return True
    if not callable(system):
        return False
    try:
        parameters = inspect.signature(system).parameters
    except (TypeError, ValueError):
        return False
    return "corpus" in parameters


def _call_factory(factory: Callable[..., Any], corpus: Corpus, index_dir: Path | None) -> Any:
    if isinstance(factory, type):
        return factory(corpus)
    parameters = inspect.signature(factory).parameters
    if index_dir is not None and "index_dir" in parameters:
        return factory(corpus=corpus, index_dir=index_dir)
    return factory(corpus=corpus)


def system_retriever(
    system: Any,
    corpus: Corpus,
    *,
    index_dir: Path | None = None,
    progress: bool = False,
) -> Any:
    """The retriever ``system`` is on a dataset of documents ``corpus``.

    :param system: a spec string, a factory or a retriever (see the module's description).
    :param corpus: the dataset's documents.
    :param index_dir: the folder of this (dataset, system)'s saved index, or ``None``.
    :param progress: show the indexing's stages on standard error.
    """
    if isinstance(system, str):
        _check_spec(system)
        if not is_module_attr(system):
            return retriever_from_spec(system, corpus, index_dir=index_dir, progress=progress)
        system = import_object(system)
    if _is_factory(system):
        return _call_factory(system, corpus, index_dir)
    return system
