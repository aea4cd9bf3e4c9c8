"""A ``ListQuery`` (``domain.listing``) as one SQL statement on one table.

``WHERE`` the filters, ``AND (keys) > (the marker's keys)``, ``ORDER BY`` the
keys, ``LIMIT`` the page: the database reads one page through an index, never
the table, whatever the table's size and however deep the marker. NULLs sort as
the in-memory pager sorts them (first ascending, last descending: SQLite's own
order, said aloud on PostgreSQL for the columns that may hold one), so both
backends and the pager agree row for row.

Where every key runs one way and neither a key nor the marker's value can be
NULL, the marker is a row comparison, which both backends answer with one range
scan of a matching index; otherwise it is the same test spelt out key by key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement, Select, Table, and_, false, literal, or_, select, true, tuple_

from tether.domain.listing import STORED, AtLeast, AtMost, Contains, ListQuery, Present, SortKey


def order_of(table: Table, query: ListQuery) -> list[SortKey]:
    """The query's keys as column names, in the direction they are read (reversed for page_reverse):
    ``STORED`` is the primary key."""
    keys: list[SortKey] = []
    for key in query.sort or (SortKey(STORED),):
        names = table.primary_key.columns.keys() if key.name == STORED else [key.name]
        for name in names:
            if name not in table.c:
                raise ValueError(f"{table.name} has no column {name} to sort by")
            keys.append(SortKey(name, key.ascending != query.reverse))
    return keys


def condition(table: Table, name: str, wanted: Any) -> ColumnElement[bool]:
    if name not in table.c:
        raise ValueError(f"{table.name} has no column {name} to filter on")
    column = table.c[name]
    if isinstance(wanted, Present):
        return column.is_not(None) if wanted.present else column.is_(None)
    if isinstance(wanted, AtLeast):
        return column >= _bound(column, wanted.bound)
    if isinstance(wanted, AtMost):
        return column <= _bound(column, wanted.bound)
    if isinstance(wanted, Contains):
        return column.icontains(wanted.text, autoescape=True)
    values = list(wanted)
    if not values:
        return false()
    known = [value for value in values if value is not None]
    test = column == known[0] if len(known) == 1 else column.in_(known) if known else false()
    return or_(test, column.is_(None)) if len(known) < len(values) else test


def conditions(table: Table, filters: Mapping[str, Any]) -> list[ColumnElement[bool]]:
    return [condition(table, name, wanted) for name, wanted in filters.items()]


def _after(table: Table, keys: Sequence[SortKey], edge: Sequence[Any]) -> ColumnElement[bool]:
    """Rows that sort after ``edge`` (the marker's values) in the order of ``keys``."""
    columns = [table.c[key.name] for key in keys]
    if len({key.ascending for key in keys}) == 1 and None not in edge \
            and not any(column.nullable for column in columns):
        row, mark = tuple_(*columns), tuple_(*map(_bound, columns, edge))
        return row > mark if keys[0].ascending else row < mark
    alternatives = []
    for position, (key, value) in enumerate(zip(keys, edge, strict=True)):
        same = [_equal(column, known) for column, known in zip(columns[:position], edge[:position], strict=True)]
        alternatives.append(and_(*same, _beyond(columns[position], value, key.ascending)))
    return or_(*alternatives)


def _equal(column: Any, value: Any) -> ColumnElement[bool]:
    return column.is_(None) if value is None else column == value


def _beyond(column: Any, value: Any, ascending: bool) -> ColumnElement[bool]:
    """Strictly after ``value`` in one key's order: NULL first ascending, last descending."""
    if ascending:
        if value is None:
            return column.is_not(None)
        return column > _bound(column, value)
    if value is None:
        return false()
    before = column < _bound(column, value)
    return or_(before, column.is_(None)) if column.nullable else before


def _bound(column: Any, value: Any) -> Any:
    """A value to compare a column with, of the column's type (booleans too, which SQLAlchemy only lets
    ``=`` take bare)."""
    return literal(value, column.type)


def statement(table: Table, query: ListQuery, dialect: str, *, edge: Sequence[Any] | None = None,
              limit: int | None = None) -> Select[Any]:
    """The rows ``query`` filters, in its order, after ``edge`` (the marker's values of ``order_of``'s keys),
    at most ``limit``."""
    keys = order_of(table, query)
    where = conditions(table, query.filters)
    for groups in query.alternatives:
        where.append(or_(*(and_(true(), *conditions(table, group)) for group in groups)))
    if edge is not None:
        where.append(_after(table, keys, edge))
    found = select(table).where(*where)
    ordering = []
    for key in keys:
        column = table.c[key.name]
        ordered = column.asc() if key.ascending else column.desc()
        if column.nullable and dialect != "sqlite":
            # SQLite already sorts NULL first ascending and last descending; say so to the others
            ordered = ordered.nulls_first() if key.ascending else ordered.nulls_last()
        ordering.append(ordered)
    found = found.order_by(*ordering)
    return found.limit(limit) if limit is not None else found
