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

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

Row = TypeVar("Row")

# A row's value for a filter or sort key, by name.
Value = Callable[[Any, str], Any]

STORED = "@stored"
"""The sort key of the rows' own order, as the service listed them: the store's, by primary key."""


@dataclass(frozen=True)
class SortKey:
    name: str
    ascending: bool = True


@dataclass(frozen=True)
class ListQuery:
    filters: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    """Name -> the values a row's value may equal (any of them)."""
    sort: tuple[SortKey, ...] = ()
    """Most significant first; none means ``STORED`` ascending."""
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

    With ``STORED`` among the keys the marker must be one of ``rows`` (the
    same object): a row's stored position is only known among them.
    """
    listed = list(rows)
    positions = {id(row): index for index, row in enumerate(listed)}
    kept = [row for row in listed if matches(row, query.filters, value)] if query.filters else listed
    keys = query.sort or (SortKey(STORED),)

    def of(row: Any, name: str) -> Any:
        return positions[id(row)] if name == STORED else value(row, name)

    # One stable sort per key, least significant first: each key in its own direction.
    ordered = kept
    for key in reversed(keys):
        ordered = sorted(ordered, key=lambda row, name=key.name: _nullable(of(row, name)), reverse=not key.ascending)
    if marker is not None:
        if id(marker) not in positions and any(key.name == STORED for key in keys):
            raise ValueError("a marker outside the rows has no stored position")

        def versus_marker(row: Any) -> int:
            for key in keys:
                result = compare(of(row, key.name), of(marker, key.name))
                if result:
                    return result if key.ascending else -result
            return 0

        wanted = -1 if query.reverse else 1
        ordered = [row for row in ordered if versus_marker(row) == wanted]
    if query.limit is None:
        return ordered
    if query.reverse:
        return ordered[max(0, len(ordered) - query.limit):] if query.limit else []
    return ordered[:query.limit]


def _nullable(value: Any) -> tuple[bool, Any]:
    return (value is not None, value if value is not None else 0)
