"""Read-only containers that stay real ``dict``\\ s and ``list``\\ s: the fields of a report.

A report is a value: assigning into ``report.metrics`` must fail, not silently change a number
that was already printed or saved. :class:`FrozenDict` and :class:`FrozenList` subclass the
built-ins (a :class:`types.MappingProxyType` would not: :mod:`json` and :func:`attrs.asdict`
refuse or copy it badly), refuse every mutation with a :class:`TypeError`, and hash by value,
so a report holding only them hashes by value too. ``dict(frozen)`` or ``frozen.copy()`` is a
mutable copy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NoReturn, TypeVar

__all__ = [
    "FrozenDict",
    "FrozenList",
    "as_tuple",
    "freeze",
    "frozen_dict",
    "frozen_dict_of_dicts",
]

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


def _refuse(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(f"a report's {type(self).__name__} is read-only; copy it to change it")


class FrozenDict(dict[K, V]):
    """A ``dict`` that refuses every change and hashes by value.

    >>> metrics = FrozenDict({'ndcg@10': 0.5})
    >>> metrics['ndcg@10'] = 1.0
    Traceback (most recent call last):
    ...
    TypeError: a report's FrozenDict is read-only; copy it to change it
    >>> metrics == {'ndcg@10': 0.5}, hash(metrics) == hash(FrozenDict({'ndcg@10': 0.5}))
    (True, True)
    """

    __slots__ = ()

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __reduce__(self) -> tuple[Any, ...]:
        # The default rebuilds a dict subclass item by item through __setitem__.
        return (type(self), (dict(self),))

    def __repr__(self) -> str:
        return dict.__repr__(self)


class FrozenList(list[T]):
    """A ``list`` that refuses every change and hashes by value (for JSON arrays in a manifest).

    >>> FrozenList([10]).append(100)
    Traceback (most recent call last):
    ...
    TypeError: a report's FrozenList is read-only; copy it to change it
    """

    __slots__ = ()

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (list(self),))

    def __repr__(self) -> str:
        return list.__repr__(self)


# The converters take and give Any-valued types: an attrs converter's parameter type becomes
# the __init__ parameter's, where a type variable would be left unbound.


def as_tuple(values: Iterable[Any]) -> tuple[Any, ...]:
    """``values`` as a tuple: a converter for attrs."""
    return tuple(values)


def frozen_dict(value: Mapping[str, Any]) -> FrozenDict[str, Any]:
    """``value`` as a :class:`FrozenDict` (itself when it is one): a converter for attrs."""
    return value if type(value) is FrozenDict else FrozenDict(value)


def frozen_dict_of_dicts(
    value: Mapping[str, Mapping[str, Any]],
) -> FrozenDict[str, FrozenDict[str, Any]]:
    """A mapping of mappings (``per_query``, ``means``), frozen on both levels."""
    if type(value) is FrozenDict and all(type(inner) is FrozenDict for inner in value.values()):
        return value
    return FrozenDict({key: frozen_dict(inner) for key, inner in value.items()})


def freeze(value: Any) -> Any:
    """A JSON-like value with every dict and list in it, however deep, made read-only.

    >>> manifest = freeze({'parameters': {'k_values': [1, 10]}})
    >>> manifest['parameters']['k_values'], type(manifest['parameters']['k_values']).__name__
    ([1, 10], 'FrozenList')
    """
    if isinstance(value, dict):
        return FrozenDict({key: freeze(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return FrozenList(freeze(item) for item in value)
    return value
