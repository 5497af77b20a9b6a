"""The plugin host: lazy, isolated entry-point loading and the registry built from the plugins.

Built-ins are ordinary plugins registered first, through the same hooks as third parties.
Nothing is loaded at import: the first call that needs the registry loads every plugin.
A plugin that fails to import, defines a hook that does not exist, or raises in a hook (even
``SystemExit``; only ``KeyboardInterrupt`` goes through) is skipped with a :class:`PluginWarning`
naming it and its distribution, and so is one that does not finish in time (see
:mod:`~ef.evaluation._plugins.calls`); everything else keeps working. What plugin code prints
while it is imported or its hooks run goes to standard error: standard output is the program's.
"""

from __future__ import annotations

import re
import threading
import types
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import pluggy

from ef.evaluation._exceptions import PluginWarning
from ef.evaluation._plugins import hookspecs as _hookspecs
from ef.evaluation._plugins.calls import (
    ENV_SELECT,
    PASSED_THROUGH,
    Unfinished,
    bounded,
    plugin_timeout,
    selected_names,
    stdout_to_stderr,
    unfinished,
)
from ef.evaluation._plugins.calls import (
    plugin_origin as _from,
)
from ef.evaluation._plugins.hookspecs import PROJECT, FusionKernel, TrecRunParser
from ef.evaluation._plugins.registry import REGISTERED, PluginInfo, Registry
from ef.evaluation._version import library_version

if TYPE_CHECKING:  # a type name only: the host knows no more of scoring
    from ef.evaluation._scoring.compiled import RankingKernel
    from ef.evaluation._scoring.query_plan import QrelsPass

__all__ = ["ENV_SELECT", "BuiltinLoader", "PluginHost"]

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")  # 11pt_avg starts with a digit


BuiltinLoader: TypeAlias = Callable[[], Sequence[tuple[str, object]]]
"""Imports the built-in plugins when first needed: ``[(name, plugin), ...]``, in order."""


def _warn(message: str) -> None:
    warnings.warn(message, PluginWarning, stacklevel=4)


