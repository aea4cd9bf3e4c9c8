"""The database: one engine per process, short transactions, no 'database is locked'.

On SQLite every transaction goes through one connection in WAL mode, taken
in turn under an asyncio lock, so no write ever waits on SQLite's own busy
handler (real Ironic on SQLite spends its tail latency in those retries).
On PostgreSQL transactions use an ordinary pool.

Checkpoints may not fall inside a transaction (see ``sim.runtime``), so a
transaction never spans a point where another operation could interleave.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Dialect, make_url
from sqlalchemy.pool import NullPool, StaticPool

from tether.sim.runtime import Runtime, in_transaction
from tether.store.tables import metadata, schema_version

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

SCHEMA_VERSION = 1


class DatabaseUrlError(ValueError):
    pass


def async_url(url: str) -> str:
    """Accept a URL as people write it (``sqlite:///x.db``, ``postgresql://u@h/db``)."""
    try:
        parsed = make_url(url)
    except Exception as error:
        raise DatabaseUrlError(f"Invalid database URL {url!r}: {error}") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return str(parsed.set(drivername="sqlite+aiosqlite"))
    if backend in ("postgresql", "postgres"):
        return parsed.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)
    raise DatabaseUrlError(f"Unsupported database {backend!r}: use sqlite:/// or postgresql://")


class Database:
    """The engine and the discipline around it. Shared by every incarnation in a process."""

    def __init__(self, url: str, *, schema: str | None = None, pool_size: int = 10) -> None:
        self.url = url
        target = async_url(url)
        self.is_sqlite = target.startswith("sqlite")
        self._write_lock = asyncio.Lock() if self.is_sqlite else None
        self._sqlite: Engine | None = None
        self._sqlite_held: Connection | None = None
        if self.is_sqlite:
            in_memory = make_url(target).database in (None, "", ":memory:")
            # One connection: a memory database lives exactly as long as it (scenarios, the explorer).
            pooling: dict[str, Any] = {"poolclass": StaticPool} if in_memory else {"pool_size": 1, "max_overflow": 0}
            # SQLite runs in this process: a statement takes microseconds, while handing it to
            # aiosqlite's thread and back costs ~150 us of wake-ups. So statements run inline,
            # one connection, one transaction at a time (the write lock below).
            sync_url = make_url(target).set(drivername="sqlite+pysqlite")
            self._sqlite = create_engine(sync_url, connect_args={"timeout": 30, "check_same_thread": False},
                                         **pooling)
            event.listen(self._sqlite, "connect", _sqlite_pragmas)
            self.engine = None  # type: ignore[assignment]
        else:
            connect_args: dict[str, Any] = {}
            if schema:
                connect_args["server_settings"] = {"search_path": schema}
            from sqlalchemy.ext.asyncio import create_async_engine  # PostgreSQL only: it costs 0.2 s to import

            self.engine = create_async_engine(
                target,
                pool_size=pool_size,
                max_overflow=pool_size,
                connect_args=connect_args,
                poolclass=None if pool_size else NullPool,
            )

    async def create_schema(self) -> None:
        async with self._transaction() as conn:
            await conn.run_sync(metadata.create_all)
            present = (await conn.execute(schema_version.select())).first()
            if present is None:
                await conn.execute(schema_version.insert().values(version=SCHEMA_VERSION))

    def _sqlite_connection(self) -> Connection:
        # Held for the process's life: checking a connection out of the pool per transaction
        # costs more than the statements of most transactions.
        if self._sqlite_held is None:
            self._sqlite_held = self._sqlite.connect()  # type: ignore[union-attr]
        return self._sqlite_held

    async def dispose(self) -> None:
        if self._sqlite is not None:
            if self._sqlite_held is not None:
                self._sqlite_held.close()
                self._sqlite_held = None
            self._sqlite.dispose()
        else:
            await self.engine.dispose()

    @asynccontextmanager
    async def begin(self) -> AsyncIterator[StoreConnection]:
        if in_transaction.get():
            # One transaction per unit of work; nesting would deadlock SQLite's single writer.
            raise RuntimeError("a transaction is already open in this task")
        if self._write_lock is not None:
            async with self._write_lock, self._transaction() as conn:
                yield conn
        else:
            async with self._transaction() as conn:
                yield conn

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[StoreConnection]:
        token = in_transaction.set(True)
        try:
            if self._sqlite is not None:
                conn = InlineConnection(self._sqlite_connection())
                try:
                    yield conn  # type: ignore[misc]
                except BaseException:
                    conn.rollback()
                    raise
                conn.commit()
            else:
                async with self.engine.begin() as conn:
                    yield PooledConnection(conn)  # type: ignore[misc]
        finally:
            in_transaction.reset(token)


