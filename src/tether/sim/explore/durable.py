"""What survives a crash, captured and put back: the store, the hypervisor, the hardware, the time.

Seeding a demo cloud and running a scenario's preparation takes far longer
than one schedule, so the explorer does it once and starts every schedule
from a copy. The same capture, taken between two steps of a schedule, is
what a crash at that point leaves behind for recovery.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from tether.cloud import World
from tether.domain.replies import Event
from tether.sim.explore.recording import RANDOM_COLUMNS, REQUEST_ID, RecordingHardware, RecordingHypervisor
from tether.sim.explore.store_footprint import RecordingDatabase
from tether.store.database import Database


def _sqlite3(database: Database) -> sqlite3.Connection:
    """The one sqlite3 connection the store holds for its whole life (see ``store.database``)."""
    if not database.is_sqlite:
        raise ValueError("the explorer snapshots SQLite stores only")
    return database._sqlite_connection().connection.driver_connection  # type: ignore[return-value]


@dataclass(frozen=True)
class DurableState:
    store: bytes
    guests: Any
    machines: Any
    now: float
    # What users had asked to delete by then: a crash loses none of the requests they made.
    requested: frozenset[str] = frozenset()
    # What users had been told by then: recovery must keep each promise a reply made before the crash.
    history: tuple[Event, ...] = ()
    # Each table's digest then: the store's digest of a state put back (every schedule starts from one)
    # reads no table again. Taken with the state, when the explorer has just read them for its key.
    table_digests: dict[str, bytes] = field(default_factory=dict, compare=False, hash=False)


def capture(world: World, now: float) -> DurableState:
    connection = _sqlite3(world.database)
    if connection.in_transaction:
        raise RuntimeError("a transaction is open between two steps; a checkpoint must not fall inside one")
    digests = dict(_table_digests(world.database)) if isinstance(world.database, RecordingDatabase) else {}
    return DurableState(connection.serialize(), _hypervisor(world).state(), _hardware(world).state(), now,
                        table_digests=digests)


def restore(state: DurableState, world: World) -> None:
    connection = _sqlite3(world.database)
    connection.deserialize(state.store)
    if isinstance(world.database, RecordingDatabase):
        world.database.written.take()
        world.database.table_digests = dict(state.table_digests)
    _hypervisor(world).restore(state.guests)
    _hardware(world).restore(state.machines)


def logical_digest(world: World) -> str:
    """The content of the store and the hardware, independent of how pages happen to be laid out.

    Request ids and password salts are random, and rows numbered by the store
    follow the order of arrival, so none of them counts: two schedules that
    differ only in those ended in the same state, and a crash in either
    recovers the same way.
    """
    hasher = hashlib.blake2b(digest_size=16)
    for part in _table_digests(world.database).values():
        hasher.update(part)
    interfaces, domains = _hypervisor(world).state()
    hasher.update(repr((sorted(interfaces.items()), sorted(domains))).encode())
    machines, _ = _hardware(world).state()
    hasher.update(repr(sorted((uuid, vars(m)) for uuid, m in machines.items())).encode())
    return hasher.hexdigest()


def _table_digests(database: Database) -> dict[str, bytes]:
    """Each table's digest, in dependency order: read again only where a write went since the last look.

    A digest is taken at every state the explorer meets, and a step writes a table or two of sixty.
    """
    connection = _sqlite3(database)
    tables = _digest_tables()
    if not isinstance(database, RecordingDatabase):
        return _all_tables(connection, tables)
    written = database.written.take()
    if None in written or not database.table_digests:
        database.table_digests = _all_tables(connection, tables)
        return database.table_digests
    for table in (tables[name] for name in written if name in tables):
        database.table_digests[table.name] = _table_digest(table.name, connection.execute(table.query))
    return database.table_digests


@dataclass(frozen=True)
class _DigestTable:
    name: str
    position: int
    columns: tuple[str, ...]  # the columns it counts, quoted

    @property
    def width(self) -> int:
        return len(self.columns)

    @property
    def query(self) -> str:
        return f'SELECT {", ".join(self.columns)} FROM "{self.name}"'


def _all_tables(connection: sqlite3.Connection, tables: dict[str, _DigestTable]) -> dict[str, bytes]:
    """Every table in one statement: most are empty, and a statement's own cost through sqlite3 is
    most of what reading an empty table costs."""
    rows: list[list[tuple[Any, ...]]] = [[] for _ in tables]
    for row in connection.execute(_all_tables_query()):
        rows[row[0]].append(row)
    return {name: _table_digest(name, (row[1:1 + table.width] for row in rows[table.position]))
            for name, table in tables.items()}


def _table_digest(name: str, rows: Iterable[tuple[Any, ...]]) -> bytes:
    text = repr((name, sorted(map(repr, rows))))
    return hashlib.blake2b(REQUEST_ID.sub("req-*", text).encode(), digest_size=16).digest()  # ids inside payloads too


@cache
def _digest_tables() -> dict[str, _DigestTable]:
    """For each table, in dependency order, the columns a digest counts and the query that reads them."""
    from tether.store.tables import metadata

    tables = {}
    for table in metadata.sorted_tables:
        skip = {column.name for column in table.columns
                if column.name in RANDOM_COLUMNS or column is table.autoincrement_column}
        names = tuple(f'"{column.name}"' for column in table.columns if column.name not in skip)
        if names:
            tables[table.name] = _DigestTable(table.name, len(tables), names)
    return tables


@cache
def _all_tables_query() -> str:
    """One compound SELECT of every table's counted columns, each row led by its table's position and
    padded with NULLs to the widest table's (a compound SELECT's parts are one width)."""
    tables = _digest_tables()
    width = max(table.width for table in tables.values())
    return " UNION ALL ".join(
        f'SELECT {", ".join((str(table.position), *table.columns, *["NULL"] * (width - table.width)))} '
        f'FROM "{table.name}"' for table in tables.values())


def _hypervisor(world: World) -> RecordingHypervisor:
    assert isinstance(world.hypervisor, RecordingHypervisor)
    return world.hypervisor


def _hardware(world: World) -> RecordingHardware:
    assert isinstance(world.hardware, RecordingHardware)
    return world.hardware

