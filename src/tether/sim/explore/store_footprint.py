"""Which rows each store statement reads and writes, seen at Tether's own connection layer.

On SQLite the repositories send SQL text that ``store.statements`` rendered
(one table, a conjunction of ``"col" = ?``, ``"col" IN (?, ...)`` and
``"col" IS NULL``, perhaps grouped) straight to one sqlite3 connection, so SQLAlchemy's events
never see them. ``RecordingDatabase`` hands out transactions whose
connection reads that text back into row predicates and row images before it
runs it. Whatever it cannot read (a Core statement, an unknown shape) makes
the step *opaque*: dependent on every other step, which only costs the
reduction some pruning, never a missed interleaving.

Predicates, inserted rows and the before-images of updated and deleted rows
are all in the store's own representation (bound values: numbers, text,
bytes, NULL), so they compare and hash.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import Table

from tether.sim.explore.footprint import Footprint, Predicate
from tether.sim.explore.recording import RANDOM_COLUMNS, Recorder
from tether.store import name_search
from tether.store.database import Database, StoreConnection
from tether.store.tables import metadata
from tether.store.upgrade import SchemaChange

_NAME = r'"(\w+)"'
_SELECT = re.compile(
    rf"^SELECT (?P<columns>.+?) FROM {_NAME}(?P<where>.*?)(?: GROUP BY .*?)?(?: ORDER BY .*?)?(?: LIMIT \d+)?$")
_INSERT = re.compile(rf"^INSERT INTO {_NAME} \((?P<columns>[^)]*)\) VALUES \([^)]*\)(?: RETURNING {_NAME})?$")
_UPDATE = re.compile(rf"^UPDATE {_NAME} SET (?P<set>.+?)(?P<where>(?: WHERE .*)?)$")
_DELETE = re.compile(rf"^DELETE FROM {_NAME}(?P<where>.*)$")
_EQ = re.compile(rf"^{_NAME} = \?$")
_IN = re.compile(rf"^{_NAME} IN \((?P<marks>\?(?:, \?)*)\)$")
_NULL = re.compile(rf"^{_NAME} IS NULL$")


class Unreadable(ValueError):
    """A statement whose rows cannot be told from its text."""


NULL_TERM, NONE_TERM = -1, 0  # ``IS NULL`` binds nothing; ``1 = 0`` (an empty IN) matches no row


@dataclass(frozen=True)
class _Shape:
    """One statement's text read back once: its kind, table, columns and WHERE terms."""

    kind: str  # select | insert | update | delete
    table: Table
    columns: tuple[str, ...]  # inserted or updated columns, in parameter order
    where_sql: str  # `` WHERE ...`` or ""
    terms: tuple[tuple[str, int], ...]  # (column, parameters bound), or NULL_TERM / NONE_TERM

    @property
    def where_parameters(self) -> int:
        return sum(count for _, count in self.terms if count > 0)

    def predicate(self, parameters: tuple[Any, ...]) -> Predicate | None:
        """The WHERE clause as row predicate, given the parameters it binds (the last ones)."""
        if not self.terms:
            return None
        used = len(parameters) - self.where_parameters
        terms = []
        for column, count in self.terms:
            if count == NULL_TERM:
                terms.append((column, frozenset([None])))
            else:
                terms.append((column, frozenset(parameters[used:used + count])))
                used += count
        return tuple(terms)


def _terms(text: str) -> tuple[tuple[str, int], ...]:
    text = text.strip()
    if not text:
        return ()
    if not text.startswith("WHERE "):
        raise Unreadable(text)
    terms = []
    for term in text[len("WHERE "):].split(" AND "):
        if term == "1 = 0":
            terms.append(("1", NONE_TERM))
        elif match := _EQ.match(term):
            terms.append((match[1], 1))
        elif match := _IN.match(term):
            terms.append((match[1], match["marks"].count("?")))
        elif match := _NULL.match(term):
            terms.append((match[1], NULL_TERM))
        else:
            raise Unreadable(term)
    return tuple(terms)


def _columns(text: str) -> tuple[str, ...]:
    return tuple(name.strip().strip('"') for name in text.split(","))


def _table(name: str) -> Table:
    table = metadata.tables.get(name)
    if table is None:
        raise Unreadable(name)
    return table


@lru_cache(maxsize=1024)
def read_shape(sql: str) -> _Shape | None:
    """What the text of a statement says about its rows; None when it cannot be read."""
    try:
        if match := _SELECT.match(sql):
            return _Shape("select", _table(match[2]), (), match["where"], _terms(match["where"]))
        if match := _INSERT.match(sql):
            return _Shape("insert", _table(match[1]), _columns(match["columns"]), "", ())
        if match := _UPDATE.match(sql):
            return _Shape("update", _table(match[1]), _columns(re.sub(r" = \?", "", match["set"])),
                          match["where"], _terms(match["where"]))
        if match := _DELETE.match(sql):
            return _Shape("delete", _table(match[1]), (), match["where"], _terms(match["where"]))
    except Unreadable:
        return None
    return None


