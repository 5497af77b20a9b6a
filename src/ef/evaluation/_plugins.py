"""The plugin host: lazy, isolated entry-point loading and the registry of what plugins provide.

Built-ins are ordinary plugins registered first, through the same hooks as third parties.
Nothing is loaded at import: the first call that needs the registry loads every plugin.
A plugin that fails to import, defines a hook that does not exist, or raises in a hook is skipped
with a :class:`PluginWarning` naming it and its distribution; everything else keeps working.
"""

from __future__ import annotations

import importlib
import os
import re
import threading
import types
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pluggy

from ef.evaluation import _hookspecs
from ef.evaluation._hookspecs import PROJECT, TrecRunParser
from ef.evaluation._registry import (
    PluginInfo,
    Registry,
    RetrievalMetric,
    make_metric,
    make_rag_metric,
    make_reader,
)
from ef.evaluation._types import Corpus, Qrels, Queries, RagMetricFn

__all__ = [
    "RETRIEVAL_METRICS",
    "PluginWarning",
    "list_plugins",
    "rag_metric_functions",
    "read_dataset",
    "registry",
]

ENV_SELECT = "EF_EVALUATION_PLUGINS"
_BUILTIN_MODULES = ("ef.evaluation._builtins", "ef.evaluation._adapters")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


class PluginWarning(UserWarning):
    """A plugin was skipped or one of its registrations ignored; the message says which and why."""


def _selected_names() -> set[str] | None:
    raw = os.environ.get(ENV_SELECT)
    if raw is None:
        return None
    return {name.strip() for name in raw.split(",") if name.strip()}


def _warn(message: str) -> None:
    warnings.warn(message, PluginWarning, stacklevel=4)


