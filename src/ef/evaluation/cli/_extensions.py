"""What plugins add to the evaluating commands (hook ``ef_evaluation_register_command_extensions``).

``run``, ``retrieval``, ``rag``, ``compare``, ``check`` and ``suite`` take the options of every
installed extension (an experiment tracker's ``--mlflow``, say) and hand it their reports once
their own output is written: what the command printed or saved is never lost to an extension's
failure, which then fails the command with its own message.

An extension whose options cannot be added to a command (a clash with an option the command
has, an error in its code) is left out of that command with a
:class:`~ef.evaluation.PluginWarning`; the command keeps working without it.
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from ef.evaluation import PluginWarning, redact_url, registry
from ef.evaluation.cli._common import CliError
from ef.evaluation.cli._output import redact, report_data

__all__ = ["EXTENDED_COMMANDS", "add_extension_options", "report_finished"]

EXTENDED_COMMANDS = ("run", "retrieval", "rag", "compare", "check", "suite")
"""The commands that produce reports, and so take the extensions' options."""


def _extensions() -> Sequence[Any]:
    try:
        return list(registry().command_extensions.values())
    except ValueError:  # a bad EF_EVALUATION_PLUGIN_TIMEOUT: the command says so when it runs
        return []


_left_out: set[tuple[str, str]] = set()  # (extension, command) whose options failed


def add_extension_options(parsers: Mapping[str, argparse.ArgumentParser]) -> None:
    """Let every extension add its options to the parser of each command of
    :data:`EXTENDED_COMMANDS` (``parsers``: the subcommands' parsers by name)."""
    _left_out.clear()
    for extension in _extensions():
        for command in EXTENDED_COMMANDS:
            try:
                extension.add_options(parsers[command], command)
            except Exception as error:
                _left_out.add((extension.name, command))
                warnings.warn(
                    f"command extension {extension.name!r} of plugin {extension.plugin!r} could "
                    f"not add its options to 'ef-eval {command}' and is left out there: "
                    f"{type(error).__name__}: {error}",
                    PluginWarning,
                    stacklevel=2,
                )


def _shown(report: Any) -> Any:
    """``report`` with every URL password hidden, as the command printed it (itself when it
    holds none; its per-query values are walked, not copied)."""
    data = report_data(report) if hasattr(report, "per_query") else report.to_dict()
    hidden = redact(data)
    return report if hidden is data else type(report).from_dict(hidden)


def report_finished(
    args: argparse.Namespace, command: str, reports: Mapping[str, Any], **details: Any
) -> None:
    """Hand the command's finished ``reports`` (by name) to every extension, after the
    command's own output was written.

    :param details: ``dataset`` (what was evaluated on), and for ``check`` its ``check_report``.
    :raises CliError: for what an extension raises, with its message, naming the extension
        and its plugin (the traceback under ``--debug``).
    """
    extensions = _extensions()
    if not extensions:
        return
    shown = {str(redact(name)): _shown(report) for name, report in reports.items()}
    for extension in extensions:
        if (extension.name, command) in _left_out:
            continue
        try:
            extension.finished(command, shown, args, **details)
        except CliError:
            raise
        except Exception as error:
            raise CliError(
                f"{redact_url(str(error))} (command extension {extension.name!r} of plugin "
                f"{extension.plugin!r}, after the command's own output was written)"
            ) from error
