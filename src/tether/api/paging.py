"""The in-memory pager: a ``ListQuery`` applied to rows already in hand.

The description (``ListQuery``, ``SortKey``, ``STORED``, the conditions) lives in
``domain.listing``, and a table's list runs it in SQL: ``Repository.page`` (see
``store.keyset``) filters, orders and pages in the database, a marker as a keyset
(``WHERE (keys) > (the marker's keys) ORDER BY keys LIMIT n``), never reading a
whole table. New collections should use that: map the API's filter and sort names
to columns, put a unique column last among the sort keys, find the marker row
the service's way, and pass both to the repository.

``page`` stays for what is not a table (views, records built from several
tables, constants): it applies the same description to a list, with the same
order (NULL first ascending, last descending) and the same meaning of a marker.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from tether.domain.listing import STORED, ListQuery, SortKey, compare, satisfies

__all__ = ["STORED", "ListQuery", "SortKey", "attribute", "compare", "find", "item", "matches", "page"]

Row = TypeVar("Row")

# A row's value for a filter or sort key, by name.
Value = Callable[[Any, str], Any]


def item(row: Mapping[str, Any], name: str) -> Any:
    """The value of a view (a dict)."""
    return row.get(name)


def attribute(row: Any, name: str) -> Any:
    """The value of an entity (an object)."""
    return getattr(row, name)


def find(rows: Iterable[Row], ident: str, id_of: Callable[[Row], Any]) -> Row | None:
    """The row whose id is ``ident``, to page after; None when there is none (each service says so its own way)."""
    return next((row for row in rows if id_of(row) == ident), None)


def matches(row: Any, filters: Mapping[str, Any], value: Value,
            alternatives: Sequence[Sequence[Mapping[str, Any]]] = ()) -> bool:
    """Whether ``row`` passes every filter (a sequence of values, or a ``domain.listing`` condition), and
    at least one group of each of ``alternatives``."""
    return all(satisfies(value(row, name), wanted) for name, wanted in filters.items()) and all(
        any(matches(row, group, value) for group in groups) for groups in alternatives)


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
    if query.filters or query.alternatives:
        listed = [row for row in listed if matches(row, query.filters, value, query.alternatives)]
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
