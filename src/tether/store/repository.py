"""Typed access to one table: rows in, dataclasses out, through statements rendered once per shape."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from sqlalchemy import Table, select

from tether.domain.listing import CONDITIONS, STORED, Contains, ListQuery, SortKey
from tether.store import keyset, name_search
from tether.store.statements import EQ, Prepared, Renderer, filter_shape

if TYPE_CHECKING:
    from tether.store.connection import StoreConnection

T = TypeVar("T")

# Rows read at a time when a test the database cannot run (``keep``) sits between the table and the page.
SCAN_BATCH = 500
# Rows a substring index may find for a page to be read by their keys (more: the page's own order).
SEARCH_MOST = 1_000


class Repository(Generic[T]):
    def __init__(self, table: Table, cls: type[T], key: str | None) -> None:
        """``key`` names the primary key column; None for a table whose key has several columns,
        which is then reached only through filters (``find``, ``update_where``, ``delete_where``)."""
        self.table = table
        self.cls = cls
        self.key = key
        self._columns = [column.name for column in table.columns]
        # A row builds its entity positionally when the columns are the dataclass's leading fields.
        leading = [f.name for f in dataclasses.fields(cls)][:len(self._columns)]  # type: ignore[arg-type]
        self._positional = leading == self._columns
        self._order = key or table.primary_key.columns.keys()[0]
        self._renderers: dict[str, Renderer] = {}
        self._cache: dict[tuple[Any, ...], Prepared] = {}

    def from_row(self, row: Any) -> T:
        mapping = row._mapping
        return self.cls(**{name: mapping[name] for name in self._columns})

    def to_row(self, entity: T) -> dict[str, Any]:
        return {name: getattr(entity, name) for name in self._columns}

    def _renderer(self, conn: StoreConnection) -> Renderer:
        dialect = conn.dialect
        renderer = self._renderers.get(dialect.name)
        if renderer is None:
            renderer = self._renderers[dialect.name] = Renderer(self.table, dialect)
        return renderer

    def _prepared(self, conn: StoreConnection, shape: tuple[Any, ...], make: Any) -> Prepared:
        key = (conn.dialect.name, shape)
        prepared = self._cache.get(key)
        if prepared is None:
            prepared = self._cache[key] = make(self._renderer(conn))
        return prepared

    def _entity(self, prepared: Prepared, values: Any) -> T:
        row = prepared.row(values)
        if self._positional:
            return self.cls(*row)
        return self.cls(**dict(zip(self._columns, row, strict=True)))

    async def get(self, conn: StoreConnection, key: Any, lock: str | None = None) -> T | None:
        """``lock`` is None, "share" or "update": a row lock on PostgreSQL (SQLite has one writer anyway)."""
        if self.key is None:
            raise TypeError(f"{self.table.name} has a composite key; use filters, not a single key")
        shape = ((self.key, EQ, 0),)
        prepared = self._prepared(conn, ("get", lock), lambda r: r.select(shape, (), None, lock))
        rows = await conn.fetch(prepared.sql, prepared.parameters((key,)))
        return self._entity(prepared, rows[0]) if rows else None

    async def find(
        self,
        conn: StoreConnection,
        order_by: Sequence[str] = (),
        limit: int | None = None,
        **filters: Any,
    ) -> list[T]:
        shape, values = filter_shape(filters)
        order = tuple(order_by or (self._order,))
        prepared = self._prepared(conn, ("find", shape, order, limit), lambda r: r.select(shape, order, limit))
        return [self._entity(prepared, row) for row in await conn.fetch(prepared.sql, prepared.parameters(values))]

    async def first(self, conn: StoreConnection, **filters: Any) -> T | None:
        found = await self.find(conn, limit=1, **filters)
        return found[0] if found else None

    async def tally(self, conn: StoreConnection, by: tuple[str, ...], **filters: Any) -> list[tuple[Any, ...]]:
        """How many rows match, per distinct value of the ``by`` columns: ``(*values, count)`` each."""
        shape, values = filter_shape(filters)
        prepared = self._prepared(conn, ("tally", by, shape), lambda r: r.tally(shape, by))
        return [tuple(prepared.row(row)) for row in await conn.fetch(prepared.sql, prepared.parameters(values))]

    async def count(self, conn: StoreConnection, **filters: Any) -> int:
        shape, values = filter_shape(filters)
        prepared = self._prepared(conn, ("count", shape), lambda r: r.count(shape))
        rows = await conn.fetch(prepared.sql, prepared.parameters(values))
        return int(rows[0][0])

    async def add(self, conn: StoreConnection, entity: T) -> T:
        row = self.to_row(entity)
        autoincrement = self.table.autoincrement_column
        if autoincrement is not None and row.get(autoincrement.name) is None:
            row.pop(autoincrement.name)
            columns = tuple(row)
            prepared = self._prepared(conn, ("add", columns, autoincrement.name),
                                      lambda r: r.insert(columns, autoincrement.name))
            (inserted,) = await conn.fetch(prepared.sql, prepared.parameters(list(row.values())))
            return dataclasses.replace(entity, **{autoincrement.name: inserted[0]})  # type: ignore[type-var]
        columns = tuple(row)
        prepared = self._prepared(conn, ("add", columns, None), lambda r: r.insert(columns, None))
        await conn.write(prepared.sql, prepared.parameters(list(row.values())))
        return entity

    async def add_all(self, conn: StoreConnection, entities: Iterable[T]) -> None:
        rows = [self.to_row(entity) for entity in entities]
        if not rows:
            return
        columns = tuple(self._columns)
        prepared = self._prepared(conn, ("add", columns, None), lambda r: r.insert(columns, None))
        await conn.write_many(prepared.sql, [prepared.parameters([row[name] for name in columns]) for row in rows])

    async def update(
        self, conn: StoreConnection, key: Any, expect: dict[str, Any] | None = None, **values: Any
    ) -> bool:
        """Change one row; with ``expect``, only if those columns still hold those values.

        Returns whether a row changed: a conditional update is how two
        processes agree on who won (claiming a node, a state transition).
        """
        if self.key is None:
            raise TypeError(f"{self.table.name} has a composite key; use filters, not a single key")
        return await self.update_where(conn, {self.key: key, **(expect or {})}, **values) > 0

    async def update_where(self, conn: StoreConnection, filters: dict[str, Any], **values: Any) -> int:
        if not values:
            return await self.count(conn, **filters)
        shape, filter_values = filter_shape(filters)
        columns = tuple(values)
        prepared = self._prepared(conn, ("update", columns, shape), lambda r: r.update(columns, shape))
        return await conn.write(prepared.sql, prepared.parameters([*values.values(), *filter_values]))

    async def delete(self, conn: StoreConnection, key: Any) -> bool:
        if self.key is None:
            raise TypeError(f"{self.table.name} has a composite key; use filters, not a single key")
        return await self.delete_where(conn, **{self.key: key}) > 0

    async def delete_where(self, conn: StoreConnection, **filters: Any) -> int:
        shape, values = filter_shape(filters)
        prepared = self._prepared(conn, ("delete", shape), lambda r: r.delete(shape))
        return await conn.write(prepared.sql, prepared.parameters(values))

    async def keys_after(self, conn: StoreConnection, after: Any, limit: int) -> list[Any]:
        """Up to ``limit`` keys greater than ``after``, in order: a table read a slice at a time."""
        if self.key is None:
            raise TypeError(f"{self.table.name} has a composite key")
        column = self.table.c[self.key]
        statement = select(column).where(column > after).order_by(column).limit(limit)
        return [row[0] for row in await conn.execute(statement)]

    async def page(self, conn: StoreConnection, query: ListQuery, *, marker: T | None = None,
                   keep: Callable[[T], bool] | None = None) -> list[T]:
        """One page of ``query`` (``domain.listing``), filtered, ordered and paged in the database.

        ``marker`` is the row ``query.marker`` names, as the service found it;
        the page holds the rows that sort after it (before it with
        ``query.reverse``, still in the query's order). Filter and sort names
        are this table's columns; the sort keys should end in a unique one
        (``STORED``, the primary key, when there are none). ``keep`` is a test
        the database cannot run (a regular expression, a derived value): the
        table is then read in the page's order a batch at a time until the
        page is full, never all at once.
        """
        if (marker is None) != (query.marker is None):
            raise ValueError("the marker row is given exactly when the query names a marker")
        query = await self._searched(conn, query)
        plain = _plain_filters(query)
        if plain is not None and keep is None:
            # Every row the filters pick, in stored order: the repository's own statement, which the
            # explorer reads row by row (a Core statement is opaque to it).
            return await self.find(conn, limit=query.limit, **plain)
        keys = keyset.order_of(self.table, query)
        edge = None if marker is None else tuple(getattr(marker, key.name) for key in keys)
        dialect = conn.dialect.name
        if keep is None:
            found = [self.from_row(row) for row in
                     await conn.execute(keyset.statement(self.table, query, dialect, edge=edge, limit=query.limit))]
        else:
            found = []
            while query.limit is None or len(found) < query.limit:
                batch = [self.from_row(row) for row in await conn.execute(
                    keyset.statement(self.table, query, dialect, edge=edge, limit=SCAN_BATCH))]
                found += [entity for entity in batch if keep(entity)]
                if len(batch) < SCAN_BATCH:
                    break
                edge = tuple(getattr(batch[-1], key.name) for key in keys)
            if query.limit is not None:
                del found[query.limit:]
        return found[::-1] if query.reverse else found

    async def _searched(self, conn: StoreConnection, query: ListQuery) -> ListQuery:
        """``query`` with each text search a substring index serves (``store.name_search``) turned into the
        keys it found: the page is then read by key, not by testing every row in the page's order."""
        if self.key is None:
            return query
        filters = dict(query.filters)
        alternatives = list(query.alternatives)
        for name, wanted in query.filters.items():
            if isinstance(wanted, Contains):
                keys = await name_search.matching(conn, self.table, name, wanted.text, SEARCH_MOST)
                if keys is not None:
                    del filters[name]
                    alternatives.append(({self.key: keys},))
        if len(filters) == len(query.filters):
            return query
        return query._replace(filters=filters, alternatives=tuple(alternatives))

    async def listed_marker(self, conn: StoreConnection, query: ListQuery) -> T | None:
        """The row ``query.marker`` names if ``query``'s filters keep it, else None: for the APIs whose
        marker must be one of the rows listed (ironic's)."""
        if self.key is None or query.marker is None:
            raise TypeError("a marker names a row by a single key")
        filters = {**query.filters, self.key: [query.marker]}
        found = await self.page(conn, query._replace(filters=filters, marker=None, limit=1, reverse=False))
        return found[0] if found else None


def _plain_filters(query: ListQuery) -> dict[str, Any] | None:
    """``query``'s filters as ``find`` takes them, when that is all it asks (stored order, no marker)."""
    if query.marker is not None or query.alternatives or query.reverse \
            or any(key != SortKey(STORED) for key in query.sort):
        return None
    filters: dict[str, Any] = {}
    for name, wanted in query.filters.items():
        if isinstance(wanted, CONDITIONS):
            return None
        values = list(wanted)
        filters[name] = values[0] if len(values) == 1 else values
    return filters
