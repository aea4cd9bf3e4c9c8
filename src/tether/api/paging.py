"""A list request, said once: its filters, its order, its marker and its page size; and one way to apply it.

Each service reads its own query string in its own words (its limits, its
defaults, its refusals) into a ``ListQuery``; ``page`` then applies it to
the rows the service listed. The description is what a keyset query in SQL
needs (``WHERE`` the filters, ``ORDER BY`` the keys, ``WHERE (keys) > (the
marker's keys)``, ``LIMIT``), so the store can later take it as it is.

Values compare as the services' databases compare them: NULL (None) first
in ascending order, last in descending order. The sort keys should end in
something unique (an id, or ``STORED``), making the order total; the rows
after a marker are then exactly those that sort after it, whether or not
the marker row itself is among the rows (it may have been filtered out).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple, TypeVar

Row = TypeVar("Row")

# A row's value for a filter or sort key, by name.
Value = Callable[[Any, str], Any]

STORED = "@stored"
"""The sort key of the rows' own order, as the service listed them: the store's, by primary key."""


class SortKey(NamedTuple):
    name: str
    ascending: bool = True


class ListQuery(NamedTuple):
    filters: Mapping[str, Sequence[Any]] = MappingProxyType({})
    """Name -> the values a row's value may equal (any of them)."""
    sort: tuple[SortKey, ...] = ()
    """Most significant first; none means ``STORED`` ascending."""
    marker: str | None = None
    """The id of the row the page starts after (or ends before); the service finds that row."""
    limit: int | None = None
    """At most this many rows; None for all of them."""
    reverse: bool = False
    """The page is the rows just before the marker instead of just after it (neutron's page_reverse)."""


def item(row: Mapping[str, Any], name: str) -> Any:
    """The value of a view (a dict)."""
    return row.get(name)


def attribute(row: Any, name: str) -> Any:
    """The value of an entity (an object)."""
    return getattr(row, name)


def find(rows: Iterable[Row], ident: str, id_of: Callable[[Row], Any]) -> Row | None:
    """The row whose id is ``ident``, to page after; None when there is none (each service says so its own way)."""
    return next((row for row in rows if id_of(row) == ident), None)


def compare(left: Any, right: Any) -> int:
    """Three-way comparison, None first."""
    if left == right:
        return 0
    if left is None:
        return -1
    if right is None:
        return 1
    return -1 if left < right else 1


def matches(row: Any, filters: Mapping[str, Sequence[Any]], value: Value) -> bool:
    return all(value(row, name) in wanted for name, wanted in filters.items())


def page(rows: Iterable[Row], query: ListQuery, value: Value = attribute, *, marker: Row | None = None) -> list[Row]:
    """The rows that match ``query.filters``, in its order, after (or before) ``marker``, at most ``query.limit``.

    ``marker`` is the row ``query.marker`` names, as the service found it
    (where it looks, and what it answers when there is none, are its own).
    With ``STORED`` among the keys it must be one of ``rows`` (the same
    object): a row's stored position is only known among them.
    """
    if (marker is None) != (query.marker is None):
        raise ValueError("the marker row is given exactly when the query names a marker")
    listed = rows if isinstance(rows, list) else list(rows)
    keys = query.sort or _STORED_ORDER
    names = [key.name for key in keys]
    positions: dict[int, int] = {}
    if STORED in names:
        positions = {id(row): index for index, row in enumerate(listed)}
        if marker is not None and id(marker) not in positions:
            raise ValueError("a marker outside the rows has no stored position")
    if query.filters:
        listed = [row for row in listed if matches(row, query.filters, value)]
    fetch = _fetcher(names, value, positions)
    values = list(map(fetch, listed))
    sortable = values
    for row_values in values:
        if None in row_values:
            sortable = [tuple(map(_nullable, row_values)) for row_values in values]
            break
    directions = {key.ascending for key in keys}
    if len(directions) == 1:
        order = sorted(range(len(listed)), key=sortable.__getitem__, reverse=not keys[0].ascending)
    else:
        # One stable sort per key, least significant first: each key in its own direction.
        order = list(range(len(listed)))
        for position in reversed(range(len(keys))):
            order.sort(key=lambda index, at=position: sortable[index][at], reverse=not keys[position].ascending)
    if marker is not None:
        edge = fetch(marker)
        wanted = -1 if query.reverse else 1
        order = [index for index in order if _versus(values[index], edge, keys) == wanted]
    if query.limit is not None:
        if query.reverse:
            order = order[max(0, len(order) - query.limit):] if query.limit else []
        else:
            order = order[:query.limit]
    return [listed[index] for index in order]


def _fetcher(names: list[str], value: Value, positions: dict[int, int]) -> Callable[[Any], tuple[Any, ...]]:
    """A row's values for ``names``, as a tuple."""
    if value is attribute and STORED not in names:
        if len(names) == 1:
            get = operator.attrgetter(names[0])
            return lambda row: (get(row),)
        return operator.attrgetter(*names)

    def get_one(row: Any, name: str) -> Any:
        return positions[id(row)] if name == STORED else value(row, name)

    return lambda row: tuple(get_one(row, name) for name in names)


def _versus(values: tuple[Any, ...], edge: tuple[Any, ...], keys: tuple[SortKey, ...]) -> int:
    """Where a row sorts against the marker: -1 before, 1 after (0: the marker itself)."""
    for left, right, key in zip(values, edge, keys, strict=True):
        result = compare(left, right)
        if result:
            return result if key.ascending else -result
    return 0


_STORED_ORDER = (SortKey(STORED),)


def _nullable(value: Any) -> tuple[bool, Any]:
    return (value is not None, value if value is not None else 0)
