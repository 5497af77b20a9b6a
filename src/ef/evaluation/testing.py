"""Helpers for plugin authors' tests: register a plugin for the duration of one test.

>>> from ef.evaluation import RETRIEVAL_METRICS, evaluate_run, hookimpl
>>> class HitsPlugin:
...     @hookimpl
...     def ef_evaluation_register_metrics(self, register):
...         register("hits", lambda ranked, relevant, k: float(
...             sum(relevant.get(d, 0) > 0 for d in ranked[:k])))
>>> with registered_plugin(HitsPlugin(), name="hits-plugin"):
...     evaluate_run({"q": ["a", "b"]}, {"q": {"b": 1}}, k_values=(2,), metrics=("hits",)).metrics
{'hits@2': 1.0}
>>> "hits" in RETRIEVAL_METRICS
False
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ef.evaluation._plugins import HOST

__all__ = ["registered_plugin"]


@contextlib.contextmanager
def registered_plugin(plugin: object, *, name: str | None = None) -> Iterator[str]:
    """Register ``plugin`` (a module, class or instance with ``@hookimpl`` functions) in-process.

    The installed plugins are loaded first, so ``plugin`` sees the same registry a user would;
    it is unregistered on exit, even when the body raises. Only what this call registered is
    removed: a plugin that is loaded already (installed, through its entry point) is left as it
    is and its name is yielded, and so is one the host refused with a
    :class:`~ef.evaluation.PluginWarning`.

    :param plugin: the object carrying the hook implementations.
    :param name: the plugin's name in :func:`ef.evaluation.list_plugins`; a unique default.
    :returns: a context manager yielding the name it was registered under.
    :raises ValueError: if another plugin (an installed one, say) already has ``name``.
    """
    plugin_name, added = HOST.register(plugin, name or f"test-plugin-{id(plugin):x}")
    try:
        yield plugin_name
    finally:
        if added:
            HOST.unregister(plugin_name, plugin)
