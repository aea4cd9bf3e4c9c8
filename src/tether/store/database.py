"""The database: one engine per process, short transactions, no 'database is locked'.

On SQLite every transaction goes through one connection in WAL mode, taken
in turn under an asyncio lock, so no write ever waits on SQLite's own busy
handler (real Ironic on SQLite spends its tail latency in those retries).
On PostgreSQL transactions use an ordinary pool.

Checkpoints may not fall inside a transaction (see ``runtime.runtime``), so a
transaction never spans a point where another operation could interleave.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool, StaticPool

from tether.runtime.bus import MessageBus
from tether.runtime.runtime import Runtime
from tether.runtime.transactions import in_transaction
from tether.store.connection import StoreConnection
from tether.store.schema_revision import SchemaChange
from tether.store.unit_of_work import UnitOfWork, UnitOfWorkScope
from tether.store.upgrade import read_schema, upgrade_schema

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection


# PostgreSQL's advisory lock that one `tether serve` per database holds: ("teth", 1).
_ADVISORY_KEY = (0x74657468, 1)


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
        # SQLite runs inline on one connection (see Database), through the standard library's driver.
        return str(parsed.set(drivername="sqlite+pysqlite"))
    if backend in ("postgresql", "postgres"):
        return parsed.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)
    raise DatabaseUrlError(f"Unsupported database {backend!r}: use sqlite:/// or postgresql://")


class Database:
    """The engine and the discipline around it. Shared by every incarnation in a process.

    ``read_only`` opens the store so that nothing can be written through it (``tether check``):
    SQLite with ``mode=ro``, PostgreSQL with every transaction read-only. ``application_name``
    names this process's connections to PostgreSQL, as ``pg_stat_activity`` shows them.
    """

    def __init__(self, url: str, *, schema: str | None = None, pool_size: int = 10, read_only: bool = False,
                 application_name: str | None = None) -> None:
        self.url = url
        self.read_only = read_only
        target = async_url(url)
        self.is_sqlite = target.startswith("sqlite")
        self._write_lock = asyncio.Lock() if self.is_sqlite else None
        self._sqlite: Engine | None = None
        self._sqlite_held: Connection | None = None
        self._inline: InlineConnection | None = None
        self._owner: Any = None  # the connection holding PostgreSQL's advisory lock (hold_exclusively)
        if self.is_sqlite:
            in_memory = make_url(target).database in (None, "", ":memory:")
            # One connection: a memory database lives exactly as long as it (scenarios, the explorer).
            pooling: dict[str, Any] = {"poolclass": StaticPool} if in_memory else {"pool_size": 1, "max_overflow": 0}
            # SQLite runs in this process: a statement takes microseconds, less than handing it to
            # a thread and back would. So statements run inline, one connection, one transaction at
            # a time (the write lock below).
            if read_only and not in_memory:
                self._sqlite = create_engine("sqlite+pysqlite://", creator=_read_only_sqlite(make_url(target).database),
                                             poolclass=StaticPool)
                event.listen(self._sqlite, "connect", _sqlite_read_pragmas)
            else:
                self._sqlite = create_engine(make_url(target), connect_args={"timeout": 30, "check_same_thread": False},
                                             **pooling)
                event.listen(self._sqlite, "connect", _sqlite_pragmas)
            self.engine = None  # type: ignore[assignment]
        else:
            settings: dict[str, str] = {}
            if schema:
                settings["search_path"] = schema
            if read_only:
                settings["default_transaction_read_only"] = "on"
            if application_name:
                settings["application_name"] = application_name[:63]  # PostgreSQL keeps no more (NAMEDATALEN)
            connect_args = {"server_settings": settings} if settings else {}
            from sqlalchemy.ext.asyncio import create_async_engine  # PostgreSQL only: it costs 0.2 s to import

            self.engine = create_async_engine(
                target,
                pool_size=pool_size,
                max_overflow=pool_size,
                connect_args=connect_args,
                poolclass=None if pool_size else NullPool,
            )

    async def create_schema(self) -> SchemaChange:
        """Create the schema in an empty database, or upgrade it to this code's; say which it did.

        Raises ``SchemaError`` for a database this Tether cannot open: one a newer Tether upgraded,
        or one whose tables carry no version.
        """
        async with self.begin() as conn:
            change = await conn.run_sync(upgrade_schema)
        if self._sqlite is not None and not self.read_only:
            # Only once the database is known to be Tether's: WAL mode is written into the file, and
            # a database refused above (another application's, a newer Tether's) is left as it was.
            async with self._write_lock:  # type: ignore[union-attr]
                self._inline_connection().raw.execute("PRAGMA journal_mode=WAL")
        return change

    async def read_schema(self) -> Literal["empty", "current"]:
        """Where the schema stands, found without writing: see ``upgrade.read_schema``."""
        async with self.begin() as conn:
            return await conn.run_sync(read_schema)

    async def hold_exclusively(self) -> str | None:
        """Take PostgreSQL's advisory lock for one `tether serve` per database, held on a connection of
        its own until ``dispose``; None when taken, else who holds it (its ``application_name``).

        The lock is the server's: it goes with the session, so a process killed outright lets go of it.
        """
        from sqlalchemy import text

        connection = await self.engine.connect()
        try:
            taken = (await connection.execute(text("SELECT pg_try_advisory_lock(:a, :b)"),
                                              {"a": _ADVISORY_KEY[0], "b": _ADVISORY_KEY[1]})).scalar()
            holder = None
            if not taken:
                found = await connection.execute(text(
                    "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                    "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = :a AND l.objid = :b "
                    "AND l.objsubid = 2 AND l.database = (SELECT oid FROM pg_database "
                    "WHERE datname = current_database())"), {"a": _ADVISORY_KEY[0], "b": _ADVISORY_KEY[1]})
                holder = found.scalar() or "another process"
            # A session lock outlives the transaction: commit, so the connection does not idle in one.
            await connection.commit()
        except BaseException:
            await connection.close()
            raise
        if holder is not None:
            await connection.close()
            return holder
        self._owner = connection
        return None

    async def dispose(self) -> None:
        if self._owner is not None:
            await self._owner.close()
            self._owner = None
        if self._sqlite is not None:
            if self._sqlite_held is not None:
                self._sqlite_held.close()
                self._sqlite_held = None
                self._inline = None
            self._sqlite.dispose()
        else:
            await self.engine.dispose()

    def begin(self) -> AbstractAsyncContextManager[StoreConnection]:
        """One transaction: committed when the block ends, rolled back when it raises."""
        if self._sqlite is not None:
            return _InlineTransaction(self)
        return self._pooled_transaction()

    def _inline_connection(self) -> InlineConnection:
        # Held for the process's life: checking a connection out of the pool per transaction
        # costs more than the statements of most transactions.
        if self._inline is None:
            self._sqlite_held = self._sqlite.connect()  # type: ignore[union-attr]
            self._inline = InlineConnection(self._sqlite_held)
        return self._inline

    def _sqlite_connection(self) -> Connection:
        return self._inline_connection().sync_connection

    @asynccontextmanager
    async def _pooled_transaction(self) -> AsyncIterator[StoreConnection]:
        _refuse_nesting()
        token = in_transaction.set(True)
        try:
            async with self.engine.begin() as conn:
                yield PooledConnection(conn)  # type: ignore[misc]
        finally:
            in_transaction.reset(token)


def _refuse_nesting() -> None:
    if in_transaction.get():
        # One transaction per unit of work; nesting would deadlock SQLite's single writer.
        raise RuntimeError("a transaction is already open in this task")


class _InlineTransaction:
    """A SQLite transaction, one at a time under the write lock.

    A class rather than a generator-based context manager: a VM's build runs a
    dozen of these, and three nested generators cost more than most of their statements.
    """

    __slots__ = ("_database", "_token")

    def __init__(self, database: Database) -> None:
        self._database = database

    async def __aenter__(self) -> StoreConnection:
        _refuse_nesting()
        await self._database._write_lock.acquire()  # type: ignore[union-attr]
        self._token = in_transaction.set(True)
        try:
            return self._database._inline_connection()  # type: ignore[return-value]
        except BaseException:
            self._end()
            raise

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: Any) -> None:
        try:
            conn = self._database._inline_connection()
            if kind is None:
                conn.commit()
            else:
                conn.rollback()
        finally:
            self._end()

    def _end(self) -> None:
        in_transaction.reset(self._token)
        self._database._write_lock.release()  # type: ignore[union-attr]


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

    @property
    def raw(self) -> sqlite3.Connection:
        """The sqlite3 connection itself, for what must run outside any transaction."""
        return self._raw  # type: ignore[no-any-return]

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


def _read_only_sqlite(path: str | None) -> Any:
    """A connection factory for ``path`` that writes neither the database nor anything beside it.

    With a -wal file beside it, the database is in use (or was, by a process that died): ``mode=ro``
    reads it through that WAL and its -shm index, even on a read-only medium, and sees every
    committed transaction; the -shm is the live server's shared memory, which every reader takes
    part in. Without one, every committed page is in the database file, yet ``mode=ro`` would still
    create a -wal and a -shm to read a WAL-mode database: it is opened ``immutable`` instead, which
    reads the file alone and takes no locks. (A server starting meanwhile writes to a new WAL, which
    such a read does not see, and moves pages into the file only after a thousand of them.)
    """
    import urllib.parse

    resolved = os.path.abspath(path or "")
    uri = f"file:{urllib.parse.quote(resolved)}?mode=ro"

    def connect() -> sqlite3.Connection:
        settled = not os.path.exists(resolved + "-wal")
        return sqlite3.connect(uri + ("&immutable=1" if settled else ""), uri=True, timeout=30,
                               check_same_thread=False)

    return connect


def _sqlite_read_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA query_only=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


class Store:
    """The database as one incarnation sees it: dead incarnations cannot write, and what a unit of
    work emits is published on the incarnation's bus once it commits."""

    def __init__(self, database: Database, runtime: Runtime, bus: MessageBus | None = None) -> None:
        self.database = database
        self.rt = runtime
        self.bus = bus

    def begin(self) -> AbstractAsyncContextManager[UnitOfWork]:
        """One unit of work: committed when the block ends, rolled back when it raises."""
        self.rt.ensure_alive()
        return UnitOfWorkScope(self.database.begin(), self.bus)
