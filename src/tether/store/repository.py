"""Typed access to one table: rows in, dataclasses out."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from sqlalchemy import Table, and_, delete, func, insert, select, update

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

T = TypeVar("T")


class Repository(Generic[T]):
    def __init__(self, table: Table, cls: type[T], key: str | None) -> None:
        """``key`` names the primary key column; None for a table whose key has several columns,
        which is then reached only through filters (``find``, ``update_where``, ``delete_where``)."""
        self.table = table
        self.cls = cls
        self.key = key
        self._columns = [column.name for column in table.columns]
        self._order = key or table.primary_key.columns.keys()[0]

    @property
    def _key_column(self) -> Any:
        if self.key is None:
            raise TypeError(f"{self.table.name} has a composite key; use filters, not a single key")
        return self.table.c[self.key]

    def from_row(self, row: Any) -> T:
        mapping = row._mapping
        return self.cls(**{name: mapping[name] for name in self._columns})

    def to_row(self, entity: T) -> dict[str, Any]:
        return {name: getattr(entity, name) for name in self._columns}

    def _where(self, filters: dict[str, Any]) -> Any:
        clauses = []
        for name, value in filters.items():
            column = self.table.c[name]
            if isinstance(value, (list, tuple, set, frozenset)):
                clauses.append(column.in_(list(value)))
            elif value is None:
                clauses.append(column.is_(None))
            else:
                clauses.append(column == value)
        return and_(*clauses) if clauses else None

    async def get(self, conn: AsyncConnection, key: Any) -> T | None:
        row = (await conn.execute(select(self.table).where(self._key_column == key))).first()
        return self.from_row(row) if row is not None else None

    async def find(
        self,
        conn: AsyncConnection,
        order_by: Sequence[str] = (),
        limit: int | None = None,
        **filters: Any,
    ) -> list[T]:
        query = select(self.table)
        where = self._where(filters)
        if where is not None:
            query = query.where(where)
        query = query.order_by(*(self.table.c[name] for name in (order_by or (self._order,))))
        if limit is not None:
            query = query.limit(limit)
        return [self.from_row(row) for row in await conn.execute(query)]

    async def first(self, conn: AsyncConnection, **filters: Any) -> T | None:
        found = await self.find(conn, limit=1, **filters)
        return found[0] if found else None

    async def count(self, conn: AsyncConnection, **filters: Any) -> int:
        query = select(func.count()).select_from(self.table)
        where = self._where(filters)
        if where is not None:
            query = query.where(where)
        return int((await conn.execute(query)).scalar_one())

    async def add(self, conn: AsyncConnection, entity: T) -> T:
        row = self.to_row(entity)
        autoincrement = self.table.autoincrement_column
        if autoincrement is not None and row.get(autoincrement.name) is None:
            row.pop(autoincrement.name)
            result = await conn.execute(insert(self.table).values(**row))
            entity = dataclasses.replace(  # type: ignore[type-var]
                entity, **{autoincrement.name: result.inserted_primary_key[0]}
            )
            return entity
        await conn.execute(insert(self.table).values(**row))
        return entity

    async def add_all(self, conn: AsyncConnection, entities: Iterable[T]) -> None:
        rows = [self.to_row(entity) for entity in entities]
        if rows:
            await conn.execute(insert(self.table), rows)

    async def update(
        self, conn: AsyncConnection, key: Any, expect: dict[str, Any] | None = None, **values: Any
    ) -> bool:
        """Change one row; with ``expect``, only if those columns still hold those values.

        Returns whether a row changed: a conditional update is how two
        processes agree on who won (claiming a node, a state transition).
        """
        where = self._key_column == key
        if expect:
            where = and_(where, self._where(expect))
        result = await conn.execute(update(self.table).where(where).values(**values))
        return result.rowcount > 0

    async def update_where(self, conn: AsyncConnection, filters: dict[str, Any], **values: Any) -> int:
        result = await conn.execute(update(self.table).where(self._where(filters)).values(**values))
        return result.rowcount

    async def delete(self, conn: AsyncConnection, key: Any) -> bool:
        result = await conn.execute(delete(self.table).where(self._key_column == key))
        return result.rowcount > 0

    async def delete_where(self, conn: AsyncConnection, **filters: Any) -> int:
        result = await conn.execute(delete(self.table).where(self._where(filters)))
        return result.rowcount