class PluginHost:
    """Owns the plugin manager and the registry built from it (one per process)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._pm: pluggy.PluginManager | None = None
        self._origins: dict[str, tuple[str | None, str | None, bool]] = {}
        self._registry: Registry | None = None
        self._doc_id_getters: dict[type, Callable[[Any], str] | None] = {}
        self._trec_run_parser: list[TrecRunParser | None] = []  # empty until resolved

    # loading

    @property
    def manager(self) -> pluggy.PluginManager:
        """The plugin manager, loading every plugin on first use."""
        with self._lock:
            if self._pm is None:
                pm = pluggy.PluginManager(PROJECT)
                pm.add_hookspecs(_hookspecs)
                self._pm = pm
                for module_name in _BUILTIN_MODULES:
                    module = importlib.import_module(module_name)
                    self._add(module, module_name, "ef-evaluation", _own_version(), builtin=True)
                self._load_entry_points()
            return self._pm

    def _load_entry_points(self) -> None:
        import importlib.metadata  # ~20-50 ms: paid when plugins load, not on import

        selected = _selected_names()
        seen: set[str] = set()
        for entry_point in importlib.metadata.entry_points(group=PROJECT):
            dist = entry_point.dist
            dist_name = dist.metadata["Name"] if dist is not None else None
            version = dist.version if dist is not None else None
            seen.add(entry_point.name)
            if dist_name:
                seen.add(dist_name)
            if selected is not None and not ({entry_point.name, dist_name} & selected):
                continue
            try:
                plugin = entry_point.load()
            except Exception as error:  # a broken plugin must not break the host
                _warn(
                    f"plugin {entry_point.name!r} ({_from(dist_name, version)}) failed to load "
                    f"and is skipped: {type(error).__name__}: {error}"
                )
                continue
            self._add(plugin, entry_point.name, dist_name, version, builtin=False)
        if selected:
            for name in sorted(selected - seen):
                _warn(f"{ENV_SELECT} names {name!r}, but no installed plugin has that name")

    def _add(
        self,
        plugin: object,
        name: str,
        dist_name: str | None,
        version: str | None,
        *,
        builtin: bool,
    ) -> None:
        assert self._pm is not None
        pm = self._pm
        if pm.has_plugin(name):
            _warn(
                f"a plugin named {name!r} is already registered; {_from(dist_name, version)} "
                "is skipped"
            )
            return
        try:
            pm.register(plugin, name=name)
        except pluggy.PluginValidationError as error:
            _warn(
                f"plugin {name!r} ({_from(dist_name, version)}) is invalid and is skipped: {error}"
            )
            return
        unknown = [caller.name for caller in pm.get_hookcallers(plugin) or () if not caller.spec]
        if unknown:
            pm.unregister(plugin, name=name)
            known = ", ".join(sorted(n for n in dir(_hookspecs) if n.startswith("ef_evaluation_")))
            _warn(
                f"plugin {name!r} ({_from(dist_name, version)}) defines unknown hook(s) "
                f"{', '.join(unknown)} and is skipped; known hooks: {known}"
            )
            return
        self._origins[name] = (dist_name, version, builtin)

    def register(self, plugin: object, name: str) -> str | None:
        """Register ``plugin`` in-process (see :mod:`ef.evaluation.testing`).

        :returns: ``None`` when it was registered under ``name``; the name it already has when
            the same object was loaded before (through its entry point, say).
        """
        with self._lock:
            existing = self.manager.get_name(plugin)
            if existing is not None:
                return existing
            self._add(plugin, name, None, None, builtin=False)
            self._invalidate()
            return None

    def unregister(self, name: str) -> None:
        """Remove the in-process plugin registered as ``name``."""
        with self._lock:
            self.manager.unregister(name=name)
            self._origins.pop(name, None)
            self._invalidate()

    def reset(self) -> None:
        """Forget every loaded plugin; the next use loads them again (honours the environment)."""
        with self._lock:
            self._pm = None
            self._origins.clear()
            self._invalidate()

    def _invalidate(self) -> None:
        self._registry = None
        self._doc_id_getters.clear()
        self._trec_run_parser.clear()

    # calling hooks one implementation at a time, so one plugin's error is only its own

    def _impls(self, hook_name: str) -> list[pluggy.HookImpl]:
        caller = getattr(self.manager.hook, hook_name)
        impls: list[pluggy.HookImpl] = list(reversed(caller.get_hookimpls()))
        return impls

    def _call_each(self, hook_name: str, **kwargs: Any) -> Iterator[tuple[str, Any]]:
        for impl in self._impls(hook_name):
            try:
                yield impl.plugin_name, impl.function(**kwargs)
            except Exception as error:
                _warn(
                    f"plugin {impl.plugin_name!r} ({self._describe(impl.plugin_name)}) raised "
                    f"in {hook_name} and was ignored there: {type(error).__name__}: {error}"
                )

    def first_result(self, hook_name: str, **kwargs: Any) -> Any:
        """The first non-None answer of a ``firstresult`` hook, skipping plugins that raise."""
        for _, result in self._call_each(hook_name, **kwargs):
            if result is not None:
                return result
        return None

    def _describe(self, plugin_name: str) -> str:
        dist_name, version, _ = self._origins.get(plugin_name, (None, None, False))
        return _from(dist_name, version)

    # the registry

    @property
    def registry(self) -> Registry:
        """What the plugins provide (built once, until plugins change)."""
        with self._lock:
            if self._registry is None:
                self._registry = self._build_registry()
            return self._registry

    def _registration_order(self, hook_name: str) -> list[pluggy.HookImpl]:
        impls = self._impls(hook_name)
        builtin = [i for i in impls if self._origins.get(i.plugin_name, (0, 0, False))[2]]
        return builtin + [i for i in impls if i not in builtin]

    def _collect(self, hook_name: str, make: Callable[..., Any], kind: str) -> dict[str, Any]:
        table: dict[str, Any] = {}

        def registrar(plugin_name: str) -> Callable[..., None]:
            def register(name: str, *args: Any, **kwargs: Any) -> None:
                if not isinstance(name, str) or not _NAME.match(name):
                    raise ValueError(f"invalid {kind} name {name!r}: use letters, digits, _ . -")
                entry = make(name, *args, plugin=plugin_name, **kwargs)
                if name in table:
                    _warn(
                        f"{kind} {name!r} from plugin {plugin_name!r} "
                        f"({self._describe(plugin_name)}) is ignored: plugin "
                        f"{table[name].plugin!r} registered it first"
                    )
                    return
                table[name] = entry

            return register

        for impl in self._registration_order(hook_name):
            try:
                impl.function(register=registrar(impl.plugin_name))
            except Exception as error:
                _warn(
                    f"plugin {impl.plugin_name!r} ({self._describe(impl.plugin_name)}) raised in "
                    f"{hook_name} and its {kind}s are ignored: {type(error).__name__}: {error}"
                )
                for name in [n for n, entry in table.items() if entry.plugin == impl.plugin_name]:
                    del table[name]
        return table

    def _build_registry(self) -> Registry:
        return Registry(
            metrics=types.MappingProxyType(
                self._collect("ef_evaluation_register_metrics", make_metric, "metric")
            ),
            rag_metrics=types.MappingProxyType(
                self._collect("ef_evaluation_register_rag_metrics", make_rag_metric, "RAG metric")
            ),
            readers=types.MappingProxyType(
                self._collect("ef_evaluation_register_dataset_readers", make_reader, "reader")
            ),
        )

    def doc_id_getter(self, result_type: type) -> Callable[[Any], str] | None:
        """How to map a result of ``result_type`` to its source doc id (resolved once per type)."""
        try:
            return self._doc_id_getters[result_type]
        except KeyError:
            pass
        with self._lock:
            getter: Callable[[Any], str] | None = self.first_result(
                "ef_evaluation_doc_id_getter", result_type=result_type
            )
            self._doc_id_getters[result_type] = getter
            return getter

    def trec_run_parser(self) -> TrecRunParser | None:
        """The TREC run parser a plugin provides, if any (resolved once)."""
        with self._lock:
            if not self._trec_run_parser:
                parser = self.first_result("ef_evaluation_trec_run_parser")
                self._trec_run_parser.append(parser)
            return self._trec_run_parser[0]

    def plugins(self) -> list[PluginInfo]:
        """Every loaded plugin, built-ins first."""
        pm = self.manager
        infos: list[PluginInfo] = []
        for name, plugin in pm.list_name_plugin():
            dist_name, version, builtin = self._origins.get(name, (None, None, False))
            hooks = tuple(sorted(caller.name for caller in pm.get_hookcallers(plugin) or ()))
            infos.append(PluginInfo(name, dist_name, version, hooks, builtin))
        return sorted(infos, key=lambda info: not info.builtin)


def _own_version() -> str | None:
    import importlib.metadata

    try:
        return importlib.metadata.version("ef-evaluation")
    except importlib.metadata.PackageNotFoundError:
        return None


def _from(dist_name: str | None, version: str | None) -> str:
    if dist_name is None:
        return "registered in-process"
    return f"distribution {dist_name} {version or '(unknown version)'}"


HOST = PluginHost()


def registry() -> Registry:
    """A read-only snapshot of the registered metrics, RAG metrics and dataset readers.

    Each entry names the plugin that provided it.

    >>> list(registry().metrics)[:5]  # built-ins register first
    ['map', 'mrr', 'ndcg', 'precision', 'recall']
    >>> registry().metrics['ndcg'].plugin
    'ef.evaluation._builtins'
    """
    return HOST.registry


def list_plugins() -> list[PluginInfo]:
    """Every loaded plugin — name, distribution, version and hooks — built-ins first.

    >>> [info.name for info in list_plugins() if info.builtin]
    ['ef.evaluation._builtins', 'ef.evaluation._adapters']
    """
    return HOST.plugins()


def rag_metric_functions() -> Mapping[str, RagMetricFn]:
    """The registered RAG metrics, name → ``fn(sample)``."""
    return {name: metric.fn for name, metric in HOST.registry.rag_metrics.items()}


def read_dataset(
    source: str | os.PathLike[str], *, reader: str = "beir", **options: Any
) -> tuple[Corpus, Queries, Qrels]:
    """Read a dataset with a registered reader: ``(corpus, queries, qrels)``.

    :param source: what the reader reads — a directory, a file, a dataset id, or
        ``builtin:NAME`` for a dataset bundled with ef-evaluation (read as BEIR).
    :param reader: the registered reader's name (``beir``, ``trec`` or a plugin's).
    :param options: passed on to the reader.
    :raises ValueError: for an unknown reader name (the message lists the available ones).
    """
    from ef.evaluation._builtin_datasets import BUILTIN_PREFIX, resolve_builtin

    if isinstance(source, str) and source.startswith(BUILTIN_PREFIX):
        source, reader = resolve_builtin(source), "beir"
    readers = HOST.registry.readers
    if reader not in readers:
        raise ValueError(
            f"unknown dataset reader {reader!r}; available: {', '.join(sorted(readers))}"
        )
    return readers[reader].reader(source, **options)


def lookup_metrics(names: Sequence[str]) -> list[RetrievalMetric]:
    """The registered metrics named in ``names``, in order; unknown names raise ValueError."""
    if isinstance(names, str):
        names = [names]
    metrics = HOST.registry.metrics
    unknown = [name for name in names if name not in metrics]
    if unknown:
        raise ValueError(
            f"unknown metric name(s) {', '.join(map(repr, unknown))}; "
            f"available: {', '.join(sorted(metrics))}"
        )
    return [metrics[name] for name in dict.fromkeys(names)]


class _MetricsView(Mapping[str, Callable[..., float]]):
    """``RETRIEVAL_METRICS``: name → metric function, read-only, built-ins and plugins alike."""

    def __getitem__(self, name: str) -> Callable[..., float]:
        return HOST.registry.metrics[name].fn

    def __iter__(self) -> Iterator[str]:
        return iter(HOST.registry.metrics)

    def __len__(self) -> int:
        return len(HOST.registry.metrics)

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{name!r}: {fn!r}" for name, fn in self.items()) + "}"


RETRIEVAL_METRICS: Mapping[str, Callable[..., float]] = _MetricsView()
"""The retrieval metrics :func:`evaluate_retrieval` can compute, each keyed by the short name used
in the ``metrics=`` argument and in report keys.

Public so downstream packages (e.g. ``ir.eval``) can consume this single source of truth — the
name→function registry *and* the set of valid metric names — instead of hand-mirroring it.
It is a read-only mapping that loads plugins on first access and shows built-in and plugin
metrics alike.
"""