class StoreConnection(Protocol):
    """What a transaction offers: Core statements, and text the repositories rendered (``statements``)."""

    dialect: Dialect

    async def execute(self, statement: Any, parameters: Any = None) -> Any: ...

    async def run_sync(self, fn: Any, *args: Any, **kwargs: Any) -> Any: ...

    async def fetch(self, sql: str, parameters: tuple[Any, ...]) -> list[tuple[Any, ...]]: ...

    async def write(self, sql: str, parameters: tuple[Any, ...]) -> int: ...

    async def write_many(self, sql: str, rows: list[tuple[Any, ...]]) -> None: ...


class InlineConnection:
    """A SQLite transaction, run inline; rendered text goes straight to the sqlite3 connection.

    sqlite3 opens the transaction itself before the first write. A Core
    statement makes SQLAlchemy begin one of its own on the same connection,
    which then also ends it, so both kinds of statement commit or roll back together.
    """

    def __init__(self, connection: Connection) -> None:
        self.sync_connection = connection
        self.dialect = connection.dialect
        self._raw = connection.connection.driver_connection

    def commit(self) -> None:
        if self.sync_connection.in_transaction():
            self.sync_connection.commit()
        else:
            self._raw.commit()

    def rollback(self) -> None:
        if self.sync_connection.in_transaction():
            self.sync_connection.rollback()
        else:
            self._raw.rollback()

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        return self.sync_connection.execute(statement, parameters)

    async def run_sync(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(self.sync_connection, *args, **kwargs)

    async def fetch(self, sql: str, parameters: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with _as_sqlalchemy_errors(sql, parameters):
            return self._raw.execute(sql, parameters).fetchall()

    async def write(self, sql: str, parameters: tuple[Any, ...]) -> int:
        with _as_sqlalchemy_errors(sql, parameters):
            return self._raw.execute(sql, parameters).rowcount

    async def write_many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        with _as_sqlalchemy_errors(sql, rows):
            self._raw.executemany(sql, rows)


@contextmanager
def _as_sqlalchemy_errors(sql: str, parameters: Any) -> Iterator[None]:
    """The same exception types as a Core statement raises, so callers handle one kind of error."""
    try:
        yield
    except sqlite3.IntegrityError as error:
        raise sa_exc.IntegrityError(sql, parameters, error) from error
    except sqlite3.OperationalError as error:
        raise sa_exc.OperationalError(sql, parameters, error) from error


class PooledConnection:
    """A PostgreSQL transaction; rendered text runs through the driver as it is."""

    def __init__(self, connection: AsyncConnection) -> None:
        self.connection = connection
        self.dialect = connection.dialect

    async def execute(self, statement: Any, parameters: Any = None) -> Any:
        return await self.connection.execute(statement, parameters)

    async def run_sync(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return await self.connection.run_sync(fn, *args, **kwargs)

    async def fetch(self, sql: str, parameters: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in await self.connection.exec_driver_sql(sql, parameters)]

    async def write(self, sql: str, parameters: tuple[Any, ...]) -> int:
        return (await self.connection.exec_driver_sql(sql, parameters)).rowcount

    async def write_many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        await self.connection.exec_driver_sql(sql, rows)  # type: ignore[arg-type]


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


class Store:
    """The database as one incarnation sees it: dead incarnations cannot write."""

    def __init__(self, database: Database, runtime: Runtime) -> None:
        self.database = database
        self.rt = runtime

    @asynccontextmanager
    async def begin(self) -> AsyncIterator[StoreConnection]:
        self.rt.ensure_alive()
        async with self.database.begin() as conn:
            yield conn
