"""The gate's rules as written: the command-line form (``"ndcg@10 >= 0.60"``) and the
``[tool.ef-evaluation.check]`` table of a TOML file, with the options of :func:`check` it sets."""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from ef.evaluation._gate.rules import KINDS, RULES, SIGNIFICANTLY_WORSE, GateRule, number

__all__ = ["GateConfig", "parse_rule", "read_gate_config", "rules_from_table"]

_FLOOR = re.compile(r"^\s*(?P<metric>[^\s:<>=]+)\s*>=\s*(?P<value>\S+)\s*$")
_GROUP = re.compile(r"^\s*group\s+(?P<group>[^:]+?)\s*:\s*(?P<rule>.+)$")
_KEYED = re.compile(r"^\s*(?P<metric>[^\s:]+)\s*:\s*(?P<key>\w+)\s*=\s*(?P<value>.+?)\s*$")


def _rule(metric: str, key: str, value: Any, where: str, group: str | None = None) -> GateRule:
    cls = RULES.get(key)
    if cls is None:
        raise ValueError(f"{where}: unknown rule {key!r}: expected one of {', '.join(KINDS)}")
    try:
        return cls._from_setting(metric, value, where, group)
    except ValueError as error:
        if str(error).startswith(where):
            raise
        raise ValueError(f"{where}: {error}") from None


def parse_rule(text: str) -> GateRule:
    """A rule from its command-line form.

    >>> parse_rule('ndcg@10 >= 0.60')
    Floor(metric='ndcg@10', threshold=0.6, group=None)
    >>> parse_rule('ndcg@10: max_drop = 0.01').threshold
    0.01
    >>> parse_rule('recall@100: fail_if = "significantly_worse"').kind
    'fail_if'
    >>> parse_rule('group navigational: ndcg@10 >= 0.7').group
    'navigational'
    """
    where = f"rule {text!r}"
    group = None
    if grouped := _GROUP.match(text):
        group, text = grouped["group"], grouped["rule"]
    if found := _FLOOR.match(text):
        return _rule(found["metric"], "min", found["value"], where, group)
    if found := _KEYED.match(text):
        return _rule(found["metric"], found["key"], found["value"], where, group)
    raise ValueError(
        f"{where}: expected 'METRIC >= FLOOR', 'METRIC: max_drop = DROP' or "
        f"'METRIC: fail_if = \"{SIGNIFICANTLY_WORSE}\"'"
    )


@attrs.frozen
class GateConfig:
    """What a ``[tool.ef-evaluation.check]`` table sets: the rules, and the options of
    :func:`check` (``alpha``, ``test``, ``correction``; ``None`` when not set)."""

    rules: tuple[GateRule, ...] = ()
    alpha: float | None = None
    test: str | None = None
    correction: str | None = None
    has_correction: bool = False

    def updated(self, other: GateConfig) -> GateConfig:
        """This config with ``other``'s rules added and its options, where set, winning."""
        return GateConfig(
            rules=(*self.rules, *other.rules),
            alpha=other.alpha if other.alpha is not None else self.alpha,
            test=other.test or self.test,
            correction=other.correction if other.has_correction else self.correction,
            has_correction=self.has_correction or other.has_correction,
        )

    def check_options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`check` this config sets (``alpha``, ``test``,
        ``correction``), leaving the others to :func:`check`'s defaults.

        >>> GateConfig(alpha=0.01, correction=None, has_correction=True).check_options()
        {'alpha': 0.01, 'correction': None}
        """
        options: dict[str, Any] = {}
        if self.alpha is not None:
            options["alpha"] = self.alpha
        if self.test is not None:
            options["test"] = self.test
        if self.has_correction:
            options["correction"] = self.correction
        return options


def rules_from_table(table: Mapping[str, Any], where: str) -> GateConfig:
    """The rules and options of a ``[tool.ef-evaluation.check]`` table: ``alpha``, ``test``
    and ``correction`` (``"none"`` for no correction) as keys, each metric a sub-table of
    rules (``[tool.ef-evaluation.check."ndcg@10"]`` with ``min``, ``max_drop``, ``fail_if``;
    ``group = "navigational"`` makes them gate that query group alone).
    """
    rules: list[GateRule] = []
    options: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, Mapping):
            group = value.get("group")
            if group is not None and (not isinstance(group, str) or not group.strip()):
                raise ValueError(f"{where}: {key}.group: expected a group name, got {group!r}")
            found = [
                _rule(key, k, v, f"{where}: {key}.{k}", group)
                for k, v in value.items()
                if k != "group"
            ]
            if not found:
                raise ValueError(f"{where}: {key}: no rule (expected min, max_drop or fail_if)")
            rules.extend(found)
        elif key == "alpha":
            options["alpha"] = number(value, f"{where}: alpha")
        elif key == "test" and isinstance(value, str):
            options["test"] = value
        elif key == "correction" and isinstance(value, str):
            options["correction"] = None if value == "none" else value
            options["has_correction"] = True
        else:
            raise ValueError(
                f"{where}: unknown key {key!r} = {value!r} (expected alpha, test, correction, "
                "or a table of rules per metric)"
            )
    return GateConfig(rules=tuple(rules), **options)


def read_gate_config(path: str | os.PathLike[str]) -> GateConfig:
    """The gate's table in a TOML file: ``[tool.ef-evaluation.check]`` in a ``pyproject.toml``,
    or the same table (or the whole file) in any other TOML file.

    :raises ValueError: naming the file, for TOML that does not parse or a wrong rule.
    """
    name = os.fspath(path)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{name}: not TOML: {error}") from error
    table: Any = data
    if "tool" in data or Path(name).name == "pyproject.toml":
        table = data.get("tool", {}).get("ef-evaluation", {}).get("check")
        if not isinstance(table, Mapping):
            raise ValueError(f"{name}: no [tool.ef-evaluation.check] table")
    return rules_from_table(table, name)
