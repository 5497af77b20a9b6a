"""``ef-eval plugins``: what is installed — each plugin, where it comes from, what it provides.

Built-ins are listed first; they are ordinary plugins. What a plugin provides comes from the
registry (:func:`~ef.evaluation.registry`), grouped by the plugin that registered it.
``EF_EVALUATION_PLUGINS`` selects third-party plugins here as everywhere.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ef.evaluation import hookimpl, list_plugins, registry
from ef.evaluation.cli._common import Table, add_output_options, emit

if TYPE_CHECKING:
    from ef.evaluation.cli._common import Subparsers

__all__ = ["add_parser", "handle", "installed_plugins"]

_HOOK_PREFIX = f"{hookimpl.project_name.replace('.', '_')}_"


def add_parser(subparsers: Subparsers) -> None:
    """Register the ``plugins`` subcommand."""
    parser = subparsers.add_parser(
        "plugins",
        help="list installed plugins and what they provide",
        description="List the installed plugins (built-ins first): name, distribution, version, "
        "the hooks each implements, and the metrics, RAG metrics, dataset readers, fusion methods "
        "and normalisations it provides.",
    )
    add_output_options(parser)
    parser.set_defaults(handler=handle)


def installed_plugins() -> list[dict[str, Any]]:
    """Every loaded plugin as a JSON-ready dict, with what it registered.

    >>> builtins = installed_plugins()[0]
    >>> builtins["name"], builtins["readers"]
    ('ef.evaluation._builtins', ['beir', 'trec'])
    """
    provided = registry()
    plugins: list[dict[str, Any]] = []
    for info in list_plugins():
        plugins.append(
            {
                "name": info.name,
                "distribution": info.distribution,
                "version": info.version,
                "builtin": info.builtin,
                "hooks": list(info.hooks),
                "metrics": [m.name for m in provided.metrics.values() if m.plugin == info.name],
                "rag_metrics": [
                    m.name for m in provided.rag_metrics.values() if m.plugin == info.name
                ],
                "readers": [r.name for r in provided.readers.values() if r.plugin == info.name],
                "fusion_methods": [
                    m.name for m in provided.fusion_methods.values() if m.plugin == info.name
                ],
                "normalizations": [
                    n.name for n in provided.normalizations.values() if n.plugin == info.name
                ],
            }
        )
    return plugins


def _names(values: list[str]) -> str:
    """A list as one name per line of its cell (the table stays narrow; CSV quotes it)."""
    return "\n".join(values)


def handle(args: argparse.Namespace) -> int:
    """Print one row per installed plugin."""
    plugins = installed_plugins()
    rows = [
        (
            plugin["name"],
            plugin["distribution"] or "(in-process)",
            plugin["version"],
            _names([hook.removeprefix(_HOOK_PREFIX) for hook in plugin["hooks"]]),
            _names(plugin["metrics"]),
            _names(plugin["rag_metrics"]),
            _names(plugin["readers"]),
            _names(plugin["fusion_methods"]),
            _names(plugin["normalizations"]),
        )
        for plugin in plugins
    ]
    columns = (
        "plugin",
        "distribution",
        "version",
        "hooks",
        "metrics",
        "RAG metrics",
        "readers",
        "fusion methods",
        "normalisations",
    )
    title = f"{len(plugins)} plugins installed (hooks without the '{_HOOK_PREFIX}' prefix)"
    emit(args, Table(title, columns, rows), plugins)
    return 0
