"""What survives a crash, captured and put back: the store, the hypervisor, the hardware, the time.

Seeding a demo cloud and running a scenario's preparation takes far longer
than one schedule, so the explorer does it once and starts every schedule
from a copy. The same capture, taken between two steps of a schedule, is
what a crash at that point leaves behind for recovery.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from functools import cache
from typing import Any

from tether.cloud import World
from tether.domain.replies import Event
from tether.sim.explore.recording import RANDOM_COLUMNS, REQUEST_ID, RecordingHardware, RecordingHypervisor
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


def capture(world: World, now: float) -> DurableState:
    connection = _sqlite3(world.database)
    if connection.in_transaction:
        raise RuntimeError("a transaction is open between two steps; a checkpoint must not fall inside one")
    return DurableState(connection.serialize(), _hypervisor(world).state(), _hardware(world).state(), now)


def restore(state: DurableState, world: World) -> None:
    _sqlite3(world.database).deserialize(state.store)
    _hypervisor(world).restore(state.guests)
    _hardware(world).restore(state.machines)


def logical_digest(world: World) -> str:
    """The content of the store and the hardware, independent of how pages happen to be laid out.

    Request ids and password salts are random, and rows numbered by the store
    follow the order of arrival, so none of them counts: two schedules that
    differ only in those ended in the same state, and a crash in either
    recovers the same way.
    """
    connection = _sqlite3(world.database)
    names, query = _digest_query()
    rows: list[list[str]] = [[] for _ in names]
    for row in connection.execute(query):
        rows[row[0]].append(repr(row[1:]))
    text = repr([(name, sorted(table_rows)) for name, table_rows in zip(names, rows, strict=True)])
    hasher = hashlib.blake2b(digest_size=16)
    hasher.update(REQUEST_ID.sub("req-*", text).encode())  # request ids inside payloads too
    interfaces, domains = _hypervisor(world).state()
    hasher.update(repr((sorted(interfaces.items()), sorted(domains))).encode())
    machines, _ = _hardware(world).state()
    hasher.update(repr(sorted((uuid, vars(m)) for uuid, m in machines.items())).encode())
    return hasher.hexdigest()


@cache
def _digest_query() -> tuple[tuple[str, ...], str]:
    """The tables, in dependency order, and one query that reads the columns a digest counts in all of them.

    One statement rather than one per table: most tables are empty, and a statement's own cost
    through sqlite3 is what a digest per explored state paid most for. Each row is its table's
    position, its columns, then NULLs up to the widest table's (a compound SELECT's parts are
    one width); the NULLs of one table's rows are alike, so they leave the digest as it was.
    """
    from tether.store.tables import metadata

    selected = []
    for table in metadata.sorted_tables:
        skip = {column.name for column in table.columns
                if column.name in RANDOM_COLUMNS or column is table.autoincrement_column}
        names = [f'"{column.name}"' for column in table.columns if column.name not in skip]
        if names:
            selected.append((table.name, names))
    width = max(len(names) for _, names in selected)
    parts = [f'SELECT {index}, {", ".join(names + ["NULL"] * (width - len(names)))} FROM "{name}"'
             for index, (name, names) in enumerate(selected)]
    return tuple(name for name, _ in selected), " UNION ALL ".join(parts)


def _hypervisor(world: World) -> RecordingHypervisor:
    assert isinstance(world.hypervisor, RecordingHypervisor)
    return world.hypervisor


def _hardware(world: World) -> RecordingHardware:
    assert isinstance(world.hardware, RecordingHardware)
    return world.hardware

