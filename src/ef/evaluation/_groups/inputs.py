"""What every ``groups=`` takes, made one :class:`QueryGroups`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ef.evaluation._groups.query_groups import QueryGroups
from ef.evaluation._groups.reading import read_query_groups

__all__ = ["as_query_groups"]


def as_query_groups(
    groups: Any, queries: Mapping[str, str] | None = None, *, entry_point: str = "groups"
) -> QueryGroups | None:
    """``groups=`` as a :class:`QueryGroups` (``None`` stays ``None``).

    :param queries: the query texts a function of the text is applied to; ``None`` where
        the entry point has none.
    :param entry_point: the function or option, for messages.
    :raises TypeError: for a function where no query text is known, or a value of another type.
    """
    if groups is None or isinstance(groups, QueryGroups):
        return groups
    if isinstance(groups, str | os.PathLike):
        return read_query_groups(groups)
    if isinstance(groups, Mapping):
        return QueryGroups(groups)
    if callable(groups):
        if queries is None:
            raise TypeError(
                f"{entry_point} has no query texts to apply a group function to: build the "
                "groups first, QueryGroups.from_texts(queries, function)"
            )
        return QueryGroups.from_texts(queries, groups)
    raise TypeError(
        f"{entry_point}: groups is a {type(groups).__name__}; expected QueryGroups, a mapping of "
        "query id to group name(s), a groups file's path, or a function of the query text"
    )