class PluginHost:
    """Owns the plugin manager and the registry built from it (one per process).

    The host imports no plugin by name: the package's wiring hands it the built-ins
    (:meth:`use_builtins`); installed plugins come from their entry points.
    """

    def __init__(self) -> None:
        self._builtins: BuiltinLoader = lambda: ()
        self._lock = threading.RLock()
        self._pm: pluggy.PluginManager | None = None
        self._origins: dict[str, tuple[str | None, str | None, bool]] = {}
        self._registry: Registry | None = None
        self._doc_id_getters: dict[type, Callable[[Any], str] | None] = {}
        self._resolved: dict[str, Any] = {}  # hook name → the first plugin's answer, once asked
        self._timeout = 30.0  # read from the environment when plugins load
        self._dropped = 0  # plugins dropped because a hook did not finish in time

    # loading

    def use_builtins(self, loader: BuiltinLoader) -> None:
        """Register what ``loader`` returns, first and as built-ins, whenever plugins load."""
        with self._lock:
            self._builtins = loader
            self.reset()

    @property
    def manager(self) -> pluggy.PluginManager:
        """The plugin manager, loading every plugin on first use."""
        with self._lock:
            if self._pm is None:
                self._timeout = plugin_timeout()  # a bad value is an error, before any loading
                pm = pluggy.PluginManager(PROJECT)
                pm.add_hookspecs(_hookspecs)
                self._pm = pm
                try:
                    for name, plugin in self._builtins():
                        self._add(plugin, name, "ef-evaluation", library_version(), builtin=True)
                    with stdout_to_stderr():
                        self._load_entry_points()
                except BaseException:
                    # Interrupted (Ctrl-C): the next use loads them all again, not half of them.
                    self.reset()
                    raise
            return self._pm

    def _load_entry_points(self) -> None:
        import importlib.metadata  # ~20-50 ms: paid when plugins load, not on import

        selected = selected_names()
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
                plugin = bounded(entry_point.load, self._timeout)
            except Unfinished:
                origin = _from(dist_name, version)
                _warn(unfinished(entry_point.name, origin, "finish loading", self._timeout))
                continue
            except PASSED_THROUGH:
                raise
            except BaseException as error:  # a broken plugin must not break the host
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
    ) -> bool:
        """Register ``plugin`` as ``name``; whether it was (a refusal is warned about)."""
        assert self._pm is not None
        pm = self._pm
        if pm.has_plugin(name):
            _warn(
                f"a plugin named {name!r} is already registered; {_from(dist_name, version)} "
                "is skipped"
            )
            return False
        try:
            pm.register(plugin, name=name)
        except pluggy.PluginValidationError as error:
            _warn(
                f"plugin {name!r} ({_from(dist_name, version)}) is invalid and is skipped: {error}"
            )
            return False
        unknown = [caller.name for caller in pm.get_hookcallers(plugin) or () if not caller.spec]
        if unknown:
            pm.unregister(plugin, name=name)
            known = ", ".join(sorted(n for n in dir(_hookspecs) if n.startswith("ef_evaluation_")))
            _warn(
                f"plugin {name!r} ({_from(dist_name, version)}) defines unknown hook(s) "
                f"{', '.join(unknown)} and is skipped; known hooks: {known}"
            )
            return False
        self._origins[name] = (dist_name, version, builtin)
        return True

    def register(self, plugin: object, name: str) -> tuple[str, bool]:
        """Register ``plugin`` in-process (see :mod:`ef.evaluation.testing`).

        :returns: the name ``plugin`` is registered under, and whether this call registered it:
            ``False`` when the same object was loaded before (through its entry point, say),
            or when it was refused with a :class:`PluginWarning` (an unknown hook, say).
        :raises ValueError: if another plugin is registered as ``name`` already.
        """
        with self._lock:
            pm = self.manager
            existing = pm.get_name(plugin)
            if existing is not None:
                return existing, False
            if pm.has_plugin(name):
                raise ValueError(
                    f"a plugin named {name!r} is already registered ({self.describe(name)}); "
                    "register this one under another name"
                )
            added = self._add(plugin, name, None, None, builtin=False)
            self._invalidate()
            return name, added

    def unregister(self, name: str, plugin: object | None = None) -> None:
        """Remove the plugin registered as ``name`` — only if it is ``plugin``, when given."""
        with self._lock:
            if plugin is not None and self.manager.get_plugin(name) is not plugin:
                return
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
        self._resolved.clear()

    # calling hooks one implementation at a time, so one plugin's error is only its own

    def _impls(self, hook_name: str) -> list[pluggy.HookImpl]:
        caller = getattr(self.manager.hook, hook_name)
        impls: list[pluggy.HookImpl] = list(reversed(caller.get_hookimpls()))
        return impls

    def _call(
        self, impl: pluggy.HookImpl, hook_name: str, ignored: str, **kwargs: Any
    ) -> tuple[bool, Any]:
        """Whether ``impl`` answered, and its answer; a warning when it raised (even
        ``SystemExit``: its failure is its own), saying what is ``ignored`` as a result. A
        plugin that does not answer in time is dropped, with a warning."""
        try:
            if self.is_builtin(impl.plugin_name):  # ef's own hooks: no thread, no timeout
                return True, impl.function(**kwargs)
            with stdout_to_stderr():
                return True, bounded(lambda: impl.function(**kwargs), self._timeout)
        except Unfinished:
            name = impl.plugin_name
            _warn(unfinished(name, self.describe(name), f"answer {hook_name}", self._timeout))
            with self._lock:  # dropped: what else it would be asked could hang as well
                if self.manager.has_plugin(name):
                    self.unregister(name)
                    self._dropped += 1
            return False, None
        except PASSED_THROUGH:
            raise
        except BaseException as error:
            _warn(
                f"plugin {impl.plugin_name!r} ({self.describe(impl.plugin_name)}) raised in "
                f"{hook_name} and {ignored}: {type(error).__name__}: {error}"
            )
            return False, None

    def first_result(self, hook_name: str, **kwargs: Any) -> Any:
        """The first non-None answer of a ``firstresult`` hook, skipping plugins that raise."""
        for impl in self._impls(hook_name):
            _, result = self._call(impl, hook_name, "was ignored there", **kwargs)
            if result is not None:
                return result
        return None

    def describe(self, plugin_name: str) -> str:
        """Where a plugin comes from: its distribution and version, or "registered in-process"."""
        dist_name, version, _ = self._origins.get(plugin_name, (None, None, False))
        return _from(dist_name, version)

    def is_builtin(self, plugin_name: str) -> bool:
        """Whether ``plugin_name`` is one of ef-evaluation's own plugins."""
        return self._origins.get(plugin_name, (None, None, False))[2]

    # the registry

    @property
    def registry(self) -> Registry:
        """What the plugins provide (built once, until plugins change)."""
        with self._lock:
            while self._registry is None:
                dropped = self._dropped
                registry = self._build_registry()
                if self._dropped == dropped:  # else again, without what the dropped one gave
                    self._registry = registry
            return self._registry

    def _registration_order(self, hook_name: str) -> list[pluggy.HookImpl]:
        impls = self._impls(hook_name)
        builtin = [i for i in impls if self.is_builtin(i.plugin_name)]
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
                        f"({self.describe(plugin_name)}) is ignored: plugin "
                        f"{table[name].plugin!r} registered it first"
                    )
                    return
                table[name] = entry

            return register

        for impl in self._registration_order(hook_name):
            register = registrar(impl.plugin_name)
            answered, _ = self._call(impl, hook_name, f"its {kind}s are ignored", register=register)
            if not answered:
                for name in [n for n, entry in table.items() if entry.plugin == impl.plugin_name]:
                    del table[name]
        return table

    def _build_registry(self) -> Registry:
        tables = {
            field: types.MappingProxyType(
                self._collect(f"ef_evaluation_register_{hook}", make, kind)
            )
            for field, hook, make, kind in REGISTERED
        }
        return Registry(**tables)

    def adapt_retriever(self, retriever: object) -> Callable[..., Any] | None:
        """The plugins' answer to ``ef_evaluation_adapt_retriever``: how to call ``retriever``."""
        adapted: Callable[..., Any] | None = self.first_result(
            "ef_evaluation_adapt_retriever", retriever=retriever
        )
        return adapted

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

    def doc_id_getter_plugin(self, result_type: type) -> str:
        """The name of the plugin whose doc id getter handles ``result_type``, for messages."""
        caller = self.manager.hook.ef_evaluation_doc_id_getter
        for impl in reversed(caller.get_hookimpls()):  # pluggy's call order
            try:
                found = impl.function(result_type=result_type)
            except Exception:  # the host skipped it the same way
                continue
            if found is not None:
                return str(impl.plugin_name)
        return "?"

    def _resolved_once(self, hook_name: str) -> Any:
        """The first plugin's answer to ``hook_name`` (a hook taking no arguments), asked once
        until the plugins change."""
        with self._lock:
            if hook_name not in self._resolved:
                self._resolved[hook_name] = self.first_result(hook_name)
            return self._resolved[hook_name]

    def trec_run_parser(self) -> TrecRunParser | None:
        """The TREC run parser a plugin provides, if any (resolved once)."""
        parser: TrecRunParser | None = self._resolved_once("ef_evaluation_trec_run_parser")
        return parser

    def fusion_kernel(self) -> FusionKernel | None:
        """The compiled fusion kernel a plugin provides, if any (resolved once)."""
        kernel: FusionKernel | None = self._resolved_once("ef_evaluation_fusion_kernel")
        return kernel

    def qrels_pass(self) -> QrelsPass | None:
        """The compiled first pass over plain qrels a plugin provides, if any (resolved once)."""
        qrels_pass: QrelsPass | None = self._resolved_once("ef_evaluation_qrels_pass")
        return qrels_pass

    def ranking_kernel(self) -> RankingKernel | None:
        """The compiled kernel that scores a whole run a plugin provides, if any (resolved
        once)."""
        kernel: RankingKernel | None = self._resolved_once("ef_evaluation_ranking_kernel")
        return kernel

    def plugins(self) -> list[PluginInfo]:
        """Every loaded plugin: the built-ins first, in the order they register, then the others
        by name (not by the order they happened to load in)."""
        pm = self.manager
        infos: list[PluginInfo] = []
        for name, plugin in pm.list_name_plugin():
            dist_name, version, builtin = self._origins.get(name, (None, None, False))
            hooks = tuple(sorted(caller.name for caller in pm.get_hookcallers(plugin) or ()))
            infos.append(PluginInfo(name, dist_name, version, hooks, builtin))
        return sorted(infos, key=lambda info: (not info.builtin, "" if info.builtin else info.name))
