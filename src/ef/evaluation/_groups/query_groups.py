"""The one input of query groups: :class:`QueryGroups`, query id → the names of its groups.

Every entry point that breaks results down by group (``groups=`` of the ``evaluate_*``
functions, :func:`~ef.evaluation.compare`, the quality gate and ``--groups FILE`` on the
command line) takes the same value, built once here: from a mapping, from a file
(:func:`~ef.evaluation._groups.reading.read_query_groups`) or from a function of the query
text (:meth:`QueryGroups.from_texts`). A query may belong to several groups.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from ef.evaluation._report.frozen import FrozenDict

__all__ = ["GroupFunction", "GroupsInput", "QueryGroups"]

GroupFunction = Callable[[str], str | Iterable[str] | None]
"""A function of a query's text giving its group, its groups, or ``None`` for no group."""


def _names(query_id: str, value: Any, where: str) -> tuple[str, ...]:
    """The group names of one query, checked: strings, not empty, each once, in order."""
    if value is None:
        return ()
    names = [value] if isinstance(value, str) else value
    if isinstance(names, Mapping) or not isinstance(names, Iterable):
        raise TypeError(
            f"{where}: the groups of query {query_id!r} are {type(value).__name__}; "
            "expected a group name or a list of names"
        )
    kept: list[str] = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError(
                f"{where}: query {query_id!r} has a group name of type {type(name).__name__}; "
                "expected a string"
            )
        if not name.strip():
            raise ValueError(f"{where}: query {query_id!r} has an empty group name")
        if name not in kept:
            kept.append(name)
    return tuple(kept)


def _memberships(value: Mapping[str, Any]) -> FrozenDict[str, tuple[str, ...]]:
    """Query id → its group names, checked; a query with no group is left out, and groups
    that leave every query out are refused, as a groups file that names none is: they would
    report no group, silently."""
    if isinstance(value, FrozenDict) and all(type(v) is tuple for v in value.values()):
        return _some(value, value)
    if not isinstance(value, Mapping):
        raise TypeError(
            f"query groups are a {type(value).__name__}; expected a mapping of query id to a "
            "group name or a list of names"
        )
    kept: dict[str, tuple[str, ...]] = {}
    for query_id, names in value.items():
        if not isinstance(query_id, str):
            raise TypeError(
                f"query groups: query id {query_id!r} is {type(query_id).__name__}; "
                "expected a string"
            )
        checked = _names(query_id, names, "query groups")
        if checked:
            kept[query_id] = checked
    return _some(FrozenDict(kept), value)


def _some(
    kept: FrozenDict[str, tuple[str, ...]], given: Mapping[str, Any]
) -> FrozenDict[str, tuple[str, ...]]:
    """``kept``, unless it names no query in any group."""
    if not kept:
        ids = "1 query id" if len(given) == 1 else f"{len(given)} query ids"
        raise ValueError(
            f"query groups name no query in any group ({ids}, none with a group name); "
            "expected at least one query id with a group name"
        )
    return kept


@attrs.frozen
class QueryGroups:
    """Which groups each query belongs to: query id → one or more group names.

    Build it from a mapping (``{"q1": "navigational", "q2": ["long", "typo"]}``), read it from
    a file with :func:`read_query_groups`, or compute it from the query texts with
    :meth:`from_texts`. Every ``groups=`` parameter also takes the mapping, the file's path or
    the function as they are. A query absent from it (or mapped to no name) is in no group;
    groups with no query in any group are refused (:class:`ValueError`), as a groups file
    that names none is.

    >>> groups = QueryGroups({'q1': 'short', 'q2': ['long', 'question'], 'q3': 'short'})
    >>> groups.names
    ('short', 'long', 'question')
    >>> groups.members('short'), groups.of('q2'), groups.of('q9')
    (('q1', 'q3'), ('long', 'question'), ())
    """

    memberships: FrozenDict[str, tuple[str, ...]] = attrs.field(converter=_memberships)

    @classmethod
    def from_texts(cls, queries: Mapping[str, str], group_of: GroupFunction) -> QueryGroups:
        """The groups ``group_of`` gives each query's text.

        :param queries: query id → text.
        :param group_of: text → a group name, several names, or ``None`` (no group).
        :raises TypeError: if ``group_of`` returns anything else, naming the query.

        >>> groups = QueryGroups.from_texts(
        ...     {'q1': 'python list sort', 'q2': 'how do I read a file line by line'},
        ...     lambda text: 'long' if len(text.split()) > 5 else 'short')
        >>> groups.memberships
        {'q1': ('short',), 'q2': ('long',)}
        """
        return cls(
            {
                query_id: _names(query_id, group_of(text), "the group function")
                for query_id, text in queries.items()
            }
        )

    @property
    def names(self) -> tuple[str, ...]:
        """Every group name, in the order they first appear."""
        return tuple(dict.fromkeys(name for names in self.memberships.values() for name in names))

    def of(self, query_id: str) -> tuple[str, ...]:
        """The groups of ``query_id`` (empty when it is in none)."""
        return self.memberships.get(query_id, ())

    def members(self, group: str) -> tuple[str, ...]:
        """The queries of ``group``, in the order they were given."""
        return tuple(q for q, names in self.memberships.items() if group in names)

    def __len__(self) -> int:
        """How many queries are in at least one group."""
        return len(self.memberships)


GroupsInput = (
    QueryGroups | Mapping[str, str | Iterable[str]] | str | os.PathLike[str] | GroupFunction
)
"""What every ``groups=`` takes: groups, a mapping, a groups file's path, or a function."""
