"""A list request, said once: its filters, its order, its marker and its page size.

Each service reads its own query string in its own words (its limits, its
defaults, its refusals) into a ``ListQuery``. The description is what a keyset
query in SQL needs, and ``store.keyset`` runs it as one: ``WHERE`` the filters,
``ORDER BY`` the keys, ``WHERE (keys) > (the marker's keys)``, ``LIMIT``. The
in-memory pager (``api.paging.page``) applies the same description to rows
already in hand, for what is not a table (views, records built from several).

Values compare as the services' databases compare them: NULL (None) first in
ascending order, last in descending order. The sort keys should end in
something unique (an id, or ``STORED``), making the order total; the rows
after a marker are then exactly those that sort after it, whether or not the
marker row itself is among the rows (it may have been filtered out).

A filter is a sequence of values (the row's value equals any of them) or one
of the conditions below; ``alternatives`` adds groups of filters of which a row
must match at least one (who-sees-what: "mine, or shared, or external").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

STORED = "@stored"
"""The sort key of the rows' own order, as the service listed them: the store's, by primary key."""


class SortKey(NamedTuple):
    name: str
    ascending: bool = True


class Present(NamedTuple):
    """The value is set (not NULL), or with ``False`` unset."""

    present: bool = True


class AtLeast(NamedTuple):
    """The value is set and at least this (changes-since, changed_since)."""

    bound: Any


class AtMost(NamedTuple):
    """The value is set and at most this (changes-before)."""

    bound: Any


class Contains(NamedTuple):
    """The value holds this text, ignoring ASCII case (SQL's LIKE on SQLite): a pre-filter that a
    stricter test (a regular expression) then narrows; never the only test where case matters."""

    text: str


Condition = Present | AtLeast | AtMost | Contains
CONDITIONS = (Present, AtLeast, AtMost, Contains)
Filters = Mapping[str, Sequence[Any] | Condition]


class ListQuery(NamedTuple):
    filters: Filters = MappingProxyType({})
    """Name -> the values a row's value may equal (any of them), or a condition on it."""
    sort: tuple[SortKey, ...] = ()
    """Most significant first; none means ``STORED`` ascending."""
    marker: str | None = None
    """The id of the row the page starts after (or ends before); the service finds that row."""
    limit: int | None = None
    """At most this many rows; None for all of them."""
    reverse: bool = False
    """The page is the rows just before the marker instead of just after it (neutron's page_reverse)."""
    alternatives: tuple[tuple[Filters, ...], ...] = ()
    """Each entry: groups of filters, a row matches at least one group of it (and every entry)."""


def satisfies(value: Any, wanted: Sequence[Any] | Condition) -> bool:
    """Whether one value passes one filter, as the database would judge it."""
    if isinstance(wanted, Present):
        return (value is not None) == wanted.present
    if isinstance(wanted, AtLeast):
        return value is not None and value >= wanted.bound
    if isinstance(wanted, AtMost):
        return value is not None and value <= wanted.bound
    if isinstance(wanted, Contains):
        return value is not None and wanted.text.lower() in str(value).lower()
    return value in wanted


def compare(left: Any, right: Any) -> int:
    """Three-way comparison, None first."""
    if left == right:
        return 0
    if left is None:
        return -1
    if right is None:
        return 1
    return -1 if left < right else 1