def _keys(table: Table, images: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
    """The primary and unique keys the rows occupy: two writes of one key never commute."""
    autoincrement = table.autoincrement_column
    groups = [tuple(column.name for column in table.primary_key.columns)]
    groups += [tuple(column.name for column in constraint.columns)
               for constraint in table.constraints if type(constraint).__name__ == "UniqueConstraint"]
    keys = set()
    for image in images:
        for group in groups:
            if autoincrement is not None and autoincrement.name in group:
                continue  # numbered by the store in order of arrival: a renaming, not a conflict
            values = tuple(image.get(name) for name in group)
            if any(value is None for value in values):
                continue
            keys.add((table.name, group, values))
    return keys


class RecordingConnection:
    """A transaction's connection that files each statement's rows under the running step."""

    def __init__(self, inner: StoreConnection, recorder: Recorder, written: Written) -> None:
        self._inner = inner
        self._recorder = recorder
        self._written = written
        self.dialect = inner.dialect

    def _footprint(self) -> Footprint | None:
        return self._recorder.footprint

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        footprint = self._footprint()
        if footprint is not None:
            footprint.opaque = True  # a Core statement: its rows are not told apart
        self._written.add(None)
        return await self._inner.execute(statement, parameters)

    async def run_sync(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        footprint = self._footprint()
        if footprint is not None:
            footprint.opaque = True
        self._written.add(None)
        return await self._inner.run_sync(fn, *args, **kwargs)

    async def fetch(self, sql: str, parameters: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        footprint = self._footprint()
        if footprint is not None:
            await self._note(footprint, sql, [parameters])
        if not sql.startswith("SELECT "):  # a write that returns rows
            self._wrote(sql)
        rows = await self._inner.fetch(sql, parameters)
        if self._recorder.current is not None:
            self._recorder.observe(_as_read(sql, rows))
        return rows

    async def write(self, sql: str, parameters: tuple[Any, ...]) -> int:
        footprint = self._footprint()
        if footprint is not None:
            await self._note(footprint, sql, [parameters])
        self._wrote(sql)
        return self._recorder.observe(await self._inner.write(sql, parameters))  # type: ignore[no-any-return]

    async def write_many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        footprint = self._footprint()
        if footprint is not None:
            await self._note(footprint, sql, rows)
        self._wrote(sql)
        await self._inner.write_many(sql, rows)

    def _wrote(self, sql: str) -> None:
        shape = read_shape(sql)
        self._written.add(shape.table.name if shape is not None and shape.kind != "select" else None)

    async def _note(self, footprint: Footprint, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """File what the statement is about to read or change (before it runs: a failed insert
        still claimed its keys)."""
        shape = read_shape(sql)
        if shape is None:
            footprint.opaque = True
            return
        table = shape.table
        if shape.kind == "select":
            footprint.read_rows(table.name, shape.predicate(rows[0]))
            return
        if shape.kind == "insert":
            images = [dict(zip(shape.columns, row, strict=True)) for row in rows]
            footprint.write_rows(table.name, images, _keys(table, images))
            return
        for parameters in rows:
            where = parameters[len(parameters) - shape.where_parameters:] if shape.where_parameters else ()
            before = await self._rows(shape, where)
            images = list(before)
            if shape.kind == "update":
                changes = dict(zip(shape.columns, parameters, strict=False))
                images += [{**row, **changes} for row in before]
            footprint.read_rows(table.name, shape.predicate(parameters))
            footprint.write_rows(table.name, images, _keys(table, images))

    async def _rows(self, shape: _Shape, parameters: tuple[Any, ...]) -> list[dict[str, Any]]:
        """The rows a write is about to change, as they are now."""
        names = [column.name for column in shape.table.columns]
        columns = ", ".join(f'"{name}"' for name in names)
        self._recorder.busy = True
        try:
            rows = await self._inner.fetch(f'SELECT {columns} FROM "{shape.table.name}"{shape.where_sql}', parameters)
        finally:
            self._recorder.busy = False
        return [dict(zip(names, row, strict=True)) for row in rows]


@lru_cache(maxsize=1024)
def _volatile(sql: str) -> frozenset[int]:
    """Where a SELECT's result rows hold numbers the store hands out in order of arrival, or
    random values: the positions a history leaves out, as the logical digest of the store does.
    (The id an INSERT returns is read as it is: it only makes fewer states look alike.)"""
    match = _SELECT.match(sql)
    table = metadata.tables.get(match[2]) if match else None
    if match is None or table is None:
        return frozenset()
    names = _columns(match["columns"])
    autoincrement = table.autoincrement_column
    volatile = RANDOM_COLUMNS | ({autoincrement.name} if autoincrement is not None else set())
    return frozenset(index for index, name in enumerate(names) if name in volatile)


def _as_read(sql: str, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    volatile = _volatile(sql)
    if not volatile:
        return rows
    return [tuple("*" if index in volatile else value for index, value in enumerate(row)) for row in rows]


class Written:
    """The tables written since the last look (``None`` in it: any table, the statement was not read)."""

    def __init__(self) -> None:
        self.tables: set[str | None] = {None}

    def add(self, table: str | None) -> None:
        self.tables.add(table)

    def take(self) -> set[str | None]:
        taken, self.tables = self.tables, set()
        return taken


class RecordingDatabase(Database):
    """An in-memory SQLite store whose transactions report what they touch to ``recorder``,
    and which tables they wrote to ``written``."""

    def __init__(self, recorder: Recorder) -> None:
        super().__init__("sqlite:///:memory:")
        self.recorder = recorder
        self.written = Written()
        self.table_digests: dict[str, bytes] = {}  # as of the last look (``durable.logical_digest``)

    async def create_schema(self) -> SchemaChange:
        # Without the server-name substring index (an FTS5 table): each restore of a state replaces
        # the database, and SQLite then reconnects the virtual table on the next statement and
        # rebuilds its segments on the next instance insert, ~0.6 ms each, on every run. A name
        # search here is read the plain way (``name_search.matching``), with the same answer.
        change = await super().create_schema()
        async with super().begin() as conn:
            await conn.run_sync(name_search.uninstall)
        return change

    @asynccontextmanager
    async def begin(self) -> AsyncIterator[StoreConnection]:
        async with super().begin() as conn:
            yield RecordingConnection(conn, self.recorder, self.written)
